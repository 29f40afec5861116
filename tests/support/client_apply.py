"""A consumer of the client's change events for tests: applies them to a scenario's tables,
independently of the scenario's model (rows found by the columns a before image holds, as a
replica finds them), so the result can be compared with the oracle. A "ddl" change is parsed
(scenarios.create_table.parse_ddl) and changes the consumer's own tables as it comes, their
rows carried over by column name, so later row images are read with the table they were
written for."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fakemaster.client.changes import DDL, DELETE, INSERT, ChangeEvent
from fakemaster.client.position import Position
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES
from scenarios.compiler import compile_scenario
from scenarios.create_table import parse_ddl
from scenarios.ddl import apply_ddl
from scenarios.history import Scenario
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Table
from scenarios.values import convert

__all__ = ["Tables", "catalogue", "initial", "target"]


def catalogue(scenario: Scenario) -> dict[str, list[str]]:
    """Column names by ``database.table`` (for TABLE_MAPs without COLUMN_NAME metadata): the
    tables before the first step (a scenario without FULL metadata has no DDL)."""
    return {
        name: [c.name for c in table.columns] for name, table in scenario.initial_tables.items()
    }


def initial(scenario: Scenario) -> Position:
    """The position before the scenario's first transaction: its binlog's GTID state (a
    replica of a primary whose older binlogs are purged starts from it)."""
    state = {g.domain_id: (g.server_id, g.seq_no) for g in scenario.gtid_state}
    return Position(gtids=tuple((d, s, q) for d, (s, q) in sorted(state.items())))


def target(scenario: Scenario) -> Position:
    """The position after the scenario's last transaction (GTIDs of the compiled groups)."""
    state: dict[int, tuple[int, int]] = {}
    for item in compile_scenario(scenario):
        if item.gtid is not None:
            state[item.gtid.domain_id] = (item.gtid.server_id, item.gtid.seq_no)
    return Position(gtids=tuple((d, s, q) for d, (s, q) in sorted(state.items())))


class Tables:
    """The tables of ``scenario`` from its initial rows, changed by applied change events."""

    def __init__(self, scenario: Scenario) -> None:
        self.tables: dict[str, Table] = dict(scenario.initial_tables)
        self.rows: dict[str, list[tuple[Any, ...]]] = {
            name: list(scenario.initial.rows[name]) for name in scenario.initial_tables
        }
        self.applied: list[ChangeEvent] = []
        self.seen: set[tuple[str | None, int]] = set()

    def apply(self, change: ChangeEvent) -> None:
        key = (change.gtid_text, change.row_index)
        if change.gtid is not None and key in self.seen:
            raise AssertionError(f"change {key} applied twice")
        self.seen.add(key)
        self.applied.append(change)
        if change.operation == DDL:
            assert change.statement is not None
            self._ddl(change.statement, change.schema)
            return
        table = self.tables[change.qualified]
        rows = self.rows[change.qualified]
        if change.operation == INSERT:
            assert change.after is not None
            rows.append(self._filled(table, self._values(table, change.after)))
            return
        assert change.before is not None
        index = self._find(table, rows, self._values(table, change.before))
        if change.operation == DELETE:
            del rows[index]
            return
        assert change.after is not None
        current = list(rows[index])
        for position, value in self._values(table, change.after).items():
            current[position] = value
        rows[index] = tuple(current)

    def apply_all(self, changes: Iterable[ChangeEvent]) -> Tables:
        for change in changes:
            self.apply(change)
        return self

    def _ddl(self, statement_text: str, schema: str) -> None:
        apply_ddl(parse_ddl(statement_text, schema or None), self.tables, self.rows)

    @staticmethod
    def _values(table: Table, image: Mapping[str, Any]) -> dict[int, Any]:
        positions = {column.name: index for index, column in enumerate(table.columns)}
        out: dict[int, Any] = {}
        for name, value in image.items():
            index = positions[name]
            column = table.columns[index]
            if value is not None:
                if column.type in INTEGER_RANGES and column.unsigned and value < 0:
                    value += 1 << column.bits_wide()
                elif column.type == "binary" and isinstance(value, bytes):
                    value = value.ljust(column.length or 0, b"\x00")
                elif column.type in FIXED_BINARY_TYPES:  # logged as BINARY(n): the model's value
                    value = convert(column, value, table=table.qualified)
            out[index] = value
        return out

    @staticmethod
    def _filled(table: Table, values: dict[int, Any]) -> tuple[Any, ...]:
        row = []
        for index, column in enumerate(table.columns):
            if index in values:
                row.append(values[index])
            elif column.default is NO_DEFAULT:
                assert column.nullable, f"{table.qualified}: no value for {column.name}"
                row.append(None)
            else:
                row.append(column.default)
        return tuple(row)

    @staticmethod
    def _find(table: Table, rows: list[tuple[Any, ...]], image: dict[int, Any]) -> int:
        for index, row in enumerate(rows):
            if all(type(row[p]) is type(v) and row[p] == v for p, v in image.items()):
                return index
        raise AssertionError(f"{table.qualified}: no row matches the before image {image!r}")
