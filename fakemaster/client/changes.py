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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fakemaster.client.position import CommittedGroup
from fakemaster.columns import column_names, unsigned_flags
from fakemaster.constants import ColumnType, OptionalMetadata
from fakemaster.events import (
    DeleteRowsEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.values import ABSENT

__all__ = ["INSERT", "UPDATE", "DELETE", "ChangeEvent", "group_changes", "changes_of"]

INSERT = "insert"
UPDATE = "update"
DELETE = "delete"

_BITS: dict[int, int] = {
    ColumnType.TINY: 8,
    ColumnType.SHORT: 16,
    ColumnType.INT24: 24,
    ColumnType.LONG: 32,
    ColumnType.LONGLONG: 64,
}


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    operation: str  # "insert", "update" or "delete"
    schema: str
    table: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    gtid: tuple[int, int, int] | None
    file: str
    position: int  # end position of the rows event in ``file``
    row_index: int

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
                before, after = shape.image(raw[0]), shape.image(raw[1])
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


def changes_of(
    groups: Iterable[CommittedGroup], catalogue: Mapping[str, Sequence[str]] | None = None
) -> Iterator[ChangeEvent]:
    for group in groups:
        yield from group_changes(group, catalogue)
