"""The tables the SQL layer answers from: databases, tables, columns, keys and rows at the
served position, injected into the server (sans-IO: the layer only reads it).

A catalogue is whatever implements :class:`TableCatalogue`: :mod:`scenarios.catalogue` builds
one from a scenario's oracle at the last released transaction, and one from what binlog files
tell (their DDL and TABLE_MAP events) for ``--binlog-dir`` and plain stores. Reading rows goes
through a :class:`Snapshot`: the tables at one binlog position, taken at once with that position
(``START TRANSACTION WITH CONSISTENT SNAPSHOT`` keeps one for the whole transaction).

The SQL facts of a column are kept as MariaDB 10.11 shows them: the type as ``SHOW CREATE
TABLE`` spells it, the default as it prints it, the collation. From them this module derives
what every statement needs: the ``SHOW CREATE TABLE`` text, ``information_schema`` columns and
the result-set column definition a ``SELECT`` of the column sends.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fakemaster.protocol.charsets import BINARY_COLLATION_ID, collation_by_name
from fakemaster.protocol.resultset import Column, ColumnFlag
from fakemaster.vocabulary.constants import ColumnType

__all__ = [
    "BLOB_BYTES",
    "DISPLAY_WIDTHS",
    "PART_KEY_FLAG",
    "find_table",
    "general_ci_key",
    "key_flags",
    "CatalogueColumn",
    "CatalogueKey",
    "CatalogueTable",
    "CellValue",
    "Snapshot",
    "TableCatalogue",
    "TimestampCell",
    "column_definition",
    "column_key",
    "create_table_text",
    "quote_identifier",
]


@dataclass(frozen=True, slots=True)
class TimestampCell:
    """A TIMESTAMP value (seconds since the epoch, UTC): its text depends on the session's
    time_zone, so the SQL layer renders it (0 is the zero timestamp)."""

    seconds: int
    microsecond: int = 0
    fsp: int = 0

    def text(self, offset_seconds: int) -> bytes:
        import datetime as _dt

        if self.seconds == 0 and self.microsecond == 0:
            moment = "0000-00-00 00:00:00"
        else:
            when = _dt.datetime.fromtimestamp(self.seconds + offset_seconds, _dt.UTC)
            moment = f"{when:%Y-%m-%d %H:%M:%S}"
        fraction = f".{self.microsecond:06d}"[: self.fsp + 1] if self.fsp else ""
        return (moment + fraction).encode()


# A cell of a row: text (``str``, sent in the connection's character set), bytes as they are
# sent (numbers and temporal values as their text, binary strings raw), a TIMESTAMP (rendered
# in the session's time zone), or NULL.
CellValue = str | bytes | TimestampCell | None

# The decimals of a FLOAT/DOUBLE column without a scale (MariaDB's field NOT_FIXED_DEC).
FLOAT_NOT_FIXED_DEC = 31
# MariaDB's PART_KEY_FLAG: the field is part of some key (sent in result-set column flags).
PART_KEY_FLAG = 1 << 14

# Display width of the integer types in SHOW CREATE TABLE: (signed, unsigned).
DISPLAY_WIDTHS = {
    "tinyint": (4, 3),
    "smallint": (6, 5),
    "mediumint": (9, 8),
    "int": (11, 10),
    "bigint": (20, 20),
}
_INTEGER_TYPES = {
    "tinyint": ColumnType.TINY,
    "smallint": ColumnType.SHORT,
    "mediumint": ColumnType.INT24,
    "int": ColumnType.LONG,
    "bigint": ColumnType.LONGLONG,
}
# Bytes a TEXT/BLOB column may hold.
BLOB_BYTES = {
    "tinytext": 255,
    "tinyblob": 255,
    "text": 65535,
    "blob": 65535,
    "mediumtext": 16777215,
    "mediumblob": 16777215,
    "longtext": 4294967295,
    "longblob": 4294967295,
    "json": 4294967295,
}
_TEMPORAL_WIDTHS = {"date": 10, "time": 10, "datetime": 19, "timestamp": 19}
# The characters of the longest text of MariaDB's own types (a result set's column length).
FIXED_BINARY_TEXT_CHARS = {"uuid": 36, "inet4": 15, "inet6": 39}
LATIN1_COLLATION_ID = 8


@dataclass(frozen=True, slots=True)
class CatalogueColumn:
    """One column as SQL sees it.

    ``data_type`` is the lowercase type name (``int``, ``varchar``, ``enum`` ...); ``length``
    the characters of CHAR/VARCHAR, the bytes of BINARY/VARBINARY, the bits of BIT;
    ``collation`` the collation of a character column (None for the others, ``binary`` never
    used: byte columns have none); ``default`` the text ``SHOW CREATE TABLE`` prints after
    DEFAULT (``NULL``, ``0``, ``'abc'``), None when the column has no default."""

    name: str
    data_type: str
    nullable: bool = True
    unsigned: bool = False
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    fsp: int = 0
    collation: str | None = None
    members: tuple[str, ...] = ()
    default: str | None = None
    on_update: str | None = None
    width: int | None = None

    @property
    def display_width(self) -> int:
        """The display width of an integer column (SHOW CREATE TABLE, result-set length)."""
        return self.width or DISPLAY_WIDTHS[self.data_type][self.unsigned]

    @property
    def charset(self) -> str | None:
        found = collation_by_name(self.collation) if self.collation else None
        return None if found is None else found.charset

    @property
    def is_text(self) -> bool:
        return self.collation is not None

    @property
    def is_numeric(self) -> bool:
        return self.data_type in _INTEGER_TYPES or self.data_type in (
            "decimal",
            "float",
            "double",
            "bit",
            "year",
        )

    @property
    def column_type(self) -> str:
        """The type as SHOW CREATE TABLE and information_schema.COLUMNS.COLUMN_TYPE spell it."""
        kind = self.data_type
        if kind in DISPLAY_WIDTHS:
            text = f"{kind}({self.display_width})"
        elif kind == "decimal":
            text = f"decimal({self.precision},{self.scale})"
        elif kind in ("char", "varchar", "binary", "varbinary", "bit"):
            text = f"{kind}({self.length})"
        elif kind in ("time", "datetime", "timestamp"):
            text = f"{kind}({self.fsp})" if self.fsp else kind
        elif kind == "year":
            text = "year(4)"
        elif kind in ("enum", "set"):
            text = f"{kind}({','.join(_sql_string(m) for m in self.members)})"
        elif kind == "json":
            text = "longtext"
        else:
            text = kind
        return text + (" unsigned" if self.unsigned else "")

    @property
    def max_chars(self) -> int:
        """CHARACTER_MAXIMUM_LENGTH: characters of a character column, bytes of a byte one."""
        kind = self.data_type
        if kind in BLOB_BYTES:
            # A TEXT in a wide set holds its bytes in its narrowest characters (utf32: a quarter).
            found = collation_by_name(self.collation) if self.collation else None
            return BLOB_BYTES[kind] // (found.mbminlen if found else 1)
        if kind == "enum":
            return max((len(m) for m in self.members), default=0)
        if kind == "set":
            return sum(len(m) for m in self.members) + max(len(self.members) - 1, 0)
        return self.length or 0


@dataclass(frozen=True, slots=True)
class CatalogueKey:
    """An index: PRIMARY, or a UNIQUE / plain key named ``name`` on ``columns``."""

    name: str
    columns: tuple[str, ...]
    unique: bool = True

    @property
    def is_primary(self) -> bool:
        return self.name == "PRIMARY"


@dataclass(frozen=True, slots=True)
class CatalogueTable:
    """A table of the served catalogue: its columns, keys, engine, collation and comment."""

    database: str
    name: str
    columns: tuple[CatalogueColumn, ...]
    keys: tuple[CatalogueKey, ...] = ()
    engine: str = "InnoDB"
    collation: str = "utf8mb4_general_ci"
    comment: str = ""
    # What SHOW CREATE TABLE says about the table when its text is known otherwise (None: made
    # from the columns and keys).
    create_text: str | None = None
    # A sequence's table: read without an index scan flag (MariaDB's SEQUENCE engine).
    sequence: bool = False
    # WITH SYSTEM VERSIONING (information_schema.TABLES says so; SHOW FULL TABLES does not).
    versioned: bool = False
    _positions: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for position, item in enumerate(self.columns):
            self._positions.setdefault(item.name.lower(), position)

    def position(self, name: str) -> int | None:
        return self._positions.get(name.lower())

    @property
    def table_type(self) -> str:
        """TABLE_TYPE in information_schema.TABLES (checked on 10.11)."""
        if self.sequence:
            return "SEQUENCE"
        return "SYSTEM VERSIONED" if self.versioned else "BASE TABLE"

    @property
    def shown_type(self) -> str:
        """Table_type in SHOW FULL TABLES (a versioned table is a BASE TABLE there)."""
        return "SEQUENCE" if self.sequence else "BASE TABLE"

    @property
    def charset(self) -> str:
        found = collation_by_name(self.collation)
        return found.charset if found else "utf8mb4"

    @property
    def primary_key(self) -> CatalogueKey | None:
        return next((key for key in self.keys if key.is_primary), None)


class Snapshot(Protocol):
    """The tables at one binlog position."""

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        """Every row of ``table`` (cells in column order), in the table's key order."""
        ...


class TableCatalogue(Protocol):
    """What the SQL layer knows of the served tables (see the module docstring)."""

    def databases(self) -> Sequence[str]:
        """The databases holding tables, sorted."""
        ...

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        """The tables of ``database``, sorted by name."""
        ...

    def snapshot(self) -> Snapshot:
        """The tables at the current served position."""
        ...

    def text_codec(self, charset: str) -> str | None:
        """The Python codec of a MariaDB character set (None: binary)."""
        ...


def find_table(catalogue: TableCatalogue, database: str, name: str) -> CatalogueTable | None:
    """A table by database and name (names are case-sensitive, as on Linux)."""
    for table in catalogue.tables(database):
        if table.name == name:
            return table
    return None


def general_ci_key(text: str) -> str:
    """A text's weight under the ``_general_ci`` collations (what information_schema and the
    default utf8mb4 collation compare and sort by): accents and case ignored, trailing spaces
    too (PAD SPACE)."""
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return bare.upper().rstrip(" ")


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def column_key(table: CatalogueTable, column: CatalogueColumn) -> str:
    """SHOW COLUMNS ``Key`` / COLUMN_KEY: PRI, UNI, MUL or empty (MariaDB's field flags)."""
    flags = key_flags(table, column)
    if flags & ColumnFlag.PRI_KEY:
        return "PRI"
    if flags & ColumnFlag.UNIQUE_KEY:
        return "UNI"
    if flags & ColumnFlag.MULTIPLE_KEY:
        return "MUL"
    return ""


def _primary_index(table: CatalogueTable) -> int | None:
    """The key MariaDB takes for primary: PRIMARY, else the first UNIQUE key on NOT NULL
    columns only."""
    for index, key in enumerate(table.keys):
        if key.is_primary:
            return index
    for index, key in enumerate(table.keys):
        if key.unique and all(
            (pos := table.position(name)) is not None and not table.columns[pos].nullable
            for name in key.columns
        ):
            return index
    return None


def key_flags(table: CatalogueTable, column: CatalogueColumn) -> int:
    """PRI_KEY / UNIQUE_KEY / MULTIPLE_KEY as MariaDB sets them on a field: every part of the
    primary key is PRI; the first part of another key is UNI (a one-column unique key) or
    MUL."""
    flags = 0
    primary = _primary_index(table)
    name = column.name.lower()
    for index, key in enumerate(table.keys):
        parts = [part.lower() for part in key.columns]
        if name not in parts:
            continue
        flags |= PART_KEY_FLAG
        if index == primary:
            flags |= ColumnFlag.PRI_KEY
        elif parts[0] == name:
            single_unique = key.unique and len(parts) == 1
            flags |= ColumnFlag.UNIQUE_KEY if single_unique else ColumnFlag.MULTIPLE_KEY
    return flags


def _charset_clause(table: CatalogueTable, column: CatalogueColumn) -> str:
    """`` CHARACTER SET cs COLLATE coll`` for a column whose collation is not the table's."""
    if column.collation is None or column.data_type == "json":
        return ""
    own = collation_by_name(column.collation)
    if own is None or own.name == table.collation:
        return ""
    return f" CHARACTER SET {own.charset} COLLATE {own.name}"


def column_text(table: CatalogueTable, column: CatalogueColumn) -> str:
    """One column line of SHOW CREATE TABLE (without indentation and comma)."""
    text = f"{quote_identifier(column.name)} {column.column_type}{_charset_clause(table, column)}"
    if column.data_type == "json":
        text += " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    if not column.nullable:
        text += " NOT NULL"
    elif column.data_type == "timestamp":
        text += " NULL"
    if column.default is not None:
        text += f" DEFAULT {column.default}"
    if column.on_update is not None:
        text += f" ON UPDATE {column.on_update}"
    if column.data_type == "json":
        text += f" CHECK (json_valid({quote_identifier(column.name)}))"
    return text


def create_table_text(table: CatalogueTable) -> str:
    """``SHOW CREATE TABLE``'s text for ``table`` (as MariaDB 10.11 prints it)."""
    if table.create_text is not None:
        return table.create_text
    lines = [column_text(table, column) for column in table.columns]
    for key in table.keys:
        parts = ",".join(quote_identifier(name) for name in key.columns)
        if key.is_primary:
            lines.append(f"PRIMARY KEY ({parts})")
        elif key.unique:
            lines.append(f"UNIQUE KEY {quote_identifier(key.name)} ({parts})")
        else:
            lines.append(f"KEY {quote_identifier(key.name)} ({parts})")
    body = ",\n".join("  " + line for line in lines)
    found = collation_by_name(table.collation)
    collate = "" if found is None else f" COLLATE={found.name}"
    comment = f" COMMENT={_sql_string(table.comment)}" if table.comment else ""
    return (
        f"CREATE TABLE {quote_identifier(table.name)} (\n{body}\n)"
        f" ENGINE={table.engine} DEFAULT CHARSET={table.charset}{collate}{comment}"
    )


def column_definition(
    table: CatalogueTable, column: CatalogueColumn, name: str | None = None, alias: str = ""
) -> Column:
    """The result-set column a ``SELECT`` of ``column`` sends (``name``: its alias)."""
    kind = column.data_type
    flags = key_flags(table, column)
    if not column.nullable:
        flags |= ColumnFlag.NOT_NULL
        if column.default is None:
            flags |= ColumnFlag.NO_DEFAULT_VALUE
    if column.unsigned:
        flags |= ColumnFlag.UNSIGNED
    if column.on_update is not None:  # MariaDB's Field_timestamp: an auto-set timestamp
        flags |= ColumnFlag.ON_UPDATE_NOW | ColumnFlag.TIMESTAMP
    common: dict[str, Any] = {
        "schema": table.database,
        "table": alias or table.name,
        "org_table": table.name,
        "org_name": column.name,
    }
    shown = name if name is not None else column.name
    if kind in _INTEGER_TYPES:
        return Column(
            shown, _INTEGER_TYPES[kind], length=column.display_width, flags=flags, **common
        )
    if kind == "decimal":
        precision, scale = column.precision or 10, column.scale or 0
        length = precision + (1 if scale else 0) + (0 if column.unsigned else 1)
        return Column(
            shown,
            ColumnType.NEWDECIMAL,
            length=length,
            decimals=scale,
            flags=flags,
            **common,
        )
    if kind in ("float", "double"):
        wire = ColumnType.FLOAT if kind == "float" else ColumnType.DOUBLE
        length = 12 if kind == "float" else 22
        return Column(
            shown,
            wire,
            length=length,
            decimals=FLOAT_NOT_FIXED_DEC,
            flags=flags,
            **common,
        )
    if kind == "bit":
        return Column(
            shown,
            ColumnType.BIT,
            length=column.length or 1,
            flags=flags | ColumnFlag.UNSIGNED,
            **common,
        )
    if kind == "year":
        return Column(
            shown,
            ColumnType.YEAR,
            length=4,
            flags=flags | ColumnFlag.UNSIGNED | ColumnFlag.ZEROFILL,
            **common,
        )
    if kind in _TEMPORAL_WIDTHS:
        wire = {
            "date": ColumnType.DATE,
            "time": ColumnType.TIME,
            "datetime": ColumnType.DATETIME,
            "timestamp": ColumnType.TIMESTAMP,
        }[kind]
        length = _TEMPORAL_WIDTHS[kind] + (column.fsp + 1 if column.fsp else 0)
        flags |= ColumnFlag.BINARY
        if kind == "timestamp":
            flags |= ColumnFlag.UNSIGNED
        return Column(shown, wire, length=length, decimals=column.fsp, flags=flags, **common)
    if kind in FIXED_BINARY_TEXT_CHARS:
        # MariaDB's UUID/INET4/INET6 send their text, latin1 converted to the results' set.
        return Column(
            shown,
            ColumnType.STRING,
            flags=flags | ColumnFlag.BINARY | ColumnFlag.UNSIGNED,
            text_chars=FIXED_BINARY_TEXT_CHARS[kind],
            collation=LATIN1_COLLATION_ID,
            **common,
        )
    collation = collation_by_name(column.collation) if column.collation else None
    collation_id = collation.id if collation else BINARY_COLLATION_ID
    if kind in BLOB_BYTES:
        return Column(
            shown,
            ColumnType.BLOB,
            flags=flags | ColumnFlag.BLOB,
            text_chars=column.max_chars,
            collation=collation_id,
            **common,
        )
    wire = ColumnType.VAR_STRING if kind in ("varchar", "varbinary") else ColumnType.STRING
    if kind == "enum":
        flags |= ColumnFlag.ENUM
    elif kind == "set":
        flags |= ColumnFlag.SET
    return Column(
        shown, wire, flags=flags, text_chars=column.max_chars, collation=collation_id, **common
    )
