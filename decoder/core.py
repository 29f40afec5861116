"""Event framing: header, CRC32 check and body dispatch (mirror of encoder/core.py)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from decoder import control, gtid, query, rows, statement
from decoder.primitives import Buffer
from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    EventFlag,
    EventType,
    event_type_name,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.header import (
    CRC,
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    HEADER,
    TYPE_CODE_OFFSET,
    EventHeader,
    event_crc,
)

__all__ = ["CRC_RESIDUE", "DECODERS", "BodyDecoder", "decode_event", "read_header", "register"]

BodyDecoder = Callable[[Buffer, EventHeader, BinlogContext], Event]
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
    return _new_header(EventHeader, _unpack_header(data, 0))


# The hot path runs once per event: plain ints and bound methods, no enum on the way.
_unpack_header = HEADER.unpack_from
_unpack_crc = CRC.unpack_from
_new_header = tuple.__new__
_crc32 = zlib.crc32
# zlib.crc32 of bytes followed by their CRC-32 (little-endian): the CRC's residue, whatever the
# bytes (a stored CRC that does not match gives another value), so that a hot loop checks an
# event with one call on the whole event.
CRC_RESIDUE = 0x2144DF1C
_FDE = int(EventType.FORMAT_DESCRIPTION)
_IGNORABLE = int(EventFlag.IGNORABLE)
_IN_USE = int(EventFlag.BINLOG_IN_USE)
# The events that change what later events mean (BinlogContext.observe).
_OBSERVED = frozenset({_FDE, int(EventType.TABLE_MAP)})
_MALFORMED = (struct.error, IndexError, ValueError, OverflowError, zlib.error)
_VIEW_MIN = 4096
_UNCHECKED_ALGS = frozenset({int(ChecksumAlg.OFF), int(ChecksumAlg.UNDEF)})


def decode_event(
    data: Buffer,
    ctx: BinlogContext | None = None,
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
    # A small event's bytes are sliced (copies cost less than a memoryview and its slices);
    # a large one's through a memoryview.
    view: Buffer = data if type(data) is bytes and len(data) < _VIEW_MIN else memoryview(data)
    end = len(view)
    if end < HEADER_LEN:
        raise DecodeError(
            f"truncated: event header needs {HEADER_LEN} bytes, {end} left", offset=offset
        )
    fields = _unpack_header(view, 0)
    type_code = fields[1]
    if fields[3] != end:
        raise DecodeError(
            f"event length field says {fields[3]}, event has {end} bytes",
            offset=offset + EVENT_LENGTH_OFFSET,
            event_type=event_type_name(type_code),
        )
    header: EventHeader = _new_header(EventHeader, fields)
    is_fde = type_code == _FDE
    has_crc = control.fde_has_checksum(control.fde_server_version(view)) if is_fde else ctx.checksum
    if has_crc:
        if end < HEADER_LEN + CHECKSUM_LEN:
            raise DecodeError(
                "truncated: no room for the CRC",
                offset=offset + end,
                event_type=event_type_name(type_code),
            )
        end -= CHECKSUM_LEN
        # A FORMAT_DESCRIPTION's CRC counts only if its own algorithm byte says CRC32: a
        # primary resuming a dump inside a file written without checksums sends that file's
        # FDE with log_pos 0 and the CRC not recomputed, and a replica checks it by that byte
        # (tests/integration/test_client_recording.py), whatever checksum it negotiated.
        if verify_checksum and not (is_fde and view[end - 1] in _UNCHECKED_ALGS):
            stored = _unpack_crc(view, end)[0]
            if is_fde and view[FLAGS_OFFSET] & _IN_USE:
                computed = event_crc(view[:end], type_code)
            else:
                computed = _crc32(view[:end])
            if stored != computed:
                raise ChecksumError(
                    f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                    offset=offset + end,
                    event_type=event_type_name(type_code),
                )
    body_start = HEADER_LEN if is_fde else max(ctx.fde.header_length, HEADER_LEN)
    if body_start > end:
        raise DecodeError(
            "truncated: shorter than the header",
            offset=offset + end,
            event_type=event_type_name(type_code),
        )
    body_decoder = DECODERS.get(type_code)
    if body_decoder is None:
        if type_code not in _KNOWN_CODES and not fields[5] & _IGNORABLE and not allow_unknown:
            raise DecodeError(
                f"unknown event type {type_code} without LOG_EVENT_IGNORABLE_F",
                offset=offset + TYPE_CODE_OFFSET,
                event_type=event_type_name(type_code),
            )
        body_decoder = control.decode_unknown
    try:
        event = body_decoder(view[body_start:end], header, ctx)
    except DecodeError as exc:
        raise exc.relocated(offset + body_start, event_type_name(type_code)) from None
    except _MALFORMED as exc:
        raise DecodeError(
            f"malformed body: {exc}",
            offset=offset + body_start,
            event_type=event_type_name(type_code),
        ) from exc
    if type_code in _OBSERVED:
        ctx.observe(event)
    return event
