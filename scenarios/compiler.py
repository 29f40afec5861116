"""A scenario compiled to the events a MariaDB 10.11 primary writes for the same statements,
and to binlog files (through the encoder, in a :class:`~fakemaster.store.MemoryBinlogStore`).

Per transaction that changes rows (InnoDB: :func:`scenarios.sql.transaction_sql`)::

    GTID (flags2 TRANSACTIONAL|ALLOW_PARALLEL, the transaction's domain and server id)
    per statement that changes rows:
        ANNOTATE_ROWS (its text; with binlog_annotate_row_events)
        TABLE_MAP (binlog_row_metadata: NO_LOG none, MINIMAL signedness and charsets, FULL
                   also names, ENUM/SET members and the primary key)
        WRITE/UPDATE/DELETE_ROWS v1, split where binlog_row_event_max_size says, the last
        with STMT_END
    XID

Per DDL statement (:class:`~scenarios.history.Ddl`): GTID (flags2 STANDALONE|ALLOW_PARALLEL|DDL)
and the statement's QUERY event (:func:`ddl_query_event`); the table it creates, alters,
truncates or renames gets a new table id (the server opens a new table share).

A change of a non-transactional table (``ENGINE=MyISAM``) is written when its statement ends,
in a group of its own: GTID (flags2 ALLOW_PARALLEL only), its ANNOTATE_ROWS, TABLE_MAP and rows
events, and a ``COMMIT`` QUERY event; so it comes before the group of the transaction it is
in, and that group (written at COMMIT) loses the TRANSACTIONAL flag (the transaction modified
a non-transactional table).

An XA transaction prepared (``XA PREPARE``): GTID (flags2 PREPARED_XA|TRANSACTIONAL|
ALLOW_PARALLEL, the xid, flags_extra MULTI_ENGINE with extra_engines 255), its statements,
``XA END xid`` (a QUERY) and XA_PREPARE; its ``XA COMMIT``/``XA ROLLBACK`` later: GTID (flags2
COMPLETED_XA|TRANSACTIONAL|ALLOW_PARALLEL|STANDALONE, the xid) and the statement's QUERY, the
xid written ``X'gtrid',X'bqual',formatID``. (A prepared XA changes rows: see
:meth:`~scenarios.history.Scenario.xa_transaction`.) ``XA COMMIT ... ONE PHASE`` is written as any transaction (GTID ... XID).

A restart (:class:`~scenarios.history.Restart`) ends the file with STOP (the old server id)
and starts the next with the server id and settings it comes back with; table ids are handed
out again from the first as tables are opened. An idle period moves the timestamps of what
follows.

With ``rows_event_version=2`` the rows events are MySQL's v2 ones (types 30-32, an empty
extra-data block), split the same way counting their longer header; compiled only (no MariaDB
writes them; a MariaDB replica and python-mysql-replication read them).

Row images follow ``binlog_row_image`` (MariaDB's ``TABLE::mark_columns_per_binlog_row_image``
and ``binlog_prepare_row_images``): FULL every column; MINIMAL the key in before images, the
columns an INSERT names or an UPDATE sets in after images; NOBLOB every column but TEXT/BLOB in
before images, plus the TEXT/BLOB an INSERT names or an UPDATE sets in after images. A table
without a key is logged FULL whatever the setting.

A statement's rows go into one rows event until adding a row would make the event's data
(8 bytes of post-header, the packed width, the bitmaps, the rows so far) exceed
``binlog_row_event_max_size``: the row then starts the next event (``Rows_log_event::
get_data_size`` in ``THD::binlog_prepare_pending_rows_event``). A row is never split. With
``log_bin_compress``, an event is compressed (v1 compressed types) when the row that starts it
takes at least ``log_bin_compress_min_len`` bytes (both images of an UPDATE row); the rows that
join it later do not change that (``binlog_should_compress`` in ``THD::binlog_write_row`` picks
the type of a new pending event only).

What the binlog cannot know is chosen here and named in :class:`CompileOptions`: table ids, XID
numbers and event timestamps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from encoder.primitives import packed_int
from encoder.values import table_encoder
from fakemaster.columns import member_counts
from fakemaster.constants import (
    BINLOG_MAGIC,
    MARIADB_POST_HEADER_LENGTHS,
    EventFlag,
    EventType,
    GtidExtraFlag,
    GtidFlag,
    OptionalMetadata,
    QueryStatus,
    RowsFlag,
    TableMapFlag,
)
from fakemaster.demo import DEFAULT_SQL_MODE_BITS, QUERY_FLAGS2, THREAD_ID
from fakemaster.events import (
    AnnotateRowsEvent,
    DeleteRowsEvent,
    Event,
    Gtid,
    GtidEvent,
    MetadataField,
    QueryEvent,
    RowsEvent,
    StatusVar,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.protocol.charsets import UTF8MB4_GENERAL_CI
from fakemaster.store import MemoryBinlogStore
from fakemaster.values import ABSENT
from scenarios.ddl import AlterTable, CreateTable, DropTable, TruncateTable
from scenarios.history import (
    Change,
    Ddl,
    Delete,
    Idle,
    Insert,
    Restart,
    Rotate,
    Row,
    Scenario,
    SetSettings,
    Settings,
    Transaction,
    Update,
    XaEnd,
    xa_text,
)
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Table
from scenarios.sql import SESSION_TIME_ZONE, statement_sql
from scenarios.values import python_codec

__all__ = [
    "ROWS_POST_HEADER",
    "TRANSACTION_FLAGS2",
    "CompileOptions",
    "CompiledTransaction",
    "DDL_FLAGS2",
    "NON_TRANSACTIONAL_FLAGS2",
    "XA_END_FLAGS2",
    "XA_PREPARE_EXTRA_ENGINES",
    "XA_PREPARE_FLAGS2",
    "commit_query_event",
    "session_query_event",
    "statement_uses_time_zone",
    "binlog_files",
    "codec_row",
    "compile_scenario",
    "ddl_query_event",
    "flatten",
    "rows_events",
    "image_columns",
    "optional_metadata",
    "table_map_event",
    "to_store",
]

# Rows_log_event::get_data_size counts the v1 post-header (table id 6, flags 2).
ROWS_POST_HEADER = MARIADB_POST_HEADER_LENGTHS[EventType.WRITE_ROWS_V1 - 1]
ROWS_V2_POST_HEADER = MARIADB_POST_HEADER_LENGTHS[EventType.WRITE_ROWS_V2 - 1]
TRANSACTION_FLAGS2 = GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL


@dataclass(frozen=True)
class CompileOptions:
    """What the compiled stream chooses that the history does not say: the table id of each
    table (by ``database.table``; others numbered from ``first_table_id`` in declaration
    order), the first XID, and the events' timestamp."""

    table_ids: Mapping[str, int] = field(default_factory=dict)
    first_table_id: int = 18
    first_xid: int = 1
    timestamp: int = 1_700_000_000


@dataclass(frozen=True)
class CompiledTransaction:
    """An event group of a transaction (or a DDL statement), GTID first; empty when the
    transaction changes no row (then it has no GTID either). A transaction that changes
    non-transactional tables has several groups (one per such statement, then its own)."""

    transaction: Transaction | Ddl | XaEnd
    gtid: Gtid | None
    events: tuple[Event, ...]


# --- TABLE_MAP --------------------------------------------------------------------------------


def _charset_field(collations: list[int], default_kind: int, column_kind: int) -> MetadataField:
    """DEFAULT_CHARSET (the most used collation, ties to the smaller id, then the exceptions) or
    COLUMN_CHARSET (one per column), whichever MariaDB picks as shorter."""
    default = max(sorted(set(collations)), key=collations.count)
    exceptions = tuple((i, c) for i, c in enumerate(collations) if c != default)
    if len(collations) < 1 + 2 * len(exceptions):
        return MetadataField(column_kind, tuple(collations))
    return MetadataField(default_kind, (default, exceptions))


def _members(table: Table, position: int) -> tuple[bytes, ...]:
    column = table.columns[position]
    codec = python_codec(column.charset) or "utf-8"
    return tuple(member.encode(codec) for member in column.members)


def optional_metadata(table: Table, level: str) -> tuple[MetadataField, ...]:
    """The TABLE_MAP optional metadata MariaDB writes at ``binlog_row_metadata`` ``level``."""
    if level == "NO_LOG":
        return ()
    fields: list[MetadataField] = []
    signedness = tuple(
        bit for bit in (column.signedness_bit for column in table.columns) if bit is not None
    )
    if signedness:
        fields.append(MetadataField(OptionalMetadata.SIGNEDNESS, signedness))
    characters = [c.collation_id for c in table.columns if c.has_charset_metadata]
    if characters:
        fields.append(
            _charset_field(
                characters, OptionalMetadata.DEFAULT_CHARSET, OptionalMetadata.COLUMN_CHARSET
            )
        )
    if level != "FULL":
        return tuple(fields)
    fields.append(
        MetadataField(OptionalMetadata.COLUMN_NAME, tuple(c.name.encode() for c in table.columns))
    )
    enum_sets = [c for c in table.columns if c.type in ("enum", "set")]
    if enum_sets:
        fields.append(
            _charset_field(
                [c.collation_id for c in enum_sets],
                OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET,
                OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET,
            )
        )
    positions = range(table.width)
    sets = tuple(_members(table, p) for p in positions if table.columns[p].type == "set")
    if sets:
        fields.append(MetadataField(OptionalMetadata.SET_STR_VALUE, sets))
    enums = tuple(_members(table, p) for p in positions if table.columns[p].type == "enum")
    if enums:
        fields.append(MetadataField(OptionalMetadata.ENUM_STR_VALUE, enums))
    if table.key:
        fields.append(MetadataField(OptionalMetadata.SIMPLE_PRIMARY_KEY, table.key))
    return tuple(fields)


def table_map_event(table: Table, table_id: int, settings: Settings) -> TableMapEvent:
    return TableMapEvent(
        table_id=table_id,
        table_flags=TableMapFlag.BIT_LEN_EXACT,
        database=table.database,
        table=table.name,
        column_types=tuple(int(c.binlog_type) for c in table.columns),
        column_meta=tuple(c.binlog_meta for c in table.columns),
        nullable=tuple(c.nullable for c in table.columns),
        optional_metadata=optional_metadata(table, settings.binlog_row_metadata),
    )


# --- row images -------------------------------------------------------------------------------


def image_columns(change: Change, settings: Settings) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The columns of the before and after images of ``change`` (() for the image it has not:
    an INSERT has no before image, a DELETE no after image)."""
    table = change.table
    every = tuple(range(table.width))
    mode = settings.binlog_row_image if table.key else "FULL"
    no_blobs = tuple(p for p in every if not table.columns[p].is_blob or p in table.key)
    if isinstance(change, Insert):
        if mode == "MINIMAL":
            return (), change.given
        if mode == "NOBLOB":
            return (), tuple(sorted({*no_blobs, *change.given}))
        return (), every
    before = {"FULL": every, "MINIMAL": table.key, "NOBLOB": no_blobs}[mode]
    if isinstance(change, Delete):
        return before, ()
    if mode == "MINIMAL":
        after = change.assigned
    elif mode == "NOBLOB":
        after = tuple(sorted({*no_blobs, *change.assigned}))
    else:
        after = every
    return before, after


def codec_row(table: Table, row: Row, present: Iterable[int], signed_integers: bool) -> Row:
    """The image of ``row`` as the encoder takes it: ABSENT outside ``present``; unsigned
    integers as their signed bits when the TABLE_MAP does not say they are unsigned; BINARY(n)
    without its trailing NULs (the server logs it so, and a replica pads it again)."""
    keep = set(present)
    out: list[Any] = []
    for position, (column, value) in enumerate(zip(table.columns, row, strict=True)):
        if position not in keep:
            out.append(ABSENT)
            continue
        if signed_integers and column.unsigned and column.type in INTEGER_RANGES and value:
            bits = column.bits_wide()
            if value >= 1 << (bits - 1):
                value -= 1 << bits
        elif column.type == "binary" and value is not None:
            value = value.rstrip(b"\x00")  # Field_string::pack drops the NUL padding
        out.append(value)
    return tuple(out)


def _bitmap(positions: Iterable[int], width: int) -> bytes:
    mask = 0
    for position in positions:
        mask |= 1 << position
    return mask.to_bytes((width + 7) // 8, "little")


def _mask(positions: Iterable[int]) -> int:
    mask = 0
    for position in positions:
        mask |= 1 << position
    return mask


def _logged_rows(change: Change) -> list[tuple[Row | None, Row | None]]:
    if isinstance(change, Insert):
        return [(None, row) for row in change.rows]
    if isinstance(change, Update):
        return [] if change.changes_nothing else [(change.before, change.after)]
    return [(change.before, None)]


def rows_events(change: Change, table_map: TableMapEvent, settings: Settings) -> list[RowsEvent]:
    """The rows events of one statement (split at binlog_row_event_max_size), [] when it
    changes no row."""
    logged = _logged_rows(change)
    if not logged:
        return []
    table = change.table
    width = table.width
    before_cols, after_cols = image_columns(change, settings)
    signed = settings.binlog_row_metadata == "NO_LOG"
    encoder = table_encoder(table_map)
    members = member_counts(table_map)
    if members is not None:
        encoder = encoder.with_members(members)
    if isinstance(change, Update):
        kind: type[RowsEvent] = UpdateRowsEvent
        present, present_after = _mask(before_cols), _mask(after_cols)
        bitmaps = 2
    elif isinstance(change, Insert):
        kind, present, present_after, bitmaps = WriteRowsEvent, _mask(after_cols), None, 1
    else:
        kind, present, present_after, bitmaps = DeleteRowsEvent, _mask(before_cols), None, 1
    images: list[Any] = []
    for before, after in logged:
        if isinstance(change, Update):
            assert before is not None and after is not None
            images.append(
                (
                    codec_row(table, before, before_cols, signed),
                    codec_row(table, after, after_cols, signed),
                )
            )
        elif isinstance(change, Insert):
            assert after is not None
            images.append(codec_row(table, after, after_cols, signed))
        else:
            assert before is not None
            images.append(codec_row(table, before, before_cols, signed))
    version = settings.rows_event_version
    # v2: a longer post-header and the 2 bytes of the (empty) extra data's length.
    post_header = ROWS_POST_HEADER if version == 1 else ROWS_V2_POST_HEADER + 2
    overhead = post_header + len(packed_int(width)) + bitmaps * ((width + 7) // 8)
    limit = settings.binlog_row_event_max_size
    groups: list[tuple[bool, list[Any]]] = []
    size = 0
    for image in images:
        needed = len(encoder.write_rows(width, present, present_after, [image]))
        if groups and size + needed <= limit:
            groups[-1][1].append(image)
            size += needed
        else:
            # The row that starts an event decides whether it is compressed.
            compress = settings.log_bin_compress and needed >= settings.log_bin_compress_min_len
            groups.append((compress, [image]))
            size = overhead + needed
    events: list[RowsEvent] = []
    for index, (compressed, group) in enumerate(groups):
        fields: dict[str, Any] = {
            "table_id": table_map.table_id,
            "rows_flags": RowsFlag.STMT_END if index == len(groups) - 1 else 0,
            "width": width,
            "columns_present": _bitmap(
                before_cols if kind is not WriteRowsEvent else after_cols, width
            ),
            "rows": tuple(group),
            "compressed": compressed,
            "version": version,
        }
        if kind is UpdateRowsEvent:
            fields["columns_present_after"] = _bitmap(after_cols, width)
        events.append(kind(**fields))
    return events


# --- DDL ---------------------------------------------------------------------------------------

DDL_FLAGS2 = GtidFlag.STANDALONE | GtidFlag.ALLOW_PARALLEL | GtidFlag.DDL
NON_TRANSACTIONAL_FLAGS2 = int(GtidFlag.ALLOW_PARALLEL)
XA_PREPARE_FLAGS2 = GtidFlag.PREPARED_XA | GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
XA_END_FLAGS2 = (
    GtidFlag.COMPLETED_XA | GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL | GtidFlag.STANDALONE
)
# What 10.11 writes in an XA PREPARE group's GTID: flags_extra MULTI_ENGINE with this count.
XA_PREPARE_EXTRA_ENGINES = 255
# The status variables of the session's QUERY events (pymysql's utf8mb4 connection, no default
# database, the default sql_mode).
_SESSION_STATUS = (
    StatusVar(QueryStatus.FLAGS2, QUERY_FLAGS2),
    StatusVar(QueryStatus.SQL_MODE, DEFAULT_SQL_MODE_BITS),
    StatusVar(QueryStatus.CATALOG_NZ, b"std"),
    StatusVar(QueryStatus.CHARSET, (UTF8MB4_GENERAL_CI,) * 3),
)


def _uses_time_zone(step: Ddl) -> bool:
    """A CREATE or ALTER TABLE whose table has a TIMESTAMP column with a literal DEFAULT: the
    server converts the default in the session's time zone, and logs that zone (Q_TIME_ZONE)."""
    if not isinstance(step.statement, CreateTable | AlterTable) or step.after is None:
        return False
    return any(
        column.type == "timestamp" and column.default not in (NO_DEFAULT, None)
        for column in step.after.columns
    )


def ddl_query_event(step: Ddl, xid: int, settings: Settings | None = None) -> QueryEvent:
    """The QUERY event of a DDL statement as MariaDB 10.11 logs it from a session with no
    default database: the session's FLAGS2, SQL_MODE, catalog and utf8mb4 charsets, then
    ``Q_XID`` (``xid``) for the statements logged with an XID (all but TRUNCATE). DROP TABLE is
    logged as the server rewrites it (names quoted, ``/* generated by server */``), with the
    THREAD_SPECIFIC flag. A CREATE or ALTER TABLE of a table with a TIMESTAMP column that has a
    literal DEFAULT also carries the session's time zone (``Q_TIME_ZONE``, before ``Q_XID``). With ``log_bin_compress`` (``settings``) a statement at least
    ``log_bin_compress_min_len`` long is a QUERY_COMPRESSED event (the session's COMMIT and XA
    statements never are)."""
    status = list(_SESSION_STATUS)
    if _uses_time_zone(step):
        status.append(StatusVar(QueryStatus.TIME_ZONE, SESSION_TIME_ZONE.encode()))
    if not isinstance(step.statement, TruncateTable):
        status.append(StatusVar(QueryStatus.XID, xid))
    query = step.sql
    flags = 0
    if isinstance(step.statement, DropTable):
        query += " /* generated by server */"
        flags = EventFlag.THREAD_SPECIFIC
    text = query.encode()
    compressed = bool(
        settings and settings.log_bin_compress and len(text) >= settings.log_bin_compress_min_len
    )
    return QueryEvent(
        flags=flags,
        thread_id=THREAD_ID,
        status_vars=tuple(status),
        query=text,
        compressed=compressed,
    )


# --- whole scenarios --------------------------------------------------------------------------


class _TableIds:
    """Table ids as the server hands them out: one per table share, a new one when a DDL
    statement makes a new share (CREATE, ALTER, TRUNCATE, RENAME); ``options.table_ids`` fixes
    the first id of a table by name."""

    def __init__(self, scenario: Scenario, options: CompileOptions) -> None:
        self.fixed = dict(options.table_ids)
        self.taken = set(self.fixed.values())
        self.first_id = self.next_id = options.first_table_id
        self.ids: dict[str, int] = {}
        self.maps: dict[tuple[int, str], TableMapEvent] = {}
        for name in scenario.initial_tables:
            self.new(name)

    def restart(self) -> None:
        """After a restart no table is open: ids are handed out again from the first, as
        tables are opened (their next TABLE_MAP, or a DDL statement)."""
        self.ids.clear()
        self.maps.clear()
        self.taken = set()
        self.next_id = self.first_id

    def new(self, name: str) -> None:
        if name in self.fixed:
            number = self.fixed.pop(name)
        else:
            while self.next_id in self.taken:
                self.next_id += 1
            number = self.next_id
        self.taken.add(number)
        self.ids[name] = number

    def table_map(self, table: Table, settings: Settings) -> TableMapEvent:
        if table.qualified not in self.ids:
            self.new(table.qualified)
        number = self.ids[table.qualified]
        key = (number, settings.binlog_row_metadata)
        found = self.maps.get(key)
        if found is None:
            found = self.maps[key] = table_map_event(table, number, settings)
        return found


def compile_scenario(
    scenario: Scenario, options: CompileOptions | None = None
) -> list[CompiledTransaction]:
    """Every transaction and DDL statement of ``scenario`` (in order) as the events a MariaDB
    10.11 primary writes for it (headers' log_pos left 0: a file or a store places them)."""
    options = options or CompileOptions()
    settings = scenario.initial_settings
    ids = _TableIds(scenario, options)
    last_seq: dict[int, int] = {}
    for gtid in scenario.gtid_state:
        last_seq[gtid.domain_id] = max(last_seq.get(gtid.domain_id, 0), gtid.seq_no)
    xid = options.first_xid
    stamp = options.timestamp
    compiled: list[CompiledTransaction] = []

    def group(
        step: Transaction | Ddl | XaEnd,
        body: list[Event],
        flags2: int,
        xa: XaXid | None = None,
        prepare: bool = False,
    ) -> None:
        seq = last_seq.get(step.domain_id, 0) + 1
        last_seq[step.domain_id] = seq
        gtid_event = GtidEvent(
            flags=EventFlag.SUPPRESS_USE,
            seq_no=seq,
            domain_id=step.domain_id,
            flags2=flags2,
            xid=xa,
            flags_extra=GtidExtraFlag.MULTI_ENGINE if prepare else 0,
            extra_engines=XA_PREPARE_EXTRA_ENGINES if prepare else None,
        )
        server = step.server_id
        events_out = tuple(_stamped(event, server, stamp) for event in (gtid_event, *body))
        compiled.append(CompiledTransaction(step, Gtid(step.domain_id, server, seq), events_out))

    for step in scenario.steps:
        if isinstance(step, SetSettings):
            settings = step.settings
            continue
        if isinstance(step, Restart):
            settings = step.settings
            ids.restart()
            continue
        if isinstance(step, Idle):
            stamp += step.seconds
            continue
        if isinstance(step, Rotate):
            continue
        if isinstance(step, Ddl):
            body: list[Event] = [ddl_query_event(step, xid, settings)]
            xid += 1
            if step.after is not None and not isinstance(step.statement, DropTable):
                ids.new(step.after.qualified)
            group(step, body, DDL_FLAGS2)
            continue
        if isinstance(step, XaEnd):
            assert step.transaction.xa is not None
            verb = "COMMIT" if step.commit else "ROLLBACK"
            query = f"XA {verb} {xa_text(step.transaction.xa)}"
            group(step, [session_query_event(query)], XA_END_FLAGS2, step.transaction.xa)
            continue
        body = []
        non_transactional = False
        for change in step.changes:
            table_map = ids.table_map(change.table, settings)
            events = rows_events(change, table_map, settings)
            if not events:
                continue
            statement: list[Event] = []
            if settings.binlog_annotate_row_events:
                statement.append(AnnotateRowsEvent(query=statement_sql(change).encode()))
            statement.append(table_map)
            statement += events
            if change.table.transactional:
                body += statement
            else:
                # Written at once, in a group of its own (before the transaction's own group,
                # which is written at COMMIT and is no longer flagged TRANSACTIONAL).
                non_transactional = True
                commit = commit_query_event(statement_uses_time_zone(change))
                group(step, [*statement, commit], NON_TRANSACTIONAL_FLAGS2)
        if body and step.prepared:
            assert step.xa is not None
            body.append(session_query_event(f"XA END {xa_text(step.xa)}"))
            body.append(XaPrepareEvent(one_phase=False, xid=step.xa))
            group(step, body, XA_PREPARE_FLAGS2, step.xa, prepare=True)
        elif body:
            body.append(XidEvent(xid=xid))
            xid += 1
            flags2 = NON_TRANSACTIONAL_FLAGS2 if non_transactional else TRANSACTION_FLAGS2
            group(step, body, flags2)
        elif not non_transactional:
            compiled.append(CompiledTransaction(step, None, ()))
    return compiled


def session_query_event(query: str) -> QueryEvent:
    """A QUERY event the server writes for the session inside a group (``COMMIT`` of a
    non-transactional table's changes, ``XA END``, ``XA COMMIT``/``XA ROLLBACK``)."""
    return QueryEvent(
        flags=EventFlag.SUPPRESS_USE,
        thread_id=THREAD_ID,
        status_vars=_SESSION_STATUS,
        query=query.encode(),
    )


def commit_query_event(time_zone: bool = False) -> QueryEvent:
    """The ``COMMIT`` QUERY event that ends a group of a non-transactional table's changes;
    with ``time_zone`` when the statement used the session's time zone (Q_TIME_ZONE, see
    :func:`statement_uses_time_zone`)."""
    event = session_query_event("COMMIT")
    if time_zone:
        zone = StatusVar(QueryStatus.TIME_ZONE, SESSION_TIME_ZONE.encode())
        event = replace(event, status_vars=(*event.status_vars, zone))
    return event


def statement_uses_time_zone(change: Change) -> bool:
    """Whether the statement of ``change`` converts a TIMESTAMP literal in the session's time
    zone: a non-NULL TIMESTAMP value it inserts or sets, or that its WHERE names (the key, or
    every column of a table without one). A default taken is no literal."""
    table = change.table
    if isinstance(change, Insert):
        named = [(p, row[p]) for row in change.rows for p in change.given]
    else:
        where = table.key or range(table.width)
        named = [(p, change.before[p]) for p in where]
        if isinstance(change, Update):
            named += [(p, change.after[p]) for p in change.assigned]
    return any(table.columns[p].type == "timestamp" and v is not None for p, v in named)


def _stamped(event: Event, server_id: int, timestamp: int) -> Event:
    from dataclasses import replace

    return replace(event, server_id=server_id, timestamp=timestamp)


def to_store(
    scenario: Scenario,
    options: CompileOptions | None = None,
    *,
    store: MemoryBinlogStore | None = None,
    clock: Callable[[], float] | None = None,
) -> MemoryBinlogStore:
    """The compiled scenario written into a memory store (a new one with the scenario's
    settings, or ``store``), one event group per transaction that changes rows, a new file at
    each rotation; what fakemaster serves."""
    options = options or CompileOptions()
    settings = scenario.initial_settings
    now = [options.timestamp]  # the clock of a new store: idle periods move it on
    if store is None:
        store = MemoryBinlogStore(
            server_id=settings.server_id,
            server_version=settings.server_version,
            checksum=settings.binlog_checksum,
            domain_id=settings.gtid_domain_id,
            clock=clock or (lambda: float(now[0])),
            initial_state=scenario.gtid_state,
        )
    by_step: dict[int, list[CompiledTransaction]] = {}
    for compiled_item in compile_scenario(scenario, options):
        by_step.setdefault(id(compiled_item.transaction), []).append(compiled_item)
    for step in scenario.steps:
        if isinstance(step, Rotate):
            store.rotate()
            continue
        if isinstance(step, SetSettings):
            if step.rotates:
                store.checksum = step.settings.binlog_checksum
                store.rotate()
            continue
        if isinstance(step, Restart):
            store.checksum = step.settings.binlog_checksum
            store.restart(server_id=step.settings.server_id)
            continue
        if isinstance(step, Idle):
            now[0] += step.seconds
            continue
        for item in by_step.get(id(step), ()):
            if item.gtid is None:
                continue
            gtid_event = item.events[0]
            assert isinstance(gtid_event, GtidEvent)
            if gtid_event.flags_extra:
                # append_transaction writes no flags_extra: the group as it is.
                store.append(item.events, stamp=False)
                continue
            store.append_transaction(
                item.events[1:],
                domain_id=item.gtid.domain_id,
                server_id=item.gtid.server_id,
                seq_no=item.gtid.seq_no,
                flags2=gtid_event.flags2,
                xid=gtid_event.xid,
                timestamp=gtid_event.timestamp,
            )
    return store


def binlog_files(store: MemoryBinlogStore) -> dict[str, bytes]:
    """Every file of ``store`` as bytes (magic first), by name."""
    return {name: _whole(store, name) for name in store.file_names()}


def _whole(store: MemoryBinlogStore, name: str) -> bytes:
    return BINLOG_MAGIC + b"".join(data for _, data in store.iter_events(name))


def flatten(compiled: Sequence[CompiledTransaction]) -> list[Event]:
    return [event for item in compiled for event in item.events]
