"""Network packets: framing and payload builders (mirror of decoder/packets.py).

A logical payload goes on the wire as packets of a 4-byte header (3-byte LE length, 1-byte
sequence number) and at most 0xFFFFFF payload bytes. A payload of 0xFFFFFF bytes or more is
split into full 0xFFFFFF chunks, the sequence number incrementing mod 256, and ends with a
shorter chunk, which is empty when the length is an exact multiple of 0xFFFFFF.

On a compressed connection (CLIENT_COMPRESS) those packets travel inside compressed packets
(``compress_frame``), which ``CompressedWriter`` cuts as MariaDB's write buffer does.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import Any

from encoder.primitives import buffer_argument, name_bytes, packed_int
from fakemaster.vocabulary.constants import (
    COMPRESSED_HEADER_LEN,
    COMPRESSION_LEVEL,
    MAX_PACKET_PAYLOAD,
    MIN_COMPRESS_LENGTH,
    NET_BUFFER_LENGTH,
    PACKET_HEADER_LEN,
    SEMI_SYNC_MAGIC,
)
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.layouts import Buffer
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
from fakemaster.vocabulary.packets import ERR_HEAD as _ERR_HEAD
from fakemaster.vocabulary.packets import OK_STATUS_WARNINGS as _STATUS_WARNINGS
from fakemaster.vocabulary.packets import PACKET_HEADER as _PACKET_HEADER
from fakemaster.vocabulary.packets import SEMI_SYNC_ACK_HEAD as _ACK_HEAD

__all__ = [
    "binlog_packet_parts",
    "encode_binlog_packet",
    "encode_eof",
    "encode_err",
    "encode_ok",
    "encode_semi_sync_ack",
    "frame",
    "frame_parts",
    "packet_header",
]

_PLAIN_PREFIX = bytes((OK_HEADER,))
_SEMI_SYNC_PREFIX = (
    bytes((OK_HEADER, SEMI_SYNC_MAGIC, 0)),
    bytes((OK_HEADER, SEMI_SYNC_MAGIC, SEMI_SYNC_ACK_REQUESTED)),
)


def packet_header(length: int, seq: int) -> bytes:
    return _PACKET_HEADER.pack(length | seq << 24)


def frame_parts(parts: Iterable[Buffer], seq: int) -> tuple[list[Buffer], int]:
    """The packets of the logical payload made of ``parts`` (concatenated), as buffers to write
    in order (headers, and memoryview slices of the parts: nothing is copied), and the next
    sequence number."""
    if not isinstance(seq, int) or not 0 <= seq <= 0xFF:
        raise EncodeError(f"packet sequence number {seq!r} is not in 0..255")
    try:
        parts = list(parts)
    except TypeError:
        raise EncodeError(f"the payload parts must be a sequence of bytes, not {parts!r}") from None
    for part in parts:
        buffer_argument(part, "a payload part")
    views = [memoryview(part).cast("B") for part in parts]
    remaining = sum(len(view) for view in views)
    out: list[Buffer] = []
    view_index = 0
    view_pos = 0
    while True:
        size = min(remaining, MAX_PACKET_PAYLOAD)
        out.append(_PACKET_HEADER.pack(size | seq << 24))
        seq = (seq + 1) & 0xFF
        missing = size
        while missing:
            view = views[view_index]
            take = min(missing, len(view) - view_pos)
            if take:
                out.append(view[view_pos : view_pos + take])
                view_pos += take
                missing -= take
            if view_pos == len(view):
                view_index += 1
                view_pos = 0
        remaining -= size
        if size < MAX_PACKET_PAYLOAD:
            return out, seq


def frame(payload: Buffer, seq: int) -> tuple[bytes, int]:
    """The wire bytes of one logical payload starting at sequence ``seq``, and the next seq."""
    buffer_argument(payload, "the payload")
    if len(payload) < MAX_PACKET_PAYLOAD:
        if not isinstance(seq, int) or not 0 <= seq <= 0xFF:
            raise EncodeError(f"packet sequence number {seq!r} is not in 0..255")
        return _PACKET_HEADER.pack(len(payload) | seq << 24) + payload, (seq + 1) & 0xFF
    parts, next_seq = frame_parts((payload,), seq)
    return b"".join(parts), next_seq


# --- the compressed protocol --------------------------------------------------------------

_COMPRESSED_HEADER = struct.Struct("<I3s")  # body length | seq << 24, inflated length
assert _COMPRESSED_HEADER.size == COMPRESSED_HEADER_LEN


def compress_frame(
    body: Buffer, seq: int, *, compress: bool = True, level: int = COMPRESSION_LEVEL
) -> bytes:
    """One compressed packet holding ``body`` (packets, or pieces of them), as MariaDB's
    net_real_write makes it: zlib at ``level`` when the body is at least MIN_COMPRESS_LENGTH
    bytes and zlib makes it strictly shorter, otherwise the body as it is with an inflated
    length of 0. ``compress=False`` sends it as it is anyway (what the server does with ERR
    packets)."""
    buffer_argument(body, "the compressed packet's body")
    size = len(body)
    if size > MAX_PACKET_PAYLOAD:
        raise EncodeError(f"a compressed packet holds at most {MAX_PACKET_PAYLOAD} bytes")
    if not isinstance(seq, int) or not 0 <= seq <= 0xFF:
        raise EncodeError(f"compressed packet sequence number {seq!r} is not in 0..255")
    if compress and size >= MIN_COMPRESS_LENGTH:
        packed = zlib.compress(body, level)
        if len(packed) < size:
            head = _COMPRESSED_HEADER.pack(len(packed) | seq << 24, size.to_bytes(3, "little"))
            return head + packed
    return b"".join((_COMPRESSED_HEADER.pack(size | seq << 24, b"\0\0\0"), body))


class CompressedWriter:
    """The write side of a MariaDB connection that speaks the compressed protocol, sans-IO.

    Packets are written into a buffer of ``buffer_size`` bytes (net_buffer_length) the way
    net_write_buff does: a header and a payload are two writes; a write that does not fit
    fills the buffer up and sends it as one compressed packet, sends whatever is left of it
    in compressed packets of 0xFFFFFF bytes straight away, then sends the rest straight away
    too if it is larger than the buffer, or keeps it in the buffer. :meth:`flush` sends what
    the buffer holds (net_flush). So the compressed packets depend on where the server flushes
    (after each response, before a dump waits for new events), which the caller decides.

    ``sequence`` is the next compressed packet's sequence number (compress_pkt_nr) and
    ``packet_number`` the next inner packet's (pkt_nr): the writer numbers the packets it is
    given itself, and a flush sets ``packet_number`` to ``sequence``, as MariaDB does. ERR
    packets (a first payload byte of 0xFF) are sent the way the server sends errors: flushed at
    once, uncompressed, together with what the buffer held.

    The compressed packets made so far are taken with :meth:`take`.
    """

    def __init__(
        self,
        *,
        sequence: int = 0,
        buffer_size: int = NET_BUFFER_LENGTH,
        level: int = COMPRESSION_LEVEL,
    ) -> None:
        if buffer_size < 1:
            raise EncodeError("the write buffer must hold at least one byte")
        self.sequence = sequence & 0xFF
        self.packet_number = self.sequence
        self.buffer_size = buffer_size
        self.level = level
        self._buffer = bytearray()
        self._output: list[bytes] = []
        self._compress = True
        # write_packets: the header being collected, and the payload of a packet that came in
        # pieces (a payload is one write, so it is only written once it is whole).
        self._header = bytearray()
        self._payload = bytearray()
        self._payload_size = -1  # -1: no packet started
        self._continues = False  # the packet being read follows a 0xFFFFFF-byte one

    # -- the write buffer ------------------------------------------------------------------

    def _send(self, body: Buffer) -> None:
        packet = compress_frame(body, self.sequence, compress=self._compress, level=self.level)
        self._output.append(packet)
        self.sequence = (self.sequence + 1) & 0xFF

    def _write(self, data: Buffer) -> None:
        """net_write_buff."""
        view = memoryview(data).cast("B")
        buffer = self._buffer
        limit = MAX_PACKET_PAYLOAD if self.buffer_size > MAX_PACKET_PAYLOAD else self.buffer_size
        room = limit - len(buffer)
        if len(view) > room:
            if buffer:
                buffer += view[:room]
                self._send(buffer)
                buffer.clear()
                view = view[room:]
            while len(view) > MAX_PACKET_PAYLOAD:
                self._send(view[:MAX_PACKET_PAYLOAD])
                view = view[MAX_PACKET_PAYLOAD:]
            if len(view) > self.buffer_size:
                self._send(view)
                return
        buffer += view

    def flush(self) -> None:
        """Send what the buffer holds; the next inner packet takes the next compressed
        packet's number."""
        if self._buffer:
            self._send(self._buffer)
            self._buffer.clear()
        self.packet_number = self.sequence

    def reset_sequences(self, seq: int) -> None:
        """Number the next compressed and inner packets ``seq`` (net_clear, then counting)."""
        self.sequence = self.packet_number = seq & 0xFF

    def take(self) -> bytes:
        """The compressed packets made since the last call, to send in order."""
        output = self._output
        if not output:
            return b""
        self._output = []
        return output[0] if len(output) == 1 else b"".join(output)

    @property
    def buffered(self) -> int:
        """Bytes in the write buffer, not yet in a compressed packet."""
        return len(self._buffer)

    @property
    def between_packets(self) -> bool:
        """No packet given to :meth:`write_packets` is waiting for the rest of its bytes."""
        return self._payload_size < 0 and not self._header

    # -- packets ---------------------------------------------------------------------------

    def write_payload(self, payload: Buffer) -> None:
        """One logical payload (my_net_write): split into 0xFFFFFF-byte packets, numbered."""
        buffer_argument(payload, "the payload")
        view = memoryview(payload).cast("B")
        while True:
            size = min(len(view), MAX_PACKET_PAYLOAD)
            self._write_packet(view[:size], first=True)
            view = view[size:]
            if size < MAX_PACKET_PAYLOAD:
                return

    def write_packets(self, data: Buffer) -> None:
        """Packets already framed (4-byte headers, e.g. from ``frame``), in any chunks: their
        sequence numbers are replaced by the writer's own."""
        buffer_argument(data, "the packets")
        view = memoryview(data).cast("B")
        while view:
            if self._payload_size < 0:
                take = PACKET_HEADER_LEN - len(self._header)
                self._header += view[:take]
                view = view[take:]
                if len(self._header) < PACKET_HEADER_LEN:
                    return
                self._payload_size = int.from_bytes(self._header[:3], "little")
                self._header.clear()
            missing = self._payload_size - len(self._payload)
            if self._payload or len(view) < missing:
                self._payload += view[:missing]
                view = view[missing:]
                if len(self._payload) < self._payload_size:
                    return
                payload: Buffer = bytes(self._payload)
                self._payload.clear()
            else:
                payload, view = view[:missing], view[missing:]
            size = self._payload_size
            self._payload_size = -1
            self._write_packet(payload, first=not self._continues)
            self._continues = size == MAX_PACKET_PAYLOAD

    def _write_packet(self, payload: Buffer, *, first: bool) -> None:
        size = len(payload)
        is_error = first and size > 0 and payload[0] == ERR_HEADER
        if is_error:
            self._compress = False
        header = _PACKET_HEADER.pack(size | self.packet_number << 24)
        self.packet_number = (self.packet_number + 1) & 0xFF
        self._write(header)
        self._write(payload)
        if is_error:
            self.flush()
            self._compress = True


# --- payloads -----------------------------------------------------------------------------


def _check(packet: Any, kind: type, problem: str | None = None, field: str | None = None) -> None:
    """EncodeError, naming the packet, unless it is a ``kind`` whose fields hold their values
    (or for the ``problem`` found with ``field``)."""
    name = type(packet).__name__
    if problem is not None:
        raise EncodeError(problem, field=field, event_type=name)
    if not isinstance(packet, kind):
        raise EncodeError(f"expected {kind.__name__}, not {name}")
    # Imported here: the framing the server needs at startup does not load the value checks
    # (and the row value encoder under them) before the first packet is encoded.
    from encoder.fields import check_fields

    try:
        check_fields(packet)
    except EncodeError as exc:
        raise exc.in_event(name) from None


def encode_ok(packet: OkPacket) -> bytes:
    _check(packet, OkPacket)
    if packet.header not in (OK_HEADER, EOF_HEADER):
        why = f"header must be 0x00 or 0xfe, not 0x{packet.header:02x}"
        _check(packet, OkPacket, why, "header")
    status = _STATUS_WARNINGS.pack(packet.status_flags, packet.warnings)
    return b"".join(
        (
            bytes((packet.header,)),
            packed_int(packet.affected_rows),
            packed_int(packet.last_insert_id),
            status,
            packet.info,
        )
    )


def encode_err(packet: ErrPacket) -> bytes:
    _check(packet, ErrPacket)
    message = name_bytes(packet.message)
    head = _ERR_HEAD.pack(ERR_HEADER, packet.errno)
    if packet.sqlstate is None:
        if message.startswith(SQLSTATE_MARKER):
            why = "message cannot start with '#' without a sqlstate"
            _check(packet, ErrPacket, why, "message")
        return head + message
    state = packet.sqlstate.encode("latin-1")
    if len(state) != 5:
        why = f"sqlstate must be 5 characters, not {packet.sqlstate!r}"
        _check(packet, ErrPacket, why, "sqlstate")
    return head + SQLSTATE_MARKER + state + message


def encode_eof(packet: EofPacket) -> bytes:
    _check(packet, EofPacket)
    return _EOF.pack(EOF_HEADER, packet.warnings, packet.status_flags)


def binlog_packet_parts(
    event_bytes: Buffer, *, semi_sync: bool = False, ack_requested: bool = False
) -> tuple[bytes, Buffer]:
    """The logical payload of one event of a binlog dump as (prefix, event bytes); pass them to
    ``frame_parts`` to put a large event on the wire without copying it."""
    buffer_argument(event_bytes, "the event")
    if ack_requested and not semi_sync:
        raise EncodeError("an ACK can only be requested on a semi-sync connection")
    prefix = _SEMI_SYNC_PREFIX[ack_requested] if semi_sync else _PLAIN_PREFIX
    return prefix, event_bytes


def encode_binlog_packet(
    event_bytes: Buffer, *, semi_sync: bool = False, ack_requested: bool = False
) -> bytes:
    """``0x00`` [+ ``0xEF flag`` on a semi-sync connection] + the event's bytes."""
    prefix, body = binlog_packet_parts(
        event_bytes, semi_sync=semi_sync, ack_requested=ack_requested
    )
    return prefix + body


def encode_semi_sync_ack(ack: SemiSyncAck) -> bytes:
    _check(ack, SemiSyncAck)
    return _ACK_HEAD.pack(SEMI_SYNC_MAGIC, ack.position) + name_bytes(ack.file_name)
