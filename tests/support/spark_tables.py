"""Reading materialised tables back for comparison with an oracle or a server."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

__all__ = ["plain_row", "read_tables", "sorted_rows"]


def _plain(value: Any) -> Any:
    # BIGINT UNSIGNED and BIT(64) are DECIMAL(20,0) columns: their values are integers.
    if (
        isinstance(value, Decimal)
        and value == value.to_integral_value()
        and value.as_tuple().exponent == 0
    ):
        return int(value)
    return value


def plain_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in row.items()}


def read_tables(out: Path) -> dict[str, list[dict[str, Any]]]:
    """``database.table`` -> rows (column -> Python value) of every dataset under out/tables."""
    import pyarrow.parquet as pq

    tables: dict[str, list[dict[str, Any]]] = {}
    root = out / "tables"
    for directory in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        rows = pq.read_table(directory).to_pylist()
        plain = [{k: _plain(v) for k, v in row.items()} for row in rows]
        tables[directory.name] = sorted(plain, key=repr)  # files come in any order
    return tables


def sorted_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows in one order whatever their cells' types: NULL last in a column, the rest by
    text."""
    return sorted(rows, key=lambda r: tuple((c is None, "" if c is None else str(c)) for c in r))
