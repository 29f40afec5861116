"""Bodies of the small statement-side events (mirror of encoder/statement.py).

==========================  =================================================================
XID (16)                    xid u64
XA_PREPARE (38)             one_phase u8 | format_id u32 | gtrid_len u32 (1..64) |
                            bqual_len u32 (0..64) | gtrid | bqual
INTVAR (5)                  kind u8 (1 LAST_INSERT_ID, 2 INSERT_ID) | value u64
RAND (13)                   seed1 u64 | seed2 u64
USER_VAR (14)               name_len u32 | name | is_null u8 (0 or 1); unless NULL:
                            value_type u8 | charset u32 | value_len u32 | value;
                            then, when bytes remain, a flags byte (bit 0 = unsigned) and
                            ``trailing``
ANNOTATE_ROWS (160)         the statement text (rest of the body)
BEGIN_LOAD_QUERY (17)       file_id u32 | first block of the file (rest of the body)
APPEND_BLOCK (9)            file_id u32 | next block of the file (rest of the body)
DELETE_FILE (11)            file_id u32
==========================  =================================================================

USER_VAR values stay raw: STRING the bytes in ``charset``, REAL a little-endian double, INT a
little-endian int64, DECIMAL ``precision u8 | scale u8 | decimal2bin``. MariaDB 10.11.19 writes
the flags byte after INT values only (0, or 1 when unsigned); the reader, like the server's,
takes any byte after the value as the flags. A NULL variable is ``value=None`` with
``value_type=0``, ``charset=0``; bytes after its is_null byte are ``trailing``.

Events of fixed size with extra bytes, an is_null or one_phase byte other than 0/1, and XA
lengths outside what the server accepts are rejected.
"""

from __future__ import annotations

from decoder.builders import event_builder
from decoder.control import header_fields
from decoder.primitives import U32, U64, Buffer, need
from fakemaster.vocabulary.constants import EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    DeleteFileEvent,
    IntvarEvent,
    RandEvent,
    UserVarEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.header import EventHeader
from fakemaster.vocabulary.layouts import (
    INTVAR,
    MAX_BQUAL_SIZE,
    MAX_GTRID_SIZE,
    RAND,
    USER_VAR_VALUE_HEAD,
    XA_PREPARE_HEAD,
)

__all__ = [
    "DECODERS",
    "decode_annotate_rows",
    "decode_append_block",
    "decode_begin_load_query",
    "decode_delete_file",
    "decode_intvar",
    "decode_rand",
    "decode_user_var",
    "decode_xa_prepare",
    "decode_xid",
]


_unpack_u64 = U64.unpack_from
_HEADER_FIELDS = ("timestamp", "server_id", "log_pos", "flags")
_new_xid = event_builder(XidEvent, (*_HEADER_FIELDS, "xid"))
_new_annotate = event_builder(AnnotateRowsEvent, (*_HEADER_FIELDS, "query"))


def _exact_size(body: Buffer, size: int, what: str) -> None:
    if len(body) != size:
        if len(body) < size:
            need(body, 0, size, what)
        raise DecodeError(f"{what} body is {len(body)} bytes, not {size}", offset=size)


def decode_xid(body: Buffer, header: EventHeader, ctx: BinlogContext) -> XidEvent:
    if len(body) != 8:
        _exact_size(body, 8, "XID")
    return _new_xid(header[0], header[2], header[4], header[5], _unpack_u64(body, 0)[0])


def decode_xa_prepare(body: Buffer, header: EventHeader, ctx: BinlogContext) -> XaPrepareEvent:
    need(body, 0, XA_PREPARE_HEAD.size, "XA_PREPARE header")
    one_phase, format_id, gtrid_len, bqual_len = XA_PREPARE_HEAD.unpack_from(body, 0)
    if one_phase > 1:
        raise DecodeError(f"XA_PREPARE one_phase byte is {one_phase}, not 0 or 1", offset=0)
    if not 1 <= gtrid_len <= MAX_GTRID_SIZE:
        raise DecodeError(f"XA_PREPARE gtrid length {gtrid_len} outside 1..64", offset=5)
    if bqual_len > MAX_BQUAL_SIZE:
        raise DecodeError(f"XA_PREPARE bqual length {bqual_len} outside 0..64", offset=9)
    pos = XA_PREPARE_HEAD.size
    _exact_size(body, pos + gtrid_len + bqual_len, "XA_PREPARE")
    gtrid = bytes(body[pos : pos + gtrid_len])
    bqual = bytes(body[pos + gtrid_len :])
    return XaPrepareEvent(
        **header_fields(header),
        one_phase=bool(one_phase),
        xid=XaXid(format_id, gtrid, bqual),
    )


def decode_intvar(body: Buffer, header: EventHeader, ctx: BinlogContext) -> IntvarEvent:
    _exact_size(body, INTVAR.size, "INTVAR")
    kind, value = INTVAR.unpack_from(body, 0)
    return IntvarEvent(**header_fields(header), kind=kind, value=value)


def decode_rand(body: Buffer, header: EventHeader, ctx: BinlogContext) -> RandEvent:
    _exact_size(body, RAND.size, "RAND")
    seed1, seed2 = RAND.unpack_from(body, 0)
    return RandEvent(**header_fields(header), seed1=seed1, seed2=seed2)


def decode_user_var(body: Buffer, header: EventHeader, ctx: BinlogContext) -> UserVarEvent:
    need(body, 0, 4, "USER_VAR name length")
    name_len = U32.unpack_from(body, 0)[0]
    need(body, 4, name_len + 1, "USER_VAR name and is_null")
    pos = 4 + name_len
    name = bytes(body[4:pos])
    is_null = body[pos]
    pos += 1
    if is_null > 1:
        raise DecodeError(f"USER_VAR is_null byte is {is_null}, not 0 or 1", offset=pos - 1)
    if is_null:
        return UserVarEvent(
            **header_fields(header),
            name=name,
            value=None,
            value_type=0,
            charset=0,
            value_flags=None,
            trailing=bytes(body[pos:]),
        )
    need(body, pos, USER_VAR_VALUE_HEAD.size, "USER_VAR value header")
    value_type, charset, value_len = USER_VAR_VALUE_HEAD.unpack_from(body, pos)
    pos += USER_VAR_VALUE_HEAD.size
    need(body, pos, value_len, "USER_VAR value")
    value = bytes(body[pos : pos + value_len])
    pos += value_len
    value_flags = None
    if pos < len(body):
        value_flags = body[pos]
        pos += 1
    return UserVarEvent(
        **header_fields(header),
        name=name,
        value=value,
        value_type=value_type,
        charset=charset,
        value_flags=value_flags,
        trailing=bytes(body[pos:]),
    )


def decode_annotate_rows(
    body: Buffer, header: EventHeader, ctx: BinlogContext
) -> AnnotateRowsEvent:
    return _new_annotate(
        header[0], header[2], header[4], header[5], body if type(body) is bytes else bytes(body)
    )


def decode_begin_load_query(
    body: Buffer, header: EventHeader, ctx: BinlogContext
) -> BeginLoadQueryEvent:
    need(body, 0, 4, "BEGIN_LOAD_QUERY file_id")
    return BeginLoadQueryEvent(
        **header_fields(header), file_id=U32.unpack_from(body, 0)[0], data=bytes(body[4:])
    )


def decode_append_block(body: Buffer, header: EventHeader, ctx: BinlogContext) -> AppendBlockEvent:
    need(body, 0, 4, "APPEND_BLOCK file_id")
    return AppendBlockEvent(
        **header_fields(header), file_id=U32.unpack_from(body, 0)[0], data=bytes(body[4:])
    )


def decode_delete_file(body: Buffer, header: EventHeader, ctx: BinlogContext) -> DeleteFileEvent:
    _exact_size(body, 4, "DELETE_FILE")
    return DeleteFileEvent(**header_fields(header), file_id=U32.unpack_from(body, 0)[0])


DECODERS = {
    EventType.XID: decode_xid,
    EventType.XA_PREPARE: decode_xa_prepare,
    EventType.INTVAR: decode_intvar,
    EventType.RAND: decode_rand,
    EventType.USER_VAR: decode_user_var,
    EventType.ANNOTATE_ROWS: decode_annotate_rows,
    EventType.BEGIN_LOAD_QUERY: decode_begin_load_query,
    EventType.APPEND_BLOCK: decode_append_block,
    EventType.DELETE_FILE: decode_delete_file,
}
