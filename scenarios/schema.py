"""Tables at SQL level: columns with their types, NULL-ability, defaults, character sets, ENUM/SET
members, and the table's keys; what the binlog says of each column follows from them.

A table is declared from ``CREATE TABLE`` text (:func:`scenarios.create_table.parse_create_table`)
or with the builder (:func:`scenarios.builder.table`, :func:`scenarios.builder.column`); both
give equal :class:`Table` objects, their columns resolved by :mod:`scenarios.columns`. This
module is the bottom of the schema modules: it imports none of them.

The key that row images and UPDATE/DELETE use is the PRIMARY KEY, or else the first UNIQUE key
whose columns are all NOT NULL (what MariaDB promotes to primary key); a table with neither has
no key: it may hold duplicate rows, changed and deleted by their whole value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fakemaster.protocol.charsets import Collation, collation_by_name
from fakemaster.vocabulary.columns import (
    STRING_REAL_CHAR,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    string_meta_value,
)
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES
from scenarios.errors import SchemaError, did_you_mean

if TYPE_CHECKING:
    from scenarios.expressions import Expression

__all__ = [
    "BINARY_TYPES",
    "BLOB_SIZES",
    "CHARACTER_TYPES",
    "DEFAULT_COLLATION",
    "FIXED_BINARY_TYPES",
    "INTEGER_RANGES",
    "NON_TRANSACTIONAL_ENGINES",
    "NO_DEFAULT",
    "TEMPORAL_TYPES",
    "TYPE_NAMES",
    "TYPE_ALIASES",
    "Column",
    "ForeignKey",
    "Index",
    "Table",
    "sql_string",
]

DEFAULT_COLLATION = "utf8mb4_general_ci"
# The engines whose tables are written to the binlog statement by statement (lowercase).
NON_TRANSACTIONAL_ENGINES = frozenset({"myisam"})


class _NoDefault:
    """A column declared without DEFAULT (not the same as DEFAULT NULL)."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

# Bytes of each integer type, its binlog type.
INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "tinyint": (1, ColumnType.TINY),
    "smallint": (2, ColumnType.SHORT),
    "mediumint": (3, ColumnType.INT24),
    "int": (4, ColumnType.LONG),
    "bigint": (8, ColumnType.LONGLONG),
}
# TEXT/BLOB types: the bytes of their length prefix (the TABLE_MAP metadata).
BLOB_SIZES: dict[str, int] = {
    "tinytext": 1,
    "text": 2,
    "mediumtext": 3,
    "longtext": 4,
    "json": 4,
    "tinyblob": 1,
    "blob": 2,
    "mediumblob": 3,
    "longblob": 4,
}
# Types whose values are text in a character set (ENUM/SET members too).
CHARACTER_TYPES = frozenset(
    {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json", "enum", "set"}
)
# Types whose values are bytes without a character set (collation ``binary``).
BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
TEMPORAL_TYPES = frozenset({"time", "datetime", "timestamp"})
_LENGTH_TYPES = {"char": 255, "binary": 255, "varchar": 65532, "varbinary": 65532, "bit": 64}
TYPE_NAMES = frozenset(
    {
        *INTEGER_RANGES,
        "decimal",
        "float",
        "double",
        "bit",
        "year",
        "date",
        *TEMPORAL_TYPES,
        *_LENGTH_TYPES,
        *BLOB_SIZES,
        "enum",
        "set",
        *FIXED_BINARY_TYPES,  # MariaDB's UUID, INET4, INET6: logged as BINARY(16), BINARY(4)
    }
)
TYPE_ALIASES = {
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "middleint": "mediumint",
    "dec": "decimal",
    "numeric": "decimal",
    "fixed": "decimal",
    "real": "double",
    "float8": "double",
    "float4": "float",
    "bool": "tinyint",
    "boolean": "tinyint",
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column, resolved: ``type`` is the lowercase SQL type name (aliases resolved);
    ``length`` the characters of CHAR/VARCHAR, the bytes of BINARY/VARBINARY, the bits of BIT;
    ``collation`` the collation name of a character column (``binary`` for byte columns, None
    for the others); ``default`` the model value (:data:`NO_DEFAULT` when none is declared)."""

    name: str
    type: str
    nullable: bool = True
    unsigned: bool = False
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int = 0
    collation: str | None = None
    members: tuple[str, ...] = ()
    default: Any = NO_DEFAULT
    # Kept as the server prints them (see scenarios.create_table): the display width of an
    # integer when given; AUTO_INCREMENT; a default that is an expression
    # (``current_timestamp(3)``: ``default`` is then NO_DEFAULT) and ON UPDATE's; the comment;
    # a column CHECK's expression.
    width: int | None = None
    auto_increment: bool = False
    default_expression: str | None = None
    on_update: str | None = None
    comment: str = ""
    check: str | None = None
    # A generated column: its expression (scenarios.expressions), STORED (PERSISTENT) or
    # VIRTUAL; the values are computed by the model, never given. INVISIBLE: left out of
    # SELECT * and of an INSERT without a column list (still in every row image). A constant
    # DEFAULT expression (``DEFAULT (1 + 1)``) as the server prints it; ``default`` holds
    # its value.
    generated: Expression | None = None
    stored: bool = False
    invisible: bool = False
    default_constant: str | None = None

    # --- what it is at SQL level -------------------------------------------------------

    @property
    def charset(self) -> str | None:
        found = self._collation()
        return None if found is None else found.charset

    def _collation(self) -> Collation | None:
        return None if self.collation is None else collation_by_name(self.collation)

    @property
    def collation_id(self) -> int:
        found = self._collation()
        if found is None:
            raise SchemaError(f"column {self.name} ({self.type}) has no collation")
        return found.id

    @property
    def is_text(self) -> bool:
        return self.type in CHARACTER_TYPES and self.type not in ("enum", "set")

    @property
    def is_bytes(self) -> bool:
        """Its values are ``bytes`` (text in its character set, or raw bytes)."""
        return (
            self.type in CHARACTER_TYPES
            and self.type not in ("enum", "set")
            or (self.type in BINARY_TYPES)
        )

    @property
    def is_blob(self) -> bool:
        """A TEXT/BLOB/JSON column (MariaDB's MYSQL_TYPE_BLOB, left out of NOBLOB images)."""
        return self.type in BLOB_SIZES

    def sql_type(self) -> str:
        """The type as ``SHOW CREATE TABLE`` spells it (without charset and NULL-ability)."""
        kind = self.type
        if kind in INTEGER_RANGES:
            text = kind
        elif kind == "decimal":
            text = f"decimal({self.precision},{self.scale})"
        elif kind in _LENGTH_TYPES:
            text = f"{kind}({self.length})"
        elif kind in TEMPORAL_TYPES:
            text = f"{kind}({self.fsp})" if self.fsp else kind
        elif kind in ("enum", "set"):
            text = f"{kind}({','.join(sql_string(member) for member in self.members)})"
        else:
            text = kind
        return text + (" unsigned" if self.unsigned else "")

    # --- what the binlog says of it ----------------------------------------------------

    @property
    def binlog_type(self) -> int:
        kind = self.type
        if kind in INTEGER_RANGES:
            return INTEGER_RANGES[kind][1]
        simple = {
            "decimal": ColumnType.NEWDECIMAL,
            "float": ColumnType.FLOAT,
            "double": ColumnType.DOUBLE,
            "bit": ColumnType.BIT,
            "year": ColumnType.YEAR,
            "date": ColumnType.DATE,
            "time": ColumnType.TIME2,
            "datetime": ColumnType.DATETIME2,
            "timestamp": ColumnType.TIMESTAMP2,
            "varchar": ColumnType.VARCHAR,
            "varbinary": ColumnType.VARCHAR,
        }
        if kind in simple:
            return simple[kind]
        if kind in BLOB_SIZES:
            return ColumnType.BLOB
        return ColumnType.STRING  # CHAR, BINARY, ENUM, SET, UUID, INET4, INET6

    @property
    def max_bytes(self) -> int:
        """Bytes a CHAR/VARCHAR value may take (characters times the set's widest character)."""
        found = self._collation()
        width = 1 if found is None else found.mbmaxlen
        return (self.length or 0) * width

    @property
    def binlog_meta(self) -> int:
        """The TABLE_MAP metadata (the little-endian value of its bytes)."""
        kind = self.type
        if kind == "float":
            return 4
        if kind == "double":
            return 8
        if kind == "decimal":
            return (self.precision or 0) | (self.scale or 0) << 8
        if kind == "bit":
            bits = self.length or 1
            return bits % 8 | (bits // 8) << 8
        if kind in TEMPORAL_TYPES:
            return self.fsp
        if kind in ("varchar", "varbinary"):
            return self.max_bytes
        if kind in BLOB_SIZES:
            return BLOB_SIZES[kind]
        if kind in ("char", "binary"):
            return string_meta_value(STRING_REAL_CHAR, self.max_bytes)
        if kind in FIXED_BINARY_TYPES:
            return string_meta_value(STRING_REAL_CHAR, FIXED_BINARY_TYPES[kind].LENGTH)
        if kind == "enum":
            return STRING_REAL_ENUM | (1 if len(self.members) < 256 else 2) << 8
        if kind == "set":
            size = (len(self.members) + 7) // 8
            return STRING_REAL_SET | (8 if size > 4 else size) << 8
        return 0

    @property
    def signedness_bit(self) -> bool | None:
        """Its bit in the SIGNEDNESS metadata (MariaDB: YEAR is unsigned), None when it has none."""
        if self.type in INTEGER_RANGES or self.type in ("decimal", "float", "double"):
            return self.unsigned
        if self.type == "year":
            return True
        return None

    @property
    def has_charset_metadata(self) -> bool:
        """Counted among the character columns of the DEFAULT/COLUMN_CHARSET metadata (UUID,
        INET4 and INET6 too, with the binary collation)."""
        return self.is_bytes or self.type in FIXED_BINARY_TYPES

    def bits_wide(self) -> int:
        return 8 * INTEGER_RANGES[self.type][0]


def sql_string(text: str) -> str:
    """A SQL string literal (quotes doubled, backslashes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class Index:
    """A key as ``SHOW CREATE TABLE`` prints it: ``kind`` PRIMARY, UNIQUE, KEY, FULLTEXT or
    SPATIAL; ``parts`` (column, prefix length or None, descending)."""

    kind: str
    name: str
    parts: tuple[tuple[str, int | None, bool], ...]
    using: str | None = None
    comment: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(part[0] for part in self.parts)

    @property
    def has_prefix(self) -> bool:
        return any(part[1] is not None for part in self.parts)


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """``CONSTRAINT name FOREIGN KEY (columns) REFERENCES table (referenced) [ON DELETE ..]
    [ON UPDATE ..]``: kept and printed, not enforced by the model."""

    name: str
    columns: tuple[str, ...]
    table: str
    referenced: tuple[str, ...]
    on_delete: str | None = None
    on_update: str | None = None
    database: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A table: its database, name, columns, PRIMARY KEY and UNIQUE keys (column names)."""

    database: str
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    engine: str = "InnoDB"
    # Kept as the server prints them, not simulated (see scenarios.create_table): every key
    # in the server's order (empty: only primary_key and unique_keys are known), foreign keys,
    # table CHECK constraints (name, expression), the table's collation, AUTO_INCREMENT=N,
    # other table options (name, value as printed) and the comment.
    # (The printed-only ones do not take part in equality: two tables that log alike are
    # equal.)
    indexes: tuple[Index, ...] = field(default=(), compare=False)
    foreign_keys: tuple[ForeignKey, ...] = field(default=(), compare=False)
    checks: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    collation: str = DEFAULT_COLLATION
    auto_increment: int | None = None
    options: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    comment: str = field(default="", compare=False)
    # PARTITION BY ... as the server prints it (after the table options): kept, printed, not
    # simulated (a partitioned table logs its rows as any other).
    partition: str | None = field(default=None, compare=False)
    # A sequence's table (CREATE SEQUENCE, scenarios.sequences): its row is written outside
    # the transaction that moves it (a non-transactional group).
    sequence: bool = False
    # WITH SYSTEM VERSIONING (scenarios.versioning): the period columns' names (the implicit,
    # invisible row_start/row_end, appended); primary_key then ends with the period's end.
    period: tuple[str, str] | None = None
    _index: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.columns:
            raise SchemaError(f"{self.qualified}: a table needs at least one column")
        for position, item in enumerate(self.columns):
            key = item.name.lower()
            if key in self._index:
                raise SchemaError(f"{self.qualified}: duplicate column name {item.name!r}")
            self._index[key] = position
        for key_columns in (self.primary_key, *self.unique_keys):
            if not key_columns and key_columns is not self.primary_key:
                raise SchemaError(f"{self.qualified}: an empty UNIQUE key")
            for name in key_columns:
                if name.lower() not in self._index:
                    raise SchemaError(f"{self.qualified}: key column {name!r} is not a column")
        for name in self.primary_key:
            if self.column(name).nullable:
                raise SchemaError(f"{self.qualified}: primary key column {name!r} must be NOT NULL")
            if self.column(name).is_blob:
                raise SchemaError(f"{self.qualified}: a TEXT/BLOB column cannot be a key")

        increments = [item.name for item in self.columns if item.auto_increment]
        if len(increments) > 1:
            raise SchemaError(f"{self.qualified}: more than one AUTO_INCREMENT column")
        if increments and not any(
            key and key[0].lower() == increments[0].lower()
            for key in (self.primary_key, *self.unique_keys, *(i.columns for i in self.indexes))
        ):
            raise SchemaError(
                f"{self.qualified}: the AUTO_INCREMENT column {increments[0]!r} must be the first"
                " column of a key"
            )

    @property
    def auto_increment_position(self) -> int | None:
        """The position of the AUTO_INCREMENT column, None without one."""
        for position, item in enumerate(self.columns):
            if item.auto_increment:
                return position
        return None

    @property
    def generated_positions(self) -> tuple[int, ...]:
        """The generated columns' positions, in the order the server computes them."""
        return tuple(p for p, item in enumerate(self.columns) if item.generated is not None)

    @property
    def always_logged_generated(self) -> tuple[int, ...]:
        """The generated columns a MINIMAL image carries in every INSERT and UPDATE after
        image, changed or not: the STORED ones and the VIRTUAL ones in a key (checked on
        10.11; a VIRTUAL column in no key only in FULL and NOBLOB images)."""
        keyed = {name.lower() for index in self.indexes for name in index.columns}
        return tuple(
            p
            for p in self.generated_positions
            if self.columns[p].stored or self.columns[p].name.lower() in keyed
        )

    @property
    def transactional(self) -> bool:
        """Whether the engine is transactional (InnoDB), or not (MyISAM: each statement is
        committed on its own, see :mod:`scenarios.compiler`)."""
        return not self.sequence and self.engine.lower() not in NON_TRANSACTIONAL_ENGINES

    @property
    def period_positions(self) -> tuple[int, int] | None:
        """The positions of a system-versioned table's row_start and row_end, None for
        another table."""
        if self.period is None:
            return None
        return self.position(self.period[0]), self.position(self.period[1])

    @property
    def declared_positions(self) -> tuple[int, ...]:
        """Every column but a system-versioned table's implicit period columns."""
        period = self.period_positions or ()
        return tuple(p for p in range(len(self.columns)) if p not in period)

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def width(self) -> int:
        return len(self.columns)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.columns)

    def position(self, name: str) -> int:
        try:
            return self._index[name.lower()]
        except KeyError:
            hint = did_you_mean(name, self.column_names)
            raise SchemaError(f"{self.qualified} has no column {name!r}{hint}") from None

    def column(self, name: str) -> Column:
        return self.columns[self.position(name)]

    @property
    def key(self) -> tuple[int, ...]:
        """Positions of the columns of the key that identifies rows (see the module doc), ()
        for a table without one."""
        if self.primary_key:
            return tuple(self.position(name) for name in self.primary_key)
        for unique in self.unique_keys:
            if all(not self.column(name).nullable for name in unique):
                return tuple(self.position(name) for name in unique)
        return ()

    @property
    def unique_positions(self) -> tuple[tuple[int, ...], ...]:
        """Every key that no two rows may share (NULLs never collide)."""
        keys = [self.primary_key] if self.primary_key else []
        return tuple(tuple(self.position(n) for n in names) for names in (*keys, *self.unique_keys))
