"""A scenario's tables as the SQL layer's catalogue (:mod:`fakemaster.protocol.catalogue`):
columns, keys and rows from the oracle at the number of transactions released so far.

The rows a snapshot shows are the oracle's after the transactions in the binlog at the moment
the snapshot is taken: :class:`ScenarioCatalogue` asks ``released()`` (the served store's count,
:class:`scenarios.live.ScenarioStore`), never a count of its own. Cells are the text MariaDB's
``SELECT`` sends: text columns as ``str`` (the server converts them to the connection's
character set), byte columns raw, BIT columns as their big-endian bytes, TIMESTAMP columns as
:class:`~fakemaster.protocol.catalogue.TimestampCell` (rendered in the session's time zone). Rows come in the table's key order (the model's order of
the key's values, text by :func:`collation_key`), insertion order for a table without a key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fakemaster.protocol.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    CellValue,
    TimestampCell,
    general_ci_key,
)
from fakemaster.values import Timestamp
from scenarios.history import Scenario
from scenarios.oracle import Oracle, cell_text
from scenarios.schema import DEFAULT_COLLATION, NO_DEFAULT, Column, Table
from scenarios.sql import literal
from scenarios.state import Contents, Row
from scenarios.values import python_codec

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
        default=_default_text(column),
    )


def catalogue_table(table: Table) -> CatalogueTable:
    """``table`` as the SQL layer describes it (unnamed UNIQUE keys named after their first
    column, as MariaDB names them)."""
    keys: list[CatalogueKey] = []
    if table.primary_key:
        keys.append(CatalogueKey("PRIMARY", table.primary_key))
    taken: set[str] = {"primary"}
    for unique in table.unique_keys:
        name = unique[0]
        suffix = 2
        while name.lower() in taken:
            name = f"{unique[0]}_{suffix}"
            suffix += 1
        taken.add(name.lower())
        keys.append(CatalogueKey(name, unique))
    return CatalogueTable(
        database=table.database,
        name=table.name,
        columns=tuple(catalogue_column(c) for c in table.columns),
        keys=tuple(keys),
        engine=table.engine,
        collation=DEFAULT_COLLATION,
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
    return (cell_text(column, value) or "").encode()


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
    """The scenario's tables after ``after`` transactions."""

    def __init__(self, scenario: Scenario, contents: Contents, after: int) -> None:
        self.scenario = scenario
        self.contents = contents
        self.after = after

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        model = self.scenario.tables[f"{table.database}.{table.name}"]
        rows = list(self.contents.rows.get(model.qualified, []))
        if model.key:
            rows.sort(key=lambda row: _sort_key(model, row))
        return [
            tuple(sql_cell(c, v) for c, v in zip(model.columns, row, strict=True)) for row in rows
        ]


class ScenarioCatalogue:
    """The catalogue of ``scenario`` served with ``released()`` transactions in its binlog."""

    def __init__(self, scenario: Scenario, released: Callable[[], int]) -> None:
        self.scenario = scenario
        self.oracle = Oracle(scenario)
        self._released = released
        self._tables: dict[str, list[CatalogueTable]] = {}
        for table in scenario.tables.values():
            self._tables.setdefault(table.database, []).append(catalogue_table(table))
        for tables in self._tables.values():
            tables.sort(key=lambda t: t.name)
        self._states: dict[int, Contents] = {}

    def databases(self) -> Sequence[str]:
        return sorted(self._tables)

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        return self._tables.get(database, [])

    def snapshot(self) -> ScenarioSnapshot:
        return self.snapshot_after(self._released())

    def snapshot_after(self, after: int) -> ScenarioSnapshot:
        contents = self._states.get(after)
        if contents is None:
            contents = self.oracle.state(after)
            self._states[after] = contents
        return ScenarioSnapshot(self.scenario, contents, after)

    def text_codec(self, charset: str) -> str | None:
        return python_codec(charset)
