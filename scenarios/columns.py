"""A column resolved from its parsed type and options, for the builder and the CREATE TABLE parser.

Every column is resolved when declared: its collation (``CHARACTER SET`` alone gives the set's
default collation, ``COLLATE`` alone its set; a character column with neither gets the table's,
``utf8mb4_general_ci`` unless the table says otherwise), a text type with ``CHARACTER SET
binary`` made the byte type ``SHOW CREATE TABLE`` shows, and its default converted to the
model's value (see :mod:`scenarios.values`).

Below :mod:`scenarios.create_table` and :mod:`scenarios.builder`, above :mod:`scenarios.schema`
and :mod:`scenarios.values`: it parses no text, so neither parser nor builder is imported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fakemaster.protocol.charsets import charset_default, collation_by_name
from fakemaster.sql.tables.catalogue import DISPLAY_WIDTHS
from scenarios.errors import SchemaError
from scenarios.schema import BINARY_TYPES, CHARACTER_TYPES, FIXED_BINARY_TYPES, NO_DEFAULT, Column
from scenarios.values import convert

__all__ = ["make_column", "resolve_collation"]

# Text types that CHARACTER SET binary turns into their byte types.
_TEXT_TO_BLOB = {
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}


def make_column(
    name: str,
    fields: dict[str, Any],
    *,
    nullable: bool,
    default: Any,
    charset: str | None,
    collation: str | None,
    table_collation: str,
    table_name: str = "(a column declaration)",
) -> Column:
    """A resolved column (shared by the builder and the CREATE TABLE parser; ``table_name``
    names the table in the error of a default that does not fit)."""
    fields = dict(fields)
    fields.pop("charset", None)
    fields.pop("collation", None)
    kind = fields["type"]
    if kind in CHARACTER_TYPES:
        resolved = resolve_collation(name, charset, collation, table_collation)
        if kind == "json":
            resolved = "utf8mb4_bin"
    elif kind in BINARY_TYPES or kind in FIXED_BINARY_TYPES:
        if charset not in (None, "binary") or collation not in (None, "binary"):
            raise SchemaError(f"column {name}: {kind} has no character set")
        resolved = "binary"
    else:
        if charset is not None or collation is not None:
            raise SchemaError(f"column {name}: {kind} has no character set")
        resolved = None
    if resolved == "binary" and kind in ("char", "varchar", *_TEXT_TO_BLOB):
        # CHARACTER SET binary makes a byte type, as SHOW CREATE TABLE shows it.
        fields["type"] = {"char": "binary", "varchar": "varbinary", **_TEXT_TO_BLOB}[kind]
    width = fields.get("width")
    if width is not None and width == DISPLAY_WIDTHS[kind][bool(fields.get("unsigned"))]:
        del fields["width"]  # the type's own display width: as if none were given
    base = Column(name=name, nullable=nullable, collation=resolved, **fields)
    if base.charset not in (None, "utf8mb4") and any(
        ord(char) > 0xFFFF for member in base.members for char in member
    ):
        # The server keeps a table's definition in utf8mb3: such a member reads back as '?'
        # in SHOW CREATE TABLE while the rows hold the character (docs/verified-facts.md).
        raise SchemaError(
            f"column {name}: {kind.upper()} member beyond U+FFFF in CHARACTER SET {base.charset}"
            " is not modelled"
        )
    if default is NO_DEFAULT or default is None:
        if default is None and not nullable:
            raise SchemaError(f"column {name}: NOT NULL with DEFAULT NULL")
        return replace(base, default=default)
    return replace(base, default=convert(base, default, table=table_name))


def resolve_collation(
    name: str, charset: str | None, collation: str | None, table_collation: str
) -> str:
    """The collation of column (or table) ``name`` from its CHARACTER SET and COLLATE, either
    may be None; ``table_collation`` when both are."""
    if collation is not None:
        found = collation_by_name(collation)
        if found is None:
            raise SchemaError(f"column {name}: unknown collation {collation!r}")
        if charset is not None and charset_default(charset) is None:
            raise SchemaError(f"column {name}: unknown character set {charset!r}")
        if charset is not None and found.charset != charset_default(charset).charset:  # type: ignore[union-attr]
            raise SchemaError(
                f"column {name}: collation {collation!r} is not of character set {charset!r}"
            )
        return found.name
    if charset is not None:
        found = charset_default(charset)
        if found is None:
            raise SchemaError(f"column {name}: unknown character set {charset!r}")
        return found.name
    return table_collation
