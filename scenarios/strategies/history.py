"""Hypothesis strategies for scenarios: column types with values, table schemas, histories
(with binlog settings). Valid only, structured (changes, not SQL text), shrinking towards small
readable cases: few columns, few rows, few key values per table (so that changes collide on the
same rows), simpler types first.

    columns()              a Column (type, NULL-ability, charset, members, maybe a DEFAULT)
    values_for(column)     model values that column holds (no NULL; see nullable_values_for)
    tables()               a Table: 1..max_columns columns, a PRIMARY KEY, a UNIQUE NOT NULL
                           key, or no key at all
    settings()             binlog Settings (checksum, row image, row metadata, annotations,
                           compression)
    scenarios()            a Scenario: tables, initial rows, transactions of inserts, updates
                           (key changes included) and deletes over several GTID domains and
                           server ids, rotations, DDL and settings changed mid-history
    ddl_statements(s)      a DDL statement scenario s can take (columns added, dropped,
                           moved, widened; tables created, truncated, renamed, dropped)
    setting_changes()      settings changed mid-history (row image, metadata, annotations,
                           compression, checksum)

Importing this module has no side effects (no profile, no settings registered).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.columns import make_column
from scenarios.ddl import (
    AddColumn,
    AlterTable,
    CreateTable,
    DdlStatement,
    DropColumn,
    DropTable,
    ModifyColumn,
    RenameTable,
    TruncateTable,
)
from scenarios.history import (
    ROW_IMAGES,
    ROW_METADATA,
    Ddl,
    Row,
    Scenario,
    Settings,
    TransactionBuilder,
)
from scenarios.schema import INTEGER_RANGES, NO_DEFAULT, Column, Table
from scenarios.values import float32

__all__ = [
    "DDL_KINDS",
    "ENGINES",
    "KEY_VALUES",
    "columns",
    "ddl_statements",
    "nullable_values_for",
    "scenarios",
    "setting_changes",
    "settings",
    "tables",
    "values_for",
]

# Table engines, the transactional one first.
ENGINES = ("InnoDB", "MyISAM")

# Key values come from this small range, so that inserts, updates and deletes meet.
KEY_VALUES = 5

# Simpler types first (hypothesis shrinks towards the start of sampled_from).
_TYPE_TEXTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("int", {}),
    ("varchar", {"length": 8}),
    ("bigint", {"unsigned": True}),
    ("tinyint", {}),
    ("smallint", {"unsigned": True}),
    ("mediumint", {}),
    ("decimal", {"precision": 7, "scale": 2}),
    ("double", {}),
    ("float", {}),
    ("date", {}),
    ("datetime", {"fsp": 0}),
    ("datetime", {"fsp": 6}),
    ("time", {"fsp": 3}),
    ("timestamp", {"fsp": 2}),
    ("year", {}),
    ("bit", {"length": 10}),
    ("char", {"length": 4}),
    ("text", {}),
    ("blob", {}),
    ("varbinary", {"length": 6}),
    ("binary", {"length": 3}),
    ("enum", {"members": ("a", "b", "c")}),
    ("set", {"members": ("x", "y", "z")}),
    ("decimal", {"precision": 20, "scale": 0, "unsigned": True}),
    ("int", {"unsigned": True}),
    ("mediumtext", {}),
    ("enum", {"members": ("é", "ü b", "x'y", "\\")}),
    ("set", {"members": tuple(f"m{n}" for n in range(10))}),
    ("json", {}),
    ("tinytext", {}),
    ("longblob", {}),
    ("tinyblob", {}),
    ("decimal", {"precision": 65, "scale": 30}),
    ("bit", {"length": 64}),
    ("time", {"fsp": 0}),
    ("timestamp", {"fsp": 6}),
    ("char", {"length": 255}),
    ("uuid", {}),
    ("inet4", {}),
    ("inet6", {}),
)
_COLLATIONS = ("utf8mb4_general_ci", "latin1_swedish_ci", "utf8mb4_bin")
_TEXTUAL = ("char", "varchar", "text", "mediumtext", "tinytext", "enum", "set")


@st.composite
def columns(draw: st.DrawFn, name: str = "c") -> Column:
    """One column named ``name``: a type of :data:`_TYPE_TEXTS`, a collation for textual types,
    NULL or NOT NULL, and sometimes a DEFAULT drawn from its values."""
    kind, fields = draw(st.sampled_from(_TYPE_TEXTS))
    collation = draw(st.sampled_from(_COLLATIONS)) if kind in _TEXTUAL else None
    nullable = draw(st.booleans())
    base = make_column(
        name,
        {"type": kind, **fields},
        nullable=nullable,
        default=NO_DEFAULT,
        charset=None,
        collation=collation,
        table_collation="utf8mb4_general_ci",
    )
    if (
        kind in ("text", "mediumtext", "tinytext", "json")
        or "blob" in kind
        or not draw(st.booleans())
    ):
        return base  # (TEXT/BLOB literal defaults are left out: they read differently in DDL)
    default = draw(values_for(base))
    return make_column(
        name,
        {"type": kind, **fields},
        nullable=nullable,
        default=default,
        charset=None,
        collation=collation,
        table_collation="utf8mb4_general_ci",
    )


def _no_negative_zero(value: float) -> float:
    return 0.0 if value == 0 else value


def _text(column: Column, max_size: int) -> st.SearchStrategy[str]:
    if column.charset == "latin1":
        alphabet = st.sampled_from("abcxyzABC 019_-éüÆ€'\\\"\t\n")
    else:
        alphabet = st.one_of(
            st.sampled_from("abcxyzABC 019_-'\\\"\t\n"),
            st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
        )
    return st.text(alphabet, max_size=max_size)


def values_for(column: Column) -> st.SearchStrategy[Any]:
    """Non-NULL model values of ``column`` (as :func:`scenarios.values.convert` returns them)."""
    if column.type in FIXED_BINARY_TYPES:
        return _fixed_binary_values(column.type)
    return _values_for(column)


def _values_for(column: Column) -> st.SearchStrategy[Any]:
    """:func:`values_for` of the types that are not MariaDB's fixed-binary ones."""
    kind = column.type
    if kind in INTEGER_RANGES:
        bits = 8 * INTEGER_RANGES[kind][0]
        low, high = (
            (0, (1 << bits) - 1) if column.unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)
        )
        return st.one_of(st.integers(0, 3), st.sampled_from((low, high)), st.integers(low, high))
    if kind == "decimal":
        precision, scale = column.precision or 10, column.scale or 0
        limit = 10**precision - 1
        return st.integers(0 if column.unsigned else -limit, limit).map(
            lambda n: Decimal((int(n < 0), tuple(int(d) for d in str(abs(n))), -scale))
        )
    if kind == "float":
        return st.floats(width=32, allow_nan=False, allow_infinity=False).map(
            lambda x: _no_negative_zero(float32(x))
        )
    if kind == "double":
        return st.floats(allow_nan=False, allow_infinity=False).map(_no_negative_zero)
    if kind == "bit":
        return st.integers(0, (1 << (column.length or 1)) - 1)
    if kind == "year":
        return st.one_of(st.integers(1901, 2155), st.just(0))
    if kind == "date":
        return st.dates(_dt.date(1000, 1, 1)).map(lambda d: Date(d.year, d.month, d.day))
    unit = 10 ** (6 - column.fsp)
    if kind == "time":
        return (
            st.builds(
                Time,
                st.booleans(),
                st.integers(0, 838),
                st.integers(0, 59),
                st.integers(0, 59),
                st.integers(0, 10**column.fsp - 1).map(lambda f: f * unit),
            )
            .filter(lambda t: t.hour < 838 or t.microsecond == 0)
            .map(lambda t: t._replace(negative=False) if not any(t[1:]) else t)
        )
    if kind == "datetime":
        return st.datetimes(_dt.datetime(1000, 1, 1)).map(
            lambda d: DateTime(
                d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond // unit * unit
            )
        )
    if kind == "timestamp":
        return st.builds(
            Timestamp,
            st.integers(1, 0x7FFFFFFF),
            st.integers(0, 10**column.fsp - 1).map(lambda f: f * unit),
        )
    if kind in ("char", "varchar"):
        codec = "cp1252" if column.charset == "latin1" else "utf-8"
        strings = _text(column, column.length or 1)
        if kind == "char":
            strings = strings.map(lambda s: s.rstrip(" "))
        return strings.map(lambda s: s.encode(codec))
    if kind == "json":
        json_values = st.recursive(
            st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=5),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=3), inner, max_size=3)
            ),
            max_leaves=5,
        )
        return json_values.map(lambda v: json.dumps(v, ensure_ascii=False).encode())
    if kind in ("text", "mediumtext", "tinytext"):
        codec = "cp1252" if column.charset == "latin1" else "utf-8"
        return st.one_of(
            _text(column, 20).map(lambda s: s.encode(codec)),
            # Past what one length byte holds (TINYTEXT: up to its 255).
            st.integers(250, 255 if kind == "tinytext" else 300).map(lambda n: b"l" * n),
        )
    if kind == "binary":
        return st.binary(max_size=column.length or 1).map(
            lambda b: b.ljust(column.length or 1, b"\x00")
        )
    if kind == "varbinary":
        return st.binary(max_size=column.length or 1)
    if kind in ("blob", "tinyblob", "mediumblob", "longblob"):
        return st.binary(max_size=40)
    if kind == "enum":
        return st.integers(1, len(column.members))
    if kind == "set":
        return st.integers(0, (1 << len(column.members)) - 1)
    raise ValueError(f"no values for {kind}")


# 16-bit words of an address or UUID: runs of zeros (where INET6 text puts ``::``, and the
# trailing zero bytes the binlog drops) and all-ones as often as any other word.
_WORDS = st.one_of(st.just(0), st.just(0xFFFF), st.integers(0, 0xFFFF))


def _fixed_binary_values(kind: str) -> st.SearchStrategy[Any]:
    value_type = FIXED_BINARY_TYPES[kind]
    raw = st.lists(_WORDS, min_size=value_type.LENGTH // 2, max_size=value_type.LENGTH // 2).map(
        lambda words: b"".join(word.to_bytes(2, "big") for word in words)
    )
    if kind == "uuid":  # the text a server accepts: a version of 8 or more needs the variant bit
        raw = raw.filter(lambda b: b[6] < 0x80 or b[8] >= 0x80)
    return raw.map(value_type)


def nullable_values_for(column: Column) -> st.SearchStrategy[Any]:
    """Values of ``column``, NULL too when it is NULL-able."""
    values = values_for(column)
    return st.one_of(st.none(), values) if column.nullable else values


_KEY_TYPES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("int", {}),
    ("bigint", {"unsigned": True}),
    ("tinyint", {}),
)


def _key_column(name: str, kind: str, fields: dict[str, Any]) -> Column:
    return make_column(
        name,
        {"type": kind, **fields},
        nullable=False,
        default=NO_DEFAULT,
        charset=None,
        collation=None,
        table_collation="utf8mb4_general_ci",
    )


@st.composite
def tables(draw: st.DrawFn, database: str = "db", name: str = "t", max_columns: int = 5) -> Table:
    """A table ``database.name``: a key (PRIMARY KEY of one or two integer columns, or a UNIQUE
    NOT NULL integer column MariaDB promotes) or none, up to ``max_columns`` other columns,
    and an engine (InnoDB, or MyISAM: non-transactional)."""
    key_kind = draw(st.sampled_from(("primary", "none", "unique", "composite")))
    key_columns: list[Column] = []
    if key_kind != "none":
        count = 2 if key_kind == "composite" else 1
        for index in range(count):
            kind, fields = draw(st.sampled_from(_KEY_TYPES))
            key_columns.append(_key_column(f"k{index}", kind, fields))
    others = [draw(columns(f"c{index}")) for index in range(draw(st.integers(1, max_columns)))]
    every: list[Column] = key_columns + others
    key_later = draw(st.booleans())
    if key_columns and key_later:
        every = others[:1] + key_columns + others[1:]  # the key need not come first
    names = tuple(column.name for column in key_columns)
    return Table(
        database,
        name,
        tuple(every),
        primary_key=names if key_kind in ("primary", "composite") else (),
        unique_keys=(names,) if key_kind == "unique" else (),
        engine=draw(st.sampled_from(ENGINES)),
    )


@st.composite
def settings(draw: st.DrawFn) -> Settings:
    return Settings(
        binlog_checksum=draw(st.booleans()),
        binlog_row_image=draw(st.sampled_from(ROW_IMAGES)),
        binlog_row_metadata=draw(st.sampled_from(ROW_METADATA)),
        binlog_annotate_row_events=draw(st.booleans()),
        log_bin_compress=draw(st.booleans()),
        log_bin_compress_min_len=draw(st.sampled_from((256, 10, 1024))),
    )


def _key_of(table: Table, row: Row) -> tuple[Any, ...]:
    return tuple(row[p] for p in table.key)


@st.composite
def _new_row(draw: st.DrawFn, table: Table, taken: set[tuple[Any, ...]]) -> dict[str, Any] | None:
    """Values of a row to insert (every column given), None when every key value is taken."""
    values: dict[str, Any] = {}
    if table.key:
        free = [key for key in _key_space(table) if key not in taken]
        if not free:
            return None
        key = draw(st.sampled_from(free))
        for position, value in zip(table.key, key, strict=True):
            values[table.columns[position].name] = value
    for position, column in enumerate(table.columns):
        if position not in table.key:
            values[column.name] = draw(nullable_values_for(column))
    return values


def _key_space(table: Table) -> list[tuple[Any, ...]]:
    if len(table.key) == 1:
        return [(value,) for value in range(KEY_VALUES)]
    return [(a, b) for a in range(3) for b in range(2)]


def _as_values(table: Table, row: Row, positions: Sequence[int]) -> dict[str, Any]:
    return {table.columns[p].name: row[p] for p in positions}


@st.composite
def _change(
    draw: st.DrawFn, tx: TransactionBuilder, scenario: Scenario, max_insert_rows: int = 3
) -> None:
    name = draw(st.sampled_from(sorted(scenario.tables)))
    table = scenario.tables[name]
    rows = tx.rows(name)
    kind = draw(st.sampled_from(("insert", "update", "delete")))
    if kind == "insert" or not rows:
        taken = {_key_of(table, row) for row in rows}
        batch = []
        for _ in range(draw(st.integers(1, max_insert_rows))):
            values = draw(_new_row(table, taken))
            if values is None:
                break
            if table.key:
                taken.add(tuple(values[table.columns[p].name] for p in table.key))
            batch.append(values)
        if not batch:
            return
        leave_out = [
            c.name
            for p, c in enumerate(table.columns)
            if p not in table.key and (c.nullable or c.default is not NO_DEFAULT)
        ]
        omitted = draw(st.lists(st.sampled_from(leave_out), unique=True)) if leave_out else []
        tx.insert(name, *({k: v for k, v in row.items() if k not in omitted} for row in batch))
        return
    row = draw(st.sampled_from(rows))
    where = _as_values(table, row, table.key or range(table.width))
    if kind == "delete":
        tx.delete(name, where)
        return
    changes: dict[str, Any] = {}
    for position in draw(
        st.lists(st.integers(0, table.width - 1), min_size=1, max_size=3, unique=True)
    ):
        column = table.columns[position]
        if position in table.key:
            taken = {_key_of(table, other) for other in rows if other is not row}
            free = [key for key in _key_space(table) if key not in taken]
            if not free:
                continue
            new_key = draw(st.sampled_from(free))
            for key_position, value in zip(table.key, new_key, strict=True):
                changes[table.columns[key_position].name] = value
        else:
            # Often the value another row has, or the row's own (an update that changes nothing).
            others = [other[position] for other in rows]
            changes[column.name] = draw(
                st.one_of(st.sampled_from(others), nullable_values_for(column))
            )
    if changes:
        tx.update(name, where, changes)


# DDL a history draws, simpler first (hypothesis shrinks towards the start).
DDL_KINDS = ("add", "reorder", "drop_column", "widen", "truncate", "rename", "create", "drop")
_WIDER = {"tinyint": "smallint", "smallint": "mediumint", "mediumint": "int", "int": "bigint"}


def _place(draw: st.DrawFn, table: Table, name: str) -> dict[str, Any]:
    """FIRST, AFTER another column, or (first choice) nowhere in particular."""
    others = [c.name for c in table.columns if c.name != name]
    where = draw(st.sampled_from(("end", "first", "after") if others else ("end", "first")))
    if where == "first":
        return {"first": True}
    if where == "after":
        return {"after": draw(st.sampled_from(others))}
    return {}


@st.composite
def ddl_statements(draw: st.DrawFn, scenario: Scenario) -> DdlStatement | None:
    """A DDL statement the scenario can take now: a column added (NULL-able or with a
    DEFAULT; at the end, FIRST or AFTER another), a column moved (MODIFY to the same
    definition, FIRST or AFTER), a column dropped (not of a key), an integer widened or a
    VARCHAR/VARBINARY lengthened, TRUNCATE, RENAME, CREATE TABLE or DROP TABLE (one table is
    always left). None when the drawn kind does not apply."""
    names = sorted(scenario.tables)
    table = scenario.tables[draw(st.sampled_from(names))]
    kind = draw(st.sampled_from(DDL_KINDS))
    keys = {name.lower() for key in (table.primary_key, *table.unique_keys) for name in key}
    count = len(scenario.initial_tables) + sum(isinstance(s, Ddl) for s in scenario.steps)
    if kind == "add":
        taken = {c.name.lower() for c in table.columns}
        name = next(f"a{n}" for n in range(100) if f"a{n}" not in taken)
        column = draw(columns(name))
        if not column.nullable and column.default is NO_DEFAULT:
            column = replace(column, nullable=True)
        alteration: AddColumn | DropColumn | ModifyColumn = AddColumn(
            column, **_place(draw, table, name)
        )
    elif kind == "reorder":
        column = draw(st.sampled_from(table.columns))
        place = _place(draw, table, column.name)
        if not place:
            return None
        alteration = ModifyColumn(column, **place)
    elif kind == "drop_column":
        droppable = [c.name for c in table.columns if c.name.lower() not in keys]
        if len(table.columns) < 2 or not droppable:
            return None
        alteration = DropColumn(draw(st.sampled_from(droppable)))
    elif kind == "widen":
        wider = [
            c
            for c in table.columns
            if c.type in _WIDER or c.type in ("varchar", "varbinary") and (c.length or 0) < 300
        ]
        if not wider:
            return None
        column = draw(st.sampled_from(wider))
        if column.type in _WIDER:
            column = replace(column, type=_WIDER[column.type])
        else:
            column = replace(column, length=(column.length or 0) + draw(st.integers(1, 100)))
        alteration = ModifyColumn(column)
    elif kind == "truncate":
        return TruncateTable(table.database, table.name)
    elif kind == "rename":
        return RenameTable(table.database, table.name, table.database, f"t{count}")
    elif kind == "create":
        return CreateTable(draw(tables(database=table.database, name=f"t{count}")))
    else:
        if len(names) < 2:
            return None
        return DropTable(table.database, table.name)
    return AlterTable(table.database, table.name, (alteration,))


# Settings a history changes mid-way (simpler first), with the values it draws.
_SETTING_CHANGES: tuple[tuple[str, st.SearchStrategy[Any]], ...] = (
    ("binlog_row_image", st.sampled_from(ROW_IMAGES)),
    ("binlog_annotate_row_events", st.booleans()),
    ("binlog_row_metadata", st.sampled_from(ROW_METADATA)),
    ("log_bin_compress", st.booleans()),
    ("binlog_checksum", st.booleans()),
)


@st.composite
def setting_changes(draw: st.DrawFn) -> dict[str, Any]:
    """One or two settings a history changes mid-way (as SET SESSION/GLOBAL would)."""
    chosen = draw(
        st.lists(
            st.sampled_from(_SETTING_CHANGES), min_size=1, max_size=2, unique_by=lambda c: c[0]
        )
    )
    return {name: draw(values) for name, values in chosen}


@st.composite
def scenarios(
    draw: st.DrawFn,
    *,
    max_tables: int = 2,
    max_transactions: int = 5,
    max_changes: int = 4,
    max_insert_rows: int = 3,
    rotations: bool = True,
    ddl: bool = True,
    setting_changes_too: bool = True,
    settings_strategy: st.SearchStrategy[Settings] | None = None,
) -> Scenario:
    """A scenario: 1..``max_tables`` tables (in one or two databases) with a few initial rows,
    then transactions of 1..``max_changes`` changes each (an insert of up to
    ``max_insert_rows`` rows in one statement), in GTID domains 0..2 and server ids 1..3,
    with a rotation (FLUSH BINARY LOGS) after some of them unless ``rotations`` is False, a
    DDL statement (:func:`ddl_statements`) after some unless ``ddl`` is False, and settings
    changed (:func:`setting_changes`) after some unless ``setting_changes_too`` is False. Each
    of these shrinks away first: the simplest history has none."""
    scenario = Scenario(draw(settings_strategy if settings_strategy is not None else settings()))
    count = draw(st.integers(1, max_tables))
    for index in range(count):
        database = draw(st.sampled_from(("db", "db2"))) if index else "db"
        table = draw(tables(database=database, name=f"t{index}"))
        taken: set[tuple[Any, ...]] = set()
        rows = []
        for _ in range(draw(st.integers(0, 2))):
            values = draw(_new_row(table, taken))
            if values is None:
                break
            if table.key:
                taken.add(tuple(values[table.columns[p].name] for p in table.key))
            rows.append(values)
        scenario.create_table(table, rows=rows)
    for number in range(1, max_transactions + 1):
        domain = draw(st.sampled_from((0, 0, 1, 2)))
        server = draw(st.sampled_from((1, 1, 2, 3)))
        with scenario.transaction(domain_id=domain, server_id=server) as tx:
            for _ in range(draw(st.integers(1, max_changes))):
                draw(_change(tx, scenario, max_insert_rows))
        if rotations and draw(st.integers(0, 4)) == 4:
            scenario.rotate()
        if ddl and draw(st.integers(0, 3)) == 3:
            statement = draw(ddl_statements(scenario))
            if statement is not None:
                scenario.ddl(statement, domain_id=domain, server_id=server)
        if setting_changes_too and draw(st.integers(0, 4)) == 4:
            scenario.set(**draw(setting_changes()))
        # Another transaction? (drawn as a list's "more" flag is: shrinks to fewer, cleanly)
        if number < max_transactions and not draw(st.booleans()):
            break
    return scenario
