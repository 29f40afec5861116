"""Bodies of the statement events with a query: QUERY (2), QUERY_COMPRESSED (165) and
EXECUTE_LOAD_QUERY (18) (mirror of encoder/query.py).

Layout::

    thread_id u32 | exec_time u32 | db_len u8 | error_code u16 | status_vars_len u16
    [file_id u32 | fn_pos_start u32 | fn_pos_end u32 | dup_handling u8]   EXECUTE_LOAD_QUERY only
    status variables (status_vars_len bytes)
    db (db_len bytes) | NUL
    query (the rest; QUERY_COMPRESSED: one compressed record, see decoder/compression.py)

Status variables are a code byte and a value, read in written order (the codes are not sorted:
MariaDB writes 6 before 3). Each becomes ``StatusVar(code, value)`` typed by code:

====  =============================  ========================================================
code  name                           value
====  =============================  ========================================================
0     FLAGS2                         int (u32)
1     SQL_MODE                       int (u64)
2     CATALOG (5.0.0-5.0.3)          bytes (u8 length, bytes, NUL)
3     AUTO_INCREMENT                 (increment, offset) (u16 each)
4     CHARSET                        (client, connection, server) (u16 each)
5     TIME_ZONE                      bytes (u8 length, bytes)
6     CATALOG_NZ                     bytes (u8 length, bytes)
7     LC_TIME_NAMES                  int (u16)
8     CHARSET_DATABASE               int (u16)
9     TABLE_MAP_FOR_UPDATE           int (u64)
10    MASTER_DATA_WRITTEN            int (u32)
11    INVOKER                        (user, host) bytes (u8 length + bytes each)
12    UPDATED_DB_NAMES (MySQL)       tuple of bytes (u8 count <= 16, NUL-terminated names) or
                                     the count as an int when > 16 (254 =
                                     OVER_MAX_DBS_IN_EVENT_MTS): no names follow then
13    MICROSECONDS (MySQL)           int (u24)
14    COMMIT_TS (MySQL 5.7 labs)     int (u64)
16    EXPLICIT_DEFAULTS_FOR_TS       int (u8)
17    DDL_LOGGED_WITH_XID (MySQL)    int (u64)
18    DEFAULT_COLLATION_FOR_UTF8MB4  int (u16)
19    SQL_REQUIRE_PRIMARY_KEY        int (u8)
20    DEFAULT_TABLE_ENCRYPTION       int (u8)
128   HRNOW                          int (u24, microseconds)
129   XID                            int (u64)
130   GTID_FLAGS3                    (flags, sa_seq_no or None): u8, then u64 iff flags has
                                     COMMIT_ALTER or ROLLBACK_ALTER
131   CHARACTER_SET_COLLATIONS       tuple of (charset id, collation id) pairs: u8 count,
      (MariaDB 11.2+)                count * (u16, u16)
====  =============================  ========================================================

Any other code (15 COMMIT_TS2, 255 DUMMY, ...): like the server, parsing stops there. The rest of
the block is kept as one ``StatusVar(code, raw)`` whose ``raw`` is every remaining byte of the
block *starting with the code byte itself*, so that it re-encodes byte for byte; it is always the
last entry. A known code whose value runs past the block makes the event invalid, as in the
server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from decoder.compression import decompress_record
from decoder.control import header_fields
from decoder.primitives import U16, U32, U64, Buffer, name_text, need
from fakemaster.vocabulary.constants import (
    QUERY_STATUS_FIXED_SIZES,
    EventType,
    GtidExtraFlag,
    QueryStatus,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import ExecuteLoadQueryEvent, QueryEvent, StatusVar
from fakemaster.vocabulary.header import EventHeader
from fakemaster.vocabulary.layouts import (
    LOAD_QUERY_EXTRA,
    MAX_DBS_IN_EVENT_MTS,
    PAIR16,
    QUERY_POST_HEADER,
    TRIPLE16,
)

__all__ = [
    "DECODERS",
    "StatusReader",
    "decode_execute_load_query",
    "decode_query",
    "decode_query_compressed",
    "read_status_vars",
]

_ALTER_FLAGS = int(GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER)

StatusReader = Callable[[Buffer, int, int], tuple[Any, int]]


def _check(pos: int, size: int, end: int, code: int) -> None:
    if pos + size > end:
        raise DecodeError(
            f"truncated: status variable {code} needs {size} bytes, {max(end - pos, 0)} left "
            "in the status block",
            offset=pos,
        )


def _fixed(code: int, size: int) -> StatusReader:
    unpack = {2: U16, 4: U32, 8: U64}.get(size)

    if unpack is not None:
        unpack_from = unpack.unpack_from

        def read_struct(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
            _check(pos, size, end, code)
            return unpack_from(buf, pos)[0], pos + size

        return read_struct

    def read_bytes(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
        _check(pos, size, end, code)
        return int.from_bytes(buf[pos : pos + size], "little"), pos + size

    return read_bytes


def _length_prefixed(code: int) -> StatusReader:
    def read(buf: Buffer, pos: int, end: int) -> tuple[bytes, int]:
        _check(pos, 1, end, code)
        length = buf[pos]
        _check(pos + 1, length, end, code)
        return bytes(buf[pos + 1 : pos + 1 + length]), pos + 1 + length

    return read


def _read_catalog(buf: Buffer, pos: int, end: int) -> tuple[bytes, int]:
    _check(pos, 1, end, QueryStatus.CATALOG)
    length = buf[pos]
    _check(pos + 1, length + 1, end, QueryStatus.CATALOG)
    if buf[pos + 1 + length]:
        raise DecodeError("Q_CATALOG value is not NUL-terminated", offset=pos + 1 + length)
    return bytes(buf[pos + 1 : pos + 1 + length]), pos + 2 + length


def _read_auto_increment(buf: Buffer, pos: int, end: int) -> tuple[tuple[int, int], int]:
    _check(pos, 4, end, QueryStatus.AUTO_INCREMENT)
    return PAIR16.unpack_from(buf, pos), pos + 4


def _read_charset(buf: Buffer, pos: int, end: int) -> tuple[tuple[int, int, int], int]:
    _check(pos, 6, end, QueryStatus.CHARSET)
    return TRIPLE16.unpack_from(buf, pos), pos + 6


_read_short_string = _length_prefixed(QueryStatus.INVOKER)


def _read_invoker(buf: Buffer, pos: int, end: int) -> tuple[tuple[bytes, bytes], int]:
    user, pos = _read_short_string(buf, pos, end)
    host, pos = _read_short_string(buf, pos, end)
    return (user, host), pos


def _read_updated_db_names(buf: Buffer, pos: int, end: int) -> tuple[tuple[bytes, ...] | int, int]:
    _check(pos, 1, end, QueryStatus.UPDATED_DB_NAMES)
    count = buf[pos]
    pos += 1
    if count > MAX_DBS_IN_EVENT_MTS:
        return count, pos
    block = bytes(buf[pos:end])
    names = []
    start = 0
    for _ in range(count):
        nul = block.find(b"\x00", start)
        if nul < 0:
            raise DecodeError(
                "Q_UPDATED_DB_NAMES name is not NUL-terminated in the status block",
                offset=pos + start,
            )
        names.append(block[start:nul])
        start = nul + 1
    return tuple(names), pos + start


def _read_gtid_flags3(buf: Buffer, pos: int, end: int) -> tuple[tuple[int, int | None], int]:
    _check(pos, 1, end, QueryStatus.GTID_FLAGS3)
    flags = buf[pos]
    pos += 1
    if not flags & _ALTER_FLAGS:
        return (flags, None), pos
    _check(pos, 8, end, QueryStatus.GTID_FLAGS3)
    return (flags, U64.unpack_from(buf, pos)[0]), pos + 8


def _read_character_set_collations(
    buf: Buffer, pos: int, end: int
) -> tuple[tuple[tuple[int, int], ...], int]:
    _check(pos, 1, end, QueryStatus.CHARACTER_SET_COLLATIONS)
    count = buf[pos]
    pos += 1
    _check(pos, 4 * count, end, QueryStatus.CHARACTER_SET_COLLATIONS)
    pairs = tuple(PAIR16.iter_unpack(buf[pos : pos + 4 * count]))
    return pairs, pos + 4 * count


_READERS: dict[int, StatusReader] = {
    **{int(code): _fixed(code, size) for code, size in QUERY_STATUS_FIXED_SIZES.items()},
    QueryStatus.CATALOG: _read_catalog,
    QueryStatus.AUTO_INCREMENT: _read_auto_increment,
    QueryStatus.CHARSET: _read_charset,
    QueryStatus.TIME_ZONE: _length_prefixed(QueryStatus.TIME_ZONE),
    QueryStatus.CATALOG_NZ: _length_prefixed(QueryStatus.CATALOG_NZ),
    QueryStatus.INVOKER: _read_invoker,
    QueryStatus.UPDATED_DB_NAMES: _read_updated_db_names,
    QueryStatus.GTID_FLAGS3: _read_gtid_flags3,
    QueryStatus.CHARACTER_SET_COLLATIONS: _read_character_set_collations,
}


def read_status_vars(buf: Buffer, start: int, end: int) -> tuple[StatusVar, ...]:
    """The status variables in ``buf[start:end]``, in written order."""
    out = []
    pos = start
    readers = _READERS
    while pos < end:
        code = buf[pos]
        reader = readers.get(code)
        if reader is None:
            out.append(StatusVar(code, bytes(buf[pos:end])))
            break
        value, pos = reader(buf, pos + 1, end)
        out.append(StatusVar(code, value))
    return tuple(out)


def _read_statement(
    body: Buffer, post_header_len: int, what: str
) -> tuple[tuple[int, int, int, int], tuple[StatusVar, ...], str, int]:
    """Post-header fields, status variables, database and where the query starts."""
    need(body, 0, post_header_len, f"{what} post-header")
    thread_id, exec_time, db_len, error_code, status_len = QUERY_POST_HEADER.unpack_from(body, 0)
    status_end = post_header_len + status_len
    need(body, post_header_len, status_len, f"{what} status variables")
    status_vars = read_status_vars(body, post_header_len, status_end)
    need(body, status_end, db_len + 1, f"{what} database name")
    db_end = status_end + db_len
    if body[db_end]:
        raise DecodeError(f"{what} database name is not NUL-terminated", offset=db_end)
    database = name_text(bytes(body[status_end:db_end]))
    return (thread_id, exec_time, error_code, status_len), status_vars, database, db_end + 1


def decode_query(body: Buffer, header: EventHeader, ctx: BinlogContext) -> QueryEvent:
    fields, status_vars, database, query_start = _read_statement(
        body, QUERY_POST_HEADER.size, "QUERY"
    )
    return QueryEvent(
        **header_fields(header),
        thread_id=fields[0],
        exec_time=fields[1],
        error_code=fields[2],
        status_vars=status_vars,
        database=database,
        query=bytes(body[query_start:]),
        compressed=False,
    )


def decode_query_compressed(body: Buffer, header: EventHeader, ctx: BinlogContext) -> QueryEvent:
    fields, status_vars, database, query_start = _read_statement(
        body, QUERY_POST_HEADER.size, "QUERY_COMPRESSED"
    )
    try:
        query = decompress_record(body[query_start:], 0, ctx.max_uncompressed_length)
    except DecodeError as exc:
        raise exc.relocated(query_start) from None
    return QueryEvent(
        **header_fields(header),
        thread_id=fields[0],
        exec_time=fields[1],
        error_code=fields[2],
        status_vars=status_vars,
        database=database,
        query=query,
        compressed=True,
    )


def decode_execute_load_query(
    body: Buffer, header: EventHeader, ctx: BinlogContext
) -> ExecuteLoadQueryEvent:
    post_header_len = QUERY_POST_HEADER.size + LOAD_QUERY_EXTRA.size
    fields, status_vars, database, query_start = _read_statement(
        body, post_header_len, "EXECUTE_LOAD_QUERY"
    )
    file_id, fn_pos_start, fn_pos_end, dup_handling = LOAD_QUERY_EXTRA.unpack_from(
        body, QUERY_POST_HEADER.size
    )
    return ExecuteLoadQueryEvent(
        **header_fields(header),
        thread_id=fields[0],
        exec_time=fields[1],
        error_code=fields[2],
        file_id=file_id,
        fn_pos_start=fn_pos_start,
        fn_pos_end=fn_pos_end,
        dup_handling=dup_handling,
        status_vars=status_vars,
        database=database,
        query=bytes(body[query_start:]),
    )


DECODERS = {
    EventType.QUERY: decode_query,
    EventType.QUERY_COMPRESSED: decode_query_compressed,
    EventType.EXECUTE_LOAD_QUERY: decode_execute_load_query,
}
