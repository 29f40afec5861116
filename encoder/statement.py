"""Bodies of XID, XA_PREPARE, INTVAR, RAND, USER_VAR, ANNOTATE_ROWS and the LOAD DATA blocks.

Mirror of decoder/statement.py, which documents the layouts.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from encoder.primitives import U8, U32, U64
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    DeleteFileEvent,
    Event,
    IntvarEvent,
    RandEvent,
    UserVarEvent,
    XaPrepareEvent,
    XidEvent,
)
from fakemaster.vocabulary.layouts import (
    INTVAR,
    MAX_BQUAL_SIZE,
    MAX_GTRID_SIZE,
    RAND,
    USER_VAR_VALUE_HEAD,
    XA_PREPARE_HEAD,
)

__all__ = [
    "ENCODERS",
    "encode_annotate_rows",
    "encode_append_block",
    "encode_begin_load_query",
    "encode_delete_file",
    "encode_intvar",
    "encode_rand",
    "encode_user_var",
    "encode_xa_prepare",
    "encode_xid",
]


def _pack(packer: struct.Struct, what: str, *values: int) -> bytes:
    try:
        return packer.pack(*values)
    except struct.error as exc:  # fields are checked first (encoder/fields.py)
        raise EncodeError(f"{what} field out of range: {exc}") from exc


def encode_xid(event: XidEvent, ctx: BinlogContext) -> bytes:
    return _pack(U64, "XID", event.xid)


def encode_xa_prepare(event: XaPrepareEvent, ctx: BinlogContext) -> bytes:
    xid = event.xid
    if not 1 <= len(xid.gtrid) <= MAX_GTRID_SIZE:
        raise EncodeError(
            f"xid.gtrid is {len(xid.gtrid)} bytes, not 1..{MAX_GTRID_SIZE}", field="xid.gtrid"
        )
    if len(xid.bqual) > MAX_BQUAL_SIZE:
        raise EncodeError(
            f"xid.bqual is {len(xid.bqual)} bytes, not 0..{MAX_BQUAL_SIZE}", field="xid.bqual"
        )
    head = _pack(
        XA_PREPARE_HEAD,
        "XA_PREPARE",
        int(event.one_phase),
        xid.format_id,
        len(xid.gtrid),
        len(xid.bqual),
    )
    return head + xid.gtrid + xid.bqual


def encode_intvar(event: IntvarEvent, ctx: BinlogContext) -> bytes:
    return _pack(INTVAR, "INTVAR", event.kind, event.value)


def encode_rand(event: RandEvent, ctx: BinlogContext) -> bytes:
    return _pack(RAND, "RAND", event.seed1, event.seed2)


def encode_user_var(event: UserVarEvent, ctx: BinlogContext) -> bytes:
    name = event.name
    head = _pack(U32, "USER_VAR", len(name)) + name
    if event.value is None:
        for field, unset in (("value_type", 0), ("charset", 0), ("value_flags", None)):
            if getattr(event, field) != unset:
                raise EncodeError(f"{field} is set but value is None (NULL)", field=field)
        return head + b"\x01" + event.trailing
    if event.value_flags is None and event.trailing:
        raise EncodeError("trailing bytes need value_flags (it is read first)", field="trailing")
    value_head = _pack(
        USER_VAR_VALUE_HEAD, "USER_VAR", event.value_type, event.charset, len(event.value)
    )
    flags = b"" if event.value_flags is None else _pack(U8, "USER_VAR", event.value_flags)
    return b"".join((head, b"\x00", value_head, event.value, flags, event.trailing))


def encode_annotate_rows(event: AnnotateRowsEvent, ctx: BinlogContext) -> bytes:
    return event.query


def encode_begin_load_query(event: BeginLoadQueryEvent, ctx: BinlogContext) -> bytes:
    return _pack(U32, "BEGIN_LOAD_QUERY", event.file_id) + event.data


def encode_append_block(event: AppendBlockEvent, ctx: BinlogContext) -> bytes:
    return _pack(U32, "APPEND_BLOCK", event.file_id) + event.data


def encode_delete_file(event: DeleteFileEvent, ctx: BinlogContext) -> bytes:
    return _pack(U32, "DELETE_FILE", event.file_id)


ENCODERS: dict[type[Event], Callable[..., bytes]] = {
    XidEvent: encode_xid,
    XaPrepareEvent: encode_xa_prepare,
    IntvarEvent: encode_intvar,
    RandEvent: encode_rand,
    UserVarEvent: encode_user_var,
    AnnotateRowsEvent: encode_annotate_rows,
    BeginLoadQueryEvent: encode_begin_load_query,
    AppendBlockEvent: encode_append_block,
    DeleteFileEvent: encode_delete_file,
}
