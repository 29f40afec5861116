"""Network packets: framing and payload builders (mirror of decoder/packets.py).

A logical payload goes on the wire as packets of a 4-byte header (3-byte LE length, 1-byte
sequence number) and at most 0xFFFFFF payload bytes. A payload of 0xFFFFFF bytes or more is
split into full 0xFFFFFF chunks, the sequence number incrementing mod 256, and ends with a
shorter chunk, which is empty when the length is an exact multiple of 0xFFFFFF.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from encoder.fields import check_fields
from encoder.primitives import buffer_argument, name_bytes, packed_int
from fakemaster.constants import MAX_PACKET_PAYLOAD, SEMI_SYNC_MAGIC
from fakemaster.errors import EncodeError
from fakemaster.layouts import Buffer
from fakemaster.packets import (
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
from fakemaster.packets import EOF_PACKET as _EOF
from fakemaster.packets import ERR_HEAD as _ERR_HEAD
from fakemaster.packets import OK_STATUS_WARNINGS as _STATUS_WARNINGS
from fakemaster.packets import PACKET_HEADER as _PACKET_HEADER
from fakemaster.packets import SEMI_SYNC_ACK_HEAD as _ACK_HEAD

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


# --- payloads -----------------------------------------------------------------------------


def _check(packet: Any, kind: type, problem: str | None = None, field: str | None = None) -> None:
    """EncodeError, naming the packet, unless it is a ``kind`` whose fields hold their values
    (or for the ``problem`` found with ``field``)."""
    name = type(packet).__name__
    if problem is not None:
        raise EncodeError(problem, field=field, event_type=name)
    if not isinstance(packet, kind):
        raise EncodeError(f"expected {kind.__name__}, not {name}")
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
