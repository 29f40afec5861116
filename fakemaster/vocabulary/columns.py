"""What the binlog says about a column: the facts of each column type and its TABLE_MAP
metadata, shared by the row encoder and decoder.

Column metadata is kept as the little-endian value of its 0, 1 or 2 bytes (``column_meta`` of
TableMapEvent): which types have how many bytes of it, how a STRING column folds its real type
and length into them, how many bytes a DECIMAL, BIT or fractional-second value takes, and which
columns have a bit in the SIGNEDNESS optional metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import TableMapEvent

__all__ = [
    "column_names",
    "member_counts",
    "BLOB_TYPES",
    "DIG2BYTES",
    "FRAC_BYTES",
    "FRAC_UNIT",
    "HIRES_DATETIME_BYTES",
    "HIRES_DATETIME_LIMIT",
    "HIRES_TIME_BYTES",
    "HIRES_TIME_HOURS",
    "HIRES_TIME_ZERO",
    "HIRES_TYPES",
    "INTEGER_SIZES",
    "MAX_FSP",
    "METADATA_SIZE",
    "MICROSECONDS",
    "OLD_DATETIME_LIMIT",
    "NUMERIC_TYPES",
    "STRING_REAL_CHAR",
    "STRING_REAL_ENUM",
    "STRING_REAL_SET",
    "METADATA_FORMS",
    "TIME2_HOURS",
    "TIMESTAMP_MAX_SECONDS",
    "VARCHAR_TYPES",
    "MetadataForm",
    "bit_size",
    "decimal_groups",
    "decimal_size",
    "frac_bytes",
    "schema_precisions",
    "string_meta_value",
    "string_metadata",
    "type_name",
    "unsigned_flags",
    "with_precisions",
]

# Bytes of TABLE_MAP metadata per column type (MariaDB table_def; MySQL's type table).
METADATA_SIZE: dict[int, int] = {
    ColumnType.DECIMAL: 0,
    ColumnType.TINY: 0,
    ColumnType.SHORT: 0,
    ColumnType.LONG: 0,
    ColumnType.FLOAT: 1,
    ColumnType.DOUBLE: 1,
    ColumnType.NULL: 0,
    ColumnType.TIMESTAMP: 0,
    ColumnType.LONGLONG: 0,
    ColumnType.INT24: 0,
    ColumnType.DATE: 0,
    ColumnType.TIME: 0,
    ColumnType.DATETIME: 0,
    ColumnType.YEAR: 0,
    ColumnType.NEWDATE: 0,
    ColumnType.VARCHAR: 2,
    ColumnType.BIT: 2,
    ColumnType.TIMESTAMP2: 1,
    ColumnType.DATETIME2: 1,
    ColumnType.TIME2: 1,
    ColumnType.BLOB_COMPRESSED: 1,
    ColumnType.VARCHAR_COMPRESSED: 2,
    ColumnType.JSON: 1,
    ColumnType.NEWDECIMAL: 2,
    ColumnType.ENUM: 2,
    ColumnType.SET: 2,
    ColumnType.TINY_BLOB: 1,
    ColumnType.MEDIUM_BLOB: 1,
    ColumnType.LONG_BLOB: 1,
    ColumnType.BLOB: 1,
    ColumnType.VAR_STRING: 2,
    ColumnType.STRING: 2,
    ColumnType.GEOMETRY: 1,
}

# Columns that have a bit in the SIGNEDNESS optional metadata (MariaDB counts YEAR; BIT is not).
NUMERIC_TYPES = frozenset(
    {
        ColumnType.TINY,
        ColumnType.SHORT,
        ColumnType.INT24,
        ColumnType.LONG,
        ColumnType.LONGLONG,
        ColumnType.FLOAT,
        ColumnType.DOUBLE,
        ColumnType.NEWDECIMAL,
        ColumnType.DECIMAL,
        ColumnType.YEAR,
    }
)

INTEGER_SIZES: dict[int, int] = {
    ColumnType.TINY: 1,
    ColumnType.SHORT: 2,
    ColumnType.INT24: 3,
    ColumnType.LONG: 4,
    ColumnType.LONGLONG: 8,
}

BLOB_TYPES = frozenset(
    {
        ColumnType.TINY_BLOB,
        ColumnType.MEDIUM_BLOB,
        ColumnType.LONG_BLOB,
        ColumnType.BLOB,
        ColumnType.GEOMETRY,
        ColumnType.JSON,
        ColumnType.BLOB_COMPRESSED,
    }
)
VARCHAR_TYPES = frozenset(
    {ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.VARCHAR_COMPRESSED}
)

STRING_REAL_CHAR = 0xFE
STRING_REAL_ENUM = 0xF7
STRING_REAL_SET = 0xF8

DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
MAX_FSP = 6
# Bytes of the fractional seconds by precision (fsp), and the microseconds one stored unit is
# worth by that byte count: fsp 1 stores .7 as 70, not 7.
FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)
FRAC_UNIT = (0, 10000, 100, 1)


# MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n), n > 0 (still made with
# mysql56_temporal_format=OFF): binlogged under the old type codes with no metadata, so their
# precision -- and thereby their length -- comes from the schema, given as the column's ``meta``.
HIRES_TYPES = frozenset({ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP})
HIRES_TIME_BYTES = (3, 4, 4, 5, 5, 5, 6)
HIRES_DATETIME_BYTES = (5, 6, 6, 7, 7, 7, 8)
# TIME(n) values are stored with this offset added, so that the bytes sort like the values.
HIRES_TIME_ZERO = tuple((838 * 3600 + 59 * 60 + 59 + 1) * 10**fsp for fsp in range(MAX_FSP + 1))

# Where MariaDB 10.11 reads a temporal value's bytes as another value than the bytes spell
# (sql/compat56.cc, sql/field.cc; each checked on a real replica by
# tests/integration/test_temporal_edges.py). The encoder refuses the values beyond these limits
# and the decoder their bytes, so that both mean what the server reads.
#
# A fraction of a second is below MICROSECONDS: MariaDB reads DATETIME2 and TIMESTAMP2(3..6)
# fraction bytes as signed (a top bit borrows a second), keeps a TIMESTAMP's fraction below a
# second (a replica clamps it or refuses the row) and reads a DATETIME2/TIME2 one of a second or
# more as a value that its functions disagree on.
MICROSECONDS = 1_000_000
# TIME2 hours: 10 bits, ``(hms >> 12) % (1 << 10)``; the bit above them is ignored.
TIME2_HOURS = 1 << 10
# MariaDB 5.3 TIME(n) hours: unpack_time() splits them into hour/day/month (24 * 32 * 13) and
# drops the year, so they are read modulo 9984.
HIRES_TIME_HOURS = 24 * 32 * 13
# TIMESTAMP seconds: a replica keeps 2038-01-19 03:14:07 at most (beyond, it clamps TIMESTAMP2
# and refuses the row of a TIMESTAMP).
TIMESTAMP_MAX_SECONDS = 0x7FFFFFFF
# Old DATETIME (YYYYMMDDhhmmss as a number): read as signed 64 bits and its date part
# ``(uint32) (number / 1000000)``: a number at or beyond this is read as another date.
OLD_DATETIME_LIMIT = (1 << 32) * 10**6
# MariaDB 5.3 DATETIME(n), by fsp: the stored number times 10 ** (6 - fsp) is a signed 64-bit
# microsecond count, so a number at or beyond this wraps (fsp 1, 3 and 6 have the bytes for it).
HIRES_DATETIME_LIMIT = tuple(
    ((1 << 63) - 1) // 10 ** (MAX_FSP - fsp) + 1 for fsp in range(MAX_FSP + 1)
)


def type_name(column_type: int) -> str:
    try:
        return ColumnType(column_type).name
    except ValueError:
        return f"type {column_type}"


def string_metadata(meta: int) -> tuple[int, int]:
    """``(real_type, max_len)`` of a STRING column: lengths above 255 fold two bits into byte 0."""
    byte0 = meta & 0xFF
    byte1 = meta >> 8
    if byte0 & 0x30 != 0x30:
        return byte0 | 0x30, (((byte0 & 0x30) ^ 0x30) << 4) | byte1
    return byte0, byte1


def string_meta_value(real_type: int, max_len: int) -> int:
    """The metadata of a STRING column (the inverse of :func:`string_metadata`)."""
    byte0 = real_type ^ ((max_len & 0x300) >> 4)
    return byte0 | (max_len & 0xFF) << 8


def decimal_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (``decimal_bin_size``)."""
    intg = precision - scale
    return intg // 9 * 4 + DIG2BYTES[intg % 9] + scale // 9 * 4 + DIG2BYTES[scale % 9]


def decimal_groups(precision: int, scale: int) -> tuple[tuple[int, int], ...]:
    """``(bytes, digits)`` of each big-endian digit group, most significant first."""
    intg = precision - scale
    groups: list[tuple[int, int]] = []
    if intg % 9:
        groups.append((DIG2BYTES[intg % 9], intg % 9))
    groups += [(4, 9)] * (intg // 9 + scale // 9)
    if scale % 9:
        groups.append((DIG2BYTES[scale % 9], scale % 9))
    return tuple(groups)


def bit_size(meta: int) -> int:
    """Bytes of a BIT value: metadata byte 0 = bits % 8, byte 1 = bits // 8."""
    return (meta >> 8) + (1 if meta & 0xFF else 0)


def frac_bytes(fsp: int) -> int:
    return FRAC_BYTES[fsp]


def unsigned_flags(table_map: TableMapEvent) -> tuple[bool, ...]:
    """Per column, whether the SIGNEDNESS optional metadata marks it unsigned."""
    bits: Sequence[bool] | None = None
    for field in table_map.optional_metadata:
        if field.kind == OptionalMetadata.SIGNEDNESS:
            value = field.value
            if isinstance(value, (bytes, bytearray)):
                # Kept raw because it is not canonical; still read its MSB-first bits.
                bits = [bool(value[k >> 3] & (0x80 >> (k & 7))) for k in range(len(value) * 8)]
            else:
                bits = value
            break
    if not bits:
        return (False,) * len(table_map.column_types)
    flags: list[bool] = []
    numeric_index = 0
    for column_type in table_map.column_types:
        if column_type in NUMERIC_TYPES:
            flags.append(numeric_index < len(bits) and bool(bits[numeric_index]))
            numeric_index += 1
        else:
            flags.append(False)
    return tuple(flags)


def with_precisions(
    column_types: Sequence[int], column_meta: Sequence[int], precisions: Sequence[int]
) -> tuple[int, ...]:
    """Column metadata with the schema's precisions put in for old TIME/DATETIME/TIMESTAMP
    columns (their TABLE_MAP metadata is empty; a precision > 0 means the MariaDB 5.3 format)."""
    return tuple(
        precisions[index]
        if column_type in HIRES_TYPES and index < len(precisions)
        else column_meta[index]
        for index, column_type in enumerate(column_types)
    )


def schema_precisions(ctx: BinlogContext, table_map: TableMapEvent) -> tuple[int, ...] | None:
    """The fractional-second precisions a stream's context knows for ``table_map``'s table.

    The binlog alone cannot tell a MariaDB 5.3 TIME(3) from a TIME: they come from the schema
    through ``ctx.temporal_precisions``.
    """
    known = ctx.temporal_precisions
    if not known:
        return None
    found = known.get((table_map.database, table_map.table))
    return None if found is None else tuple(found)


class MetadataForm(Enum):
    """How the value of a TABLE_MAP optional metadata field is laid out (packed = MySQL's
    length-encoded integer)."""

    INTS = "packed integers (one per column it describes)"
    INT_PAIRS = "packed (column index, prefix length) pairs"
    DEFAULT_CHARSET = "a packed default charset, then packed (column index, charset) pairs"
    STRINGS = "packed-length strings, one per column"
    STRING_LISTS = "per column, a packed count and that many packed-length strings"


# The form of each optional metadata field that has one (SIGNEDNESS and COLUMN_VISIBILITY are
# bitmaps over the columns, read with the column types).
METADATA_FORMS: dict[int, MetadataForm] = {
    OptionalMetadata.DEFAULT_CHARSET: MetadataForm.DEFAULT_CHARSET,
    OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET: MetadataForm.DEFAULT_CHARSET,
    OptionalMetadata.COLUMN_CHARSET: MetadataForm.INTS,
    OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET: MetadataForm.INTS,
    OptionalMetadata.GEOMETRY_TYPE: MetadataForm.INTS,
    OptionalMetadata.SIMPLE_PRIMARY_KEY: MetadataForm.INTS,
    OptionalMetadata.PRIMARY_KEY_WITH_PREFIX: MetadataForm.INT_PAIRS,
    OptionalMetadata.COLUMN_NAME: MetadataForm.STRINGS,
    OptionalMetadata.SET_STR_VALUE: MetadataForm.STRING_LISTS,
    OptionalMetadata.ENUM_STR_VALUE: MetadataForm.STRING_LISTS,
}


# --- what a TABLE_MAP's optional metadata says about single columns ------------------------
# (binlog_row_metadata=FULL writes both: MariaDB 10.11 writes one ENUM_STR_VALUE list per ENUM
# column and one SET_STR_VALUE list per SET column, each in table order.)

# The optional metadata field listing the members of each real column type.
_MEMBER_LISTS: dict[int, int] = {
    ColumnType.ENUM: OptionalMetadata.ENUM_STR_VALUE,
    ColumnType.SET: OptionalMetadata.SET_STR_VALUE,
}
_LIST_KINDS = frozenset(_MEMBER_LISTS.values())


def column_names(table_map: TableMapEvent) -> tuple[str, ...]:
    """The column names the TABLE_MAP lists (COLUMN_NAME), or () when it lists none."""
    for field in table_map.optional_metadata:
        if field.kind == OptionalMetadata.COLUMN_NAME:
            if isinstance(field.value, (bytes, bytearray)):
                return ()  # kept as raw bytes: not a list of names
            try:
                return tuple(
                    name.decode("utf-8", "replace")
                    if isinstance(name, (bytes, bytearray))
                    else str(name)
                    for name in field.value
                )
            except TypeError:
                return ()
    return ()


def member_counts(table_map: TableMapEvent) -> tuple[int | None, ...] | None:
    """Per column, the number of members the TABLE_MAP lists for an ENUM or SET column (None
    for other columns, and for those it has no list for); None when it lists none at all."""
    lists: dict[int, Any] = {}
    for field in table_map.optional_metadata:
        if field.kind in _LIST_KINDS and not isinstance(field.value, (bytes, bytearray)):
            lists[field.kind] = field.value
    if not lists:
        return None
    counts: list[int | None] = []
    seen: dict[int, int] = dict.fromkeys(_MEMBER_LISTS, 0)
    for column_type, meta in zip(table_map.column_types, table_map.column_meta, strict=False):
        real_type = meta & 0xFF if column_type == ColumnType.STRING else column_type
        kind = _MEMBER_LISTS.get(real_type)
        if kind is None:
            counts.append(None)
            continue
        index = seen[real_type]
        seen[real_type] = index + 1
        try:
            counts.append(len(lists[kind][index]))
        except (KeyError, IndexError, TypeError):
            counts.append(None)  # no list for this column: nothing to check against
    return tuple(counts)
