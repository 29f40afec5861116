"""Event framing: header, body dispatch and CRC32 (mirror of decoder/core.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from encoder import control, gtid, query, rows, statement
from fakemaster.constants import CHECKSUM_LEN, HEADER_LEN, event_type_name
from fakemaster.context import BinlogContext
from fakemaster.errors import EncodeError
from fakemaster.events import Event, FormatDescriptionEvent
from fakemaster.header import CRC, HEADER, event_crc

__all__ = ["ENCODERS", "BodyEncoder", "encode_event", "register"]

BodyEncoder = Callable[[Any, BinlogContext], bytes]
ENCODERS: dict[type[Event], BodyEncoder] = {}


def register(table: Mapping[Any, Callable[..., bytes]]) -> None:
    ENCODERS.update(table)


register(control.ENCODERS)
register(gtid.ENCODERS)
register(query.ENCODERS)
register(statement.ENCODERS)
register(rows.ENCODERS)


def encode_event(event: Event, ctx: BinlogContext | None = None) -> bytes:
    """The bytes of ``event`` with its header and, when the stream has checksums, its CRC.

    ``ctx`` is updated from the event (an FDE sets the checksum; a TABLE_MAP maps its id).
    """
    if ctx is None:
        ctx = BinlogContext()
    try:
        body_encoder = ENCODERS[type(event)]
    except KeyError:
        raise EncodeError(f"no encoder for {type(event).__name__}") from None
    body = body_encoder(event, ctx)
    type_code = event.type_code
    if isinstance(event, FormatDescriptionEvent):
        checksum = event.checksum_alg is not None
    else:
        checksum = ctx.checksum
    length = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    try:
        head = HEADER.pack(
            event.timestamp, type_code, event.server_id, length, event.log_pos, event.flags
        )
    except Exception as exc:  # struct.error: a header field out of range
        raise EncodeError(f"{event_type_name(type_code)} header: {exc}") from exc
    data = head + body
    if checksum:
        data += CRC.pack(event_crc(data, type_code))
    ctx.observe(event)
    return data
