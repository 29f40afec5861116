"""Bodies of the file- and stream-control events (mirror of encoder/control.py)."""

from __future__ import annotations

from decoder.primitives import U64, Buffer, need, read_bytes, read_uint
from fakemaster.vocabulary.constants import HEADER_LEN, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    FormatDescriptionEvent,
    HeartbeatEvent,
    IncidentEvent,
    RotateEvent,
    StartEncryptionEvent,
    StopEvent,
    UnknownEvent,
)
from fakemaster.vocabulary.header import EventHeader
from fakemaster.vocabulary.layouts import (
    FDE_FIXED,
    FDE_SERVER_VERSION_OFFSET,
    HEARTBEAT_POSITIONS,
    SERVER_VERSION_LEN,
    START_ENCRYPTION,
    fde_has_checksum,
)

__all__ = [
    "DECODERS",
    "decode_fde",
    "decode_heartbeat",
    "decode_incident",
    "decode_rotate",
    "decode_start_encryption",
    "decode_stop",
    "decode_unknown",
    "fde_has_checksum",
    "fde_server_version",
    "header_fields",
]

_FDE_VERSION_START = HEADER_LEN + FDE_SERVER_VERSION_OFFSET


def header_fields(header: EventHeader) -> dict[str, int]:
    return {
        "timestamp": header.timestamp,
        "server_id": header.server_id,
        "log_pos": header.log_pos,
        "flags": header.flags,
    }


def fde_server_version(event_bytes: Buffer) -> bytes:
    """The version string of a whole FDE event (header included)."""
    raw = bytes(event_bytes[_FDE_VERSION_START : _FDE_VERSION_START + SERVER_VERSION_LEN])
    return raw.split(b"\x00", 1)[0]


def decode_fde(body: Buffer, header: EventHeader, ctx: BinlogContext) -> FormatDescriptionEvent:
    need(body, 0, FDE_FIXED.size, "FORMAT_DESCRIPTION fixed part")
    binlog_version, raw_version, created, header_length = FDE_FIXED.unpack_from(body, 0)
    pos = FDE_FIXED.size
    server_version, _, tail = raw_version.partition(b"\x00")
    if header_length < HEADER_LEN:
        raise DecodeError(f"FDE header length {header_length} < {HEADER_LEN}", offset=pos - 1)
    has_alg = fde_has_checksum(server_version)
    end = len(body) - 1 if has_alg else len(body)
    if end < pos:
        raise DecodeError("FDE too short for its checksum algorithm byte", offset=pos)
    post_header_lengths = bytes(body[pos:end])
    return FormatDescriptionEvent(
        **header_fields(header),
        binlog_version=binlog_version,
        server_version=server_version.decode("latin-1"),
        server_version_tail=tail.rstrip(b"\x00"),
        create_timestamp=created,
        header_length=header_length,
        post_header_lengths=post_header_lengths,
        checksum_alg=body[end] if has_alg else None,
    )


def decode_rotate(body: Buffer, header: EventHeader, ctx: BinlogContext) -> RotateEvent:
    need(body, 0, 8, "ROTATE position")
    return RotateEvent(
        **header_fields(header),
        position=U64.unpack_from(body, 0)[0],
        next_file=bytes(body[8:]).decode("utf-8", "surrogateescape"),
    )


def decode_stop(body: Buffer, header: EventHeader, ctx: BinlogContext) -> StopEvent | UnknownEvent:
    if len(body):
        # Old servers wrote nothing; keep anything else exactly.
        return UnknownEvent(**header_fields(header), code=header.type_code, body=bytes(body))
    return StopEvent(**header_fields(header))


# Positions past 4 GiB: the header's log_pos is 0 and an 8-byte position precedes the name.
def decode_heartbeat(body: Buffer, header: EventHeader, ctx: BinlogContext) -> HeartbeatEvent:
    if header.log_pos == 0 and len(body) >= 8 and _looks_like_position(body):
        return HeartbeatEvent(
            **header_fields(header),
            position=U64.unpack_from(body, 0)[0],
            file_name=bytes(body[8:]).decode("utf-8", "surrogateescape"),
        )
    return HeartbeatEvent(
        **header_fields(header), file_name=bytes(body).decode("utf-8", "surrogateescape")
    )


def _looks_like_position(body: Buffer) -> bool:
    # A real sub-header holds a position >= 4 GiB whose top byte is zero; the first 8 bytes of a
    # file name read as an integer have a printable (non-zero) top byte.
    return U64.unpack_from(body, 0)[0] in HEARTBEAT_POSITIONS


def decode_start_encryption(
    body: Buffer, header: EventHeader, ctx: BinlogContext
) -> StartEncryptionEvent:
    size = START_ENCRYPTION.size
    need(body, 0, size, "START_ENCRYPTION body")
    if len(body) != size:
        raise DecodeError(f"START_ENCRYPTION body is {len(body)} bytes, not {size}", offset=size)
    scheme, key_version, nonce = START_ENCRYPTION.unpack_from(body, 0)
    return StartEncryptionEvent(
        **header_fields(header), scheme=scheme, key_version=key_version, nonce=nonce
    )


def decode_incident(body: Buffer, header: EventHeader, ctx: BinlogContext) -> IncidentEvent:
    incident, pos = read_uint(body, 0, 2, "INCIDENT code")
    length, pos = read_uint(body, pos, 1, "INCIDENT message length")
    message, pos = read_bytes(body, pos, length, "INCIDENT message")
    if pos != len(body):
        raise DecodeError("INCIDENT has bytes after its message", offset=pos)
    return IncidentEvent(**header_fields(header), incident=incident, message=message)


def decode_unknown(body: Buffer, header: EventHeader, ctx: BinlogContext) -> UnknownEvent:
    return UnknownEvent(**header_fields(header), code=header.type_code, body=bytes(body))


DECODERS = {
    EventType.FORMAT_DESCRIPTION: decode_fde,
    EventType.ROTATE: decode_rotate,
    EventType.STOP: decode_stop,
    EventType.HEARTBEAT: decode_heartbeat,
    EventType.START_ENCRYPTION: decode_start_encryption,
    EventType.INCIDENT: decode_incident,
}
