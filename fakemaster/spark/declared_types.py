"""UUID, INET4 and INET6 columns the binlog's own DDL declares, for the materialiser.

A TABLE_MAP logs these types as ``BINARY(16)``/``BINARY(4)`` (see
:mod:`fakemaster.vocabulary.mariadb_types`): without a catalogue the decoder gives their values
as bytes (``0x`` + hex in the change events). A ``CREATE TABLE``/``ALTER TABLE`` in the binlog
says what they are; the materialiser applies that DDL anyway (``scenarios.ddl.apply_ddl``), and
with this module makes such a column a ``string`` of the server's text
(``6ccd780c-baba-1026-9564-5b8c656024db``, ``::ffff:192.0.2.1``), as a catalogue's
``mariadb_types`` does. A value that is already text (a catalogue made the decoder give it so)
is kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES, FixedBinaryTextError

__all__ = ["declared_kinds", "declared_text", "fixed_binary_text", "with_declared_types"]


def declared_kinds(table: Any) -> dict[str, str]:
    """The UUID/INET4/INET6 columns of a ``scenarios.schema.Table`` (name -> type)."""
    return {c.name: c.type for c in table.columns if c.type in FIXED_BINARY_TYPES}


def fixed_binary_text(kind: str, text: str | None) -> str | None:
    """The server's text of a ``kind`` value given as an image's text: ``0x`` + the hex of
    the (padded) bytes a TABLE_MAP's BINARY(n) gives, or already the type's text (kept).
    Hex of another length (the column is not of that type after all) is kept as well."""
    value_type = FIXED_BINARY_TYPES[kind]
    if text is None or not text.startswith("0x") or len(text) != 2 + 2 * value_type.LENGTH:
        return text
    try:
        return value_type.from_logged(bytes.fromhex(text[2:])).text()
    except (ValueError, FixedBinaryTextError):
        return text


def with_declared_types(schema: Any, kinds: Mapping[str, str]) -> dict[str, Any] | None:
    """A materialiser schema (``columns``, ``column_types``, ``primary_key``: a TABLE_MAP's or
    the DDL's) with the declared columns typed ``string`` where the TABLE_MAP says ``binary``,
    and ``mariadb_types`` naming them; None stays None."""
    if schema is None:
        return None
    columns: Sequence[str] = schema["columns"]
    types = list(schema["column_types"] or [])
    present = {c: kind for c, kind in kinds.items() if c in columns}
    for position, column in enumerate(columns):
        if column in present and position < len(types) and types[position] == "binary":
            types[position] = "string"
    return {
        "columns": list(columns),
        "column_types": types or schema["column_types"],
        "primary_key": schema["primary_key"],
        "mariadb_types": present,
    }


def declared_text(value: Any, kind: str) -> Any:
    """A Spark column: ``value`` (an image's text) as :func:`fixed_binary_text` gives it."""
    from pyspark.sql import functions as F

    # Not Arrow-optimised: pandas is not a dependency (one value at a time is enough here).
    convert = F.udf(lambda text: fixed_binary_text(kind, text), "string", useArrow=False)
    return convert(value)
