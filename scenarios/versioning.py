"""System-versioned tables (``WITH SYSTEM VERSIONING``): their columns and the rows events a real
MariaDB 10.11 logs for their DML (tests/golden/table_kinds; docs/verified-facts.md).

A versioned table has two TIMESTAMP(6) columns, ``row_start`` and ``row_end`` (implicit and
invisible, appended after the declared columns, unless the table declares its own ``AS ROW
START``/``AS ROW END`` columns), logged in every row image; ``row_end`` is part of its primary
key (the TABLE_MAP's SIMPLE_PRIMARY_KEY lists it). A current row ends at
2038-01-19 03:14:07.999999 (:data:`ROW_END_CURRENT`). The statement's time ``now``:

* INSERT logs the row with ``(now, current)``;
* UPDATE logs, row by row, an UPDATE_ROWS event (the row, then the new values with ``row_start =
  now``) followed by a WRITE_ROWS event of the history row (the old values, ``row_end = now``);
* DELETE logs an UPDATE_ROWS event setting ``row_end = now``, no DELETE_ROWS.

This module gives those images; :class:`scenarios.history.Scenario` takes tables with the implicit
period (``CREATE TABLE ... WITH SYSTEM VERSIONING``) and :mod:`scenarios.compiler` logs their
changes so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fakemaster.vocabulary.values import Timestamp
from scenarios.schema import Column, Table

__all__ = [
    "ROW_END_CURRENT",
    "deleted",
    "inserted",
    "updated",
    "versioned_table",
]

ROW_END_CURRENT = Timestamp(2147483647, 999999)

Row = tuple[Any, ...]
# (kind, rows) in logged order: kind "write" (rows are images) or "update" ((before, after)).
LoggedEvent = tuple[str, tuple[Any, ...]]


def versioned_table(table: Table, start: str = "row_start", end: str = "row_end") -> Table:
    """``table`` with its period columns: the implicit ones appended (invisible), or
    ``start``/``end`` when the table declares them (then they must be TIMESTAMP(6) NOT NULL
    columns of it). Its declared keys are kept as printed; the key rows are logged by (the
    TABLE_MAP's, the model's) ends with ``end``."""
    names = table.column_names
    columns = table.columns
    if start in names or end in names:
        for name in (start, end):
            column = table.columns[names.index(name)]
            if (column.type, column.fsp) != ("timestamp", 6):
                raise ValueError(f"{table.qualified}.{name}: a period column is TIMESTAMP(6)")
    else:
        columns = (
            *columns,
            *(
                Column(name=name, type="timestamp", nullable=False, fsp=6, invisible=True)
                for name in (start, end)
            ),
        )
    # The server makes row_end part of every unique key (history rows repeat the key).
    return replace(
        table,
        columns=columns,
        primary_key=(*table.primary_key, end) if table.primary_key else (),
        unique_keys=tuple((*key, end) for key in table.unique_keys),
        period=(start, end),
        _index={},
    )


def _positions(table: Table, start: str, end: str) -> tuple[int, int]:
    names = list(table.column_names)
    return names.index(start), names.index(end)


def _with(row: Row, changes: dict[int, Any]) -> Row:
    return tuple(changes.get(i, value) for i, value in enumerate(row))


def inserted(
    table: Table,
    rows: Sequence[Row],
    now: Timestamp,
    start: str = "row_start",
    end: str = "row_end",
) -> list[LoggedEvent]:
    """An INSERT of ``rows`` (values of every column, the period ones ignored) at ``now``."""
    s, e = _positions(table, start, end)
    return [("write", tuple(_with(row, {s: now, e: ROW_END_CURRENT}) for row in rows))]


def updated(
    table: Table,
    pairs: Sequence[tuple[Row, Row]],
    now: Timestamp,
    start: str = "row_start",
    end: str = "row_end",
) -> list[LoggedEvent]:
    """An UPDATE of current rows (``before`` as stored, ``after`` the new declared values) at
    ``now``: per row its update, then its history row."""
    s, e = _positions(table, start, end)
    events: list[LoggedEvent] = []
    for before, after in pairs:
        new = _with(after, {s: now, e: ROW_END_CURRENT})
        events.append(("update", ((before, new),)))
        events.append(("write", (_with(before, {e: now}),)))
    return events


def deleted(
    table: Table,
    rows: Sequence[Row],
    now: Timestamp,
    start: str = "row_start",
    end: str = "row_end",
) -> list[LoggedEvent]:
    """A DELETE of current rows at ``now``: one update ending them."""
    _, e = _positions(table, start, end)
    return [("update", tuple((row, _with(row, {e: now})) for row in rows))]
