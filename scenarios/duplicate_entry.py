"""MariaDB's wording of a unique-key violation (error 1062, ``ER_DUP_ENTRY``), so that a
history refused by the model reads as the server would have refused it::

    Duplicate entry '1-x' for key 'PRIMARY'

The key is ``PRIMARY`` or the unique key's name (the server's default name, the first column's,
when the CREATE gave none); the entry is the key's values as text joined by ``-``, bytes that
are not printable ASCII written ``\\xNN`` (checked against MariaDB 10.11, see
tests/scenarios/test_duplicate_entry.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from scenarios.schema import Column, Table
from scenarios.text import format_double
from scenarios.values import python_codec

__all__ = ["duplicate_entry", "key_name"]


def duplicate_entry(table: Table, positions: Sequence[int], value: Sequence[Any]) -> str:
    """The server's message for ``value`` colliding on the key over ``positions``."""
    columns = [table.columns[p] for p in positions]
    entry = "-".join(_text(column, item) for column, item in zip(columns, value, strict=True))
    return f"Duplicate entry '{entry}' for key '{key_name(table, columns)}'"


def key_name(table: Table, columns: Sequence[Column]) -> str:
    """``PRIMARY`` or the name of the unique key over ``columns``."""
    names = tuple(column.name.lower() for column in columns)
    if tuple(name.lower() for name in table.primary_key) == names:
        return "PRIMARY"
    for index in table.indexes:
        if index.kind == "UNIQUE" and tuple(n.lower() for n in index.columns) == names:
            return index.name
    return columns[0].name


def _text(column: Column, value: Any) -> str:
    if column.type == "enum" and isinstance(value, int):
        return column.members[value - 1] if 0 < value <= len(column.members) else ""
    if column.type == "set" and isinstance(value, int):
        return ",".join(m for bit, m in enumerate(column.members) if value >> bit & 1)
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        codec = python_codec(column.charset)
        if codec is not None:
            try:
                return bytes(value).decode(codec)
            except UnicodeDecodeError:
                pass
        return "".join(chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02X}" for b in value)
    return str(value)
