"""Network packets: reassembly and payload parsers (mirror of encoder/packets.py).

``PacketReader`` is sans-IO: feed it the bytes read from a connection in any chunks and take
complete logical payloads out; split packets (0xFFFFFF-byte chunks, ended by a shorter or empty
one) are joined and sequence numbers are checked. ``CompressedPacketReader`` does the same for
a connection that speaks the compressed protocol (CLIENT_COMPRESS).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from decoder.primitives import U16, U64, Buffer, name_text, need, read_packed_int
from fakemaster.vocabulary.constants import (
    COMPRESSED_HEADER_LEN,
    MAX_PACKET_PAYLOAD,
    SEMI_SYNC_MAGIC,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    ERR_HEADER,
    OK_HEADER,
    SEMI_SYNC_ACK_REQUESTED,
    SQLSTATE_MARKER,
    EofPacket,
    ErrPacket,
    OkPacket,
    SemiSyncAck,
)
from fakemaster.vocabulary.packets import EOF_PACKET as _EOF
from fakemaster.vocabulary.packets import OK_STATUS_WARNINGS as _STATUS_WARNINGS
from fakemaster.vocabulary.packets import PACKET_HEADER as _PACKET_HEADER

__all__ = [
    "CompressedInflater",
    "CompressedPacketReader",
    "PacketReader",
    "inflate_packets",
    "parse_binlog_packet",
    "parse_eof",
    "parse_err",
    "parse_ok",
    "parse_response",
    "parse_semi_sync_ack",
]

_EOF_LEN = _EOF.size
# Consumed bytes are dropped from the front of the buffer once they are at least this many
# and at least half of it, so each byte is moved O(1) times on average.
_COMPACT_MIN = 1 << 16


class PacketReader:
    """Logical payloads out of a byte stream of packets.

    ``expected_seq`` is the sequence number of the first packet (None: take whatever comes);
    each following packet must carry the next one mod 256, else DecodeError at the stream
    offset of the sequence byte. ``max_payload`` bounds a logical payload's size (memory guard).
    """

    def __init__(
        self,
        *,
        expected_seq: int | None = None,
        check_sequence: bool = True,
        max_payload: int | None = None,
    ) -> None:
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._start = 0  # _buf index of the first header of the payload being assembled
        self._scan = 0  # _buf index of the next header to read
        self._chunks: list[tuple[int, int]] = []  # (index, size) of the chunks read so far
        self._pending_size = 0
        self._next_seq = expected_seq
        self._check_sequence = check_sequence
        self._max_payload = max_payload

    def feed(self, data: Buffer) -> None:
        start = self._start
        size = len(self._buf)
        if start and (start == size or (start >= _COMPACT_MIN and 2 * start >= size)):
            del self._buf[:start]
            self._base += start
            self._scan -= start
            self._chunks = [(index - start, size) for index, size in self._chunks]
            self._start = 0
        self._buf += data

    def limit_payload(self, max_payload: int | None) -> None:
        """Bound the size of the payloads still to come (None: no bound), e.g. a server's
        small limit before a client logged in, then max_allowed_packet."""
        self._max_payload = max_payload

    def expect_sequence(self, seq: int | None) -> None:
        """Set the sequence number of the next packet (e.g. 1 again after a semi-sync ACK
        request, or 0 for a new command); call it between payloads."""
        self._next_seq = seq

    @property
    def next_sequence(self) -> int | None:
        return self._next_seq

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet returned in a payload."""
        return self._base + self._start

    @property
    def buffered(self) -> int:
        """Bytes fed but not yet returned in a payload (headers included)."""
        return len(self._buf) - self._start

    def next_packet(self) -> tuple[int, bytes] | None:
        """The next complete logical payload with the stream offset of its first header, or None
        until more bytes are fed."""
        buf = self._buf
        while True:
            scan = self._scan
            if len(buf) - scan < 4:
                return None
            word = _PACKET_HEADER.unpack_from(buf, scan)[0]
            size = word & 0xFFFFFF
            seq = word >> 24
            expected = self._next_seq
            if self._check_sequence and expected is not None and seq != expected:
                raise DecodeError(
                    f"packet sequence number {seq}, expected {expected}",
                    offset=self._base + scan + 3,
                )
            if self._max_payload is not None and self._pending_size + size > self._max_payload:
                raise DecodeError(
                    f"packet payload exceeds {self._max_payload} bytes", offset=self._base + scan
                )
            end = scan + 4 + size
            if len(buf) < end:
                return None
            self._next_seq = (seq + 1) & 0xFF
            self._chunks.append((scan + 4, size))
            self._pending_size += size
            self._scan = end
            if size < MAX_PACKET_PAYLOAD:
                return self._take_payload()

    def next_payload(self) -> bytes | None:
        packet = self.next_packet()
        return None if packet is None else packet[1]

    def _take_payload(self) -> tuple[int, bytes]:
        offset = self._base + self._start
        with memoryview(self._buf) as view:
            if len(self._chunks) == 1:
                index, size = self._chunks[0]
                payload = view[index : index + size].tobytes()
            else:
                payload = b"".join([view[index : index + size] for index, size in self._chunks])
        self._chunks = []
        self._pending_size = 0
        self._start = self._scan
        return offset, payload

    def __iter__(self) -> Iterator[bytes]:
        while (payload := self.next_payload()) is not None:
            yield payload

    def finish(self) -> None:
        """Declare the end of input: DecodeError if a packet is incomplete."""
        if self.buffered:
            raise DecodeError(
                f"truncated packet: {self.buffered} bytes of an incomplete packet at end of stream",
                offset=self.offset,
            )

    def detach(self) -> bytes:
        """Take back the bytes fed but not yet returned in a payload (the reader then holds
        none), e.g. to hand them to a ``CompressedPacketReader`` once compression starts."""
        rest = bytes(self._buf[self._start :])
        self._base += len(self._buf)
        self._buf.clear()
        self._start = self._scan = 0
        self._chunks = []
        self._pending_size = 0
        return rest


class CompressedPacketReader:
    """Logical payloads out of a byte stream of compressed packets (sans-IO).

    Each compressed packet has a 7-byte header (3-byte body length, 1-byte sequence number,
    3-byte inflated length, 0 when the body is not compressed); the inflated bodies, joined,
    are a stream of ordinary packets, which may start in one compressed packet and end in a
    later one. A compressed packet is only read when the packets before it do not make a
    whole payload yet, as MariaDB reads them, so ``sequences_read`` and ``last_sequence`` say
    how far the reader went for the payloads returned so far.

    ``expected_seq`` is the first compressed packet's sequence number (None: take whatever
    comes); each following one must carry the next number mod 256 (``check_sequence=False``:
    never checked, as a semi-sync replica reads). The inner packets' sequence numbers are not
    checked (MariaDB does not check them either). ``max_payload`` (an attribute, which may
    change between packets) refuses a compressed packet when its larger length plus the inner
    bytes still waiting for the rest of their payload reach it (MariaDB's packet buffer limit).
    ``exact_length``
    requires a body to inflate to exactly the stated length with nothing after its zlib
    stream; False accepts what MariaDB's my_uncompress accepts: fewer bytes, and bytes after
    the end of the stream. Errors are DecodeError at stream offsets of the compressed bytes.
    """

    def __init__(
        self,
        *,
        expected_seq: int | None = None,
        check_sequence: bool = True,
        max_payload: int | None = None,
        exact_length: bool = True,
    ) -> None:
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._pos = 0  # _buf index of the next compressed header
        self._next_seq = expected_seq
        self._check_sequence = check_sequence
        self.max_payload = max_payload
        self._exact = exact_length
        self._inner = PacketReader(check_sequence=False)
        self._inner_from = 0  # stream offset of the packet where the waiting inner bytes began
        self.sequences_read = 0
        self.last_sequence: int | None = None
        # The largest (stated length + waiting inner bytes) of a packet read: the size
        # MariaDB's packet buffer grew to.
        self.largest_need = 0

    def feed(self, data: Buffer) -> None:
        pos = self._pos
        if pos and (pos == len(self._buf) or (pos >= _COMPACT_MIN and 2 * pos >= len(self._buf))):
            del self._buf[:pos]
            self._base += pos
            self._pos = 0
        self._buf += data

    def expect_sequence(self, seq: int | None) -> None:
        """Set the sequence number of the next compressed packet (None: no check)."""
        self._next_seq = seq

    @property
    def next_sequence(self) -> int | None:
        return self._next_seq

    @property
    def offset(self) -> int:
        """Stream offset of the first compressed byte not yet read."""
        return self._base + self._pos

    @property
    def buffered(self) -> int:
        """Compressed bytes fed but not read yet, plus inner bytes not yet returned."""
        return len(self._buf) - self._pos + self._inner.buffered

    def next_payload(self) -> bytes | None:
        """The next complete logical payload, or None until more bytes are fed."""
        while True:
            payload = self._inner.next_payload()
            if payload is not None:
                return payload
            if not self._read_compressed_packet():
                return None

    def __iter__(self) -> Iterator[bytes]:
        while (payload := self.next_payload()) is not None:
            yield payload

    def _read_compressed_packet(self) -> bool:
        buf = self._buf
        pos = self._pos
        if len(buf) - pos < COMPRESSED_HEADER_LEN:
            return False
        word = _PACKET_HEADER.unpack_from(buf, pos)[0]
        size = word & 0xFFFFFF
        seq = word >> 24
        inflated = int.from_bytes(buf[pos + 4 : pos + 7], "little")
        offset = self._base + pos
        expected = self._next_seq
        if self._check_sequence and expected is not None and seq != expected:
            raise DecodeError(
                f"packet sequence number {seq}, expected {expected} (compressed packet)",
                offset=offset + 3,
            )
        # An empty packet is taken before its size is weighed (it inflates to nothing or fails).
        need = max(size, inflated) + self._inner.buffered if size else 0
        if self.max_payload is not None and need >= self.max_payload:
            # MariaDB counts the packet as read before it refuses it.
            self._count(seq, need)
            raise DecodeError(f"packet payload exceeds {self.max_payload} bytes", offset=offset)
        end = pos + COMPRESSED_HEADER_LEN + size
        if len(buf) < end:
            return False
        self._count(seq, need)
        # A copy: no view of the buffer may outlive this call (the buffer is resized later).
        body = bytes(buf[pos + COMPRESSED_HEADER_LEN : end])
        plain = _inflate(body, inflated, offset, self._exact) if inflated else body
        self._pos = end
        if not self._inner.buffered:
            self._inner_from = offset
        self._inner.feed(plain)
        return True

    def _count(self, seq: int, need: int) -> None:
        self._next_seq = (seq + 1) & 0xFF
        self.last_sequence = seq
        self.sequences_read += 1
        self.largest_need = max(self.largest_need, need)

    def finish(self) -> None:
        """Declare the end of input: DecodeError if a compressed packet or an inner packet is
        incomplete."""
        waiting = len(self._buf) - self._pos
        if waiting:
            what = "header" if waiting < COMPRESSED_HEADER_LEN else "body"
            raise DecodeError(
                f"truncated compressed packet {what}: {waiting} bytes at end of stream",
                offset=self.offset,
            )
        if self._inner.buffered:
            raise DecodeError(
                f"truncated packet: {self._inner.buffered} bytes of an incomplete packet in the "
                "compressed packets at end of stream",
                offset=self._inner_from,
            )


class CompressedInflater:
    """The inner bytes of a byte stream of compressed packets (sans-IO), for a client that
    reads the inner packets itself (a :class:`PacketReader`, a network ``StreamDecoder``).

    :meth:`feed` takes the bytes read in any chunks and returns the inner bytes (ordinary
    framed packets) of the compressed packets it completed, inflating eagerly, unlike
    :class:`CompressedPacketReader`, which reads one only when the payload needs it, as a
    server does. ``expected_seq`` is the next compressed packet's sequence number (None: not
    checked; :meth:`expect_sequence` changes it). Memory is bounded: at most one incomplete
    compressed packet is held (under 16 MiB + 7 bytes), and a body is inflated to at most its
    stated length (so a lying header cannot make it inflate more than zlib's own ratio). Errors are DecodeError at the stream offset of the compressed packet.
    """

    def __init__(self, *, expected_seq: int | None = None, exact_length: bool = False) -> None:
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._next_seq = expected_seq
        self._exact = exact_length

    def expect_sequence(self, seq: int | None) -> None:
        self._next_seq = seq

    @property
    def offset(self) -> int:
        """Stream offset of the first compressed byte not yet inflated."""
        return self._base

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete compressed packet held."""
        return len(self._buf)

    def feed(self, data: Buffer) -> bytes:
        buf = self._buf
        buf += data
        pos = 0
        inner = bytearray()
        try:
            while len(buf) - pos >= COMPRESSED_HEADER_LEN:
                word = _PACKET_HEADER.unpack_from(buf, pos)[0]
                size = word & 0xFFFFFF
                seq = word >> 24
                offset = self._base + pos
                expected = self._next_seq
                if expected is not None:
                    if seq != expected:
                        raise DecodeError(
                            f"packet sequence number {seq}, expected {expected} "
                            "(compressed packet)",
                            offset=offset + 3,
                        )
                    self._next_seq = (seq + 1) & 0xFF
                end = pos + COMPRESSED_HEADER_LEN + size
                if end > len(buf):
                    if expected is not None:
                        self._next_seq = expected  # checked again once the packet is whole
                    break
                stated = int.from_bytes(buf[pos + 4 : pos + COMPRESSED_HEADER_LEN], "little")
                body = bytes(buf[pos + COMPRESSED_HEADER_LEN : end])
                inner += _inflate(body, stated, offset, self._exact) if stated else body
                pos = end
        finally:
            del buf[:pos]
            self._base += pos
        return bytes(inner)

    def finish(self) -> None:
        """Declare the end of input: DecodeError if a compressed packet is incomplete."""
        if self._buf:
            what = "header" if len(self._buf) < COMPRESSED_HEADER_LEN else "body"
            raise DecodeError(
                f"truncated compressed packet {what}: {len(self._buf)} bytes at end of stream",
                offset=self._base,
            )


def inflate_packets(data: Buffer, *, exact_length: bool = False) -> tuple[bytes, int]:
    """The inner bytes (ordinary framed packets, their sequence numbers included) of the whole
    compressed packets at the start of ``data``, and how many bytes of ``data`` those took.
    For dissectors that show the inner packets as they are; readers of payloads use
    :class:`CompressedPacketReader`. DecodeError for a body that does not inflate."""
    view = memoryview(data).cast("B")
    pos = 0
    inner = bytearray()
    while len(view) - pos >= COMPRESSED_HEADER_LEN:
        size = _PACKET_HEADER.unpack_from(view, pos)[0] & 0xFFFFFF
        inflated = int.from_bytes(view[pos + 4 : pos + 7], "little")
        end = pos + COMPRESSED_HEADER_LEN + size
        if end > len(view):
            break
        body = bytes(view[pos + COMPRESSED_HEADER_LEN : end])
        inner += _inflate(body, inflated, pos, exact_length) if inflated else body
        pos = end
    return bytes(inner), pos


def _inflate(body: bytes, stated: int, offset: int, exact: bool) -> bytes:
    """A compressed packet's body inflated to at most ``stated`` bytes, as zlib's uncompress()
    into a buffer of that size (what MariaDB's my_uncompress does)."""
    inflater = zlib.decompressobj()
    try:
        plain = inflater.decompress(body, stated)
        # Output that fills the buffer exactly may leave the end of the stream unread.
        while not inflater.eof and inflater.unconsumed_tail:
            if inflater.decompress(inflater.unconsumed_tail, 1):
                raise DecodeError(
                    f"compressed packet inflates to more than its stated {stated} bytes",
                    offset=offset,
                )
    except zlib.error as error:
        raise DecodeError(f"compressed packet does not inflate: {error}", offset=offset) from None
    if not inflater.eof:
        raise DecodeError("compressed packet ends inside its zlib stream", offset=offset)
    if exact and len(plain) != stated:
        raise DecodeError(
            f"compressed packet inflates to {len(plain)} bytes, not its stated {stated}",
            offset=offset,
        )
    if exact and inflater.unused_data:
        raise DecodeError(
            f"{len(inflater.unused_data)} bytes after the zlib stream of a compressed packet",
            offset=offset,
        )
    return plain


# --- payloads -----------------------------------------------------------------------------


def parse_ok(payload: Buffer) -> OkPacket:
    need(payload, 0, 1, "OK packet header")
    header = payload[0]
    if header not in (OK_HEADER, EOF_HEADER):
        raise DecodeError(f"OK packet starts with 0x{header:02x}", offset=0)
    affected_rows, pos = read_packed_int(payload, 1)
    last_insert_id, pos = read_packed_int(payload, pos)
    need(payload, pos, 4, "OK packet status and warnings")
    status_flags, warnings = _STATUS_WARNINGS.unpack_from(payload, pos)
    return OkPacket(
        affected_rows=affected_rows,
        last_insert_id=last_insert_id,
        status_flags=status_flags,
        warnings=warnings,
        info=bytes(payload[pos + 4 :]),
        header=header,
    )


def parse_err(payload: Buffer) -> ErrPacket:
    need(payload, 0, 3, "ERR packet header and errno")
    if payload[0] != ERR_HEADER:
        raise DecodeError(f"ERR packet starts with 0x{payload[0]:02x}", offset=0)
    errno = U16.unpack_from(payload, 1)[0]
    if payload[3:4] == SQLSTATE_MARKER:
        need(payload, 4, 5, "ERR packet SQLSTATE")
        return ErrPacket(
            errno=errno,
            sqlstate=bytes(payload[4:9]).decode("latin-1"),
            message=bytes(payload[9:]).decode("utf-8", "surrogateescape"),
        )
    return ErrPacket(
        errno=errno, sqlstate=None, message=bytes(payload[3:]).decode("utf-8", "surrogateescape")
    )


def parse_eof(payload: Buffer) -> EofPacket:
    need(payload, 0, 1, "EOF packet header")
    if payload[0] != EOF_HEADER:
        raise DecodeError(f"EOF packet starts with 0x{payload[0]:02x}", offset=0)
    if len(payload) != _EOF_LEN:
        raise DecodeError(f"EOF packet is {len(payload)} bytes, not {_EOF_LEN}", offset=0)
    _, warnings, status_flags = _EOF.unpack_from(payload, 0)
    return EofPacket(warnings=warnings, status_flags=status_flags)


def parse_response(payload: Buffer) -> OkPacket | ErrPacket | EofPacket:
    """A command's OK, ERR or EOF; a 0xFE payload is an EOF when it is 5 bytes long, otherwise
    the OK that replaces it for clients with CLIENT_DEPRECATE_EOF."""
    need(payload, 0, 1, "response packet header")
    header = payload[0]
    if header == ERR_HEADER:
        return parse_err(payload)
    if header == EOF_HEADER and len(payload) == _EOF_LEN:
        return parse_eof(payload)
    if header in (OK_HEADER, EOF_HEADER):
        return parse_ok(payload)
    raise DecodeError(f"not an OK/ERR/EOF packet: starts with 0x{header:02x}", offset=0)


def parse_binlog_packet(payload: Buffer, semi_sync: bool = False) -> tuple[memoryview, bool]:
    """The event bytes of a binlog dump packet (``0x00`` [+ ``0xEF flag``] + event) and
    whether the master requested a semi-sync ACK (flag bit 0, as the replica tests it)."""
    view = memoryview(payload)
    need(view, 0, 1, "binlog packet header")
    if view[0] != OK_HEADER:
        raise DecodeError(f"binlog packet starts with 0x{view[0]:02x}, not 0x00", offset=0)
    if not semi_sync:
        return view[1:], False
    need(view, 1, 2, "semi-sync header")
    if view[1] != SEMI_SYNC_MAGIC:
        raise DecodeError(
            f"semi-sync header magic is 0x{view[1]:02x}, not 0x{SEMI_SYNC_MAGIC:02x}", offset=1
        )
    return view[3:], bool(view[2] & SEMI_SYNC_ACK_REQUESTED)


def parse_semi_sync_ack(payload: Buffer) -> SemiSyncAck:
    need(payload, 0, 9, "semi-sync ACK magic and position")
    if payload[0] != SEMI_SYNC_MAGIC:
        raise DecodeError(f"semi-sync ACK starts with 0x{payload[0]:02x}", offset=0)
    return SemiSyncAck(
        position=U64.unpack_from(payload, 1)[0], file_name=name_text(bytes(payload[9:]))
    )
