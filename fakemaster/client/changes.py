"""Change events for consumers: one per row a committed event group wrote, updated or deleted.

A :class:`ChangeEvent` carries the operation, the table, the row's before and after images as
``{column name: value}`` (only the columns the image holds: a MINIMAL before image has just the
key, a NOBLOB one lacks unchanged blobs), the group's GTID, the file and end position of the
rows event, and the row's index in its group (0, 1, ... over all rows events of the group).
``(gtid, row_index)`` names a change uniquely: a consumer that keeps it can drop a change it
already applied.

Column names come from the TABLE_MAP's COLUMN_NAME metadata (``binlog_row_metadata=FULL``),
else from a catalogue the caller gives (``{"db.table": ["col", ...]}``), else they are
``@1``, ``@2``, ... (as ``mariadb-binlog`` writes them). Integers of columns the TABLE_MAP's
SIGNEDNESS metadata marks unsigned come back unsigned (the rows event carries their bits).

DDL: a QUERY event that is a group of its own (a standalone GTID group, or a group without a
GTID event that is a single QUERY) and is not BEGIN/COMMIT/ROLLBACK or an XA statement is a
change of kind ``"ddl"`` (:data:`DDL`) -- DDL, and also the other statements a server logs as a
group of their own (CREATE USER, GRANT...): ``statement`` holds the SQL text as the server logged it
(decoded as UTF-8, undecodable bytes replaced), ``schema`` the statement's default database (the
QUERY event's), ``table`` is ``""`` (the statement names its tables; the client does not parse
SQL), ``before``/``after`` are None. A consumer follows schema changes by applying it where it
comes; rows events after it carry the new layout, and with ``binlog_row_metadata=FULL`` their
TABLE_MAPs the new column names.

XA (:class:`ChangeStream`): an ``XA PREPARE`` group's changes are held, not handed over; the
``XA COMMIT`` group of its xid hands them over (stamped with the XA COMMIT group's GTID, file
and position, ``row_index`` 0, 1, ... in it), its ``XA ROLLBACK`` group drops them. A MariaDB
10.11 replica applies the prepared group as a prepared XA transaction and commits it at XA
COMMIT; for a consumer the changes take effect at commit, so that is where they come.
``XA COMMIT ... ONE PHASE`` is logged as an ordinary transaction and comes as one. The resume
position moves past the XA PREPARE group (its GTID is in it, as in a replica's
``gtid_slave_pos``): after a reconnect it is not sent again, and the held changes stay in the
:class:`ChangeStream` (which lives as long as the client object), so the XA COMMIT that comes
later hands them over once. A consumer that persists the position across *processes* must
persist :attr:`ChangeStream.prepared` with it (or restart from before the oldest prepared
group); an XA COMMIT whose prepare the stream never saw is counted in
:attr:`ChangeStream.unmatched` and hands over nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from fakemaster.client.position import CommittedGroup
from fakemaster.vocabulary.columns import column_names, unsigned_flags
from fakemaster.vocabulary.constants import ColumnType, GtidFlag, OptionalMetadata
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    GtidEvent,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XaXid,
)
from fakemaster.vocabulary.values import ABSENT

if TYPE_CHECKING:
    from fakemaster.vocabulary.events import RowPair

__all__ = [
    "DDL",
    "DELETE",
    "INSERT",
    "UPDATE",
    "ChangeEvent",
    "ChangeStream",
    "changes_of",
    "group_changes",
]

INSERT = "insert"
UPDATE = "update"
DELETE = "delete"
DDL = "ddl"

_NOT_DDL = (b"BEGIN", b"COMMIT", b"ROLLBACK")

_BITS: dict[int, int] = {
    ColumnType.TINY: 8,
    ColumnType.SHORT: 16,
    ColumnType.INT24: 24,
    ColumnType.LONG: 32,
    ColumnType.LONGLONG: 64,
}


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    operation: str  # "insert", "update", "delete" or "ddl"
    schema: str
    table: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    gtid: tuple[int, int, int] | None
    file: str
    position: int  # end position of the rows event in ``file``
    row_index: int
    statement: str | None = None  # the SQL text of a "ddl" change

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def gtid_text(self) -> str | None:
        return None if self.gtid is None else "-".join(str(n) for n in self.gtid)


def _has_signedness(table_map: TableMapEvent) -> bool:
    return any(f.kind == OptionalMetadata.SIGNEDNESS for f in table_map.optional_metadata)


class _Shape:
    """How to turn a table's row images into dicts."""

    def __init__(self, table_map: TableMapEvent, catalogue: Mapping[str, Sequence[str]]) -> None:
        width = len(table_map.column_types)
        names: Sequence[str] = column_names(table_map)
        if len(names) != width:
            names = catalogue.get(f"{table_map.database}.{table_map.table}", ())
        if len(names) != width:
            names = [f"@{n}" for n in range(1, width + 1)]
        self.names = tuple(names)
        unsigned = unsigned_flags(table_map) if _has_signedness(table_map) else (False,) * width
        self.unsigned = {
            index: _BITS[kind]
            for index, (kind, flag) in enumerate(zip(table_map.column_types, unsigned, strict=True))
            if flag and kind in _BITS
        }

    def image(self, values: Sequence[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for index, (name, value) in enumerate(zip(self.names, values, strict=True)):
            if value is ABSENT:
                continue
            bits = self.unsigned.get(index)
            if bits is not None and isinstance(value, int) and value < 0:
                value += 1 << bits
            out[name] = value
        return out


def group_changes(
    group: CommittedGroup, catalogue: Mapping[str, Sequence[str]] | None = None
) -> list[ChangeEvent]:
    """The change events of one committed group, in order."""
    catalogue = catalogue or {}
    maps: dict[int, _Shape] = {}
    tables: dict[int, TableMapEvent] = {}
    out: list[ChangeEvent] = []
    for received in group.events:
        event = received.event
        if isinstance(event, QueryEvent):
            if _is_ddl(group, event):
                out.append(
                    ChangeEvent(
                        operation=DDL,
                        schema=event.database,
                        table="",
                        before=None,
                        after=None,
                        gtid=group.gtid,
                        file=received.file,
                        position=received.end_position,
                        row_index=len(out),
                        statement=event.query.decode("utf-8", "replace"),
                    )
                )
            continue
        if isinstance(event, TableMapEvent):
            tables[event.table_id] = event
            maps[event.table_id] = _Shape(event, catalogue)
            continue
        if not isinstance(event, RowsEvent):
            continue
        table_map = tables.get(event.table_id)
        shape = maps.get(event.table_id)
        if table_map is None or shape is None:
            raise ValueError(f"rows event of table id {event.table_id} without its TABLE_MAP")
        for raw in event.rows:
            before: dict[str, Any] | None = None
            after: dict[str, Any] | None = None
            if isinstance(event, WriteRowsEvent):
                operation, after = INSERT, shape.image(raw)
            elif isinstance(event, UpdateRowsEvent):
                operation = UPDATE
                pair = cast("RowPair", raw)  # an UPDATE's rows are pairs
                before, after = shape.image(pair[0]), shape.image(pair[1])
            elif isinstance(event, DeleteRowsEvent):
                operation, before = DELETE, shape.image(raw)
            else:
                raise ValueError(f"unknown rows event {type(event).__name__}")
            out.append(
                ChangeEvent(
                    operation=operation,
                    schema=table_map.database,
                    table=table_map.table,
                    before=before,
                    after=after,
                    gtid=group.gtid,
                    file=received.file,
                    position=received.end_position,
                    row_index=len(out),
                )
            )
    return out


def _is_ddl(group: CommittedGroup, event: QueryEvent) -> bool:
    """Whether ``event`` is a statement that is its group's change (see the module docstring)."""
    if event.query in _NOT_DDL or event.query.startswith(b"XA "):
        return False
    first = group.events[0].event if group.events else None
    if isinstance(first, GtidEvent):
        return bool(first.flags2 & GtidFlag.STANDALONE)
    return len(group.events) == 1


def _xa_of(group: CommittedGroup) -> tuple[str, XaXid] | None:
    """("prepare" | "commit" | "rollback", xid) for the groups of an XA transaction."""
    first = group.events[0].event if group.events else None
    if not isinstance(first, GtidEvent) or first.xid is None:
        return None
    if first.flags2 & GtidFlag.PREPARED_XA:
        last = group.events[-1].event
        xid = last.xid if isinstance(last, XaPrepareEvent) else first.xid
        return "prepare", xid
    if first.flags2 & GtidFlag.COMPLETED_XA:
        for received in group.events:
            event = received.event
            if isinstance(event, QueryEvent) and event.query.startswith(b"XA COMMIT"):
                return "commit", first.xid
            if isinstance(event, QueryEvent) and event.query.startswith(b"XA ROLLBACK"):
                return "rollback", first.xid
    return None


class ChangeStream:
    """Change events of committed groups in order, XA transactions handed over at their XA
    COMMIT (see the module docstring). Keep one per consumer: it holds prepared XA groups'
    changes across reconnects."""

    def __init__(self, catalogue: Mapping[str, Sequence[str]] | None = None) -> None:
        self.catalogue: Mapping[str, Sequence[str]] = catalogue or {}
        self.prepared: dict[XaXid, list[ChangeEvent]] = {}
        self.unmatched = 0

    def feed(self, group: CommittedGroup) -> list[ChangeEvent]:
        xa = _xa_of(group)
        if xa is None:
            return group_changes(group, self.catalogue)
        kind, xid = xa
        if kind == "prepare":
            self.prepared[xid] = group_changes(group, self.catalogue)
            return []
        held = self.prepared.pop(xid, None)
        if held is None:
            self.unmatched += 1
            return []
        if kind == "rollback":
            return []
        last = group.events[-1]
        return [
            replace(
                change,
                gtid=group.gtid,
                file=last.file,
                position=last.end_position,
                row_index=index,
            )
            for index, change in enumerate(held)
        ]


def changes_of(
    groups: Iterable[CommittedGroup], catalogue: Mapping[str, Sequence[str]] | None = None
) -> Iterator[ChangeEvent]:
    stream = ChangeStream(catalogue)
    for group in groups:
        yield from stream.feed(group)
