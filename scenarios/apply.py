"""The second path to the tables' content: the decoded event stream applied as a replica
applies it, independent of the model's own bookkeeping (:mod:`scenarios.history`).

A replica knows its tables (the scenario's schema and initial rows) and reads only events:
TABLE_MAPs name the table of a table id; WRITE/UPDATE/DELETE rows are kept per event group and
applied at its XID (or COMMIT); an XA_PREPARE keeps its group's changes until the QUERY ``XA COMMIT`` of its xid applies them
(``XA ROLLBACK`` drops them); a QUERY event of DDL (CREATE/ALTER/DROP/TRUNCATE/RENAME
TABLE) is parsed and changes the replica's own tables, their rows carried over by column name; a row is found by its before image (every column the image
carries equals the stored value: the key under MINIMAL, the whole row under FULL); an after
image sets the columns it carries; a write image fills the columns it lacks with their
defaults, as the server that wrote it did. Decoded values are brought to the column's type as
a replica's ``unpack`` does: integers the TABLE_MAP does not say are unsigned are read back as
the unsigned column's value, BINARY(n) is padded with NULs to n bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakemaster.vocabulary.events import (
    Event,
    GtidEvent,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES, fixed_binary_value
from fakemaster.vocabulary.values import ABSENT
from scenarios.create_table import parse_ddl
from scenarios.ddl import CreateTable, apply_ddl
from scenarios.errors import ScenarioError, SchemaError
from scenarios.generated import with_generated
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Table
from scenarios.state import Contents, Row

__all__ = ["ApplyError", "Replica", "apply_events"]

_GROUP_QUERIES = (b"BEGIN", b"COMMIT", b"ROLLBACK")


def _xid_text(xid: XaXid) -> str:
    # As XA statements are logged (X'gtrid',X'bqual',formatID): written here from the event's
    # fields, not taken from the model.
    return f"X'{xid.gtrid.hex()}',X'{xid.bqual.hex()}',{xid.format_id}"


class ApplyError(ScenarioError):
    """The events cannot be applied to the tables (an unknown table, no row matches a before
    image, a row image of another width...)."""


@dataclass
class _Pending:
    changes: list[tuple[Table, RowsEvent]] = field(default_factory=list)


class Replica:
    """Applies decoded events to ``tables`` holding ``initial`` rows."""

    def __init__(self, tables: Mapping[str, Table], initial: Contents) -> None:
        self.tables = dict(tables)
        self.contents = initial.copy()
        self._maps: dict[int, Table] = {}
        self._group: _Pending | None = None
        self.committed = 0
        # Prepared XA transactions' changes, by their xid as XA statements write it.
        self.prepared: dict[str, list[tuple[Table, RowsEvent]]] = {}

    def feed(self, event: Event) -> None:
        if isinstance(event, GtidEvent):
            if self._group is not None and self._group.changes:
                raise ApplyError("an event group ended without XID or COMMIT")
            self._group = _Pending()
        elif isinstance(event, TableMapEvent):
            name = f"{event.database}.{event.table}"
            table = self.tables.get(name)
            if table is None:
                raise ApplyError(f"TABLE_MAP of unknown table {name}")
            if len(event.column_types) != table.width:
                raise ApplyError(f"TABLE_MAP of {name} has {len(event.column_types)} columns")
            self._maps[event.table_id] = table
        elif isinstance(event, RowsEvent):
            table = self._maps.get(event.table_id)
            if table is None:
                raise ApplyError(f"rows event of unmapped table id {event.table_id}")
            if self._group is None:
                self._apply(table, event)
            else:
                self._group.changes.append((table, event))
        elif isinstance(event, XaPrepareEvent):
            group, self._group = self._group, None
            self.prepared[_xid_text(event.xid)] = group.changes if group else []
        elif isinstance(event, QueryEvent) and event.query.startswith(b"XA "):
            self._xa(event.query.decode("ascii", "replace"))
        elif isinstance(event, QueryEvent) and event.query not in _GROUP_QUERIES:
            self._ddl(event)
        elif isinstance(event, XidEvent) or (
            isinstance(event, QueryEvent) and event.query == b"COMMIT"
        ):
            group, self._group = self._group, None
            for table, rows_event in group.changes if group else ():
                self._apply(table, rows_event)
            self.committed += 1

    def feed_all(self, events: Iterable[Event]) -> Contents:
        for event in events:
            self.feed(event)
        if self._group is not None and self._group.changes:
            raise ApplyError("the stream ended inside an event group")
        return self.contents

    # --- XA --------------------------------------------------------------------------------

    def _xa(self, query: str) -> None:
        """``XA END`` (inside a prepared group: nothing to do), ``XA COMMIT xid`` (the prepared
        changes are applied) or ``XA ROLLBACK xid`` (dropped)."""
        verb, _, xid = query[3:].partition(" ")
        if verb == "END":
            return
        if verb not in ("COMMIT", "ROLLBACK"):
            raise ApplyError(f"an XA statement that is not modelled: {query!r}")
        changes = self.prepared.pop(xid, None)
        if changes is None:
            raise ApplyError(f"{query!r}: no prepared XA transaction {xid}")
        if verb == "COMMIT":
            for table, rows_event in changes:
                self._apply(table, rows_event)
        self._group = None
        self.committed += 1

    # --- DDL -------------------------------------------------------------------------------

    def _ddl(self, event: QueryEvent) -> None:
        """A DDL statement: the tables' schemas change, their rows are carried over by column
        name (an added column takes its default)."""
        try:
            statement = parse_ddl(event.query.decode(), event.database or None, self.tables)
        except (SchemaError, UnicodeDecodeError) as exc:
            raise ApplyError(
                f"a QUERY event that is no modelled DDL: {event.query!r}: {exc}"
            ) from None
        if isinstance(statement, CreateTable):
            if statement.table.qualified in self.tables:
                raise ApplyError(f"CREATE TABLE {statement.table.qualified}: the table exists")
        elif f"{statement.database}.{statement.name}" not in self.tables:
            raise ApplyError(
                f"DDL on unknown table {statement.database}.{statement.name}: {event.query!r}"
            )
        apply_ddl(statement, self.tables, self.contents.rows)

    # --- applying --------------------------------------------------------------------------

    def _apply(self, table: Table, event: RowsEvent) -> None:
        rows = self.contents.rows[table.qualified]
        for raw in event.rows:
            if isinstance(event, WriteRowsEvent):
                rows.append(with_generated(table, self._filled(table, self._values(table, raw))))
            elif isinstance(event, UpdateRowsEvent):
                before, after = raw
                index = self._find(table, rows, self._values(table, before))
                current = list(rows[index])
                for position, value in enumerate(self._values(table, after)):
                    if value is not ABSENT:
                        current[position] = value
                # (a MINIMAL image leaves a VIRTUAL column in no key out: computed here)
                rows[index] = with_generated(table, tuple(current))
            else:
                del rows[self._find(table, rows, self._values(table, raw))]

    def _values(self, table: Table, image: Any) -> list[Any]:
        if len(image) != table.width:
            raise ApplyError(f"{table.qualified}: a row image of {len(image)} values")
        out: list[Any] = []
        for column, value in zip(table.columns, image, strict=True):
            if value is ABSENT or value is None:
                out.append(value)
            elif column.type in INTEGER_RANGES and column.unsigned and value < 0:
                out.append(value + (1 << column.bits_wide()))
            elif column.type == "binary" and isinstance(value, bytes):
                out.append(value.ljust(column.length or 0, b"\x00"))
            elif column.type in FIXED_BINARY_TYPES and isinstance(value, bytes):
                out.append(fixed_binary_value(column.type, value))
            else:
                out.append(value)
        return out

    @staticmethod
    def _filled(table: Table, values: list[Any]) -> Row:
        row = []
        for column, value in zip(table.columns, values, strict=True):
            if value is ABSENT:
                if column.default is NO_DEFAULT and not column.nullable:
                    raise ApplyError(
                        f"{table.qualified}: a write image without {column.name}, which has no"
                        " default"
                    )
                value = None if column.default is NO_DEFAULT else column.default
            row.append(value)
        return tuple(row)

    @staticmethod
    def _find(table: Table, rows: list[Row], image: list[Any]) -> int:
        present = [(p, v) for p, v in enumerate(image) if v is not ABSENT]
        for index, row in enumerate(rows):
            if all(type(row[p]) is type(v) and row[p] == v for p, v in present):
                return index
        raise ApplyError(f"{table.qualified}: no row matches the before image {image!r}")


def apply_events(
    tables: Mapping[str, Table], initial: Contents, events: Iterable[Event]
) -> Contents:
    """The tables after ``events`` (decoded) are applied to ``initial``."""
    return Replica(tables, initial).feed_all(events)
