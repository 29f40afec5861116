"""A scenario compiled to the events a MariaDB 10.11 primary writes for the same statements,
and to binlog files (through the encoder, in a :class:`~fakemaster.store.MemoryBinlogStore`).

Per transaction that changes rows (InnoDB: :func:`scenarios.script.transaction_sql`)::

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

import functools
import gc
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ParamSpec, TypeVar

from encoder.core import encode_body
from encoder.primitives import packed_int
from encoder.rows import rows_body
from encoder.statement import encode_annotate_rows, encode_xid
from encoder.values import TableEncoder, table_encoder
from fakemaster.protocol.charsets import UTF8MB4_GENERAL_CI
from fakemaster.store import BinlogStore, MemoryBinlogStore
from fakemaster.store.demo import DEFAULT_SQL_MODE_BITS, QUERY_FLAGS2, THREAD_ID
from fakemaster.vocabulary.columns import member_counts
from fakemaster.vocabulary.constants import (
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
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
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
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES, FixedBinaryValue
from fakemaster.vocabulary.values import ABSENT
from scenarios.changes import Change, Delete, Insert, Update
from scenarios.ddl import AlterTable, CreateTable, DropTable, TruncateTable
from scenarios.history import (
    Ddl,
    Idle,
    Restart,
    Rotate,
    Row,
    Scenario,
    SetSettings,
    Settings,
    Step,
    Transaction,
    XaEnd,
    history_row,
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
    "StepCompiler",
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
    "compile_groups",
    "compile_scenario",
    "ddl_query_event",
    "flatten",
    "rows_events",
    "image_columns",
    "optional_metadata",
    "table_map_event",
    "to_store",
    "write_step",
]

# Rows_log_event::get_data_size counts the v1 post-header (table id 6, flags 2).
ROWS_POST_HEADER = MARIADB_POST_HEADER_LENGTHS[EventType.WRITE_ROWS_V1 - 1]
ROWS_V2_POST_HEADER = MARIADB_POST_HEADER_LENGTHS[EventType.WRITE_ROWS_V2 - 1]
TRANSACTION_FLAGS2 = GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL

EventT = TypeVar("EventT", bound=Event)
# The context of bodies that do not depend on the stream (ANNOTATE_ROWS, XID).
_NO_CONTEXT = BinlogContext()


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


@dataclass(frozen=True, slots=True)
class _TableFacts:
    """What the row images of a table need, worked out once per table (not per row)."""

    table: Table
    qualified: str
    transactional: bool
    width: int
    key: tuple[int, ...]
    every: tuple[int, ...]
    no_blobs: tuple[int, ...]  # every column but TEXT/BLOB (unless in the key)
    unsigned: tuple[tuple[int, int], ...]  # (position, bits) of the unsigned integer columns
    binary: tuple[int, ...]  # BINARY(n) columns
    every_mask: int
    every_bitmap: bytes
    bitmap_size: int
    width_size: int  # bytes of the packed column count

    def mask(self, positions: tuple[int, ...]) -> int:
        return self.every_mask if positions is self.every else _mask(positions)

    def bitmap(self, positions: tuple[int, ...]) -> bytes:
        return self.every_bitmap if positions is self.every else _bitmap(positions, self.width)


_FACTS: dict[int, _TableFacts] = {}
_MAX_FACTS = 1024


def _facts(table: Table) -> _TableFacts:
    """The facts of ``table`` (tables are frozen: cached by identity, the table kept with
    them, so an id is never reused while its entry lives)."""
    found = _FACTS.get(id(table))
    if found is not None and found.table is table:
        return found
    key = table.key
    every = tuple(range(table.width))
    columns = table.columns
    found = _TableFacts(
        table=table,
        qualified=table.qualified,
        transactional=table.transactional,
        width=table.width,
        key=key,
        every=every,
        no_blobs=tuple(p for p in every if not columns[p].is_blob or p in key),
        unsigned=tuple(
            (p, columns[p].bits_wide())
            for p in every
            if columns[p].unsigned and columns[p].type in INTEGER_RANGES
        ),
        binary=tuple(
            p for p in every if columns[p].type == "binary" or columns[p].type in FIXED_BINARY_TYPES
        ),
        every_mask=_mask(every),
        every_bitmap=_bitmap(every, table.width),
        bitmap_size=(table.width + 7) // 8,
        width_size=len(packed_int(table.width)),
    )
    if len(_FACTS) >= _MAX_FACTS:
        _FACTS.clear()
    _FACTS[id(table)] = found
    return found


def image_columns(change: Change, settings: Settings) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The columns of the before and after images of ``change`` (() for the image it has not:
    an INSERT has no before image, a DELETE no after image)."""
    return _image_columns(change, settings, _facts(change.table))


def _image_columns(
    change: Change, settings: Settings, facts: _TableFacts
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    every = facts.every
    # A sequence's row (no key) is logged as any keyed row: MINIMAL, its moved columns.
    mode = settings.binlog_row_image if facts.key or facts.table.sequence else "FULL"
    if mode == "FULL":
        if isinstance(change, Insert):
            return (), every
        if isinstance(change, Delete):
            return every, ()
        return every, every
    no_blobs = facts.no_blobs
    if mode == "MINIMAL" and facts.table.period is not None:
        # A system-versioned table's after images are whole in MINIMAL too (10.11).
        return (() if isinstance(change, Insert) else facts.key), every
    if isinstance(change, Insert):
        if mode == "MINIMAL":
            return (), tuple(sorted({*change.given, *change.filled}))
        return (), tuple(sorted({*no_blobs, *change.given, *change.filled}))
    before = {"MINIMAL": facts.key, "NOBLOB": no_blobs}[mode]
    if isinstance(change, Delete):
        return before, ()
    if mode == "MINIMAL":
        after = tuple(sorted({*change.assigned, *change.filled}))
    else:
        after = tuple(sorted({*no_blobs, *change.assigned, *change.filled}))
    return before, after


def codec_row(table: Table, row: Row, present: Iterable[int], signed_integers: bool) -> Row:
    """The image of ``row`` as the encoder takes it: ABSENT outside ``present``; unsigned
    integers as their signed bits when the TABLE_MAP does not say they are unsigned; BINARY(n)
    without its trailing NULs (the server logs it so, and a replica pads it again)."""
    facts = _facts(table)
    keep = frozenset(present)
    return _codec_row(facts, row, None if keep.issuperset(facts.every) else keep, signed_integers)


def _codec_row(
    facts: _TableFacts, row: Row, keep: frozenset[int] | None, signed_integers: bool
) -> Row:
    """:func:`codec_row` with the table's facts; ``keep`` None for every column."""
    if len(row) != facts.width:
        raise ValueError(f"a row of {len(row)} values for {facts.width} columns")
    unsigned = facts.unsigned if signed_integers else ()
    if keep is None and not unsigned and not facts.binary:
        return row if type(row) is tuple else tuple(row)
    out = list(row)
    if keep is not None:
        for position in facts.every:
            if position not in keep:
                out[position] = ABSENT
    for position, bits in unsigned:
        value = out[position]
        if value is not ABSENT and value and value >= 1 << (bits - 1):
            out[position] = value - (1 << bits)
    for position in facts.binary:
        value = out[position]
        if isinstance(value, FixedBinaryValue):  # UUID/INET4/INET6: logged as BINARY(n)
            out[position] = value.logged()
        elif value is not ABSENT and value is not None:
            out[position] = value.rstrip(b"\x00")  # Field_string::pack drops the NUL padding
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


_ENCODERS: dict[tuple[int, int, int], tuple[Any, Any, Any, TableEncoder]] = {}


def _row_encoder(table_map: TableMapEvent) -> TableEncoder:
    """The row encoder of ``table_map`` (with its ENUM/SET member counts), by the identity of
    its column tuples (tuples do not change; a TABLE_MAP given new ones is looked up again)."""
    types, meta, optional = (
        table_map.column_types,
        table_map.column_meta,
        table_map.optional_metadata,
    )
    key = (id(types), id(meta), id(optional))
    entry = _ENCODERS.get(key)
    if entry is not None and entry[0] is types and entry[1] is meta and entry[2] is optional:
        return entry[3]
    encoder = table_encoder(table_map)
    members = member_counts(table_map)
    if members is not None:
        encoder = encoder.with_members(members)
    if len(_ENCODERS) >= _MAX_FACTS:
        _ENCODERS.clear()
    _ENCODERS[key] = (types, meta, optional, encoder)
    return encoder


def _versioned_parts(change: Change) -> list[Change]:
    """A system-versioned table's statement as the plain changes it logs."""
    if isinstance(change, Delete) and change.after is not None:
        end = change.table.period_positions
        assert end is not None
        return [Update(change.table, change.before, change.after, (end[1],))]
    if isinstance(change, Update):
        history = history_row(change)
        if history is not None:
            return [change, Insert(change.table, (history,), change.table.declared_positions)]
    return [change]


def rows_events(
    change: Change,
    table_map: TableMapEvent,
    settings: Settings,
    *,
    server_id: int = 1,
    timestamp: int = 0,
    bodies: dict[int, bytes] | None = None,
    statement_end: bool = True,
    versioned: bool = True,
) -> list[RowsEvent]:
    """The rows events of one statement (split at binlog_row_event_max_size), [] when it
    changes no row; their headers carry ``server_id`` and ``timestamp``. A system-versioned
    table's UPDATE is its UPDATE_ROWS then the WRITE_ROWS of the history row (STMT_END on the
    last), its DELETE an UPDATE_ROWS ending the row (:mod:`scenarios.versioning`).

    ``bodies``: where to put each event's encoded body (by ``id(event)``), as the encoder
    writes it in a stream of 6-byte table ids: the rows are encoded here once, to size the
    events, and those bytes are the events' rows (:func:`to_store` hands them to the store).
    """
    if change.table.period is not None and versioned:
        parts = _versioned_parts(change)
        if len(parts) > 1 or parts[0] is not change:
            parted: list[RowsEvent] = []
            for number, part in enumerate(parts, 1):
                parted += rows_events(
                    part,
                    table_map,
                    settings,
                    server_id=server_id,
                    timestamp=timestamp,
                    bodies=bodies,
                    statement_end=statement_end and number == len(parts),
                    versioned=False,
                )
            return parted
    if isinstance(change, Insert):
        if not change.rows:
            return []
    elif isinstance(change, Update) and change.changes_nothing:
        return []
    facts = _facts(change.table)
    before_cols, after_cols = _image_columns(change, settings, facts)
    plan = _rows_plan(
        facts, table_map, settings, type(change), before_cols, after_cols, bodies is not None
    )
    width = facts.width
    encoder = plan.encoder
    present, present_after = plan.present, plan.present_after
    signed = plan.signed
    images: list[Any]
    if isinstance(change, Insert):
        keep = plan.keep_after
        images = [_codec_row(facts, row, keep, signed) for row in change.rows]
    elif isinstance(change, Update):
        images = [
            (
                _codec_row(facts, change.before, plan.keep_before, signed),
                _codec_row(facts, change.after, plan.keep_after, signed),
            )
        ]
    else:
        images = [_codec_row(facts, change.before, plan.keep_before, signed)]
    compressing = plan.compressing
    min_len = plan.min_len
    if len(images) == 1:  # most statements: one row, one event
        encoded = encoder.write_rows(width, present, present_after, images)
        return [
            plan.event(
                compressing and len(encoded) >= min_len,
                images,
                encoded,
                statement_end,
                server_id,
                timestamp,
                bodies,
            )
        ]
    limit = plan.limit
    overhead = plan.overhead
    # per event: compressed?, its row images, their bytes
    groups: list[tuple[bool, list[Any], list[bytes]]] = []
    size = 0
    for image in images:
        encoded = encoder.write_rows(width, present, present_after, (image,))
        needed = len(encoded)
        if groups and size + needed <= limit:
            groups[-1][1].append(image)
            groups[-1][2].append(encoded)
            size += needed
        else:
            # The row that starts an event decides whether it is compressed.
            groups.append((compressing and needed >= min_len, [image], [encoded]))
            size = overhead + needed
    last = len(groups) - 1
    return [
        plan.event(
            compressed,
            group,
            b"".join(encoded_rows),
            index == last and statement_end,
            server_id,
            timestamp,
            bodies,
        )
        for index, (compressed, group, encoded_rows) in enumerate(groups)
    ]


class _RowsPlan:
    """What the rows events of the statements of one kind (INSERT, UPDATE or DELETE) share on
    one TABLE_MAP, under one set of settings, with one pair of image column lists: worked out
    once, not per statement (a history changes the same few tables in the same ways)."""

    __slots__ = (
        "after_bitmap",
        "columns_present",
        "compressing",
        "encoder",
        "id_bytes",
        "keep_after",
        "keep_before",
        "kind",
        "limit",
        "min_len",
        "overhead",
        "prefixes",
        "present",
        "present_after",
        "settings",
        "signed",
        "table_id",
        "table_map",
        "version",
        "width",
    )

    def __init__(
        self,
        facts: _TableFacts,
        table_map: TableMapEvent,
        settings: Settings,
        change_type: type[Change],
        before_cols: tuple[int, ...],
        after_cols: tuple[int, ...],
        with_bodies: bool,
    ) -> None:
        self.table_map = table_map
        self.settings = settings
        self.width = facts.width
        self.signed = settings.binlog_row_metadata == "NO_LOG"
        self.encoder = _row_encoder(table_map)
        every = facts.every
        self.keep_before = None if before_cols == every else frozenset(before_cols)
        self.keep_after = None if after_cols == every else frozenset(after_cols)
        bitmaps = 1
        self.present_after: int | None = None
        self.kind: type[RowsEvent]
        if issubclass(change_type, Update):
            self.kind = UpdateRowsEvent
            self.present, self.present_after = facts.mask(before_cols), facts.mask(after_cols)
            bitmaps = 2
        elif issubclass(change_type, Insert):
            self.kind, self.present = WriteRowsEvent, facts.mask(after_cols)
        else:
            self.kind, self.present = DeleteRowsEvent, facts.mask(before_cols)
        self.version = settings.rows_event_version
        # v2: a longer post-header and the 2 bytes of the (empty) extra data's length.
        post_header = ROWS_POST_HEADER if self.version == 1 else ROWS_V2_POST_HEADER + 2
        self.overhead = post_header + facts.width_size + bitmaps * facts.bitmap_size
        self.limit = settings.binlog_row_event_max_size
        self.compressing = settings.log_bin_compress
        self.min_len = settings.log_bin_compress_min_len
        self.columns_present = facts.bitmap(
            before_cols if self.kind is not WriteRowsEvent else after_cols
        )
        self.after_bitmap = facts.bitmap(after_cols)
        table_id = self.table_id = table_map.table_id
        # Bodies only for what encoder.rows.encode_rows writes as it is: a table id that fits,
        # images with columns (images of no column are refused there, so they are left to it).
        self.id_bytes = (
            table_id.to_bytes(6, "little")
            if with_bodies
            and isinstance(table_id, int)
            and 0 <= table_id < 1 << 48
            and (self.present or self.present_after)
            else None
        )
        # The body before the rows area of an uncompressed event, by rows flags.
        self.prefixes: dict[int, bytes] = {}

    def event(
        self,
        compressed: bool,
        rows: list[Any],
        area: bytes,
        statement_end: bool,
        server_id: int,
        timestamp: int,
        bodies: dict[int, bytes] | None,
    ) -> RowsEvent:
        """The rows event of ``rows`` (their encoded ``area``), its body into ``bodies``."""
        flags = RowsFlag.STMT_END if statement_end else 0
        event = self.kind(
            timestamp=timestamp,
            server_id=server_id,
            table_id=self.table_id,
            rows_flags=flags,
            width=self.width,
            columns_present=self.columns_present,
            rows=tuple(rows),
            compressed=compressed,
            version=self.version,
        )
        if isinstance(event, UpdateRowsEvent):
            event.columns_present_after = self.after_bitmap
        id_bytes = self.id_bytes
        if id_bytes is not None:
            assert bodies is not None
            if compressed:
                bodies[id(event)] = rows_body(event, area, id_bytes)
            else:
                prefix = self.prefixes.get(flags)
                if prefix is None:
                    # rows_body of no rows: what it writes before an uncompressed area.
                    prefix = self.prefixes[flags] = rows_body(event, b"", id_bytes)
                bodies[id(event)] = prefix + area
        return event


_PLANS: dict[tuple[Any, ...], _RowsPlan] = {}


def _rows_plan(
    facts: _TableFacts,
    table_map: TableMapEvent,
    settings: Settings,
    change_type: type[Change],
    before_cols: tuple[int, ...],
    after_cols: tuple[int, ...],
    with_bodies: bool,
) -> _RowsPlan:
    """The plan of these rows events; TABLE_MAP and settings (frozen) by identity, kept in
    the plan so that an id is not reused while its entry lives (and the TABLE_MAP's table id,
    the one field of it a caller might set again)."""
    table_id = table_map.table_id
    key = (id(table_map), table_id, id(settings), change_type, before_cols, after_cols, with_bodies)
    plan = _PLANS.get(key)
    if (
        plan is None
        or plan.table_map is not table_map
        or plan.settings is not settings
        or plan.table_id != table_id
    ):
        if len(_PLANS) >= _MAX_FACTS:
            _PLANS.clear()
        plan = _PLANS[key] = _RowsPlan(
            facts, table_map, settings, change_type, before_cols, after_cols, with_bodies
        )
    return plan


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


def ddl_query_event(
    step: Ddl,
    xid: int,
    settings: Settings | None = None,
    *,
    server_id: int = 1,
    timestamp: int = 0,
) -> QueryEvent:
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
        timestamp=timestamp,
        server_id=server_id,
        flags=flags,
        thread_id=THREAD_ID,
        status_vars=tuple(status),
        query=text,
        compressed=compressed,
    )


# --- whole scenarios --------------------------------------------------------------------------

_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")
_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False
# New container objects beyond which a paused run ends with a full collection (the
# collector's first threshold is 700: this is many young collections' worth).
_GC_DEBT = 100_000


def _gc_paused(function: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """``function`` run with Python's cyclic garbage collector paused (then as it was): a
    compiled history is millions of small objects without cycles, and each collection of the
    oldest generation walked the whole model again (about a third of the compile time).

    A run that left many new objects behind pays for them at once, in one full collection
    before it returns (instead of leaving the collector's debt to the caller's next steps):
    at 200,000 row changes that collection takes 0.7 s where the collections during an
    unpaused compile took 2.2 s."""

    @functools.wraps(function)
    def paused(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        global _gc_pauses, _gc_was_enabled
        with _gc_lock:
            if _gc_pauses == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_pauses += 1
        try:
            return function(*args, **kwargs)
        finally:
            collect = False
            with _gc_lock:
                _gc_pauses -= 1
                if _gc_pauses == 0 and _gc_was_enabled:
                    collect = gc.get_count()[0] > _GC_DEBT  # still counted while paused
                    gc.enable()
            if collect:
                gc.collect()

    return paused


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

    def table_map(
        self, table: Table, settings: Settings, qualified: str | None = None
    ) -> TableMapEvent:
        """The TABLE_MAP of ``table`` (named ``qualified``, its qualified name) as it is open."""
        name = table.qualified if qualified is None else qualified
        number = self.ids.get(name)
        if number is None:
            self.new(name)
            number = self.ids[name]
        key = (number, settings.binlog_row_metadata)
        found = self.maps.get(key)
        if found is None:
            found = self.maps[key] = table_map_event(table, number, settings)
        return found


@_gc_paused
def compile_scenario(
    scenario: Scenario, options: CompileOptions | None = None
) -> list[CompiledTransaction]:
    """Every transaction and DDL statement of ``scenario`` (in order) as the events a MariaDB
    10.11 primary writes for it (headers' log_pos left 0: a file or a store places them)."""
    return _compile(scenario, options, None)


def _compile(
    scenario: Scenario, options: CompileOptions | None, bodies: dict[int, bytes] | None
) -> list[CompiledTransaction]:
    """:func:`compile_scenario`; with ``bodies``, also the encoded bodies of the TABLE_MAP
    and rows events, by ``id(event)`` (see :func:`rows_events`). Every event is built with
    its group's server id and timestamp (no pass stamping them afterwards)."""
    compiler = StepCompiler(scenario, options, bodies)
    for step in scenario.steps:
        compiler.step(step)
    return compiler.compiled


class StepCompiler:
    """The compiler one step at a time: what :func:`compile_scenario` keeps between steps
    (settings, table ids, the last sequence number of each domain, the next XID, the clock)
    and nothing of the steps themselves, so that a history can be compiled as it is made and
    its steps dropped (:mod:`scenarios.streaming`). :meth:`step` appends the step's groups to
    ``compiled``, which the caller may empty; with ``bodies``, the encoded bodies of their
    TABLE_MAP and rows events go there by ``id(event)`` (:meth:`live_bodies` names the ones a
    later step may still use)."""

    def __init__(
        self,
        scenario: Scenario,
        options: CompileOptions | None = None,
        bodies: dict[int, bytes] | None = None,
    ) -> None:
        options = options or CompileOptions()
        self.settings = scenario.initial_settings
        self.ids = _TableIds(scenario, options)
        self.last_seq: dict[int, int] = {}
        for gtid in scenario.gtid_state:
            self.last_seq[gtid.domain_id] = max(self.last_seq.get(gtid.domain_id, 0), gtid.seq_no)
        self.xid = options.first_xid
        self.stamp = options.timestamp
        self.bodies = bodies
        self.compiled: list[CompiledTransaction] = []
        # TABLE_MAP events with a group's server id and timestamp, by (TABLE_MAP, server, stamp)
        self.stamped_maps: dict[tuple[int, int, int], tuple[TableMapEvent, TableMapEvent]] = {}

    def live_bodies(self) -> set[int]:
        """The ids of the stamped TABLE_MAP events a later step may reuse (their bodies must
        stay in ``bodies``; every other body there is the past steps')."""
        return {id(copy) for _, copy in self.stamped_maps.values()}

    def _group(
        self,
        step: Transaction | Ddl | XaEnd,
        body: list[Event],
        flags2: int,
        xa: XaXid | None = None,
        prepare: bool = False,
    ) -> None:
        """The group of ``body`` (its events built stamped) after its GTID event."""
        seq = self.last_seq.get(step.domain_id, 0) + 1
        self.last_seq[step.domain_id] = seq
        server = step.server_id
        gtid_event = GtidEvent(
            timestamp=self.stamp,
            server_id=server,
            flags=EventFlag.SUPPRESS_USE,
            seq_no=seq,
            domain_id=step.domain_id,
            flags2=flags2,
            xid=xa,
            flags_extra=GtidExtraFlag.MULTI_ENGINE if prepare else 0,
            extra_engines=XA_PREPARE_EXTRA_ENGINES if prepare else None,
        )
        self.compiled.append(
            CompiledTransaction(step, Gtid(step.domain_id, server, seq), (gtid_event, *body))
        )

    def step(self, step: Step) -> None:
        """Compile one step (in the history's order) into ``compiled``."""
        settings = self.settings
        stamp = self.stamp
        if isinstance(step, SetSettings):
            self.settings = step.settings
            return
        if isinstance(step, Restart):
            self.settings = step.settings
            self.ids.restart()
            return
        if isinstance(step, Idle):
            self.stamp += step.seconds
            # The clock only moves on: no later group has the old timestamp.
            self.stamped_maps.clear()
            return
        if isinstance(step, Rotate):
            return
        server = step.server_id
        bodies = self.bodies
        if isinstance(step, Ddl):
            body: list[Event] = [
                ddl_query_event(step, self.xid, settings, server_id=server, timestamp=stamp)
            ]
            self.xid += 1
            if step.after is not None and not isinstance(step.statement, DropTable):
                self.ids.new(step.after.qualified)
            self._group(step, body, DDL_FLAGS2)
            return
        if isinstance(step, XaEnd):
            assert step.transaction.xa is not None
            verb = "COMMIT" if step.commit else "ROLLBACK"
            query = f"XA {verb} {xa_text(step.transaction.xa)}"
            end = session_query_event(query, server_id=server, timestamp=stamp)
            self._group(step, [end], XA_END_FLAGS2, step.transaction.xa)
            return
        body = []
        non_transactional = False
        for change in step.changes:
            facts = _facts(change.table)
            table_map = _stamped_map(
                self.stamped_maps,
                self.ids.table_map(change.table, settings, facts.qualified),
                server,
                stamp,
                bodies,
            )
            events = rows_events(
                change, table_map, settings, server_id=server, timestamp=stamp, bodies=bodies
            )
            if not events:
                continue
            statement: list[Event] = []
            if settings.binlog_annotate_row_events:
                annotate = AnnotateRowsEvent(
                    timestamp=stamp, server_id=server, query=statement_sql(change).encode()
                )
                statement.append(annotate)
                if bodies is not None:  # its body is its text: nothing to check or convert
                    bodies[id(annotate)] = encode_annotate_rows(annotate, _NO_CONTEXT)
            statement.append(table_map)
            statement += events
            if facts.transactional:
                body += statement
            else:
                # Written at once, in a group of its own (before the transaction's own group,
                # which is written at COMMIT and is no longer flagged TRANSACTIONAL).
                non_transactional = True
                commit = commit_query_event(
                    statement_uses_time_zone(change), server_id=server, timestamp=stamp
                )
                self._group(step, [*statement, commit], NON_TRANSACTIONAL_FLAGS2)
        if body and step.prepared:
            assert step.xa is not None
            body.append(
                session_query_event(f"XA END {xa_text(step.xa)}", server_id=server, timestamp=stamp)
            )
            body.append(
                XaPrepareEvent(timestamp=stamp, server_id=server, one_phase=False, xid=step.xa)
            )
            self._group(step, body, XA_PREPARE_FLAGS2, step.xa, prepare=True)
        elif body:
            xid_event = XidEvent(timestamp=stamp, server_id=server, xid=self.xid)
            body.append(xid_event)
            if bodies is not None:  # a counter the compiler keeps: always a valid XID
                bodies[id(xid_event)] = encode_xid(xid_event, _NO_CONTEXT)
            self.xid += 1
            flags2 = NON_TRANSACTIONAL_FLAGS2 if non_transactional else TRANSACTION_FLAGS2
            self._group(step, body, flags2)
        elif not non_transactional:
            self.compiled.append(CompiledTransaction(step, None, ()))


def session_query_event(query: str, *, server_id: int = 1, timestamp: int = 0) -> QueryEvent:
    """A QUERY event the server writes for the session inside a group (``COMMIT`` of a
    non-transactional table's changes, ``XA END``, ``XA COMMIT``/``XA ROLLBACK``), its header
    with ``server_id`` and ``timestamp``."""
    return QueryEvent(
        timestamp=timestamp,
        server_id=server_id,
        flags=EventFlag.SUPPRESS_USE,
        thread_id=THREAD_ID,
        status_vars=_SESSION_STATUS,
        query=query.encode(),
    )


_TIME_ZONE_STATUS = StatusVar(QueryStatus.TIME_ZONE, SESSION_TIME_ZONE.encode())
_COMMIT_STATUS = {False: _SESSION_STATUS, True: (*_SESSION_STATUS, _TIME_ZONE_STATUS)}


def commit_query_event(
    time_zone: bool = False, *, server_id: int = 1, timestamp: int = 0
) -> QueryEvent:
    """The ``COMMIT`` QUERY event that ends a group of a non-transactional table's changes;
    with ``time_zone`` when the statement used the session's time zone (Q_TIME_ZONE, see
    :func:`statement_uses_time_zone`); its header with ``server_id`` and ``timestamp``."""
    return QueryEvent(
        timestamp=timestamp,
        server_id=server_id,
        flags=EventFlag.SUPPRESS_USE,
        thread_id=THREAD_ID,
        status_vars=_COMMIT_STATUS[time_zone],
        query=b"COMMIT",
    )


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


def _stamped(event: EventT, server_id: int, timestamp: int) -> EventT:
    return replace(event, server_id=server_id, timestamp=timestamp)


def _stamped_map(
    stamped: dict[tuple[int, int, int], tuple[TableMapEvent, TableMapEvent]],
    table_map: TableMapEvent,
    server_id: int,
    timestamp: int,
    bodies: dict[int, bytes] | None,
) -> TableMapEvent:
    """``table_map`` with the group's server id and timestamp, made once per TABLE_MAP, server
    id and timestamp (the groups of a server between two idle periods share it); its encoded
    body goes into ``bodies``."""
    key = (id(table_map), server_id, timestamp)
    entry = stamped.get(key)
    if entry is not None and entry[0] is table_map:
        return entry[1]
    copy = _stamped(table_map, server_id, timestamp)
    stamped[key] = (table_map, copy)
    if bodies is not None:
        bodies[id(copy)] = encode_body(copy, BinlogContext())
    return copy


@_gc_paused
def compile_groups(
    scenario: Scenario, options: CompileOptions | None = None
) -> tuple[dict[int, list[CompiledTransaction]], dict[int, bytes]]:
    """The compiled scenario as :func:`write_step` takes it: the event groups of each
    transaction, DDL statement and XA COMMIT/ROLLBACK by ``id(step)`` (in order), and the
    encoded bodies of their TABLE_MAP and rows events by ``id(event)``."""
    bodies: dict[int, bytes] = {}
    by_step: dict[int, list[CompiledTransaction]] = {}
    for item in _compile(scenario, options, bodies):
        by_step.setdefault(id(item.transaction), []).append(item)
    return by_step, bodies


def write_step(
    store: MemoryBinlogStore,
    step: Step,
    groups: Sequence[CompiledTransaction] = (),
    *,
    bodies: Mapping[int, bytes] | None = None,
    idle: Callable[[int], None] | None = None,
) -> None:
    """Write one step of a scenario into ``store``: a rotation; settings changed (a new file
    when ``binlog_checksum`` is set, with that checksum); a restart (STOP with the old server
    id, a new file with the settings and server id it comes back with); an idle period
    (``idle(seconds)``, which moves the clock of the store on, if given); or the event groups
    ``groups`` compiled for a transaction, DDL statement or XA COMMIT/ROLLBACK, with the
    ``bodies`` :func:`compile_groups` encoded (an XA PREPARE group, whose GTID has flags_extra
    that :meth:`~fakemaster.store.MemoryBinlogStore.append_transaction` does not write, is
    appended as it is, every event encoded by the store)."""
    if isinstance(step, Rotate):
        store.rotate()
    elif isinstance(step, SetSettings):
        if step.rotates:
            store.checksum = step.settings.binlog_checksum
            store.rotate()
    elif isinstance(step, Restart):
        store.checksum = step.settings.binlog_checksum
        store.restart(server_id=step.settings.server_id)
    elif isinstance(step, Idle):
        if idle is not None:
            idle(step.seconds)
    for item in groups:
        if item.gtid is None:
            continue
        gtid_event = item.events[0]
        assert isinstance(gtid_event, GtidEvent)
        if gtid_event.flags_extra:
            store.append(item.events, stamp=False)
            continue
        body = item.events[1:]
        store.append_transaction(
            body,
            domain_id=item.gtid.domain_id,
            server_id=item.gtid.server_id,
            seq_no=item.gtid.seq_no,
            flags2=gtid_event.flags2,
            xid=gtid_event.xid,
            timestamp=gtid_event.timestamp,
            bodies=None if bodies is None else [bodies.get(id(event)) for event in body],
        )


@_gc_paused
def to_store(
    scenario: Scenario,
    options: CompileOptions | None = None,
    *,
    store: MemoryBinlogStore | None = None,
    clock: Callable[[], float] | None = None,
) -> MemoryBinlogStore:
    """The compiled scenario written into a memory store (a new one with the scenario's
    settings, or ``store``), step by step (:func:`write_step`); what fakemaster serves. The
    clock of a new store without ``clock`` is ``options.timestamp``, moved on by idle
    periods."""
    options = options or CompileOptions()
    settings = scenario.initial_settings
    now = [options.timestamp]

    def idle(seconds: int) -> None:
        now[0] += seconds

    if store is None:
        store = MemoryBinlogStore(
            server_id=settings.server_id,
            server_version=settings.server_version,
            checksum=settings.binlog_checksum,
            domain_id=settings.gtid_domain_id,
            clock=clock or (lambda: float(now[0])),
            initial_state=scenario.gtid_state,
        )
    by_step, bodies = compile_groups(scenario, options)
    for step in scenario.steps:
        write_step(store, step, by_step.get(id(step), ()), bodies=bodies, idle=idle)
    return store


def binlog_files(store: BinlogStore) -> dict[str, bytes]:
    """Every file of ``store`` as bytes (magic first), by name."""
    return {name: _whole(store, name) for name in store.file_names()}


def _whole(store: BinlogStore, name: str) -> bytes:
    return BINLOG_MAGIC + b"".join(data for _, data in store.iter_events(name))


def flatten(compiled: Sequence[CompiledTransaction]) -> list[Event]:
    return [event for item in compiled for event in item.events]
