"""The table builder: tables declared in Python instead of ``CREATE TABLE`` text::

    orders = table(
        "shop.orders",
        column("id", "BIGINT UNSIGNED", null=False),
        column("status", "ENUM('new','paid')", null=False, default="new"),
        column("note", "VARCHAR(200)"),
        primary_key=("id",),
    )

gives the :class:`~scenarios.schema.Table` that
:func:`~scenarios.create_table.parse_create_table` gives for the same declaration. A column's
type is SQL text, read by the CREATE TABLE parser, and the column is resolved as the parser
resolves its own (:mod:`scenarios.columns`): this module sits above both.
``scenarios.table`` and ``scenarios.column`` are these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scenarios.columns import make_column
from scenarios.create_table import parse_column_type
from scenarios.errors import SchemaError
from scenarios.schema import DEFAULT_COLLATION, NO_DEFAULT, Column, Table

__all__ = ["column", "parse_type", "table"]


def parse_type(text: str) -> dict[str, Any]:
    """The type fields of a type spelled as SQL (``"DECIMAL(10,2) UNSIGNED"``,
    ``"ENUM('a','b')"``, ``"VARCHAR(20)"``...), as keyword arguments of :class:`Column`."""
    return parse_column_type(text)


def column(
    name: str,
    type: str,
    *,
    null: bool = True,
    default: Any = NO_DEFAULT,
    charset: str | None = None,
    collation: str | None = None,
    unsigned: bool = False,
    table_collation: str = DEFAULT_COLLATION,
) -> Column:
    """A column from its SQL type text and options (see :mod:`scenarios.columns`)."""
    fields = parse_type(type)
    if unsigned:
        fields["unsigned"] = True
    return make_column(
        name,
        fields,
        nullable=null,
        default=default,
        charset=charset or fields.pop("charset", None),
        collation=collation or fields.pop("collation", None),
        table_collation=table_collation,
    )


def table(
    name: str,
    *columns: Column,
    primary_key: Sequence[str] = (),
    unique: Sequence[Sequence[str]] = (),
    engine: str = "InnoDB",
) -> Table:
    """A table ``"database.name"`` from columns made by :func:`column`."""
    database, dot, bare = name.partition(".")
    if not dot or not database or not bare:
        raise SchemaError(f"a table is named database.table, not {name!r}")
    return Table(
        database,
        bare,
        tuple(columns),
        primary_key=tuple(primary_key),
        unique_keys=tuple(tuple(names) for names in unique),
        engine=engine,
    )
