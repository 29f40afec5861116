"""Bodies of the file- and stream-control events: FDE, ROTATE, STOP, HEARTBEAT,
START_ENCRYPTION, INCIDENT and unmodelled types (mirror of decoder/control.py)."""

from __future__ import annotations

from collections.abc import Callable

from encoder.primitives import U64, name_bytes
from fakemaster.context import BinlogContext
from fakemaster.errors import EncodeError
from fakemaster.events import (
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    IncidentEvent,
    RotateEvent,
    StartEncryptionEvent,
    StopEvent,
    UnknownEvent,
)
from fakemaster.layouts import (
    FDE_FIXED,
    INCIDENT_HEAD,
    NONCE_LEN,
    SERVER_VERSION_LEN,
    START_ENCRYPTION,
)

__all__ = [
    "ENCODERS",
    "encode_fde",
    "encode_heartbeat",
    "encode_incident",
    "encode_rotate",
    "encode_start_encryption",
    "encode_stop",
    "encode_unknown",
]


def encode_fde(event: FormatDescriptionEvent, ctx: BinlogContext) -> bytes:
    version = event.server_version.encode("latin-1")
    if event.server_version_tail:
        version += b"\x00" + event.server_version_tail
    if len(version) > SERVER_VERSION_LEN:
        raise EncodeError(
            f"server version longer than {SERVER_VERSION_LEN} bytes: server_version (with its "
            f"server_version_tail) is {len(version)}",
            field="server_version",
        )
    body = (
        FDE_FIXED.pack(
            event.binlog_version, version, event.create_timestamp, event.header_length
        )
        + event.post_header_lengths
    )
    if event.checksum_alg is not None:
        body += bytes((event.checksum_alg,))
    return body


def encode_rotate(event: RotateEvent, ctx: BinlogContext) -> bytes:
    return U64.pack(event.position) + name_bytes(event.next_file)


def encode_stop(event: StopEvent, ctx: BinlogContext) -> bytes:
    return b""


def encode_heartbeat(event: HeartbeatEvent, ctx: BinlogContext) -> bytes:
    name = name_bytes(event.file_name)
    return name if event.position is None else U64.pack(event.position) + name


def encode_start_encryption(event: StartEncryptionEvent, ctx: BinlogContext) -> bytes:
    if len(event.nonce) != NONCE_LEN:
        raise EncodeError(
            f"nonce is {len(event.nonce)} bytes, not {NONCE_LEN}", field="nonce", value=event.nonce
        )
    return START_ENCRYPTION.pack(event.scheme, event.key_version, event.nonce)


def encode_incident(event: IncidentEvent, ctx: BinlogContext) -> bytes:
    if len(event.message) > 255:
        raise EncodeError(f"message is {len(event.message)} bytes, at most 255 fit", field="message")
    return INCIDENT_HEAD.pack(event.incident, len(event.message)) + event.message


def encode_unknown(event: UnknownEvent, ctx: BinlogContext) -> bytes:
    return event.body


ENCODERS: dict[type[Event], Callable[..., bytes]] = {
    FormatDescriptionEvent: encode_fde,
    RotateEvent: encode_rotate,
    StopEvent: encode_stop,
    HeartbeatEvent: encode_heartbeat,
    StartEncryptionEvent: encode_start_encryption,
    IncidentEvent: encode_incident,
    UnknownEvent: encode_unknown,
}
