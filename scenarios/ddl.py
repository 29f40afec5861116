"""DDL statements of a history at SQL level, and what they do to a table's schema.

The statements modelled are those a CDC client must follow between row events: ``CREATE
TABLE``, ``ALTER TABLE`` with ``ADD [COLUMN]``, ``DROP [COLUMN]`` and ``MODIFY [COLUMN]`` (each
optionally ``FIRST`` or ``AFTER col``: columns added, dropped, re-typed and reordered;
``ADD [UNIQUE | FULLTEXT | SPATIAL] KEY`` and ``DROP INDEX``: the keys the server keeps;
``CHANGE [COLUMN]``, ``RENAME COLUMN``, ``ALTER [COLUMN] SET/DROP DEFAULT``; constraints and
table options, kept and printed), ``DROP TABLE``, ``TRUNCATE [TABLE]`` and ``RENAME TABLE a TO b``. :func:`altered` gives the
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

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from scenarios.errors import SchemaError
from scenarios.expressions import referenced_columns
from scenarios.generated import check_references, with_generated
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Column, ForeignKey, Index, Table
from scenarios.sequences import Sequence
from scenarios.show_create import keys_of
from scenarios.table_options import in_server_order
from scenarios.values import convert, copied_default

__all__ = [
    "AddColumn",
    "AddIndex",
    "AlterConstraint",
    "AlterDefault",
    "ChangeColumn",
    "RenameColumn",
    "TableOptions",
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
    "foreign_key_indexes",
    "refuse_hashed_unique",
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


@dataclass(frozen=True, slots=True)
class ChangeColumn:
    """``CHANGE [COLUMN] old column [FIRST | AFTER after]``: MODIFY with a new name."""

    old: str
    column: Column
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class RenameColumn:
    """``RENAME COLUMN old TO new``."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class AlterDefault:
    """``ALTER [COLUMN] name SET DEFAULT literal`` or ``DROP DEFAULT`` (``default`` is then
    NO_DEFAULT)."""

    name: str
    default: Any
    text: str = ""  # the clause as written (its SQL)


@dataclass(frozen=True, slots=True)
class AlterConstraint:
    """What only SHOW CREATE TABLE shows: ``ADD [CONSTRAINT [name]] FOREIGN KEY ...``
    (``foreign``), ``ADD [CONSTRAINT [name]] CHECK (...)`` (``check``), ``DROP FOREIGN KEY
    name``, ``DROP CONSTRAINT``/``CHECK name`` (``drop``, with ``kind``)."""

    kind: str  # "foreign", "check", "drop foreign", "drop constraint"
    name: str | None = None
    foreign: ForeignKey | None = None
    check: str | None = None
    text: str = ""  # the clause as written (its SQL)


@dataclass(frozen=True, slots=True)
class TableOptions:
    """Table options in an ALTER: ``COMMENT``, ``AUTO_INCREMENT=N``, the printed ones
    (``ROW_FORMAT``...), ``ENGINE`` (the table's own only); ``ALGORITHM``/``LOCK`` (how the
    server works: no change to the table)."""

    options: tuple[tuple[str, Any], ...]
    text: str = ""  # the clause as written (its SQL)


Alteration = (
    AddColumn
    | DropColumn
    | ModifyColumn
    | AddIndex
    | DropIndex
    | ChangeColumn
    | RenameColumn
    | AlterDefault
    | AlterConstraint
    | TableOptions
)


@dataclass(frozen=True, slots=True)
class CreateTable:
    """CREATE TABLE; ``like`` the (database, table) of a CREATE TABLE ... LIKE (``table`` is
    then the copy it makes)."""

    table: Table
    like: tuple[str, str] | None = None
    # CREATE SEQUENCE: ``table`` is the sequence's table (holding its first row).
    sequence: Sequence | None = None


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
    work = _Alter(table)
    for alteration in alterations:
        work.apply(alteration)
    return work.result()


class _Alter:
    """An ALTER TABLE's clauses applied one by one, as the server applies them."""

    def __init__(self, table: Table) -> None:
        self.table = table
        # (column, source position) in order; the columns kept have their defaults as the
        # server's copy of their definitions reads them back (a FLOAT's: see copied_default).
        self.columns: list[tuple[Column, int | None]] = [
            (replace(c, default=copied_default(c)), p) for p, c in enumerate(table.columns)
        ]
        self.keys = list(keys_of(table))
        self.renames: dict[str, str] = {}  # lowercase old name -> new name
        self.foreign = list(table.foreign_keys)
        self.checks = list(table.checks)
        self.changes: dict[str, Any] = {}  # Table fields the options change

    @property
    def where(self) -> str:
        return self.table.qualified

    def index(self, name: str) -> int:
        for at, (item, _) in enumerate(self.columns):
            if item.name.lower() == name.lower():
                return at
        raise SchemaError(f"{self.where}: no column {name!r}")

    def place(self, entry: tuple[Column, int | None], first: bool, after: str | None) -> None:
        if first:
            self.columns.insert(0, entry)
        elif after is not None:
            self.columns.insert(self.index(after) + 1, entry)
        else:
            self.columns.append(entry)

    def key_columns(self) -> set[str]:
        return {
            name.lower()
            for index in self.keys
            if index.kind in ("PRIMARY", "UNIQUE")
            for name in index.columns
        }

    def apply(self, alteration: Alteration) -> None:
        if isinstance(alteration, AddIndex | DropIndex):
            present = {item.name.lower() for item, _ in self.columns}
            self.keys = _index_altered(self.table, self.keys, alteration, present)
        elif isinstance(alteration, AddColumn):
            self.add(alteration)
        elif isinstance(alteration, DropColumn):
            at = self.index(alteration.name)
            if alteration.name.lower() in self.key_columns():
                raise SchemaError(
                    f"{self.where}: DROP {alteration.name}: a column of a key is not dropped"
                )
            del self.columns[at]
        elif isinstance(alteration, ModifyColumn | ChangeColumn):
            self.modify(alteration)
        elif isinstance(alteration, RenameColumn):
            at = self.index(alteration.old)
            old, source = self.columns[at]
            self.rename(old.name, alteration.new)
            self.columns[at] = (replace(old, name=alteration.new), source)
        elif isinstance(alteration, AlterDefault):
            self.alter_default(alteration)
        elif isinstance(alteration, AlterConstraint):
            self.constraint(alteration)
        else:
            self.options(alteration)

    def add(self, alteration: AddColumn) -> None:
        new = alteration.column
        if any(item.name.lower() == new.name.lower() for item, _ in self.columns):
            raise SchemaError(f"{self.where}: ADD {new.name}: the column exists")
        if not new.nullable and new.default is None:
            raise SchemaError(f"{self.where}: ADD {new.name}: NOT NULL with DEFAULT NULL")
        if not new.nullable and new.default is NO_DEFAULT and not new.default_expression:
            raise SchemaError(
                f"{self.where}: ADD {new.name}: a NOT NULL column needs a DEFAULT"
                " (the existing rows take it)"
            )
        self.place((new, None), alteration.first, alteration.after)

    def modify(self, alteration: ModifyColumn | ChangeColumn) -> None:
        new = alteration.column
        old_name = alteration.old if isinstance(alteration, ChangeColumn) else new.name
        at = self.index(old_name)
        old, source = self.columns.pop(at)
        _check_modify(self.table, old, new)
        if old.name.lower() != new.name.lower():
            self.rename(old.name, new.name)
        primary = {
            n.lower() for index in self.keys if index.kind == "PRIMARY" for n in index.columns
        }
        if new.nullable and new.name.lower() in primary:
            raise SchemaError(f"{self.where}: MODIFY {new.name}: a primary key is NOT NULL")
        if alteration.first or alteration.after is not None:
            self.place((new, source), alteration.first, alteration.after)
        else:
            self.columns.insert(at, (new, source))

    def rename(self, old: str, new: str) -> None:
        """A column renamed: its keys and foreign keys follow; one a CHECK or a generated
        column names is refused (not modelled)."""
        if any(item.name.lower() == new.lower() for item, _ in self.columns if item.name != old):
            raise SchemaError(f"{self.where}: RENAME {old} TO {new}: the column exists")
        quoted = "`" + old.lower().replace("`", "``") + "`"
        named = [text for _, text in self.checks] + [
            item.check or "" for item, _ in self.columns if item.name != old
        ]
        if any(quoted in text.lower() for text in named) or any(
            item.generated is not None
            and old.lower() in (n.lower() for n in referenced_columns(item.generated))
            for item, _ in self.columns
        ):
            raise SchemaError(
                f"{self.where}: RENAME {old}: a CHECK or a generated column names it (not modelled)"
            )

        def follow(name: str) -> str:
            return new if name.lower() == old.lower() else name

        self.keys = [
            replace(index, parts=tuple((follow(n), p, d) for n, p, d in index.parts))
            for index in self.keys
        ]
        self.foreign = [
            replace(key, columns=tuple(map(follow, key.columns))) for key in self.foreign
        ]
        self.renames[old.lower()] = new

    def alter_default(self, alteration: AlterDefault) -> None:
        at = self.index(alteration.name)
        old, source = self.columns[at]
        if old.generated is not None or old.auto_increment:
            raise SchemaError(f"{self.where}: ALTER {old.name}: its default cannot be set")
        default = alteration.default
        if default is not NO_DEFAULT and default is not None:
            default = convert(old, default, table=self.where)
        elif default is None and not old.nullable:
            raise SchemaError(f"{self.where}: ALTER {old.name} SET DEFAULT NULL: NOT NULL")
        kept = replace(old, default=default, default_expression=None, default_constant=None)
        self.columns[at] = (kept, source)

    def constraint(self, alteration: AlterConstraint) -> None:
        name = (alteration.name or "").lower()
        if alteration.kind == "foreign":
            assert alteration.foreign is not None
            found = alteration.foreign
            if not found.name:
                numbers = [
                    int(key.name.rsplit("_", 1)[1])
                    for key in self.foreign
                    if key.name.startswith(f"{self.table.name}_ibfk_")
                    and key.name.rsplit("_", 1)[1].isdigit()
                ]
                found = replace(found, name=f"{self.table.name}_ibfk_{max(numbers, default=0) + 1}")
            self.foreign.append(found)
            self.keys = foreign_key_indexes(self.keys, (found,), {alteration.foreign.name or None})
        elif alteration.kind == "check":
            assert alteration.check is not None
            if alteration.name is None:
                count = sum(1 for n, _ in self.checks if n.startswith("CONSTRAINT_"))
                self.checks.append((f"CONSTRAINT_{count + 1}", alteration.check))
            else:
                self.checks.append((alteration.name, alteration.check))
        elif alteration.kind == "drop foreign":
            if not any(key.name.lower() == name for key in self.foreign):
                raise SchemaError(f"{self.where}: DROP FOREIGN KEY {alteration.name}: none")
            self.foreign = [key for key in self.foreign if key.name.lower() != name]
        else:
            before = len(self.checks) + len(self.foreign)
            self.checks = [item for item in self.checks if item[0].lower() != name]
            self.foreign = [key for key in self.foreign if key.name.lower() != name]
            if len(self.checks) + len(self.foreign) == before:
                raise SchemaError(f"{self.where}: DROP CONSTRAINT {alteration.name}: none")

    def options(self, alteration: TableOptions) -> None:
        printed = dict(self.changes.get("options", self.table.options))
        for name, value in alteration.options:
            if name in ("ALGORITHM", "LOCK"):
                continue
            if name == "ENGINE":
                if str(value).lower() != self.table.engine.lower():
                    raise SchemaError(
                        f"{self.where}: ENGINE={value}: changing the engine is not modelled"
                    )
            elif name == "COMMENT":
                self.changes["comment"] = value
            elif name == "AUTO_INCREMENT":
                self.changes["auto_increment"] = value
            else:
                printed[name] = value
        self.changes["options"] = in_server_order(printed.items())

    def result(self) -> tuple[Table, tuple[int | None, ...]]:
        columns = [item for item, _ in self.columns]
        check_references(columns, f"ALTER TABLE {self.where}")
        refuse_hashed_unique(self.keys, columns, f"ALTER TABLE {self.where}")
        changed = replace(
            self.table,
            foreign_keys=tuple(self.foreign),
            checks=tuple(self.checks),
            _index={},
            **self.changes,
        )
        result = _assembled(changed, columns, self.keys, self.renames)
        return result, tuple(source for _, source in self.columns)


def _renamed_keys(
    key: tuple[str, ...], columns: list[tuple[Column, int | None]]
) -> tuple[str, ...]:
    # A MODIFY may change a name's case; keys follow the column's spelling.
    spelled = {item.name.lower(): item.name for item, _ in columns}
    return tuple(spelled.get(name.lower(), name) for name in key)


def _assembled(
    table: Table, columns: list[Column], keys: list[Index], renames: dict[str, str]
) -> Table:
    """``table`` with ``columns`` and ``keys`` (those of dropped columns left out), the keys
    in the server's order; only the PRIMARY and UNIQUE keys when no other is known
    (``renames``: lowercase old column name -> new, for the primary key)."""
    spelled: list[tuple[Column, int | None]] = [(item, None) for item in columns]
    kept = server_key_order(_kept_indexes(keys, {c.name.lower() for c in columns}), columns)
    unique = tuple(i.columns for i in kept if i.kind == "UNIQUE" and not i.has_prefix)
    plain = replace(table, indexes=(), _index={})
    return replace(
        table,
        columns=tuple(columns),
        primary_key=_renamed_keys(
            tuple(renames.get(name.lower(), name) for name in table.primary_key), spelled
        ),
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


def foreign_key_indexes(
    keys: list[Index], foreign: tuple[ForeignKey, ...], given: set[str | None]
) -> list[Index]:
    """A foreign key without a key that starts with its columns gets one, named after the
    foreign key when it was given a name, else after its first column (``_2``... when taken),
    as InnoDB names it (10.11)."""
    taken = {index.name.lower() for index in keys}
    for item in foreign:
        wanted = [name.lower() for name in item.columns]
        if not any(
            [part[0].lower() for part in index.parts[: len(wanted)]] == wanted
            and not any(part[1] for part in index.parts[: len(wanted)])
            for index in keys
            if index.kind in ("PRIMARY", "UNIQUE", "KEY")
        ):
            name = item.name
            if name not in given:
                base = item.columns[0]
                name, suffix = base, 2
                while name.lower() in taken:
                    name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(name.lower())
            keys.append(Index("KEY", name, tuple((column, None, False) for column in item.columns)))
    return keys


# InnoDB's longest key (DYNAMIC rows); a longer UNIQUE key is hashed (10.11).
_INNODB_KEY_BYTES = 3072


def _key_bytes(index: Index, columns: dict[str, Column]) -> int:
    total = 0
    for name, prefix, _ in index.parts:
        item = columns.get(name.lower())
        if item is None or item.is_blob:
            continue
        if item.type in ("char", "varchar", "binary", "varbinary"):
            width = item.max_bytes // max(item.length or 1, 1) if item.length else 1
            total += (prefix if prefix is not None else item.length or 0) * width
        else:
            total += 8
    return total


def refuse_hashed_unique(keys: Iterable[Index], columns: Iterable[Column], where: str) -> None:
    """A UNIQUE key USING HASH, over a TEXT/BLOB column without a prefix or longer than
    InnoDB's 3072 bytes (MariaDB's long unique, hashed the same way): the server adds a hidden hash column that its row events
    carry (checked on 10.11), which the model cannot compute."""
    by_name = {item.name.lower(): item for item in columns}
    blobs = {name for name, item in by_name.items() if item.is_blob}
    for index in keys:
        if index.kind != "UNIQUE":
            continue
        if (
            index.using == "HASH"
            or any(name.lower() in blobs and prefix is None for name, prefix, _ in index.parts)
            or _key_bytes(index, by_name) > _INNODB_KEY_BYTES
        ):
            raise SchemaError(
                f"{where}: UNIQUE KEY {index.name or index.parts[0][0]} is hashed (USING HASH or"
                " a whole TEXT/BLOB): its hidden hash column, logged in row events, is not"
                " modelled"
            )


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
    moves it, ALTER carries each row over column by column (an added column takes its
    default, NULL without one). A table the statement names must be there."""
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
        new, sources = altered(table, statement.alterations)  # (a renamed column: its own)
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
