"""Bodies of the file- and stream-control events: FDE, ROTATE, STOP, HEARTBEAT,
START_ENCRYPTION, INCIDENT and unmodelled types (mirror of decoder/control.py)."""

from __future__ import annotations

from collections.abc import Callable

from encoder.primitives import U64, name_bytes
from fakemaster.vocabulary.constants import HEADER_LEN
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    IncidentEvent,
    RotateEvent,
    StartEncryptionEvent,
    StopEvent,
    UnknownEvent,
)
from fakemaster.vocabulary.layouts import (
    FDE_FIXED,
    HEARTBEAT_POSITIONS,
    INCIDENT_HEAD,
    NONCE_LEN,
    SERVER_VERSION_LEN,
    START_ENCRYPTION,
    fde_has_checksum,
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
    if event.header_length < HEADER_LEN:
        raise EncodeError(
            f"header_length {event.header_length} is below the {HEADER_LEN} bytes of a header",
            field="header_length",
        )
    # The 50-byte field is zero-padded and the version ends at its first NUL.
    tail = event.server_version_tail
    if b"\x00" in version:
        raise EncodeError("server_version has a NUL, which would end it", field="server_version")
    if tail.endswith(b"\x00"):
        raise EncodeError(
            "server_version_tail ends with a NUL, which would be read as padding",
            field="server_version_tail",
        )
    field = version + b"\x00" + tail if tail else version
    if len(field) > SERVER_VERSION_LEN:
        raise EncodeError(
            f"server version longer than {SERVER_VERSION_LEN} bytes: server_version (with its "
            f"server_version_tail) is {len(field)}",
            field="server_version",
        )
    # A reader knows from the version alone whether the alg byte (and a CRC) follow.
    if (event.checksum_alg is not None) != fde_has_checksum(version):
        raise EncodeError(
            f"checksum_alg {event.checksum_alg!r} with server_version {event.server_version!r}: "
            f"a reader expects {'an' if fde_has_checksum(version) else 'no'} alg byte from that "
            "version (MariaDB >= 5.3, MySQL >= 5.6.1)",
            field="checksum_alg",
        )
    body = (
        FDE_FIXED.pack(event.binlog_version, field, event.create_timestamp, event.header_length)
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
    # A reader takes a position only from a heartbeat whose log_pos is 0, and only one in
    # HEARTBEAT_POSITIONS (below 4 GiB the header's log_pos holds it).
    if event.position is not None:
        if event.log_pos or event.position not in HEARTBEAT_POSITIONS:
            raise EncodeError(
                f"position {event.position} is written only from 4 GiB to 2^56, with log_pos 0 "
                f"(log_pos is {event.log_pos})",
                field="position",
                value=event.position,
            )
        return U64.pack(event.position) + name
    if not event.log_pos and len(name) >= 8 and U64.unpack_from(name)[0] in HEARTBEAT_POSITIONS:
        raise EncodeError(
            f"file_name {event.file_name!r} would be read as a position (log_pos is 0)",
            field="file_name",
            value=event.file_name,
        )
    return name


def encode_start_encryption(event: StartEncryptionEvent, ctx: BinlogContext) -> bytes:
    if len(event.nonce) != NONCE_LEN:
        raise EncodeError(
            f"nonce is {len(event.nonce)} bytes, not {NONCE_LEN}", field="nonce", value=event.nonce
        )
    return START_ENCRYPTION.pack(event.scheme, event.key_version, event.nonce)


def encode_incident(event: IncidentEvent, ctx: BinlogContext) -> bytes:
    if len(event.message) > 255:
        raise EncodeError(
            f"message is {len(event.message)} bytes, at most 255 fit", field="message"
        )
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
