"""DDL statements of a history at SQL level, and what they do to a table's schema.

The statements modelled are those a CDC client must follow between row events: ``CREATE
TABLE``, ``ALTER TABLE`` with ``ADD [COLUMN]``, ``DROP [COLUMN]`` and ``MODIFY [COLUMN]`` (each
optionally ``FIRST`` or ``AFTER col``: columns added, dropped, re-typed and reordered;
``ADD [UNIQUE | FULLTEXT | SPATIAL] KEY`` and ``DROP INDEX``: the keys the server keeps),
``DROP TABLE``, ``TRUNCATE [TABLE]`` and ``RENAME TABLE a TO b``. :func:`altered` gives the
table an ALTER makes and, for each of its columns, where its values come from; the rows
themselves are carried over by the model (:mod:`scenarios.history`) and, independently, by the
replay (:mod:`scenarios.apply`).

A FLOAT default of a column an ALTER keeps is read back through its 6-digit text, as the server
does (:func:`scenarios.values.copied_default`).

What an ALTER may do is what keeps every existing value as it is, so that the server's
conversion rules never come in: ``MODIFY`` keeps a column's type family (the same type with a
length or a display that does not shrink, or a wider integer of the same signedness), its
character set and collation (a BINARY keeps its length: its NUL padding is its value); it may
change NULL-ability, the default and the place. A column of
a key is not dropped. An added NOT NULL column needs a DEFAULT (the existing rows take it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from scenarios.errors import SchemaError
from scenarios.generated import check_references, with_generated
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Column, Index, Table
from scenarios.show_create import keys_of
from scenarios.values import copied_default

__all__ = [
    "AddColumn",
    "AddIndex",
    "AlterTable",
    "Alteration",
    "CreateTable",
    "DdlStatement",
    "DropColumn",
    "DropIndex",
    "DropTable",
    "ModifyColumn",
    "RenameTable",
    "TruncateTable",
    "altered",
    "apply_ddl",
    "renamed",
    "server_key_order",
]


@dataclass(frozen=True, slots=True)
class AddColumn:
    """``ADD COLUMN column [FIRST | AFTER after]`` (at the end without either)."""

    column: Column
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: str


@dataclass(frozen=True, slots=True)
class ModifyColumn:
    """``MODIFY COLUMN column [FIRST | AFTER after]`` (in its place without either)."""

    column: Column
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class AddIndex:
    """``ADD [UNIQUE | FULLTEXT | SPATIAL] KEY [name] (parts)`` (an unnamed key is named as
    the server names it)."""

    index: Index


@dataclass(frozen=True, slots=True)
class DropIndex:
    """``DROP INDEX name`` / ``DROP KEY name``."""

    name: str


Alteration = AddColumn | DropColumn | ModifyColumn | AddIndex | DropIndex


@dataclass(frozen=True, slots=True)
class CreateTable:
    """CREATE TABLE; ``like`` the (database, table) of a CREATE TABLE ... LIKE (``table`` is
    then the copy it makes)."""

    table: Table
    like: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class AlterTable:
    database: str
    name: str
    alterations: tuple[Alteration, ...]


@dataclass(frozen=True, slots=True)
class DropTable:
    database: str
    name: str


@dataclass(frozen=True, slots=True)
class TruncateTable:
    database: str
    name: str


@dataclass(frozen=True, slots=True)
class RenameTable:
    database: str
    name: str
    new_database: str
    new_name: str


DdlStatement = CreateTable | AlterTable | DropTable | TruncateTable | RenameTable


def _family(column: Column) -> str:
    return "integer" if column.type in INTEGER_RANGES else column.type


def _check_modify(table: Table, old: Column, new: Column) -> None:
    where = f"{table.qualified}: MODIFY {old.name}"
    if _family(old) != _family(new) or old.collation != new.collation:
        raise SchemaError(
            f"{where}: from {old.sql_type()} to {new.sql_type()}: MODIFY keeps the type family"
            " and character set (values are carried over unchanged)"
        )
    if old.type in INTEGER_RANGES:
        if (
            old.unsigned != new.unsigned
            or INTEGER_RANGES[new.type][0] < INTEGER_RANGES[old.type][0]
        ):
            raise SchemaError(f"{where}: an integer only widens, keeping its signedness")
    same = (
        old.unsigned == new.unsigned
        and old.precision == new.precision
        and old.scale == new.scale
        and old.fsp == new.fsp
        and old.members == new.members
    )
    fixed = old.type == "binary" and old.length != new.length  # NUL padding: values change
    if not same or fixed or (old.length or 0) > (new.length or 0):
        raise SchemaError(
            f"{where}: from {old.sql_type()} to {new.sql_type()}: only a longer length (or a"
            " wider integer), NULL-ability, the default and the place change"
        )


def altered(
    table: Table, alterations: tuple[Alteration, ...]
) -> tuple[Table, tuple[int | None, ...]]:
    """The table ``alterations`` make of ``table``, and for each of its columns the position
    in ``table`` its values come from (None: an added column, filled with its default)."""
    if not alterations:
        raise SchemaError(f"{table.qualified}: an ALTER TABLE that alters nothing")
    # (column, source position) in order; the columns kept have their defaults as the
    # server's copy of their definitions reads them back (a FLOAT's: see copied_default).
    columns: list[tuple[Column, int | None]] = [
        (replace(c, default=copied_default(c)), p) for p, c in enumerate(table.columns)
    ]
    keys = {name.lower() for key in (table.primary_key, *table.unique_keys) for name in key}

    def index(name: str) -> int:
        for at, (item, _) in enumerate(columns):
            if item.name.lower() == name.lower():
                return at
        raise SchemaError(f"{table.qualified}: no column {name!r}")

    def place(entry: tuple[Column, int | None], first: bool, after: str | None) -> None:
        if first:
            columns.insert(0, entry)
        elif after is not None:
            columns.insert(index(after) + 1, entry)
        else:
            columns.append(entry)

    all_keys = list(keys_of(table))
    for alteration in alterations:
        if isinstance(alteration, AddIndex | DropIndex):
            present = {item.name.lower() for item, _ in columns}
            all_keys = _index_altered(table, all_keys, alteration, present)
        elif isinstance(alteration, AddColumn):
            new = alteration.column
            if any(item.name.lower() == new.name.lower() for item, _ in columns):
                raise SchemaError(f"{table.qualified}: ADD {new.name}: the column exists")
            if not new.nullable and new.default is None:
                raise SchemaError(f"{table.qualified}: ADD {new.name}: NOT NULL with DEFAULT NULL")
            if not new.nullable and new.default is NO_DEFAULT and not new.default_expression:
                raise SchemaError(
                    f"{table.qualified}: ADD {new.name}: a NOT NULL column needs a DEFAULT"
                    " (the existing rows take it)"
                )
            place((new, None), alteration.first, alteration.after)
        elif isinstance(alteration, DropColumn):
            at = index(alteration.name)
            if alteration.name.lower() in keys:
                raise SchemaError(
                    f"{table.qualified}: DROP {alteration.name}: a column of a key is not dropped"
                )
            del columns[at]
        else:
            new = alteration.column
            at = index(new.name)
            old, source = columns.pop(at)
            _check_modify(table, old, new)
            if new.nullable and new.name.lower() in {n.lower() for n in table.primary_key}:
                raise SchemaError(
                    f"{table.qualified}: MODIFY {new.name}: a primary key is NOT NULL"
                )
            if alteration.first or alteration.after is not None:
                place((new, source), alteration.first, alteration.after)
            else:
                columns.insert(at, (new, source))
    check_references([item for item, _ in columns], f"ALTER TABLE {table.qualified}")
    result = _assembled(table, [item for item, _ in columns], all_keys)
    return result, tuple(source for _, source in columns)


def _renamed_keys(
    key: tuple[str, ...], columns: list[tuple[Column, int | None]]
) -> tuple[str, ...]:
    # A MODIFY may change a name's case; keys follow the column's spelling.
    spelled = {item.name.lower(): item.name for item, _ in columns}
    return tuple(spelled.get(name.lower(), name) for name in key)


def _assembled(table: Table, columns: list[Column], keys: list[Index]) -> Table:
    """``table`` with ``columns`` and ``keys`` (those of dropped columns left out), the keys
    in the server's order; only the PRIMARY and UNIQUE keys when no other is known."""
    spelled: list[tuple[Column, int | None]] = [(item, None) for item in columns]
    kept = server_key_order(_kept_indexes(keys, {c.name.lower() for c in columns}), columns)
    unique = tuple(i.columns for i in kept if i.kind == "UNIQUE" and not i.has_prefix)
    plain = replace(table, indexes=(), _index={})
    return replace(
        table,
        columns=tuple(columns),
        primary_key=_renamed_keys(table.primary_key, spelled),
        unique_keys=tuple(_renamed_keys(key, spelled) for key in unique),
        indexes=() if not table.indexes and kept == keys_of(plain) else kept,
        _index={},
    )


def _index_altered(
    table: Table, keys: list[Index], alteration: AddIndex | DropIndex, present: set[str]
) -> list[Index]:
    """The keys after ADD KEY or DROP INDEX (``present``: the columns at that point)."""
    taken = {index.name.lower() for index in keys}
    if isinstance(alteration, DropIndex):
        if alteration.name.lower() == "primary":
            raise SchemaError(f"{table.qualified}: DROP PRIMARY KEY is not modelled")
        if alteration.name.lower() not in taken:
            raise SchemaError(f"{table.qualified}: DROP INDEX {alteration.name}: no such key")
        return [index for index in keys if index.name.lower() != alteration.name.lower()]
    index = alteration.index
    for name in index.columns:
        if name.lower() not in present:
            raise SchemaError(f"{table.qualified}: ADD KEY: no column {name!r}")
    if not index.name:
        base = index.parts[0][0]
        name, suffix = base, 2
        while name.lower() in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        index = replace(index, name=name)
    elif index.name.lower() in taken:
        raise SchemaError(f"{table.qualified}: ADD KEY {index.name}: the key exists")
    return [*keys, index]


def server_key_order(keys: list[Index], columns: list[Column]) -> tuple[Index, ...]:
    """The server's order of keys (sql_table.cc ``sort_keys``): unique keys first (those on
    NOT NULL columns only before the others, PRIMARY first, those without prefix parts
    first), then the others, FULLTEXT last; otherwise as declared."""
    nullable = {item.name.lower() for item in columns if item.nullable}

    def rank(index: Index) -> tuple[int, ...]:
        if index.kind in ("PRIMARY", "UNIQUE"):
            has_null = any(name.lower() in nullable for name in index.columns)
            return (0, has_null, index.kind != "PRIMARY", index.has_prefix, 0)
        return (1, 0, 0, 0, index.kind == "FULLTEXT")

    return tuple(sorted(keys, key=rank))


def _kept_indexes(keys: list[Index], names: set[str]) -> list[Index]:
    """The keys after columns are dropped: a dropped column leaves each key it is part of,
    a key left without columns goes (as the server does)."""
    kept = []
    for index in keys:
        parts = tuple(part for part in index.parts if part[0].lower() in names)
        if parts:
            kept.append(replace(index, parts=parts))
    return kept


def renamed(table: Table, database: str, name: str) -> Table:
    """``table`` under another name (RENAME TABLE)."""
    return replace(table, database=database, name=name, _index={})


def apply_ddl(
    statement: DdlStatement,
    tables: dict[str, Table],
    rows: dict[str, list[tuple[Any, ...]]],
) -> None:
    """Apply ``statement`` to ``tables`` (by qualified name) and their positional ``rows`` as a
    replica does: CREATE adds an empty table, DROP removes it, TRUNCATE empties it, RENAME
    moves it, ALTER carries each row over by column name (case-insensitive; an added column
    takes its default, NULL without one). A table the statement names must be there."""
    if isinstance(statement, CreateTable):
        tables[statement.table.qualified] = statement.table
        rows[statement.table.qualified] = []
        return
    name = f"{statement.database}.{statement.name}"
    table = tables.pop(name)
    kept = rows.pop(name)
    if isinstance(statement, DropTable):
        return
    if isinstance(statement, TruncateTable):
        new, kept = table, []
    elif isinstance(statement, RenameTable):
        new = renamed(table, statement.new_database, statement.new_name)
    else:
        new, _ = altered(table, statement.alterations)
        old_positions = {c.name.lower(): p for p, c in enumerate(table.columns)}
        sources = [old_positions.get(c.name.lower()) for c in new.columns]
        fills = [None if c.default is NO_DEFAULT else c.default for c in new.columns]
        kept = [
            with_generated(
                new,
                tuple(
                    row[at] if at is not None else fill
                    for at, fill in zip(sources, fills, strict=True)
                ),
            )
            for row in kept
        ]
    tables[new.qualified] = new
    rows[new.qualified] = kept
