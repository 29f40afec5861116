"""The tables' content as the model keeps it while a history is built: rows by id in insertion
order (an update keeps a row's place), an index per unique key and, for a table without a key,
an index of whole rows; every change checked, applied and undoable in time independent of the
table's size.

:class:`Contents` is a plain snapshot (``database.table`` -> list of rows) for exports,
comparisons and the replay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scenarios.duplicate_entry import duplicate_entry
from scenarios.errors import HistoryError
from scenarios.schema import Table

__all__ = ["Contents", "LiveTables", "Row", "TableState"]

Row = tuple[Any, ...]
Undo = Callable[[], None]


@dataclass
class Contents:
    """The rows of every table, by ``database.table`` (in insertion order)."""

    rows: dict[str, list[Row]] = field(default_factory=dict)

    def copy(self) -> Contents:
        return Contents({name: list(rows) for name, rows in self.rows.items()})


class TableState:
    """One table's rows with their indexes."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.rows: dict[int, Row] = {}
        self._next_id = 0
        self._uniques: list[tuple[tuple[int, ...], dict[tuple[Any, ...], int]]] = [
            (positions, {}) for positions in table.unique_positions
        ]
        self._key_index: dict[tuple[Any, ...], int] | None = None
        for positions, index in self._uniques:
            if positions == table.key:
                self._key_index = index
        self._whole: dict[Row, list[int]] | None = {} if not table.key else None

    def _keys(self, row: Row) -> list[tuple[dict[tuple[Any, ...], int], tuple[Any, ...]]]:
        out = []
        for positions, index in self._uniques:
            value = tuple(row[p] for p in positions)
            if None not in value:  # NULLs never collide
                out.append((index, value))
        return out

    def _index(self, row_id: int, row: Row) -> None:
        for index, value in self._keys(row):
            index[value] = row_id
        if self._whole is not None:
            self._whole.setdefault(row, []).append(row_id)

    def _unindex(self, row_id: int, row: Row) -> None:
        for index, value in self._keys(row):
            del index[value]
        if self._whole is not None:
            ids = self._whole[row]
            ids.remove(row_id)
            if not ids:
                del self._whole[row]

    def _check_unique(self, row: Row, ignore: int | None = None) -> None:
        for (positions, _), (index, value) in zip(self._uniques, self._keys_all(row), strict=True):
            if value is None:
                continue
            found = index.get(value)
            if found is not None and found != ignore:
                raise HistoryError(
                    f"{self.table.qualified}: {duplicate_entry(self.table, positions, value)}"
                )

    def _keys_all(
        self, row: Row
    ) -> list[tuple[dict[tuple[Any, ...], int], tuple[Any, ...] | None]]:
        out: list[tuple[dict[tuple[Any, ...], int], tuple[Any, ...] | None]] = []
        for positions, index in self._uniques:
            value = tuple(row[p] for p in positions)
            out.append((index, None if None in value else value))
        return out

    def find(self, image: Mapping[int, Any]) -> int | None:
        """The id of a row whose columns ``image`` names hold its values (the key's columns, or
        every column of a table without a key)."""
        if self._key_index is not None and set(image) == set(self.table.key):
            found = self._key_index.get(tuple(image[p] for p in self.table.key))
            if found is not None and _same_row(
                tuple(self.rows[found][p] for p in self.table.key),
                tuple(image[p] for p in self.table.key),
            ):
                return found
            return None
        if self._whole is not None and len(image) == self.table.width:
            row = tuple(image[p] for p in range(self.table.width))
            for row_id in self._whole.get(row, ()):
                if _same_row(self.rows[row_id], row):
                    return row_id
            return None
        for row_id, row in self.rows.items():  # any other image: a scan
            if all(_same(row[p], v) for p, v in image.items()):
                return row_id
        return None

    def find_row(self, row: Row) -> int:
        image = dict(enumerate(row))
        if self.table.key:
            image = {p: row[p] for p in self.table.key}
        found = self.find(image)
        if found is None or not _same_row(self.rows[found], row):
            raise HistoryError(f"{self.table.qualified}: no row {row!r}")
        return found

    # --- changes, each returning its undo ----------------------------------------------

    def insert(self, row: Row) -> Undo:
        self._check_unique(row)
        row_id = self._next_id
        self._next_id += 1
        self.rows[row_id] = row
        self._index(row_id, row)

        def undo() -> None:
            self._unindex(row_id, row)
            del self.rows[row_id]

        return undo

    def update(self, before: Row, after: Row) -> Undo:
        row_id = self.find_row(before)
        self._unindex(row_id, before)
        try:
            self._check_unique(after)
        except HistoryError:
            self._index(row_id, before)
            raise
        self.rows[row_id] = after
        self._index(row_id, after)

        def undo() -> None:
            self._unindex(row_id, after)
            self.rows[row_id] = before
            self._index(row_id, before)

        return undo

    def delete(self, before: Row) -> Undo:
        row_id = self.find_row(before)
        self._unindex(row_id, before)
        del self.rows[row_id]

        def undo() -> None:
            # Back in its place: rebuild the order (rare: only a failed transaction undoes).
            self.rows[row_id] = before
            ordered = sorted(self.rows.items())
            self.rows.clear()
            self.rows.update(ordered)
            self._index(row_id, before)

        return undo


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


def _same_row(a: Row, b: Row) -> bool:
    return all(_same(x, y) for x, y in zip(a, b, strict=True))


class LiveTables:
    """Every table's :class:`TableState`, by ``database.table``."""

    def __init__(self) -> None:
        self.tables: dict[str, TableState] = {}

    def add_table(self, table: Table) -> None:
        self.tables[table.qualified] = TableState(table)

    def __getitem__(self, name: str) -> TableState:
        return self.tables[name]

    def snapshot(self) -> Contents:
        return Contents({name: list(state.rows.values()) for name, state in self.tables.items()})
