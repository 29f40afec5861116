"""Generated columns' values, computed as the server computes them for each row an INSERT or
UPDATE writes (in column order: one may name an earlier one), and the columns a statement may
not give a value to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from scenarios.errors import HistoryError, ScenarioError, SchemaError
from scenarios.expressions import evaluate, fit, referenced_columns
from scenarios.schema import Column, Table
from scenarios.values import convert

__all__ = ["check_references", "compute_generated", "refuse_generated", "with_generated"]


def compute_generated(table: Table, row: list[Any]) -> None:
    """Set every generated column of ``row`` (model values, in place) from the others."""
    positions = table.generated_positions
    if not positions:
        return
    named = {item.name.lower(): (item, row[p]) for p, item in enumerate(table.columns)}
    for position in positions:
        column = table.columns[position]
        assert column.generated is not None
        try:
            value = convert(
                column, fit(column, evaluate(column.generated, named)), table=table.qualified
            )
        except ScenarioError as exc:
            raise HistoryError(
                f"{table.qualified}: generated column {column.name}: {exc}"
            ) from None
        row[position] = value
        named[column.name.lower()] = (column, value)


def with_generated(table: Table, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """``row`` with its generated columns computed (a row an ALTER carries over)."""
    if not table.generated_positions:
        return row
    computed = list(row)
    compute_generated(table, computed)
    return tuple(computed)


def refuse_generated(table: Table, positions: Iterable[int], verb: str) -> None:
    """A statement that gives a generated column a value: refused, as the server refuses it
    in strict mode (ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN)."""
    for position in positions:
        column = table.columns[position]
        if column.generated is not None:
            raise HistoryError(
                f"{table.qualified}: {verb} gives the generated column {column.name} a value"
            )


def check_references(columns: Sequence[Column], where: str) -> None:
    """A generated column names columns of the table, a generated one only before it."""
    seen: dict[str, Column] = {}
    positions = {item.name.lower(): item for item in columns}
    for item in columns:
        if item.generated is not None:
            for name in referenced_columns(item.generated):
                if name.lower() not in positions:
                    raise SchemaError(
                        f"{where}: generated column {item.name} names an unknown column {name!r}"
                    )
                found = positions[name.lower()]
                if found.generated is not None and name.lower() not in seen:
                    raise SchemaError(
                        f"{where}: generated column {item.name} names a later"
                        f" generated column {name!r}"
                    )
                if found.auto_increment:
                    raise SchemaError(
                        f"{where}: generated column {item.name} names the"
                        f" AUTO_INCREMENT column {name!r}"
                    )
        seen[item.name.lower()] = item
