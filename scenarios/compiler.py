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
from encoder.values import TableEncoder, table_encoder
from fakemaster.columns import member_counts
from fakemaster.constants import (
    BINLOG_MAGIC,
    MARIADB_POST_HEADER_LENGTHS,
    EventFlag,
    EventType,
    GtidFlag,
    OptionalMetadata,
    RowsFlag,
    TableMapFlag,
)
from fakemaster.context import BinlogContext
from fakemaster.events import (
    AnnotateRowsEvent,
    DeleteRowsEvent,
    Event,
    Gtid,
    GtidEvent,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.store import MemoryBinlogStore
from fakemaster.values import ABSENT
from scenarios.history import (
    Change,
    Delete,
    Insert,
    Rotate,
    Row,
    Scenario,
    Settings,
    Transaction,
    Update,
)
from scenarios.schema import INTEGER_RANGES, Table
from scenarios.sql import statement_sql
from scenarios.values import python_codec

__all__ = [
    "ROWS_POST_HEADER",
    "TRANSACTION_FLAGS2",
    "CompileOptions",
    "CompiledTransaction",
    "binlog_files",
    "codec_row",
    "compile_scenario",
    "flatten",
    "rows_events",
    "image_columns",
    "optional_metadata",
    "table_map_event",
    "to_store",
]

# Rows_log_event::get_data_size counts the v1 post-header (table id 6, flags 2).
ROWS_POST_HEADER = MARIADB_POST_HEADER_LENGTHS[EventType.WRITE_ROWS_V1 - 1]
TRANSACTION_FLAGS2 = GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL

EventT = TypeVar("EventT", bound=Event)


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
    """A transaction's events (GTID first); empty when it changes no row (then it has no
    GTID either)."""

    transaction: Transaction
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
        width=table.width,
        key=key,
        every=every,
        no_blobs=tuple(p for p in every if not columns[p].is_blob or p in key),
        unsigned=tuple(
            (p, columns[p].bits_wide())
            for p in every
            if columns[p].unsigned and columns[p].type in INTEGER_RANGES
        ),
        binary=tuple(p for p in every if columns[p].type == "binary"),
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
    mode = settings.binlog_row_image if facts.key else "FULL"
    if mode == "FULL":
        if isinstance(change, Insert):
            return (), every
        if isinstance(change, Delete):
            return every, ()
        return every, every
    no_blobs = facts.no_blobs
    if isinstance(change, Insert):
        if mode == "MINIMAL":
            return (), change.given
        return (), tuple(sorted({*no_blobs, *change.given}))
    before = {"MINIMAL": facts.key, "NOBLOB": no_blobs}[mode]
    if isinstance(change, Delete):
        return before, ()
    if mode == "MINIMAL":
        after = change.assigned
    else:
        after = tuple(sorted({*no_blobs, *change.assigned}))
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
        if value is not ABSENT and value is not None:
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


def _logged_rows(change: Change) -> list[tuple[Row | None, Row | None]]:
    if isinstance(change, Insert):
        return [(None, row) for row in change.rows]
    if isinstance(change, Update):
        return [] if change.changes_nothing else [(change.before, change.after)]
    return [(change.before, None)]


def rows_events(
    change: Change,
    table_map: TableMapEvent,
    settings: Settings,
    *,
    server_id: int = 1,
    timestamp: int = 0,
    bodies: dict[int, bytes] | None = None,
) -> list[RowsEvent]:
    """The rows events of one statement (split at binlog_row_event_max_size), [] when it
    changes no row; their headers carry ``server_id`` and ``timestamp``.

    ``bodies``: where to put each event's encoded body (by ``id(event)``), as the encoder
    writes it in a stream of 6-byte table ids: the rows are encoded here once, to size the
    events, and those bytes are the events' rows (:func:`to_store` hands them to the store).
    """
    logged = _logged_rows(change)
    if not logged:
        return []
    facts = _facts(change.table)
    width = facts.width
    before_cols, after_cols = _image_columns(change, settings, facts)
    signed = settings.binlog_row_metadata == "NO_LOG"
    encoder = _row_encoder(table_map)
    every = facts.every
    keep_before = None if before_cols == every else frozenset(before_cols)
    keep_after = None if after_cols == every else frozenset(after_cols)
    images: list[Any] = []
    if isinstance(change, Update):
        kind: type[RowsEvent] = UpdateRowsEvent
        present, present_after = facts.mask(before_cols), facts.mask(after_cols)
        bitmaps = 2
        for before, after in logged:
            assert before is not None and after is not None
            images.append(
                (
                    _codec_row(facts, before, keep_before, signed),
                    _codec_row(facts, after, keep_after, signed),
                )
            )
    elif isinstance(change, Insert):
        kind, present, present_after, bitmaps = WriteRowsEvent, facts.mask(after_cols), None, 1
        for _, after in logged:
            assert after is not None
            images.append(_codec_row(facts, after, keep_after, signed))
    else:
        kind, present, present_after, bitmaps = DeleteRowsEvent, facts.mask(before_cols), None, 1
        for before, _ in logged:
            assert before is not None
            images.append(_codec_row(facts, before, keep_before, signed))
    overhead = ROWS_POST_HEADER + facts.width_size + bitmaps * facts.bitmap_size
    limit = settings.binlog_row_event_max_size
    compressing = settings.log_bin_compress
    min_len = settings.log_bin_compress_min_len
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
    columns_present = facts.bitmap(before_cols if kind is not WriteRowsEvent else after_cols)
    after_bitmap = facts.bitmap(after_cols)
    table_id = table_map.table_id
    # Bodies only for what encoder.rows.encode_rows writes as it is: a table id that fits,
    # images with columns (images of no column are refused there, so they are left to it).
    id_bytes = (
        table_id.to_bytes(6, "little")
        if bodies is not None
        and isinstance(table_id, int)
        and 0 <= table_id < 1 << 48
        and (present or present_after)
        else None
    )
    events: list[RowsEvent] = []
    last = len(groups) - 1
    for index, (compressed, group, encoded_rows) in enumerate(groups):
        flags = RowsFlag.STMT_END if index == last else 0
        event: RowsEvent
        if kind is UpdateRowsEvent:
            event = UpdateRowsEvent(
                timestamp=timestamp,
                server_id=server_id,
                table_id=table_id,
                rows_flags=flags,
                width=width,
                columns_present=columns_present,
                columns_present_after=after_bitmap,
                rows=tuple(group),
                compressed=compressed,
            )
        else:
            event = kind(
                timestamp=timestamp,
                server_id=server_id,
                table_id=table_id,
                rows_flags=flags,
                width=width,
                columns_present=columns_present,
                rows=tuple(group),
                compressed=compressed,
            )
        if id_bytes is not None:
            assert bodies is not None
            bodies[id(event)] = rows_body(event, b"".join(encoded_rows), id_bytes)
        events.append(event)
    return events


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


def _table_ids(scenario: Scenario, options: CompileOptions) -> dict[str, int]:
    ids: dict[str, int] = {}
    next_id = options.first_table_id
    for name in scenario.tables:
        if name in options.table_ids:
            ids[name] = options.table_ids[name]
        else:
            while next_id in options.table_ids.values() or next_id in ids.values():
                next_id += 1
            ids[name] = next_id
            next_id += 1
    return ids


@_gc_paused
def compile_scenario(
    scenario: Scenario, options: CompileOptions | None = None
) -> list[CompiledTransaction]:
    """Every transaction of ``scenario`` as the events a MariaDB 10.11 primary writes for it
    (headers' log_pos left 0: a file or a store places them)."""
    return _compile(scenario, options, None)


def _compile(
    scenario: Scenario, options: CompileOptions | None, bodies: dict[int, bytes] | None
) -> list[CompiledTransaction]:
    """:func:`compile_scenario`; with ``bodies``, also the encoded bodies of the TABLE_MAP
    and rows events, by ``id(event)`` (see :func:`rows_events`)."""
    options = options or CompileOptions()
    settings = scenario.settings
    ids = _table_ids(scenario, options)
    maps = {
        name: table_map_event(table, ids[name], settings) for name, table in scenario.tables.items()
    }
    last_seq: dict[int, int] = {}
    for gtid in scenario.gtid_state:
        last_seq[gtid.domain_id] = max(last_seq.get(gtid.domain_id, 0), gtid.seq_no)
    xid = options.first_xid
    stamp = options.timestamp
    compiled: list[CompiledTransaction] = []
    stamped_maps: dict[tuple[int, int], tuple[TableMapEvent, TableMapEvent]] = {}
    for transaction in scenario.transactions:
        body: list[Event] = []
        server = transaction.server_id
        for change in transaction.changes:
            table_map = _stamped_map(
                stamped_maps, maps[change.table.qualified], server, stamp, bodies
            )
            events = rows_events(
                change, table_map, settings, server_id=server, timestamp=stamp, bodies=bodies
            )
            if not events:
                continue
            if settings.binlog_annotate_row_events:
                body.append(
                    AnnotateRowsEvent(
                        timestamp=stamp,
                        server_id=server,
                        query=statement_sql(change).encode(),
                    )
                )
            body.append(table_map)
            body += events
        if not body:
            compiled.append(CompiledTransaction(transaction, None, ()))
            continue
        seq = last_seq.get(transaction.domain_id, 0) + 1
        last_seq[transaction.domain_id] = seq
        gtid_event = GtidEvent(
            timestamp=stamp,
            server_id=server,
            flags=EventFlag.SUPPRESS_USE,
            seq_no=seq,
            domain_id=transaction.domain_id,
            flags2=TRANSACTION_FLAGS2,
        )
        body.append(XidEvent(timestamp=stamp, server_id=server, xid=xid))
        xid += 1
        events_out = (gtid_event, *body)
        compiled.append(
            CompiledTransaction(transaction, Gtid(transaction.domain_id, server, seq), events_out)
        )
    return compiled


def _stamped(event: EventT, server_id: int, timestamp: int) -> EventT:
    return replace(event, server_id=server_id, timestamp=timestamp)


def _stamped_map(
    stamped: dict[tuple[int, int], tuple[TableMapEvent, TableMapEvent]],
    table_map: TableMapEvent,
    server_id: int,
    timestamp: int,
    bodies: dict[int, bytes] | None,
) -> TableMapEvent:
    """``table_map`` with the transaction's server id and the timestamp, made once per
    TABLE_MAP and server id (the transactions of a server share it); its encoded body goes
    into ``bodies``."""
    entry = stamped.get((id(table_map), server_id))
    if entry is not None and entry[0] is table_map:
        return entry[1]
    copy = _stamped(table_map, server_id, timestamp)
    stamped[(id(table_map), server_id)] = (table_map, copy)
    if bodies is not None:
        bodies[id(copy)] = encode_body(copy, BinlogContext())
    return copy


@_gc_paused
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
    settings = scenario.settings
    if store is None:
        store = MemoryBinlogStore(
            server_id=settings.server_id,
            server_version=settings.server_version,
            checksum=settings.binlog_checksum,
            domain_id=settings.gtid_domain_id,
            clock=clock or (lambda: float(options.timestamp)),
            initial_state=scenario.gtid_state,
        )
    bodies: dict[int, bytes] = {}
    compiled = iter(_compile(scenario, options, bodies))
    for step in scenario.steps:
        if isinstance(step, Rotate):
            store.rotate()
            continue
        item = next(compiled)
        if item.gtid is None:
            continue
        gtid_event = item.events[0]
        assert isinstance(gtid_event, GtidEvent)
        body = item.events[1:]
        store.append_transaction(
            body,
            domain_id=item.gtid.domain_id,
            server_id=item.gtid.server_id,
            seq_no=item.gtid.seq_no,
            flags2=gtid_event.flags2,
            timestamp=gtid_event.timestamp,
            bodies=[bodies.get(id(event)) for event in body],
        )
    return store


def binlog_files(store: MemoryBinlogStore) -> dict[str, bytes]:
    """Every file of ``store`` as bytes (magic first), by name."""
    return {name: _whole(store, name) for name in store.file_names()}


def _whole(store: MemoryBinlogStore, name: str) -> bytes:
    return BINLOG_MAGIC + b"".join(data for _, data in store.iter_events(name))


def flatten(compiled: Sequence[CompiledTransaction]) -> list[Event]:
    return [event for item in compiled for event in item.events]
