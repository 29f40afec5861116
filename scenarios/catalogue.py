"""A scenario's tables as the SQL layer's catalogue (:mod:`fakemaster.sql.tables.catalogue`):
tables, columns, keys and rows from the oracle at the number of points (transactions, DDL
statements, XA COMMIT/ROLLBACK) released so far: a table's schema is the one it has there.

The rows a snapshot shows are the oracle's after the transactions in the binlog at the moment
the snapshot is taken: :class:`ScenarioCatalogue` asks ``released()`` (the served store's count,
:class:`scenarios.live.ScenarioStore`), never a count of its own. Cells are the text MariaDB's
``SELECT`` sends: text columns as ``str`` (the server converts them to the connection's
character set), byte columns raw, BIT columns as their big-endian bytes, TIMESTAMP columns as
:class:`~fakemaster.sql.tables.catalogue.TimestampCell` (rendered in the session's time zone). Rows come in the table's key order (the model's order of
the key's values, text by :func:`collation_key`), insertion order for a table without a key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    CellValue,
    TimestampCell,
    general_ci_key,
)
from fakemaster.vocabulary.values import DateTime, Time, Timestamp
from scenarios.history import Scenario
from scenarios.oracle import Oracle, cell_text
from scenarios.schema import NO_DEFAULT, Column, Table
from scenarios.show_create import keys_of, show_create_table
from scenarios.sql import literal
from scenarios.state import Contents, Row
from scenarios.values import python_codec
from scenarios.versioning import ROW_END_CURRENT

__all__ = [
    "ScenarioCatalogue",
    "ScenarioSnapshot",
    "catalogue_table",
    "collation_key",
    "sql_cell",
]

_SHOWN_TYPES = {"json": "longtext"}


def _default_text(column: Column) -> str | None:
    """What SHOW CREATE TABLE prints after DEFAULT (None: no default)."""
    if column.default is NO_DEFAULT:
        return "NULL" if column.nullable else None
    value = column.default
    if value is None:
        return "NULL"
    if column.type in ("float", "double", "decimal") or (
        isinstance(value, int) and column.type not in ("bit", "enum", "set", "year")
    ):
        return cell_text(column, value)
    if column.type == "year":
        return str(value)
    if isinstance(value, DateTime | Time):  # at the column's precision, as the server prints
        return f"'{value.format(column.fsp)}'"
    if isinstance(value, Timestamp) and value != Timestamp(0, 0):
        fraction = f".{value.microsecond:06d}"[: column.fsp + 1] if column.fsp else ""
        return f"'{value.to_datetime():%Y-%m-%d %H:%M:%S}{fraction}'"
    return literal(column, value) if column.type != "bit" else f"b'{value:b}'"


def catalogue_column(column: Column) -> CatalogueColumn:
    collation = column.collation if column.collation not in (None, "binary") else None
    return CatalogueColumn(
        name=column.name,
        data_type=column.type,
        nullable=column.nullable,
        unsigned=column.unsigned,
        length=column.length,
        precision=column.precision,
        scale=column.scale,
        fsp=column.fsp,
        collation=collation,
        members=column.members,
        default=column.default_expression or column.default_constant or _default_text(column),
        on_update=column.on_update,
        width=column.width,
    )


def catalogue_table(table: Table) -> CatalogueTable:
    """``table`` as the SQL layer describes it: its keys (unnamed UNIQUE keys named after
    their first column, as MariaDB names them) and its SHOW CREATE TABLE text
    (:mod:`scenarios.show_create`)."""
    keys = [
        CatalogueKey(index.name, index.columns, unique=index.kind in ("PRIMARY", "UNIQUE"))
        for index in keys_of(table)
    ]
    columns = tuple(catalogue_column(c) for c in table.columns)
    # A system-versioned table's period columns are invisible: not in SELECT * (nor here).
    shown = tuple(columns[p] for p in table.declared_positions)
    return CatalogueTable(
        database=table.database,
        name=table.name,
        columns=shown,
        keys=tuple(keys),
        engine=table.engine,
        collation=table.collation,
        comment=table.comment,
        create_text=show_create_table(table, columns),
        sequence=table.sequence,
        versioned=table.period is not None,
    )


def sql_cell(column: Column, value: Any) -> CellValue:
    """The cell a ``SELECT`` sends for a model value (see the module docstring)."""
    if value is None:
        return None
    if column.type == "bit":
        return int(value).to_bytes(((column.length or 1) + 7) // 8, "big")
    if isinstance(value, Timestamp):
        return TimestampCell(value.seconds, value.microsecond, column.fsp)
    if isinstance(value, bytes):
        codec = python_codec(column.charset)
        return value if codec is None else value.decode(codec)
    # ENUM and SET cells are in the column's set, as the SQL layer converts them from it.
    codec = python_codec(column.charset) if column.type in ("enum", "set") else None
    return (cell_text(column, value) or "").encode(codec or "utf-8")


def collation_key(column: Column, value: Any) -> Any:
    """How InnoDB orders a key value: text by its collation (``_bin``: by code point;
    otherwise as the ``_general_ci`` collations weigh characters: accents and case ignored,
    trailing spaces too), the rest by value."""
    if not (isinstance(value, bytes) and column.is_text):
        return value
    codec = python_codec(column.charset)
    if codec is None:
        return value
    text = value.decode(codec)
    if (column.collation or "").endswith("_bin"):
        return text.rstrip(" ")
    return general_ci_key(text)


def _sort_key(table: Table, row: Row) -> tuple[Any, ...]:
    return tuple((row[p] is not None, collation_key(table.columns[p], row[p])) for p in table.key)


class ScenarioSnapshot:
    """The scenario's tables after ``after`` points (transactions, DDL statements, XA
    COMMIT/ROLLBACK: :class:`~scenarios.oracle.Oracle`'s), with their schemas there
    (``tables``, by qualified name; the final ones when not given)."""

    def __init__(
        self,
        scenario: Scenario,
        contents: Contents,
        after: int,
        tables: Mapping[str, Table] | None = None,
    ) -> None:
        self.scenario = scenario
        self.contents = contents
        self.after = after
        self.tables: Mapping[str, Table] = scenario.tables if tables is None else tables

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        """The rows of ``table`` at this point, in its key order: none when it does not exist
        here; by column name when the table was described at another point with other columns
        (a snapshot kept across DDL: MariaDB answers 1412 "Table definition has changed"
        there, which is not modelled)."""
        model = self.tables.get(f"{table.database}.{table.name}")
        if model is None:
            return []
        rows = list(self.contents.rows.get(model.qualified, []))
        period = model.period_positions
        if period is not None:  # the current rows (their period columns: not described)
            rows = [row for row in rows if row[period[1]] == ROW_END_CURRENT]
        if model.key:
            rows.sort(key=lambda row: _sort_key(model, row))
        cells = [
            tuple(sql_cell(c, v) for c, v in zip(model.columns, row, strict=True)) for row in rows
        ]
        names = tuple(column.name for column in table.columns)
        if names == model.column_names:
            return cells
        where = {name: position for position, name in enumerate(model.column_names)}
        return [
            tuple(row[where[name]] if name in where else None for name in names) for row in cells
        ]


class ScenarioCatalogue:
    """The catalogue of ``scenario`` served with ``released()`` points (transactions, DDL
    statements, XA COMMIT/ROLLBACK) in its binlog: the tables as they are there (created,
    altered, renamed, dropped by the DDL released so far), in every database the history uses
    (the databases exist from the start, as the scenario's setup SQL creates them)."""

    def __init__(self, scenario: Scenario, released: Callable[[], int]) -> None:
        self.scenario = scenario
        self.oracle = Oracle(scenario)
        self._released = released
        self._databases = scenario.databases
        # per point: its rows, its tables' schemas, the catalogue tables by database
        self._points: dict[
            int, tuple[Contents, dict[str, Table], dict[str, list[CatalogueTable]]]
        ] = {}
        self._described: dict[int, tuple[Table, CatalogueTable]] = {}

    def databases(self) -> Sequence[str]:
        return self._databases

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        return self._at(self._released())[2].get(database, [])

    def snapshot(self) -> ScenarioSnapshot:
        return self.snapshot_after(self._released())

    def snapshot_after(self, after: int) -> ScenarioSnapshot:
        contents, tables, _ = self._at(after)
        return ScenarioSnapshot(self.scenario, contents, after, tables)

    def _at(self, after: int) -> tuple[Contents, dict[str, Table], dict[str, list[CatalogueTable]]]:
        found = self._points.get(after)
        if found is None:
            tables = self.oracle.tables(after)
            by_database: dict[str, list[CatalogueTable]] = {}
            for table in tables.values():
                by_database.setdefault(table.database, []).append(self._describe(table))
            for described in by_database.values():
                described.sort(key=lambda t: t.name)
            found = self._points[after] = (self.oracle.state(after), tables, by_database)
        return found

    def _describe(self, table: Table) -> CatalogueTable:
        """``table`` as the SQL layer describes it, once per schema (tables are frozen)."""
        entry = self._described.get(id(table))
        if entry is None or entry[0] is not table:
            entry = self._described[id(table)] = (table, catalogue_table(table))
        return entry[1]

    def text_codec(self, charset: str) -> str | None:
        return python_codec(charset)
