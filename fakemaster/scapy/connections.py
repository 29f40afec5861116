"""The TCP connections of a capture, each dissected apart from the others.

A ``Connection`` is one TCP connection (its 4-tuple, from SYN to FIN or RST): both directions
are put back in order by sequence numbers (``reassembly.TcpDirection``) and dissected with the
replication stream layers and one ``ConnectionState`` that only this connection's packets
change, so what one connection says (a dump request, a checksum, compression) never changes how
another one's bytes read. What cannot be dissected is reported as ``StreamProblem``s: holes in
the sequence numbers and the bytes after them, a direction ending inside a packet, packets no
layer knows, events the decoder refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scapy.config import conf
from scapy.packet import Packet, Raw

from fakemaster.scapy.reassembly import Gap, TcpDirection
from fakemaster.scapy.records import (
    INCOMPLETE,
    MISSING,
    NOT_DISSECTED,
    UNDECODED,
    PacketRecord,
    StreamProblem,
    stream_records,
)
from fakemaster.scapy.state import state_of
from fakemaster.scapy.stream import ReplicationClient, ReplicationServer

__all__ = ["HOLE_LIMIT", "Connection"]

# Bytes that may wait behind a hole for the segment that fills it (out-of-order capture,
# retransmission) before the hole is given up for lost: far more than a TCP window in practice,
# and a bound on the memory a capture that lost a segment early can take.
HOLE_LIMIT = 64 << 20


@dataclass
class _Side:
    """One direction: its reassembly, and the reassembled bytes not dissected yet."""

    stream: type[ReplicationClient] | type[ReplicationServer]
    tcp: TcpDirection = field(default_factory=TcpDirection)
    waiting: bytearray = field(default_factory=bytearray)
    offset: int = 0  # the stream offset of waiting[0]
    lost: int | None = None  # where the framing was lost to a hole (None: it was not)
    lost_bytes: int = 0  # bytes from ``lost`` on, not dissected


def _split_padding(pkt: Packet) -> tuple[Packet, bytes]:
    """The stream packet without the bytes it handed back (padding), and those bytes."""
    pad = pkt.getlayer(conf.padding_layer)
    if pad is None or pad.underlayer is None:
        return pkt, b""
    rest = bytes(pad.load)
    del pad.underlayer.payload
    return pkt, rest


class Connection:
    """One TCP connection between ``client`` and the server, numbered ``number``."""

    def __init__(self, number: int, client: str, hole_limit: int = HOLE_LIMIT) -> None:
        self.number = number
        self.hole_limit = hole_limit
        self.client = client
        self.sides = (_Side(ReplicationClient), _Side(ReplicationServer))
        self.session: dict[str, Any] = {}  # the connection's ConnectionState lives here
        self.ended = False  # a FIN or RST was seen
        self.problems: list[StreamProblem] = []

    @property
    def started(self) -> bool:
        """Whether any byte or end of this connection was seen."""
        return self.ended or any(side.tcp.delivered or side.tcp.pending for side in self.sides)

    def syn(self, from_server: bool, seq: int) -> None:
        self.sides[from_server].tcp.syn(seq)

    def segment(
        self, from_server: bool, seq: int, data: bytes, flags: str, time: float
    ) -> list[PacketRecord]:
        """The packets that a segment of the connection completes."""
        side = self.sides[from_server]
        records = self._dissect(from_server, side.tcp.segment(seq, data), time)
        while side.tcp.waiting > self.hole_limit:
            gap, after = side.tcp.skip_hole()
            self._lose(from_server, [gap], after)
        if "F" in flags:
            side.tcp.fin(seq, len(data))
        if "F" in flags or "R" in flags:
            self.ended = True
        return records

    def close(self) -> None:
        """The end of the connection (or of the capture): report what was left over."""
        for from_server in (False, True):
            side = self.sides[from_server]
            gaps, after = side.tcp.close()
            if gaps:
                self._lose(from_server, gaps, after)
            if side.lost is not None:
                detail = "a packet cut by missing bytes, and all after it (the framing is lost)"
                self._problem(from_server, NOT_DISSECTED, side.lost, side.lost_bytes, detail)
            elif side.waiting:
                detail = "the direction ends inside a packet"
                self._problem(from_server, INCOMPLETE, side.offset, len(side.waiting), detail)
            elif inner := state_of(self.session).inner_left[from_server]:
                detail = f"the compressed direction ends inside a packet ({len(inner)} bytes in)"
                self._problem(from_server, INCOMPLETE, side.offset, 0, detail)
            side.waiting.clear()

    def _lose(self, from_server: bool, gaps: list[Gap], after: bytes) -> None:
        """Holes given up for lost: reported, and the direction's framing lost from the packet
        they cut on (the bytes after a hole cannot be told apart into packets)."""
        side = self.sides[from_server]
        for gap in gaps:
            self._problem(from_server, MISSING, gap.offset, gap.length)
        if side.lost is None:
            side.lost, side.lost_bytes = side.offset, len(side.waiting)
            side.waiting.clear()
        side.lost_bytes += len(after)

    def _dissect(self, from_server: bool, data: bytes, time: float) -> list[PacketRecord]:
        side = self.sides[from_server]
        if side.lost is not None:
            side.lost_bytes += len(data)
            return []
        side.waiting += data
        records: list[PacketRecord] = []
        while side.waiting:
            pkt = side.stream.tcp_reassemble(bytes(side.waiting), {}, self.session)
            if pkt is None:
                break
            pkt, rest = _split_padding(pkt)
            used = len(side.waiting) - len(rest)
            if used <= 0:
                break
            if isinstance(pkt, Raw):  # not the stream it claimed to be (a compressed one)
                detail = "not packets of the protocol the connection uses"
                self._problem(from_server, UNDECODED, side.offset, used, detail)
            else:
                found = stream_records(
                    pkt, time=time, client=self.client, from_server=from_server,
                    connection=self.number,
                )  # fmt: skip
                self._undecoded(found, side.offset, used)
                records += found
            del side.waiting[:used]
            side.offset += used
        return records

    def _undecoded(self, records: list[PacketRecord], offset: int, length: int) -> None:
        """A problem for each packet of a chunk (``length`` bytes at ``offset``) that no layer
        knows or whose event the decoder refused: at the packet's own offset, except on the
        compressed protocol (there, the compressed chunk's)."""
        compressed = state_of(self.session).compressed
        for record in records:
            size = record.payload_length + 4 * record.chunks
            where = (offset, length) if compressed else (offset, size)
            offset += 0 if compressed else size
            if record.decode_error is not None:
                detail = f"packet #{record.sequence_id}: {record.decode_error}"
            elif Raw in record.packet:
                detail = f"packet #{record.sequence_id}: no layer knows it ({record.layer})"
            else:
                continue
            self._problem(record.from_server, UNDECODED, *where, detail)

    def _problem(
        self, from_server: bool, kind: str, offset: int, length: int, detail: str = ""
    ) -> None:
        self.problems.append(
            StreamProblem(self.number, self.client, from_server, kind, offset, length, detail)
        )
