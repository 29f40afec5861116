"""What the pipeline knows of one table: column names, key, and per column the text form of
its values (the change events' generic images) and the Spark type of its materialised column.

The facts come from the TABLE_MAP (types, metadata, and with ``binlog_row_metadata=FULL`` the
names, charsets, ENUM/SET members and primary key), completed by a *schema catalogue* for
files written with ``NO_LOG`` or ``MINIMAL`` metadata (docs/spark.md)::

    {"shop.orders": {"columns": ["id", "status", "note"], "primary_key": ["id"],
                     "charsets": {"note": "utf8mb4"}, "unsigned": ["id"],
                     "members": {"status": ["new", "paid"]}}}

Text forms (one string per value, NULL is a null entry, an absent column of a partial image
is no entry): the text MariaDB's ``SELECT`` returns with ``time_zone = '+00:00'`` (integers,
DECIMAL with its scale, YEAR on 4 digits, DATE, TIME and DATETIME with the column's fraction
digits, TIMESTAMP in UTC, ENUM/SET by member names, text columns decoded from their charset),
except FLOAT/DOUBLE (the shortest text that reads back as the same number, not MariaDB's
6/17-digit ``%g``), BIT (its number), and bytes of binary columns or of columns whose charset
is unknown (``0x`` and upper-case hex, as ``mariadb-dump --hex-blob``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from fakemaster.vocabulary.columns import column_names, string_metadata, unsigned_flags
from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata
from fakemaster.vocabulary.events import TableMapEvent
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp

__all__ = [
    "BINARY",
    "Catalogue",
    "ColumnInfo",
    "TableInfo",
    "load_catalogue",
    "python_codec",
    "table_info",
]

Converter = Callable[[Any], str]
BINARY = "binary"

# MariaDB character sets -> Python codecs (MariaDB's latin1 is Windows-1252).
_CODECS = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "utf8": "utf-8",
    "latin1": "cp1252",
    "ascii": "ascii",
    "ucs2": "utf-16-be",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "cp1251": "cp1251",
    "cp1250": "cp1250",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "greek": "iso8859-7",
    "hebrew": "iso8859-8",
    "latin2": "iso8859-2",
    "latin5": "iso8859-9",
    "latin7": "iso8859-13",
    "koi8r": "koi8-r",
    "koi8u": "koi8-u",
    "sjis": "shift_jis",
    "cp932": "cp932",
    "ujis": "euc_jp",
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gbk": "gbk",
    "gb2312": "gb2312",
    "big5": "big5",
    "tis620": "tis-620",
}


def python_codec(charset: str | None) -> str | None:
    """The Python codec of a MariaDB character set; None for ``binary`` or one not known."""
    if charset is None:
        return None
    return _CODECS.get(charset.lower())


def _charset_of_collation(collation_id: int) -> str | None:
    from fakemaster.protocol.charsets import collation_by_id

    collation = collation_by_id(collation_id)
    return None if collation is None else collation.charset


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    spark_type: str  # the materialised column's type, a Spark SQL DDL type
    to_text: Converter


@dataclass(frozen=True)
class TableInfo:
    database: str
    table: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def spark_types(self) -> tuple[str, ...]:
        return tuple(c.spark_type for c in self.columns)


Catalogue = Mapping[str, Mapping[str, Any]]


def load_catalogue(text_or_path: str | None) -> dict[str, dict[str, Any]]:
    """A schema catalogue from JSON text or the path of a JSON file (None: empty)."""
    if not text_or_path:
        return {}
    text = text_or_path
    if not text.lstrip().startswith("{") and os.path.exists(text):
        with open(text, encoding="utf-8") as handle:
            text = handle.read()
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError('a schema catalogue is a JSON object: {"db.table": {...}}')
    return data


# --- text forms --------------------------------------------------------------------------


def _hex(value: Any) -> str:
    return "0x" + bytes(value).hex().upper()


_int_text: Converter = str


def _unsigned(bits: int) -> Converter:
    def convert(value: Any) -> str:
        return str(value + (1 << bits) if value < 0 else value)

    return convert


def _float_text(value: Any) -> str:
    return repr(float(value))


def _decimal_text(value: Any) -> str:
    return format(Decimal(value), "f")


def _year_text(value: Any) -> str:
    return f"{int(value):04d}"


def _date_text(value: Any) -> str:
    return str(value) if isinstance(value, Date) else f"{value}"


def _fsp_format(fsp: int) -> Converter:
    def convert(value: Any) -> str:
        if isinstance(value, Time | DateTime):
            return value.format(fsp)
        return str(value)

    return convert


def _timestamp_format(fsp: int) -> Converter:
    def convert(value: Any) -> str:
        if not isinstance(value, Timestamp):
            return str(value)
        if value.seconds == 0 and value.microsecond == 0:
            text = "0000-00-00 00:00:00"
        else:
            text = f"{value.to_datetime():%Y-%m-%d %H:%M:%S}"
        return text + (f".{value.microsecond:06d}"[: fsp + 1] if fsp else "")

    return convert


def _text(codec: str) -> Converter:
    def convert(value: Any) -> str:
        data = bytes(value)
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            return _hex(data)

    return convert


def _binary(pad: int = 0) -> Converter:
    if not pad:
        return _hex

    def convert(value: Any) -> str:
        return _hex(bytes(value).ljust(pad, b"\x00"))

    return convert


def _members(names: Sequence[str], is_set: bool) -> Converter:
    if is_set:

        def convert_set(value: Any) -> str:
            mask = int(value)
            return ",".join(m for i, m in enumerate(names) if mask >> i & 1)

        return convert_set

    def convert_enum(value: Any) -> str:
        index = int(value)
        return names[index - 1] if 1 <= index <= len(names) else ""

    return convert_enum


# --- TABLE_MAP metadata ------------------------------------------------------------------

_INTEGERS = {
    ColumnType.TINY: (8, "tinyint", "smallint"),
    ColumnType.SHORT: (16, "smallint", "int"),
    ColumnType.INT24: (24, "int", "int"),
    ColumnType.LONG: (32, "int", "bigint"),
    ColumnType.LONGLONG: (64, "bigint", "decimal(20,0)"),
}
_CHARACTER_TYPES = frozenset(
    {
        ColumnType.VARCHAR,
        ColumnType.VAR_STRING,
        ColumnType.STRING,
        ColumnType.TINY_BLOB,
        ColumnType.MEDIUM_BLOB,
        ColumnType.LONG_BLOB,
        ColumnType.BLOB,
        ColumnType.JSON,
        ColumnType.VARCHAR_COMPRESSED,
        ColumnType.BLOB_COMPRESSED,
    }
)


def _real_type(column_type: int, meta: int) -> int:
    if column_type == ColumnType.STRING:
        real, _ = string_metadata(meta)
        if real in (ColumnType.ENUM, ColumnType.SET):
            return real
    return column_type


def _metadata(table_map: TableMapEvent, kind: int) -> Any:
    for field in table_map.optional_metadata:
        if field.kind == kind and not isinstance(field.value, bytes | bytearray):
            return field.value
    return None


def _decode_names(values: Sequence[Any], charset: str | None = None) -> list[str]:
    codec = (python_codec(charset) if charset else None) or "utf-8"
    return [
        v.decode(codec, "replace") if isinstance(v, bytes | bytearray) else str(v) for v in values
    ]


def _charsets(table_map: TableMapEvent, real_types: Sequence[int]) -> list[str | None]:
    """Per column, the charset its TABLE_MAP says (None for non-character columns or when it
    says nothing)."""
    out: list[str | None] = [None] * len(real_types)
    wanted: Callable[[int], bool]
    for kinds, wanted in (
        (
            (OptionalMetadata.DEFAULT_CHARSET, OptionalMetadata.COLUMN_CHARSET),
            lambda t: t in _CHARACTER_TYPES,
        ),
        (
            (
                OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET,
                OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET,
            ),
            lambda t: t in (ColumnType.ENUM, ColumnType.SET),
        ),
    ):
        positions = [i for i, t in enumerate(real_types) if wanted(t)]
        default = _metadata(table_map, kinds[0])
        per_column = _metadata(table_map, kinds[1])
        ids: list[int | None] = [None] * len(positions)
        if default is not None:
            default_id, exceptions = default
            ids = [default_id] * len(positions)
            for index, collation in exceptions:
                if index < len(ids):
                    ids[index] = collation
        elif per_column is not None:
            ids = list(per_column)[: len(positions)] + [None] * max(
                0, len(positions) - len(per_column)
            )
        for position, collation in zip(positions, ids, strict=False):
            if collation is not None:
                out[position] = _charset_of_collation(collation) or f"#{collation}"
    return out


def _member_lists(table_map: TableMapEvent, real_types: Sequence[int]) -> list[list[str] | None]:
    """Per ENUM/SET column, its member names, decoded from the column's charset (MariaDB logs
    them in it: a latin1 ENUM's 'é' is the byte 0xe9)."""
    charsets = _charsets(table_map, real_types)
    out: list[list[str] | None] = [None] * len(real_types)
    for real, kind in (
        (ColumnType.ENUM, OptionalMetadata.ENUM_STR_VALUE),
        (ColumnType.SET, OptionalMetadata.SET_STR_VALUE),
    ):
        lists = _metadata(table_map, kind)
        if lists is None:
            continue
        positions = [i for i, t in enumerate(real_types) if t == real]
        for position, members in zip(positions, lists, strict=False):
            out[position] = _decode_names(members, charsets[position])
    return out


def _primary_key(table_map: TableMapEvent, names: Sequence[str]) -> tuple[str, ...]:
    simple = _metadata(table_map, OptionalMetadata.SIMPLE_PRIMARY_KEY)
    if simple is not None:
        return tuple(names[i] for i in simple if i < len(names))
    prefixed = _metadata(table_map, OptionalMetadata.PRIMARY_KEY_WITH_PREFIX)
    if prefixed is not None:
        return tuple(names[i] for i, _ in prefixed if i < len(names))
    return ()


def _column(
    column_type: int,
    meta: int,
    unsigned: bool,
    charset: str | None,
    members: Sequence[str] | None,
) -> tuple[str, Converter]:
    real = _real_type(column_type, meta)
    if column_type in _INTEGERS:
        bits, signed_type, unsigned_type = _INTEGERS[ColumnType(column_type)]
        return (unsigned_type, _unsigned(bits)) if unsigned else (signed_type, _int_text)
    if column_type == ColumnType.FLOAT:
        return "float", _float_text
    if column_type == ColumnType.DOUBLE:
        return "double", _float_text
    if column_type in (ColumnType.NEWDECIMAL, ColumnType.DECIMAL):
        precision, scale = meta & 0xFF, meta >> 8
        if column_type == ColumnType.NEWDECIMAL and 0 < precision <= 38:
            return f"decimal({precision},{scale})", _decimal_text
        return "string", _decimal_text
    if column_type == ColumnType.BIT:
        bits = (meta >> 8) * 8 + (meta & 0xFF)
        return ("bigint" if bits < 64 else "decimal(20,0)"), _int_text
    if column_type == ColumnType.YEAR:
        return "int", _year_text
    if column_type in (ColumnType.DATE, ColumnType.NEWDATE):
        return "date", _date_text
    if column_type in (ColumnType.TIME, ColumnType.TIME2):
        return "string", _fsp_format(meta if column_type == ColumnType.TIME2 else 0)
    if column_type in (ColumnType.DATETIME, ColumnType.DATETIME2):
        return "timestamp_ntz", _fsp_format(meta if column_type == ColumnType.DATETIME2 else 0)
    if column_type in (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2):
        return "timestamp", _timestamp_format(meta if column_type == ColumnType.TIMESTAMP2 else 0)
    if real in (ColumnType.ENUM, ColumnType.SET):
        if members is not None:
            return "string", _members(members, real == ColumnType.SET)
        return "bigint", _int_text
    if column_type == ColumnType.GEOMETRY:
        return BINARY, _binary()
    codec = python_codec(charset)
    if codec is not None:
        return "string", _text(codec)
    pad = 0
    if column_type == ColumnType.STRING and charset == "binary":
        pad = string_metadata(meta)[1]  # BINARY(n): n bytes, trailing NULs not logged
    return BINARY, _binary(pad)


def declared_mariadb_types(entry: Mapping[str, Any]) -> dict[str, str]:
    """The UUID/INET4/INET6 columns of a catalogue entry (name -> type): its ``mariadb_types``,
    and those of its ``create`` statement. The binlog logs them as BINARY(16)/BINARY(4):
    only a schema tells them apart."""
    declared: dict[str, str] = {}
    create = entry.get("create")
    if create:
        declared.update(_fixed_binary_columns(str(create)))
    for name, kind in dict(entry.get("mariadb_types", {})).items():
        if str(kind).lower() not in FIXED_BINARY_TYPES:
            raise ValueError(
                f"mariadb_types: {name}: {kind!r} is not one of {', '.join(FIXED_BINARY_TYPES)}"
            )
        declared[str(name)] = str(kind).lower()
    return declared


@lru_cache(maxsize=256)
def _fixed_binary_columns(create: str) -> tuple[tuple[str, str], ...]:
    from scenarios.create_table import parse_create_table

    try:
        table = parse_create_table(create, "catalogue")
    except ValueError:  # a CREATE the model does not take: its other columns say nothing here
        return ()
    return tuple((c.name, c.type) for c in table.columns if c.type in FIXED_BINARY_TYPES)


def _mariadb_type_column(
    qualified: str, name: str, kind: str, column_type: int, meta: int
) -> tuple[str, Converter]:
    value_type = FIXED_BINARY_TYPES[kind]
    if column_type != ColumnType.STRING or string_metadata(meta) != (0xFE, value_type.LENGTH):
        raise ValueError(
            f"{qualified}.{name}: the catalogue says {kind.upper()}, the TABLE_MAP a column of"
            f" type {column_type} metadata {meta} (a {kind.upper()} is logged as"
            f" BINARY({value_type.LENGTH}))"
        )

    def convert(value: Any) -> str:
        return value_type.from_logged(bytes(value)).text()

    return "string", convert


def table_info(table_map: TableMapEvent, catalogue: Catalogue | None = None) -> TableInfo:
    """The table a TABLE_MAP describes, its gaps (no names, charsets, key) filled from the
    catalogue entry ``database.table`` when there is one."""
    qualified = f"{table_map.database}.{table_map.table}"
    entry: Mapping[str, Any] = (catalogue or {}).get(qualified, {})
    width = len(table_map.column_types)
    names = list(column_names(table_map)) or list(entry.get("columns", ()))
    if len(names) != width:
        if names:
            raise ValueError(
                f"{qualified}: the TABLE_MAP has {width} columns, the names list {len(names)}"
            )
        names = [f"@{i + 1}" for i in range(width)]  # as mariadb-binlog -v names them
    real_types = [
        _real_type(t, m) for t, m in zip(table_map.column_types, table_map.column_meta, strict=True)
    ]
    charsets = _charsets(table_map, real_types)
    members = _member_lists(table_map, real_types)
    unsigned = list(unsigned_flags(table_map))
    given_charsets: Mapping[str, str] = entry.get("charsets", {})
    given_members: Mapping[str, Sequence[str]] = entry.get("members", {})
    given_unsigned = set(entry.get("unsigned", ()))
    declared = declared_mariadb_types(entry)
    columns = []
    for position, name in enumerate(names):
        charset = charsets[position] or given_charsets.get(name)
        member_list = members[position]
        if member_list is None and name in given_members:
            member_list = list(given_members[name])
        column_type, meta = table_map.column_types[position], table_map.column_meta[position]
        if name in declared:
            spark_type, convert = _mariadb_type_column(
                qualified, name, declared[name], column_type, meta
            )
        else:
            spark_type, convert = _column(
                column_type,
                meta,
                unsigned[position] or name in given_unsigned,
                charset,
                member_list,
            )
        columns.append(ColumnInfo(name, spark_type, convert))
    key = _primary_key(table_map, names) or tuple(entry.get("primary_key", ()))
    return TableInfo(table_map.database, table_map.table, tuple(columns), key)
