"""The SQL of one thing of a scenario: a row change, a DDL statement, a table's CREATE TABLE and
its rows, a value as a literal; to run on a real MariaDB and to quote in ANNOTATE_ROWS events.

Below :mod:`scenarios.history` (which spells its DDL steps and describes itself with these):
the statements of whole steps and of a whole scenario are :mod:`scenarios.script`'s.

The statements assume a session with ``time_zone = '+00:00'`` (TIMESTAMP literals are UTC) and
a utf8mb4 connection. Every name is quoted; byte columns are compared through ``HEX()`` so that
a collation never makes two different values equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from fakemaster.vocabulary.mariadb_types import FixedBinaryValue
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.changes import Change, Delete, Insert, SequenceWrite, Update
from scenarios.ddl import (
    AddColumn,
    AddIndex,
    Alteration,
    AlterConstraint,
    AlterDefault,
    AlterTable,
    ChangeColumn,
    CreateTable,
    DdlStatement,
    DropColumn,
    DropIndex,
    DropTable,
    RenameColumn,
    RenameTable,
    TableOptions,
    TruncateTable,
)
from scenarios.expressions import show
from scenarios.schema import NO_DEFAULT, Column, Table, sql_string
from scenarios.show_create import declared_keys, key_line
from scenarios.state import Row
from scenarios.values import python_codec

__all__ = [
    "SESSION_SETUP",
    "SESSION_TIME_ZONE",
    "alteration_sql",
    "create_table_sql",
    "ddl_sql",
    "insert_rows_sql",
    "literal",
    "qualified",
    "quote_name",
    "statement_sql",
]

# The session's time zone: TIMESTAMP literals are UTC.
SESSION_TIME_ZONE = "+00:00"
SESSION_SETUP = (f"SET SESSION time_zone = '{SESSION_TIME_ZONE}'",)


def quote_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def qualified(table: Table) -> str:
    return f"{quote_name(table.database)}.{quote_name(table.name)}"


def literal(column: Column, value: Any) -> str:
    """``value`` (a model value of ``column``) as a SQL literal."""
    if value is None:
        return "NULL"
    kind = column.type
    if kind in ("float", "double"):
        text = repr(float(value))
        return text if "e" in text else text + "e0"  # an approximate-number literal
    if isinstance(value, bool):
        raise TypeError("a bool is not a model value")
    if isinstance(value, int) and kind not in ("bit", "enum", "set"):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if kind == "bit":
        return f"b'{value:b}'"
    if kind == "enum":
        return sql_string(column.members[value - 1])
    if kind == "set":
        return sql_string(",".join(m for i, m in enumerate(column.members) if value >> i & 1))
    if isinstance(value, Date):
        return f"'{value}'"
    if isinstance(value, DateTime | Time):
        return f"'{value.format(6)}'"
    if isinstance(value, Timestamp):
        if value == Timestamp(0, 0):
            return "'0000-00-00 00:00:00'"
        moment = value.to_datetime()
        return f"'{moment:%Y-%m-%d %H:%M:%S}.{value.microsecond:06d}'"
    if isinstance(value, bytes):
        codec = python_codec(column.charset)
        if codec is None:
            return f"X'{value.hex().upper()}'"
        return _string_literal(value.decode(codec))
    if isinstance(value, FixedBinaryValue):
        return f"'{value}'"
    raise TypeError(f"no SQL literal for {value!r} in {column.name} ({kind})")


def _string_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("'", "''").replace("\0", "\\0")
    return f"'{escaped}'"


def _condition(column: Column, value: Any, name: str) -> str:
    if value is None:
        return f"{name} IS NULL"
    if column.is_bytes:
        data = value if isinstance(value, bytes) else b""
        return f"HEX({name}) = '{data.hex().upper()}'"
    return f"{name} = {literal(column, value)}"


def _where(table: Table, row: Row) -> str:
    # A system-versioned table's statements see its current rows: named without the period.
    period = table.period_positions or ()
    positions = tuple(p for p in table.key or range(table.width) if p not in period)
    quoted = _spelled(table).names
    parts = [_condition(table.columns[p], row[p], quoted[p]) for p in positions]
    return " AND ".join(parts) + ("" if table.key else " LIMIT 1")


class _Spelled:
    """A table's name and column names quoted, once per table (the compiler spells one
    statement per change for its ANNOTATE_ROWS event)."""

    __slots__ = ("names", "qualified", "table")

    def __init__(self, table: Table) -> None:
        self.table = table
        self.qualified = qualified(table)
        self.names = tuple(quote_name(column.name) for column in table.columns)


_SPELLED: dict[int, _Spelled] = {}
_MAX_SPELLED = 1024


def _spelled(table: Table) -> _Spelled:
    # Tables are frozen: cached by identity, the table kept with its entry (an id is not
    # reused while the entry lives).
    found = _SPELLED.get(id(table))
    if found is None or found.table is not table:
        if len(_SPELLED) >= _MAX_SPELLED:
            _SPELLED.clear()
        found = _SPELLED[id(table)] = _Spelled(table)
    return found


def statement_sql(change: Change) -> str:
    """The one statement that makes ``change``."""
    table = change.table
    if isinstance(change, SequenceWrite):
        return change.sql
    spelled = _spelled(table)
    columns = table.columns
    if isinstance(change, Insert):
        quoted = spelled.names
        names = ",".join([quoted[p] for p in change.given])
        rows = ",".join(
            [
                "(" + ",".join([literal(columns[p], row[p]) for p in change.given]) + ")"
                for row in change.rows
            ]
        )
        return f"INSERT INTO {spelled.qualified} ({names}) VALUES {rows}"
    if isinstance(change, Update):
        quoted = spelled.names
        sets = ",".join(
            [f"{quoted[p]}={literal(columns[p], change.after[p])}" for p in change.assigned]
        )
        return f"UPDATE {spelled.qualified} SET {sets} WHERE {_where(table, change.before)}"
    assert isinstance(change, Delete)
    return f"DELETE FROM {spelled.qualified} WHERE {_where(table, change.before)}"


def _place(first: bool, after: str | None) -> str:
    if first:
        return " FIRST"
    return "" if after is None else f" AFTER {quote_name(after)}"


def alteration_sql(alteration: Alteration) -> str:
    """One clause of an ALTER TABLE."""
    if isinstance(alteration, DropColumn):
        return f"DROP COLUMN {quote_name(alteration.name)}"
    if isinstance(alteration, DropIndex):
        return f"DROP INDEX {quote_name(alteration.name)}"
    if isinstance(alteration, AddIndex):
        return f"ADD {key_line(alteration.index)}"
    if isinstance(alteration, AlterDefault | AlterConstraint | TableOptions):
        return alteration.text
    if isinstance(alteration, RenameColumn):
        return f"RENAME COLUMN {quote_name(alteration.old)} TO {quote_name(alteration.new)}"
    if isinstance(alteration, ChangeColumn):
        return f"CHANGE COLUMN {quote_name(alteration.old)} {_column_sql(alteration.column)}" + (
            _place(alteration.first, alteration.after)
        )
    verb = "ADD" if isinstance(alteration, AddColumn) else "MODIFY"
    return f"{verb} COLUMN {_column_sql(alteration.column)}" + _place(
        alteration.first, alteration.after
    )


def _named(database: str, name: str) -> str:
    return f"{quote_name(database)}.{quote_name(name)}"


def ddl_sql(statement: DdlStatement) -> str:
    """A DDL statement as SQL (every column spelled out as :func:`create_table_sql` does)."""
    if isinstance(statement, CreateTable):
        if statement.sequence is not None:
            return statement.sequence.create_sql()
        if statement.like is not None:
            return f"CREATE TABLE {qualified(statement.table)} LIKE {_named(*statement.like)}"
        return create_table_sql(statement.table)
    where = _named(statement.database, statement.name)
    if isinstance(statement, AlterTable):
        return f"ALTER TABLE {where} " + ", ".join(map(alteration_sql, statement.alterations))
    if isinstance(statement, DropTable):
        return f"DROP TABLE {where}"
    if isinstance(statement, TruncateTable):
        return f"TRUNCATE TABLE {where}"
    assert isinstance(statement, RenameTable)
    return f"RENAME TABLE {where} TO {_named(statement.new_database, statement.new_name)}"


def _column_sql(column: Column) -> str:
    parts = [quote_name(column.name), column.sql_type()]
    if column.collation not in (None, "binary") and column.type != "json":  # JSON: utf8mb4_bin
        parts.append(f"CHARACTER SET {column.charset} COLLATE {column.collation}")
    if column.generated is not None:
        kind = "STORED" if column.stored else "VIRTUAL"
        parts.append(f"GENERATED ALWAYS AS ({show(column.generated)}) {kind}")
        return " ".join(parts) + (" INVISIBLE" if column.invisible else "")
    parts.append("NULL" if column.nullable else "NOT NULL")
    if column.invisible:
        parts.append("INVISIBLE")
    if column.default_expression is not None:
        parts.append(f"DEFAULT {column.default_expression}")
    elif column.default_constant is not None:
        parts.append(f"DEFAULT {column.default_constant}")
    elif column.default is not NO_DEFAULT:
        parts.append(f"DEFAULT {literal(column, column.default)}")
    if column.on_update is not None:
        parts.append(f"ON UPDATE {column.on_update}")
    if column.auto_increment:
        parts.append("AUTO_INCREMENT")
    return " ".join(parts)


_PLAIN_KEYS = ("PRIMARY", "UNIQUE", "KEY")


def _declared_keys(table: Table) -> list[str]:
    """The keys of a table declared without its key list (the builder's)."""
    parts = []
    primary, uniques = declared_keys(table)
    if primary:
        parts.append(f"PRIMARY KEY ({','.join(map(quote_name, primary))})")
    for unique in uniques:
        parts.append(f"UNIQUE KEY ({','.join(map(quote_name, unique))})")
    return parts


def create_table_sql(table: Table) -> str:
    """``CREATE TABLE`` for ``table``, every column's type, charset and NULL-ability spelled
    out (so that server defaults do not matter)."""
    parts = [_column_sql(table.columns[p]) for p in table.declared_positions]
    if table.indexes:
        # Every key but FULLTEXT/SPATIAL, named as declared (SHOW CREATE TABLE then matches).
        parts += [key_line(index) for index in table.indexes if index.kind in _PLAIN_KEYS]
    else:
        parts += _declared_keys(table)
    auto = f" AUTO_INCREMENT={table.auto_increment}" if table.auto_increment else ""
    versioning = " WITH SYSTEM VERSIONING" if table.period is not None else ""
    return (
        f"CREATE TABLE {qualified(table)} ({', '.join(parts)}) ENGINE={table.engine}{auto}"
        + versioning
    )


def insert_rows_sql(table: Table, rows: Sequence[Row]) -> list[str]:
    """INSERTs of whole rows (the initial rows of a table), one statement per row."""
    given = [p for p, column in enumerate(table.columns) if column.generated is None]
    names = ",".join(quote_name(table.columns[p].name) for p in given)
    return [
        f"INSERT INTO {qualified(table)} ({names}) VALUES ("
        + ",".join(literal(table.columns[p], row[p]) for p in given)
        + ")"
        for row in rows
    ]
