"""Sans-IO decoding of event streams fed in arbitrary chunks (mirror of encoder/stream.py).

Two inputs: a binlog file's bytes (magic, then events back to back) and a replication
connection's bytes (packets of ``0x00`` [+ semi-sync ``0xEF flag``] + event, ended by an EOF
or ERR packet). However the bytes are chunked, the same events come out; only the unit being
assembled is buffered, in a bytearray read from an offset and compacted now and then.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from decoder.core import decode_event
from decoder.packets import PacketReader, parse_binlog_packet, parse_err, parse_response
from decoder.primitives import U32, Buffer
from fakemaster.vocabulary.constants import BINLOG_MAGIC, HEADER_LEN
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    ERR_HEADER,
    EofPacket,
    ErrPacket,
    OkPacket,
    ServerError,
)

__all__ = ["DecodedEvent", "EventSplitter", "StreamDecoder", "check_magic", "event_length"]

# See decoder/packets.py: drop consumed bytes once they are many and at least half the buffer.
_COMPACT_MIN = 1 << 16


def check_magic(data: Buffer, offset: int = 0) -> None:
    """DecodeError unless ``data`` (the first bytes of a file, possibly fewer than 4) can be the
    start of a binlog file."""
    head = bytes(data[: len(BINLOG_MAGIC)])
    if not BINLOG_MAGIC.startswith(head):
        raise DecodeError(
            f"not a binlog file: starts with {head.hex(' ')}, not {BINLOG_MAGIC.hex(' ')}",
            offset=offset,
        )


def event_length(header: Buffer, index: int, offset: int) -> int:
    """The length field of the event header at ``header[index:]`` (at stream ``offset``)."""
    length: int = U32.unpack_from(header, index + EVENT_LENGTH_OFFSET)[0]
    if length < HEADER_LEN:
        raise DecodeError(
            f"event length {length} is shorter than the {HEADER_LEN}-byte header",
            offset=offset + EVENT_LENGTH_OFFSET,
        )
    return length


class EventSplitter:
    """Whole events' bytes out of a binlog file's byte stream, fed in any chunks.

    ``offset`` is the file offset of the first byte fed (give it with ``expect_magic=False``
    when feeding from an event boundary inside a file).
    """

    def __init__(self, *, expect_magic: bool = True, offset: int = 0) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._base = offset
        self._magic_pending = expect_magic

    def feed(self, data: Buffer) -> None:
        pos = self._pos
        size = len(self._buf)
        if pos and (pos == size or (pos >= _COMPACT_MIN and 2 * pos >= size)):
            del self._buf[:pos]
            self._base += pos
            self._pos = 0
        self._buf += data

    @property
    def offset(self) -> int:
        """File offset of the next event (or of the magic, before it is read)."""
        return self._base + self._pos

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def next_event(self) -> tuple[int, bytes] | None:
        """``(offset, event bytes)`` of the next complete event, or None until more is fed."""
        buf = self._buf
        pos = self._pos
        available = len(buf) - pos
        if self._magic_pending:
            check_magic(buf[pos : pos + len(BINLOG_MAGIC)], self._base + pos)
            if available < len(BINLOG_MAGIC):
                return None
            self._magic_pending = False
            pos += len(BINLOG_MAGIC)
            self._pos = pos
            available -= len(BINLOG_MAGIC)
        if available < HEADER_LEN:
            return None
        offset = self._base + pos
        length = event_length(buf, pos, offset)
        if available < length:
            return None
        with memoryview(buf) as view:
            data = view[pos : pos + length].tobytes()
        self._pos = pos + length
        return offset, data

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        while (item := self.next_event()) is not None:
            yield item

    def finish(self) -> None:
        """Declare the end of input: DecodeError naming the offset of an incomplete event."""
        if self._magic_pending:
            raise DecodeError(
                f"not a binlog file: {self.buffered} bytes, no complete magic", offset=self.offset
            )
        if self.buffered:
            raise DecodeError(self._truncation(), offset=self.offset)

    def _truncation(self) -> str:
        if self.buffered < HEADER_LEN:
            return f"truncated event: {self.buffered} of the {HEADER_LEN} header bytes"
        length = event_length(self._buf, self._pos, self.offset)
        return f"truncated event: {self.buffered} of {length} bytes"


class DecodedEvent(NamedTuple):
    """An event with where it started: its file offset, or in a network stream the stream
    offset of its packet; ``ack_requested`` is the semi-sync flag of its packet."""

    offset: int
    event: Event
    ack_requested: bool = False


class StreamDecoder:
    """Events out of a binlog file's or a replication connection's bytes, fed in any chunks.

    File mode (default): the magic, then events; ``offset`` is the file offset of the first byte
    fed. Network mode (``network=True``): packets as a binlog dump sends them, the first with
    sequence number ``first_sequence`` (None: any); with ``semi_sync`` every event packet has the
    2-byte semi-sync header, and after an ACK-requested event the sequence restarts at 1. An ERR
    packet raises ServerError (its ErrPacket in ``.packet``); an EOF (or 0xFE OK) ends the stream.
    In network mode, error offsets count the stream's bytes, packet headers included.

    ``ctx`` holds the checksum setting and table maps; one context is used for the whole stream
    (a network stream starts before its FDE, so give the checksum the client asked for).
    """

    def __init__(
        self,
        *,
        network: bool = False,
        semi_sync: bool = False,
        verify_checksum: bool = True,
        allow_unknown: bool = False,
        ctx: BinlogContext | None = None,
        expect_magic: bool = True,
        offset: int = 0,
        first_sequence: int | None = 1,
        check_sequence: bool = True,
        max_payload: int | None = None,
    ) -> None:
        self.ctx = ctx if ctx is not None else BinlogContext()
        self.network = network
        self.semi_sync = semi_sync
        self.verify_checksum = verify_checksum
        self.allow_unknown = allow_unknown
        self.end_packet: EofPacket | OkPacket | ErrPacket | None = None
        self._splitter: EventSplitter | None = None
        self._reader: PacketReader | None = None
        if network:
            self._reader = PacketReader(
                expected_seq=first_sequence, check_sequence=check_sequence, max_payload=max_payload
            )
        else:
            self._splitter = EventSplitter(expect_magic=expect_magic, offset=offset)

    @property
    def ended(self) -> bool:
        """True once an EOF or ERR packet ended a network stream."""
        return self.end_packet is not None

    @property
    def buffered(self) -> int:
        """Bytes fed but not yet consumed: the part of the next event or packet received so far."""
        if self._reader is not None:
            return self._reader.buffered
        assert self._splitter is not None
        return self._splitter.buffered

    def feed(self, chunk: Buffer) -> None:
        if self._reader is not None:
            self._reader.feed(chunk)
        else:
            assert self._splitter is not None
            self._splitter.feed(chunk)

    def next_decoded(self) -> DecodedEvent | None:
        """The next event, or None until more bytes are fed (or once the stream ended)."""
        if self._splitter is not None:
            raw = self._splitter.next_event()
            if raw is None:
                return None
            offset, data = raw
            return DecodedEvent(offset, self._decode(data, offset))
        assert self._reader is not None
        if self.end_packet is not None:
            return None
        packet = self._reader.next_packet()
        if packet is None:
            return None
        offset, payload = packet
        payload_offset = offset + 4
        if not payload:
            raise DecodeError("empty packet in a binlog dump", offset=payload_offset)
        first = payload[0]
        try:
            if first == ERR_HEADER:
                self.end_packet = parse_err(payload)
                raise ServerError(self.end_packet)
            if first == EOF_HEADER:
                self.end_packet = parse_response(payload)
                return None
            event_bytes, ack_requested = parse_binlog_packet(payload, self.semi_sync)
        except DecodeError as exc:
            raise exc.relocated(payload_offset) from None
        if ack_requested:
            # The master clears its packet counter after flushing an event it wants ACKed.
            self._reader.expect_sequence(1)
        event_offset = payload_offset + len(payload) - len(event_bytes)
        return DecodedEvent(offset, self._decode(event_bytes, event_offset), ack_requested)

    def _decode(self, data: Buffer, offset: int) -> Event:
        return decode_event(
            data,
            self.ctx,
            offset=offset,
            verify_checksum=self.verify_checksum,
            allow_unknown=self.allow_unknown,
        )

    def decoded(self) -> Iterator[DecodedEvent]:
        while (item := self.next_decoded()) is not None:
            yield item

    def events(self) -> Iterator[Event]:
        for item in self.decoded():
            yield item.event

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    def finish(self) -> None:
        """Declare the end of input: DecodeError if it stopped inside an event or packet."""
        if self._splitter is not None:
            self._splitter.finish()
        elif self._reader is not None and self.end_packet is None:
            self._reader.finish()
