"""Bodies of QUERY (2), QUERY_COMPRESSED (165) and EXECUTE_LOAD_QUERY (18).

Mirror of decoder/query.py, which documents the layout and the typed status-variable values.
Status variables are written in the order given; an unknown code's raw value (which starts with
the code byte) is written as it is and must be the last entry.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from encoder.compression import compress_record
from encoder.primitives import U64, name_bytes
from fakemaster.vocabulary.constants import QUERY_STATUS_FIXED_SIZES, GtidExtraFlag, QueryStatus
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import Event, ExecuteLoadQueryEvent, QueryEvent, StatusVar
from fakemaster.vocabulary.layouts import (
    LOAD_QUERY_EXTRA,
    MAX_DBS_IN_EVENT_MTS,
    PAIR16,
    QUERY_POST_HEADER,
    TRIPLE16,
)

__all__ = [
    "ENCODERS",
    "KNOWN_STATUS_CODES",
    "StatusWriter",
    "encode_execute_load_query",
    "encode_query",
    "status_vars_bytes",
]

_ALTER_FLAGS = GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER

StatusWriter = Callable[[Any], bytes]


def _fail(code: int, value: object, why: str) -> EncodeError:
    return EncodeError(f"status variable {code}: {why} (value {value!r:.80})")


def _fixed(code: int, size: int) -> StatusWriter:
    limit = 1 << (8 * size)

    def write(value: Any) -> bytes:
        if not isinstance(value, int) or not 0 <= value < limit:
            raise _fail(code, value, f"needs an unsigned int of {size} bytes")
        return value.to_bytes(size, "little")

    return write


def _short_bytes(code: int, value: Any) -> bytes:
    if not isinstance(value, bytes) or len(value) > 255:
        raise _fail(code, value, "needs bytes of at most 255")
    return bytes((len(value),)) + value


def _length_prefixed(code: int) -> StatusWriter:
    return lambda value: _short_bytes(code, value)


def _write_catalog(value: Any) -> bytes:
    return _short_bytes(QueryStatus.CATALOG, value) + b"\x00"


def _u16_tuple(code: int, packer: struct.Struct) -> StatusWriter:
    def write(value: Any) -> bytes:
        if not isinstance(value, tuple) or len(value) != packer.size // 2:
            raise _fail(code, value, f"needs a tuple of {packer.size // 2} ints")
        try:
            return packer.pack(*value)
        except struct.error as exc:
            raise _fail(code, value, str(exc)) from exc

    return write


def _write_invoker(value: Any) -> bytes:
    if not isinstance(value, tuple) or len(value) != 2:
        raise _fail(QueryStatus.INVOKER, value, "needs a (user, host) tuple")
    return _short_bytes(QueryStatus.INVOKER, value[0]) + _short_bytes(QueryStatus.INVOKER, value[1])


def _write_updated_db_names(value: Any) -> bytes:
    code = QueryStatus.UPDATED_DB_NAMES
    if isinstance(value, int):
        if not MAX_DBS_IN_EVENT_MTS < value <= 255:
            raise _fail(code, value, "a count without names must be 17..255")
        return bytes((value,))
    if not isinstance(value, tuple) or len(value) > MAX_DBS_IN_EVENT_MTS:
        raise _fail(code, value, "needs a tuple of at most 16 names or an int count")
    out = bytearray((len(value),))
    for name in value:
        if not isinstance(name, bytes) or b"\x00" in name:
            raise _fail(code, value, "names must be bytes without NUL")
        out += name + b"\x00"
    return bytes(out)


def _write_gtid_flags3(value: Any) -> bytes:
    code = QueryStatus.GTID_FLAGS3
    if not isinstance(value, tuple) or len(value) != 2:
        raise _fail(code, value, "needs a (flags, sa_seq_no or None) tuple")
    flags, sa_seq_no = value
    if not isinstance(flags, int) or not 0 <= flags <= 255:
        raise _fail(code, value, "flags must be one byte")
    if bool(flags & _ALTER_FLAGS) != (sa_seq_no is not None):
        raise _fail(code, value, "sa_seq_no must be given iff flags has COMMIT/ROLLBACK_ALTER")
    if sa_seq_no is None:
        return bytes((flags,))
    try:
        return bytes((flags,)) + U64.pack(sa_seq_no)
    except struct.error as exc:
        raise _fail(code, value, str(exc)) from exc


def _write_character_set_collations(value: Any) -> bytes:
    code = QueryStatus.CHARACTER_SET_COLLATIONS
    if not isinstance(value, tuple) or len(value) > 255:
        raise _fail(code, value, "needs a tuple of at most 255 (charset, collation) pairs")
    out = bytearray((len(value),))
    try:
        for pair in value:
            if not isinstance(pair, tuple):
                raise _fail(code, value, "pairs must be tuples")
            out += PAIR16.pack(*pair)
    except struct.error as exc:
        raise _fail(code, value, str(exc)) from exc
    return bytes(out)


_WRITERS: dict[int, StatusWriter] = {
    **{int(code): _fixed(code, size) for code, size in QUERY_STATUS_FIXED_SIZES.items()},
    QueryStatus.CATALOG: _write_catalog,
    QueryStatus.AUTO_INCREMENT: _u16_tuple(QueryStatus.AUTO_INCREMENT, PAIR16),
    QueryStatus.CHARSET: _u16_tuple(QueryStatus.CHARSET, TRIPLE16),
    QueryStatus.TIME_ZONE: _length_prefixed(QueryStatus.TIME_ZONE),
    QueryStatus.CATALOG_NZ: _length_prefixed(QueryStatus.CATALOG_NZ),
    QueryStatus.INVOKER: _write_invoker,
    QueryStatus.UPDATED_DB_NAMES: _write_updated_db_names,
    QueryStatus.GTID_FLAGS3: _write_gtid_flags3,
    QueryStatus.CHARACTER_SET_COLLATIONS: _write_character_set_collations,
}

KNOWN_STATUS_CODES = frozenset(_WRITERS)
"""Codes with a typed value; any other code is kept raw (see decoder/query.py)."""


def _status_var_bytes(var: StatusVar, is_last: bool) -> bytes:
    code = var.code
    writer = _WRITERS.get(code)
    if writer is not None:
        return bytes((code,)) + writer(var.value)
    raw = var.value
    if not isinstance(code, int) or not 0 <= code <= 255:
        raise EncodeError(f"status variable code {code!r} is not a byte")
    if not isinstance(raw, bytes) or raw[:1] != bytes((code,)):
        raise _fail(code, raw, "an unknown code's value is the raw rest, starting with it")
    if not is_last:
        raise _fail(code, raw, "an unknown code ends the status block; it must be last")
    return raw


def status_vars_bytes(status_vars: tuple[StatusVar, ...]) -> bytes:
    parts = []
    last = len(status_vars) - 1
    for index, var in enumerate(status_vars):
        try:
            parts.append(_status_var_bytes(var, index == last))
        except EncodeError as exc:
            where = f"status_vars[{index}]"
            raise EncodeError(f"{where}: {exc.reason}", field=where, value=var.value) from None
    return b"".join(parts)


def _statement_body(
    event: QueryEvent | ExecuteLoadQueryEvent, query: bytes, extra: bytes = b""
) -> bytes:
    status = status_vars_bytes(event.status_vars)
    database = name_bytes(event.database)
    if len(database) > 255:
        raise EncodeError(
            f"database is {len(database)} bytes, its length byte holds 255", field="database"
        )
    if len(status) > 0xFFFF:
        raise EncodeError(
            f"status_vars take {len(status)} bytes, their length holds 65535", field="status_vars"
        )
    try:
        head = QUERY_POST_HEADER.pack(
            event.thread_id, event.exec_time, len(database), event.error_code, len(status)
        )
    except struct.error as exc:  # fields are checked first (encoder/fields.py)
        raise EncodeError(f"a post-header field is out of range: {exc}") from exc
    return b"".join((head, extra, status, database, b"\x00", query))


def encode_query(event: QueryEvent, ctx: BinlogContext) -> bytes:
    query = event.query
    if event.compressed:
        if not query:
            raise EncodeError(
                "query is empty: a compressed one needs text (length 0 is invalid)", field="query"
            )
        query = compress_record(query)
    return _statement_body(event, query)


def encode_execute_load_query(event: ExecuteLoadQueryEvent, ctx: BinlogContext) -> bytes:
    try:
        extra = LOAD_QUERY_EXTRA.pack(
            event.file_id, event.fn_pos_start, event.fn_pos_end, event.dup_handling
        )
    except struct.error as exc:  # fields are checked first (encoder/fields.py)
        raise EncodeError(f"a post-header field is out of range: {exc}") from exc
    return _statement_body(event, event.query, extra)


ENCODERS: dict[type[Event], Callable[..., bytes]] = {
    QueryEvent: encode_query,
    ExecuteLoadQueryEvent: encode_execute_load_query,
}
