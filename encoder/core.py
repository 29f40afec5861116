"""Event framing: header, body dispatch and CRC32 (mirror of decoder/core.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from encoder import control, gtid, query, rows, statement
from encoder.fields import check_fields
from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, EventType, event_type_name
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    ROWS_EVENT_CLASSES,
    Event,
    FormatDescriptionEvent,
    RowsEvent,
    UnknownEvent,
)
from fakemaster.vocabulary.header import CRC, HEADER, event_crc

__all__ = [
    "ENCODERS",
    "MODELLED_CODES",
    "BodyEncoder",
    "encode_body",
    "encode_event",
    "register",
]

BodyEncoder = Callable[[Any, BinlogContext], bytes]
ENCODERS: dict[type[Event], BodyEncoder] = {}


def register(table: Mapping[Any, Callable[..., bytes]]) -> None:
    ENCODERS.update(table)


register(control.ENCODERS)
register(gtid.ENCODERS)
register(query.ENCODERS)
register(statement.ENCODERS)
register(rows.ENCODERS)

# The type codes that an event class models: an UnknownEvent of one of them would be read back
# as that class's event, so it cannot be written.
MODELLED_CODES = frozenset(
    {int(cls.TYPE) for cls in ENCODERS if not issubclass(cls, (RowsEvent, UnknownEvent))}
    | set(ROWS_EVENT_CLASSES)
    | {int(EventType.QUERY_COMPRESSED)}
)


def _event_type(event: Event) -> str:
    """The name of ``event``'s type, or its class's when its fields give it no type code."""
    try:
        return event_type_name(event.type_code)
    except Exception:  # noqa: BLE001 - e.g. a rows event of a version that has no type code
        return type(event).__name__


def encode_body(event: Event, ctx: BinlogContext) -> bytes:
    """The body of ``event`` (what follows its header, without the CRC), its fields checked as
    :func:`encode_event` checks them; ``ctx`` is read, not updated. For a writer that frames
    events itself (the memory store writes each header once, with its final position)."""
    body_encoder = ENCODERS.get(type(event))
    if body_encoder is None:
        raise EncodeError(f"no encoder for {type(event).__name__}")
    try:
        check_fields(event)
        if isinstance(event, UnknownEvent) and event.code in MODELLED_CODES:
            raise EncodeError(
                f"code {event.code} is {event_type_name(event.code)}, which is read back as its "
                f"own event class, not as an UnknownEvent",
                field="code",
                value=event.code,
            )
        return body_encoder(event, ctx)
    except EncodeError as exc:
        raise (exc if exc.event_type else exc.in_event(_event_type(event))) from None
    except Exception as exc:  # noqa: BLE001 - the last resort: never another exception
        raise EncodeError(
            f"cannot be encoded: {type(exc).__name__}: {exc}", event_type=_event_type(event)
        ) from exc


def encode_event(event: Event, ctx: BinlogContext | None = None) -> bytes:
    """The bytes of ``event`` with its header and, when the stream has checksums, its CRC.

    ``ctx`` is updated from the event (an FDE sets the checksum; a TABLE_MAP maps its id).
    An event that cannot be encoded exactly is an EncodeError that names its type and, when
    one field is to blame, that field (``EncodeError.field``); nothing else is raised.
    """
    if ctx is None:
        ctx = BinlogContext()
    body = encode_body(event, ctx)
    type_code = event.type_code
    if isinstance(event, FormatDescriptionEvent):
        checksum = event.checksum_alg is not None
    else:
        checksum = ctx.checksum
    length = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    if length >> 32:
        raise EncodeError(
            f"event_length {length} does not fit its 4 bytes", event_type=event_type_name(type_code)
        )
    head = HEADER.pack(
        event.timestamp, type_code, event.server_id, length, event.log_pos, event.flags
    )
    data = head + body
    if checksum:
        data += CRC.pack(event_crc(data, type_code))
    ctx.observe(event)
    return data
