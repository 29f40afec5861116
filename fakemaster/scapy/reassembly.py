"""One direction of a TCP connection put back in order by sequence numbers.

``TcpDirection`` takes a direction's segments as a capture holds them (out of order,
retransmitted, overlapping) and hands back the bytes that continue the stream, each byte once.
A segment past a hole waits until the hole is filled; when the capture ends without the hole
filled (or the caller gives it up, ``skip_hole``: too much waits behind it), the missing bytes
are reported as ``Gap``s instead of joining the bytes on each side of them; a FIN past the
last byte seen is a gap too. Standard
library only: it knows sequence numbers, not scapy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Gap", "TcpDirection"]

_SEQ_SPACE = 1 << 32
_HALF_SPACE = 1 << 31


@dataclass(frozen=True)
class Gap:
    """``length`` bytes of the stream, from its byte ``offset`` (0: the first after the SYN),
    that the capture does not hold."""

    offset: int
    length: int


@dataclass
class TcpDirection:
    """The bytes one side sent, in stream order."""

    base: int | None = None  # the sequence number of stream offset 0
    delivered: int = 0  # stream offset of the next byte to hand back
    fin_offset: int | None = None  # where the FIN says the stream ends
    pending: dict[int, bytes] = field(default_factory=dict)  # offset -> bytes past a hole

    def syn(self, seq: int) -> None:
        """The direction's SYN: its data starts at ``seq + 1`` (a SYN sent again with another
        number before any data, the last one counts)."""
        if self.base is None or not (self.delivered or self.pending):
            self.base = (seq + 1) % _SEQ_SPACE

    def fin(self, seq: int, length: int) -> None:
        """A FIN on a segment at ``seq`` carrying ``length`` bytes."""
        self.fin_offset = self._offset(seq) + length

    def segment(self, seq: int, data: bytes) -> bytes:
        """The bytes that continue the stream now that a segment at ``seq`` came (b"": none)."""
        if not data:
            return b""
        offset = self._offset(seq)
        end = offset + len(data)
        if end <= self.delivered:
            return b""  # a retransmission of bytes already handed back
        if offset < self.delivered:
            data = data[self.delivered - offset :]
            offset = self.delivered
        if offset > self.delivered:
            if len(data) > len(self.pending.get(offset, b"")):
                self.pending[offset] = data
            return b""
        self.delivered = end
        return data + self._drain()

    @property
    def waiting(self) -> int:
        """How many bytes past a hole wait for it to be filled."""
        return sum(len(data) for data in self.pending.values())

    def skip_hole(self) -> tuple[Gap, bytes]:
        """Give the first hole up for lost: the gap, and the bytes after it that continue."""
        first = min(self.pending)
        gap = Gap(self.delivered, first - self.delivered)
        self.delivered = first
        return gap, self._drain()

    def close(self) -> tuple[list[Gap], bytes]:
        """The holes left at the end of the capture, and the bytes after them (in order)."""
        gaps: list[Gap] = []
        after = bytearray()
        while self.pending:
            gap, data = self.skip_hole()
            gaps.append(gap)
            after += data
        if self.fin_offset is not None and self.fin_offset > self.delivered:
            gaps.append(Gap(self.delivered, self.fin_offset - self.delivered))
            self.delivered = self.fin_offset
        return gaps, bytes(after)

    def _offset(self, seq: int) -> int:
        """The stream offset of ``seq``: the one nearest the bytes handed back so far (sequence
        numbers wrap at 2**32)."""
        if self.base is None:
            self.base = seq  # no SYN in the capture: the first segment seen starts it
        relative = (seq - self.base) % _SEQ_SPACE
        delta = (relative - self.delivered + _HALF_SPACE) % _SEQ_SPACE - _HALF_SPACE
        return self.delivered + delta

    def _drain(self) -> bytes:
        """The waiting segments that now continue the stream."""
        out = bytearray()
        for offset in sorted(self.pending):
            if offset > self.delivered:
                break
            data = self.pending.pop(offset)
            end = offset + len(data)
            if end > self.delivered:
                out += data[self.delivered - offset :]
                self.delivered = end
        return bytes(out)
