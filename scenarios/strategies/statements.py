"""Hypothesis strategies for the GTID and statement-side events, edge values included.

Every strategy yields only events the encoder accepts and the decoder gives back equal
(see decoder/gtid.py for the GTID ``trailing`` rule and decoder/query.py for status variables).
"""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import strategies as st

from fakemaster.vocabulary.constants import GtidExtraFlag, GtidFlag, QueryStatus
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    BinlogCheckpointEvent,
    DeleteFileEvent,
    Event,
    ExecuteLoadQueryEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    IntvarEvent,
    QueryEvent,
    RandEvent,
    StatusVar,
    UserVarEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from scenarios.strategies.control import headers

_DOUBLE = struct.Struct("<d")
U64_MAX = (1 << 64) - 1
U32_MAX = (1 << 32) - 1


def _edged(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers in [low, high] with the bounds and their neighbours drawn often."""
    edges = sorted({low, min(low + 1, high), max(high - 1, low), high})
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


u8 = _edged(0, 0xFF)
u16 = _edged(0, 0xFFFF)
u24 = _edged(0, 0xFFFFFF)
u32 = _edged(0, U32_MAX)
u64 = _edged(0, U64_MAX)


def names(max_size: int = 64) -> st.SearchStrategy[str]:
    """Names as the decoder returns them: any bytes, read as UTF-8 with surrogateescape."""
    raw = st.one_of(
        st.text(max_size=max_size // 4).map(lambda text: text.encode("utf-8")),
        st.binary(max_size=max_size),
    ).filter(lambda data: len(data) <= max_size)
    return raw.map(lambda data: data.decode("utf-8", "surrogateescape"))


def texts(max_size: int = 300) -> st.SearchStrategy[bytes]:
    """Statement texts: empty, ASCII, any Unicode as UTF-8, or arbitrary bytes."""
    return st.one_of(
        st.just(b""),
        st.text(max_size=max_size // 4).map(lambda text: text.encode("utf-8")),
        st.binary(max_size=max_size),
    )


# --- GTIDs --------------------------------------------------------------------------------


xa_xids = st.builds(
    XaXid, u32, st.binary(min_size=0, max_size=64), st.binary(min_size=0, max_size=64)
)
full_xa_xids = st.builds(
    XaXid, u32, st.binary(min_size=64, max_size=64), st.binary(min_size=64, max_size=64)
)


def _gtid_fields_len(event: GtidEvent) -> int:
    size = 13
    if event.commit_id is not None:
        size += 8
    if event.xid is not None:
        size += 6 + len(event.xid.gtrid) + len(event.xid.bqual)
    if event.flags_extra:
        size += 1
        size += 1 if event.extra_engines is not None else 0
        size += 8 if event.sa_seq_no is not None else 0
    return size


def _valid_trailing(fields_len: int, flags_extra: int, raw: bytes) -> bytes:
    """Shape ``raw`` into trailing bytes that the decoder reads back as trailing."""
    if not raw:
        return b""
    if not flags_extra and raw[0]:
        raw = b"\x00" + raw  # otherwise its first byte would be read as flags_extra
    if fields_len + len(raw) < 19:
        raw += b"\xff" * (19 - fields_len - len(raw))
    if fields_len + len(raw) == 19 and not any(raw):
        raw += b"\x00"  # exactly the zero padding is no trailing at all
    return raw


@st.composite
def gtid_events(draw: st.DrawFn) -> GtidEvent:
    flags2 = draw(u8)
    flags_extra = draw(st.one_of(st.just(0), u8))
    event = GtidEvent(
        **draw(headers()),
        seq_no=draw(u64),
        domain_id=draw(u32),
        flags2=flags2,
        commit_id=draw(u64) if flags2 & GtidFlag.GROUP_COMMIT_ID else None,
        xid=(
            draw(st.one_of(xa_xids, full_xa_xids))
            if flags2 & (GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA)
            else None
        ),
        flags_extra=flags_extra,
        extra_engines=draw(u8) if flags_extra & GtidExtraFlag.MULTI_ENGINE else None,
        sa_seq_no=(
            draw(u64)
            if flags_extra & (GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER)
            else None
        ),
        trailing=b"",
    )
    raw_trailing = draw(st.one_of(st.just(b""), st.binary(max_size=24)))
    event.trailing = _valid_trailing(_gtid_fields_len(event), flags_extra, raw_trailing)
    return event


gtids = st.builds(Gtid, u32, u32, u64)


@st.composite
def gtid_list_events(draw: st.DrawFn) -> GtidListEvent:
    entries = tuple(draw(st.lists(gtids, max_size=40)))
    return GtidListEvent(
        **draw(headers()),
        gtids=entries,
        list_flags=draw(st.sampled_from([0, 1 << 28, 1 << 29, 3 << 28, 0xF << 28])),
        padding=draw(st.one_of(st.just(b""), st.just(b"\x00\x00"), st.binary(max_size=8))),
    )


def binlog_checkpoint_events() -> st.SearchStrategy[BinlogCheckpointEvent]:
    return st.builds(
        lambda h, name: BinlogCheckpointEvent(**h, file_name=name), headers(), names(200)
    )


# --- status variables ---------------------------------------------------------------------


def _short_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(st.just(b""), st.binary(max_size=255).filter(lambda b: len(b) <= 255))


def _gtid_flags3() -> st.SearchStrategy[tuple[int, int | None]]:
    alter = GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER
    return u8.flatmap(lambda flags: st.tuples(st.just(flags), u64 if flags & alter else st.none()))


_db_names = st.binary(max_size=64).map(lambda b: b.replace(b"\x00", b""))

STATUS_VALUES: dict[int, st.SearchStrategy[Any]] = {
    QueryStatus.FLAGS2: u32,
    QueryStatus.SQL_MODE: u64,
    QueryStatus.CATALOG: _short_bytes(),
    QueryStatus.AUTO_INCREMENT: st.tuples(u16, u16),
    QueryStatus.CHARSET: st.tuples(u16, u16, u16),
    QueryStatus.TIME_ZONE: _short_bytes(),
    QueryStatus.CATALOG_NZ: _short_bytes(),
    QueryStatus.LC_TIME_NAMES: u16,
    QueryStatus.CHARSET_DATABASE: u16,
    QueryStatus.TABLE_MAP_FOR_UPDATE: u64,
    QueryStatus.MASTER_DATA_WRITTEN: u32,
    QueryStatus.INVOKER: st.tuples(_short_bytes(), _short_bytes()),
    QueryStatus.UPDATED_DB_NAMES: st.one_of(
        st.lists(_db_names, max_size=16).map(tuple), st.sampled_from([17, 254, 255])
    ),
    QueryStatus.MICROSECONDS: u24,
    QueryStatus.COMMIT_TS: u64,
    QueryStatus.EXPLICIT_DEFAULTS_FOR_TIMESTAMP: u8,
    QueryStatus.DDL_LOGGED_WITH_XID: u64,
    QueryStatus.DEFAULT_COLLATION_FOR_UTF8MB4: u16,
    QueryStatus.SQL_REQUIRE_PRIMARY_KEY: u8,
    QueryStatus.DEFAULT_TABLE_ENCRYPTION: u8,
    QueryStatus.HRNOW: u24,
    QueryStatus.XID: u64,
    QueryStatus.GTID_FLAGS3: _gtid_flags3(),
    QueryStatus.CHARACTER_SET_COLLATIONS: st.lists(st.tuples(u16, u16), max_size=12).map(tuple),
}
"""A value strategy for every status-variable code with a typed value."""

UNKNOWN_STATUS_CODES = tuple(code for code in range(256) if code not in STATUS_VALUES)


def known_status_vars(code: int | None = None) -> st.SearchStrategy[StatusVar]:
    codes = st.just(code) if code is not None else st.sampled_from(sorted(STATUS_VALUES))
    return codes.flatmap(lambda c: STATUS_VALUES[c].map(lambda value: StatusVar(c, value)))


def unknown_status_vars() -> st.SearchStrategy[StatusVar]:
    return st.builds(
        lambda code, rest: StatusVar(code, bytes((code,)) + rest),
        st.sampled_from(UNKNOWN_STATUS_CODES),
        st.binary(max_size=40),
    )


@st.composite
def status_var_lists(draw: st.DrawFn) -> tuple[StatusVar, ...]:
    known = draw(st.lists(known_status_vars(), max_size=8))
    if draw(st.booleans()):
        known.append(draw(unknown_status_vars()))
    return tuple(known)


# Status variables as MariaDB 10.11 writes them for most statements.
typical_status_vars = st.builds(
    lambda flags2, sql_mode, charset: (
        StatusVar(QueryStatus.FLAGS2, flags2),
        StatusVar(QueryStatus.SQL_MODE, sql_mode),
        StatusVar(QueryStatus.CATALOG_NZ, b"std"),
        StatusVar(QueryStatus.CHARSET, charset),
    ),
    u32,
    u64,
    st.tuples(u16, u16, u16),
)


# --- statements ---------------------------------------------------------------------------


def long_texts(min_size: int = 1, max_size: int = 70000) -> st.SearchStrategy[bytes]:
    """Texts up to ``max_size`` bytes, built by repeating a drawn chunk (cheap to draw)."""
    return st.builds(
        lambda chunk, size: (chunk * (size // len(chunk) + 1))[:size],
        st.binary(min_size=1, max_size=64),
        st.integers(min_size, max_size),
    )


@st.composite
def query_events(draw: st.DrawFn, compressed: bool | None = None) -> QueryEvent:
    is_compressed = draw(st.booleans()) if compressed is None else compressed
    if is_compressed:
        query = draw(st.one_of(texts().filter(bool), long_texts()))
    else:
        query = draw(st.one_of(texts(), long_texts(max_size=5000)))
    return QueryEvent(
        **draw(headers()),
        thread_id=draw(u32),
        exec_time=draw(u32),
        error_code=draw(u16),
        status_vars=draw(st.one_of(typical_status_vars, status_var_lists())),
        database=draw(names(255)),
        query=query,
        compressed=is_compressed,
    )


@st.composite
def execute_load_query_events(draw: st.DrawFn) -> ExecuteLoadQueryEvent:
    return ExecuteLoadQueryEvent(
        **draw(headers()),
        thread_id=draw(u32),
        exec_time=draw(u32),
        error_code=draw(u16),
        file_id=draw(u32),
        fn_pos_start=draw(u32),
        fn_pos_end=draw(u32),
        dup_handling=draw(u8),
        status_vars=draw(st.one_of(typical_status_vars, status_var_lists())),
        database=draw(names(255)),
        query=draw(texts()),
    )


def xid_events() -> st.SearchStrategy[XidEvent]:
    return st.builds(lambda h, xid: XidEvent(**h, xid=xid), headers(), u64)


def xa_prepare_events() -> st.SearchStrategy[XaPrepareEvent]:
    xids = st.builds(
        XaXid, u32, st.binary(min_size=1, max_size=64), st.binary(min_size=0, max_size=64)
    )
    full = st.builds(
        XaXid, u32, st.binary(min_size=64, max_size=64), st.binary(min_size=64, max_size=64)
    )
    return st.builds(
        lambda h, one_phase, xid: XaPrepareEvent(**h, one_phase=one_phase, xid=xid),
        headers(),
        st.booleans(),
        st.one_of(xids, full),
    )


def intvar_events() -> st.SearchStrategy[IntvarEvent]:
    return st.builds(
        lambda h, kind, value: IntvarEvent(**h, kind=kind, value=value),
        headers(),
        st.one_of(st.sampled_from([1, 2]), u8),
        u64,
    )


def rand_events() -> st.SearchStrategy[RandEvent]:
    return st.builds(lambda h, a, b: RandEvent(**h, seed1=a, seed2=b), headers(), u64, u64)


# value_type -> raw values as the server writes them (the flags byte only follows INT).
_USER_VAR_VALUES: dict[int, st.SearchStrategy[bytes]] = {
    0: texts(200),
    1: st.floats().map(_DOUBLE.pack),
    2: st.integers(-(1 << 63), U64_MAX).map(lambda v: (v % (1 << 64)).to_bytes(8, "little")),
    4: st.binary(min_size=2, max_size=32),
}


@st.composite
def user_var_events(draw: st.DrawFn) -> UserVarEvent:
    name = draw(st.one_of(st.binary(max_size=64), st.text(max_size=16).map(str.encode)))
    if draw(st.integers(0, 4)) == 0:
        trailing = draw(st.one_of(st.just(b""), st.binary(max_size=8)))
        return UserVarEvent(**draw(headers()), name=name, value=None, trailing=trailing)
    value_type = draw(st.one_of(st.sampled_from(sorted(_USER_VAR_VALUES)), u8))
    value = draw(_USER_VAR_VALUES.get(value_type, st.binary(max_size=32)))
    default_flags = 0 if value_type == 2 else None
    value_flags = draw(st.one_of(st.just(default_flags), st.none(), u8))
    trailing = b"" if value_flags is None else draw(st.one_of(st.just(b""), st.binary(max_size=8)))
    return UserVarEvent(
        **draw(headers()),
        name=name,
        value=value,
        value_type=value_type,
        charset=draw(st.one_of(st.sampled_from([8, 33, 45, 46, 63]), u32)),
        value_flags=value_flags,
        trailing=trailing,
    )


def annotate_rows_events() -> st.SearchStrategy[AnnotateRowsEvent]:
    return st.builds(
        lambda h, q: AnnotateRowsEvent(**h, query=q), headers(), st.one_of(texts(), long_texts())
    )


def begin_load_query_events() -> st.SearchStrategy[BeginLoadQueryEvent]:
    return st.builds(
        lambda h, f, d: BeginLoadQueryEvent(**h, file_id=f, data=d),
        headers(),
        u32,
        st.one_of(texts(), long_texts()),
    )


def append_block_events() -> st.SearchStrategy[AppendBlockEvent]:
    return st.builds(
        lambda h, f, d: AppendBlockEvent(**h, file_id=f, data=d),
        headers(),
        u32,
        st.one_of(texts(), long_texts()),
    )


def delete_file_events() -> st.SearchStrategy[DeleteFileEvent]:
    return st.builds(lambda h, f: DeleteFileEvent(**h, file_id=f), headers(), u32)


def gtid_side_events() -> st.SearchStrategy[Event]:
    return st.one_of(gtid_events(), gtid_list_events(), binlog_checkpoint_events())


def statement_events() -> st.SearchStrategy[Event]:
    """Every event of encoder/query.py and encoder/statement.py."""
    return st.one_of(
        query_events(),
        execute_load_query_events(),
        xid_events(),
        xa_prepare_events(),
        intvar_events(),
        rand_events(),
        user_var_events(),
        annotate_rows_events(),
        begin_load_query_events(),
        append_block_events(),
        delete_file_events(),
    )
