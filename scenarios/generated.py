"""Generated columns' values, computed as the server computes them for each row an INSERT or
UPDATE writes (in column order: one may name an earlier one), and the columns a statement may
not give a value to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scenarios.errors import HistoryError, ScenarioError
from scenarios.expressions import evaluate, fit
from scenarios.schema import Table
from scenarios.values import convert

__all__ = ["compute_generated", "refuse_generated"]


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


def refuse_generated(table: Table, positions: Iterable[int], verb: str) -> None:
    """A statement that gives a generated column a value: refused, as the server refuses it
    in strict mode (ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN)."""
    for position in positions:
        column = table.columns[position]
        if column.generated is not None:
            raise HistoryError(
                f"{table.qualified}: {verb} gives the generated column {column.name} a value"
            )
