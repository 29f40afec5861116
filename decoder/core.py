"""Event framing: header, CRC32 check and body dispatch (mirror of encoder/core.py)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from decoder import control, gtid, query, rows, statement
from decoder.primitives import Buffer
from fakemaster.constants import CHECKSUM_LEN, HEADER_LEN, EventFlag, EventType, event_type_name
from fakemaster.context import BinlogContext
from fakemaster.errors import ChecksumError, DecodeError
from fakemaster.events import Event
from fakemaster.header import (
    CRC,
    EVENT_LENGTH_OFFSET,
    HEADER,
    TYPE_CODE_OFFSET,
    EventHeader,
    event_crc,
)

__all__ = ["DECODERS", "BodyDecoder", "decode_event", "read_header", "register"]

BodyDecoder = Callable[[memoryview, EventHeader, BinlogContext], Event]
DECODERS: dict[int, BodyDecoder] = {}
_KNOWN_CODES = frozenset(int(code) for code in EventType)


def register(table: Mapping[Any, Callable[..., Event]]) -> None:
    DECODERS.update({int(code): decoder for code, decoder in table.items()})


register(control.DECODERS)
register(gtid.DECODERS)
register(query.DECODERS)
register(statement.DECODERS)
register(rows.DECODERS)


def read_header(data: Buffer, offset: int = 0) -> EventHeader:
    if len(data) < HEADER_LEN:
        raise DecodeError(
            f"truncated: event header needs {HEADER_LEN} bytes, {len(data)} left", offset=offset
        )
    return EventHeader._make(HEADER.unpack_from(data, 0))


def decode_event(
    data: Buffer,
    ctx: BinlogContext | None = None,
    *,
    offset: int = 0,
    verify_checksum: bool = True,
    allow_unknown: bool = False,
) -> Event:
    """Decode one whole event (header, body, CRC if the stream has them).

    ``offset`` is the event's position in its file or stream, used in error offsets. An event
    type outside the protocol's list is an error unless it carries LOG_EVENT_IGNORABLE_F or
    ``allow_unknown`` is set; modelled-elsewhere types (MySQL's) come back as UnknownEvent.
    """
    if ctx is None:
        ctx = BinlogContext()
    view = memoryview(data)
    header = read_header(view, offset)
    name = event_type_name(header.type_code)
    if header.event_length != len(view):
        raise DecodeError(
            f"event length field says {header.event_length}, event has {len(view)} bytes",
            offset=offset + EVENT_LENGTH_OFFSET,
            event_type=name,
        )
    is_fde = header.type_code == EventType.FORMAT_DESCRIPTION
    if is_fde:
        has_crc = control.fde_has_checksum(control.fde_server_version(view))
    else:
        has_crc = ctx.checksum
    end = len(view)
    if has_crc:
        if end < HEADER_LEN + CHECKSUM_LEN:
            raise DecodeError("truncated: no room for the CRC", offset=offset + end, event_type=name)
        end -= CHECKSUM_LEN
        if verify_checksum:
            stored = CRC.unpack_from(view, end)[0]
            computed = event_crc(view[:end], header.type_code)
            if stored != computed:
                raise ChecksumError(
                    f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                    offset=offset + end,
                    event_type=name,
                )
    body_start = HEADER_LEN if is_fde else max(ctx.fde.header_length, HEADER_LEN)
    if body_start > end:
        raise DecodeError("truncated: shorter than the header", offset=offset + end, event_type=name)
    body = view[body_start:end]
    body_decoder = DECODERS.get(header.type_code)
    if body_decoder is None:
        if (
            header.type_code not in _KNOWN_CODES
            and not header.flags & EventFlag.IGNORABLE
            and not allow_unknown
        ):
            raise DecodeError(
                f"unknown event type {header.type_code} without LOG_EVENT_IGNORABLE_F",
                offset=offset + TYPE_CODE_OFFSET,
                event_type=name,
            )
        body_decoder = control.decode_unknown
    try:
        event = body_decoder(body, header, ctx)
    except DecodeError as exc:
        raise exc.relocated(offset + body_start, name) from None
    except (struct.error, IndexError, ValueError, OverflowError, zlib.error) as exc:
        raise DecodeError(f"malformed body: {exc}", offset=offset + body_start, event_type=name) from exc
    ctx.observe(event)
    return event
