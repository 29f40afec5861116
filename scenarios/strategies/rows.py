"""Hypothesis strategies for row-based replication: column definitions with their TABLE_MAP
metadata, table maps (optionally with optional metadata), column values valid for each column,
and WRITE/UPDATE/DELETE rows events (full and partial images, v1/v2, compressed).

    column_specs()              one ColumnSpec (type, metadata, signedness, charset, members...)
    table_maps()                a TableMapEvent built from column specs
    values_for(type, meta, unsigned)
                                non-NULL values the decoder gives back unchanged
    rows_events_for(table_map)  a rows event of any kind for ``table_map``

Values are drawn in the form the decoder returns (signed or unsigned integers by the column's
SIGNEDNESS, ``Decimal`` with exactly ``scale`` fraction digits, fractional seconds within the
column's precision, no negative-zero TIME, ENUM/SET values within the members a TABLE_MAP
lists), so ``decode(encode(x)) == x``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache, lru_cache
from typing import Any

from hypothesis import strategies as st

from fakemaster.vocabulary.columns import (
    BLOB_TYPES,
    NUMERIC_TYPES,
    STRING_REAL_CHAR,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    VARCHAR_TYPES,
    member_counts,
    string_meta_value,
    string_metadata,
    unsigned_flags,
)
from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata, RowsFlag, TableMapFlag
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp

# A value strategy draws at most this many bytes for a string column, unless asked for more.
DEFAULT_MAX_STRING = 300

# Collations seen on MariaDB 10.11: latin1, utf8mb3/utf8mb4 general and bin, binary, and the
# UCA-14 ids above 255 (packed as fc xx xx).
COLLATIONS = (8, 33, 45, 46, 63, 83, 224, 2304, 2305)


@dataclass(frozen=True)
class ColumnSpec:
    """One column as a table map shows it, plus what optional metadata would say of it."""

    column_type: int
    meta: int = 0
    unsigned: bool = False
    nullable: bool = True
    name: bytes = b"c"
    collation: int = 63
    members: tuple[bytes, ...] = ()  # ENUM/SET member names
    geometry_type: int = 0

    @property
    def real_type(self) -> int:
        """ENUM/SET/CHAR for a STRING column (from its metadata), else the column type."""
        if self.column_type != ColumnType.STRING:
            return self.column_type
        if self.meta & 0xFF in (STRING_REAL_ENUM, STRING_REAL_SET):
            return self.meta & 0xFF
        return string_metadata(self.meta)[0]

    @property
    def is_enum_or_set(self) -> bool:
        return self.real_type in (STRING_REAL_ENUM, STRING_REAL_SET)

    @property
    def is_character(self) -> bool:
        """Counted among the character columns of the charset TLVs (MariaDB 10.11 counts
        BINARY, BLOB, GEOMETRY and the fixed binary types too)."""
        if self.column_type == ColumnType.STRING:
            return not self.is_enum_or_set
        return self.column_type in VARCHAR_TYPES or self.column_type in BLOB_TYPES


u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)

_INTEGER_TYPES = (
    ColumnType.TINY,
    ColumnType.SHORT,
    ColumnType.INT24,
    ColumnType.LONG,
    ColumnType.LONGLONG,
)


def _decimal_meta() -> st.SearchStrategy[int]:
    edges = st.sampled_from([(65, 30), (38, 38), (65, 38), (65, 0), (14, 4), (11, 4), (10, 0)])
    drawn = st.integers(1, 65).flatmap(
        lambda precision: st.tuples(st.just(precision), st.integers(0, min(precision, 38)))
    )
    return st.one_of(edges, drawn).map(lambda ps: ps[0] | ps[1] << 8)


def _bit_meta(bits: int) -> int:
    return bits % 8 | (bits // 8) << 8


@st.composite
def _members(draw: st.DrawFn, low: int, high: int) -> tuple[bytes, ...]:
    count = draw(st.integers(low, high))
    return tuple(b"m%d" % index for index in range(count))


@st.composite
def _enum_spec(draw: st.DrawFn) -> ColumnSpec:
    members = draw(st.one_of(_members(1, 20), _members(256, 300)))
    pack_length = 1 if len(members) <= 255 else 2
    return ColumnSpec(
        ColumnType.STRING,
        STRING_REAL_ENUM | pack_length << 8,
        members=members,
        collation=draw(st.sampled_from(COLLATIONS)),
    )


@st.composite
def _set_spec(draw: st.DrawFn) -> ColumnSpec:
    members = draw(_members(1, 64))
    pack_length = (len(members) + 7) // 8
    if pack_length > 4:
        pack_length = 8
    return ColumnSpec(
        ColumnType.STRING,
        STRING_REAL_SET | pack_length << 8,
        members=members,
        collation=draw(st.sampled_from(COLLATIONS)),
    )


# Strategies are built once per argument tuple: building them inside draws is what costs.
@cache
def column_specs(include_mysql: bool = True) -> st.SearchStrategy[ColumnSpec]:
    """Any column a MariaDB 10.11 table can have (and MySQL JSON when ``include_mysql``)."""
    collations = st.sampled_from(COLLATIONS)
    families = [
        st.builds(ColumnSpec, st.sampled_from(_INTEGER_TYPES), st.just(0), st.booleans()),
        st.builds(ColumnSpec, st.just(ColumnType.FLOAT), st.just(4), st.booleans()),
        st.builds(ColumnSpec, st.just(ColumnType.DOUBLE), st.just(8), st.booleans()),
        st.builds(ColumnSpec, st.just(ColumnType.NEWDECIMAL), _decimal_meta(), st.booleans()),
        st.builds(ColumnSpec, st.just(ColumnType.YEAR), st.just(0), st.just(True)),
        st.builds(ColumnSpec, st.just(ColumnType.BIT), st.integers(1, 64).map(_bit_meta)),
        st.builds(
            ColumnSpec,
            st.sampled_from(
                [ColumnType.DATE, ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP]
            ),
        ),
        st.builds(
            ColumnSpec,
            st.sampled_from([ColumnType.DATETIME2, ColumnType.TIMESTAMP2, ColumnType.TIME2]),
            st.integers(0, 6),
        ),
        st.builds(
            ColumnSpec,
            st.just(ColumnType.STRING),
            st.one_of(st.integers(0, 1020), st.sampled_from([255, 256, 1020])).map(
                lambda max_len: string_meta_value(STRING_REAL_CHAR, max_len)
            ),
            collation=collations,
        ),
        _enum_spec(),
        _set_spec(),
        st.builds(
            ColumnSpec,
            st.sampled_from(
                [ColumnType.VARCHAR, ColumnType.VARCHAR, ColumnType.VARCHAR_COMPRESSED]
            ),
            st.one_of(st.integers(1, 300), st.sampled_from([255, 256, 65535])),
            collation=collations,
        ),
        st.builds(
            ColumnSpec,
            st.sampled_from([ColumnType.BLOB, ColumnType.BLOB_COMPRESSED]),
            st.integers(1, 4),
            collation=collations,
        ),
        st.builds(
            ColumnSpec,
            st.just(ColumnType.GEOMETRY),
            st.just(4),
            geometry_type=st.integers(0, 7),
        ),
    ]
    if include_mysql:
        families.append(st.builds(ColumnSpec, st.just(ColumnType.JSON), st.just(4)))
    return st.one_of(families)


# --- values -------------------------------------------------------------------------------


def _fraction(fsp: int) -> st.SearchStrategy[int]:
    if fsp == 0:
        return st.just(0)
    step = 10 ** (6 - fsp)
    return st.integers(0, 10**fsp - 1).map(lambda units: units * step)


def _decimals(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    limit = 10**precision - 1
    digits = st.one_of(st.integers(0, limit), st.sampled_from([0, 1, limit]))
    return st.builds(
        lambda negative, number: Decimal(f"{'-' if negative else ''}{number}E-{scale}"),
        st.booleans(),
        digits,
    )


def _times(fsp: int, hours: int = 838) -> st.SearchStrategy[Time]:
    return st.builds(
        Time,
        st.booleans(),
        st.integers(0, hours),
        st.integers(0, 59),
        st.integers(0, 59),
        _fraction(fsp),
    ).filter(lambda t: not t.negative or any(t[1:]))


def _dates() -> st.SearchStrategy[Date]:
    return st.builds(Date, st.integers(0, 9999), st.integers(0, 12), st.integers(0, 31))


def _datetimes(fsp: int) -> st.SearchStrategy[DateTime]:
    return st.builds(
        DateTime,
        st.integers(0, 9999),
        st.integers(0, 12),
        st.integers(0, 31),
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
        _fraction(fsp),
    )


def _integers(size: int, unsigned: bool) -> st.SearchStrategy[int]:
    bits = 8 * size
    low, high = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return st.one_of(st.integers(low, high), st.sampled_from([low, high, 0, -1 if low else 1]))


@lru_cache(maxsize=4096)
def values_for(
    column_type: int,
    meta: int,
    unsigned: bool = False,
    max_string: int = DEFAULT_MAX_STRING,
    members: int | None = None,
) -> st.SearchStrategy[Any]:
    """Non-NULL values of one column, as the decoder returns them (``members``: how many
    members an ENUM/SET column's TABLE_MAP lists)."""
    sizes: dict[int, int] = {
        ColumnType.TINY: 1,
        ColumnType.SHORT: 2,
        ColumnType.INT24: 3,
        ColumnType.LONG: 4,
        ColumnType.LONGLONG: 8,
    }
    if column_type in sizes:
        return _integers(sizes[column_type], unsigned)
    if column_type == ColumnType.FLOAT:
        return st.floats(width=32, allow_nan=False)
    if column_type == ColumnType.DOUBLE:
        return st.floats(allow_nan=False)
    if column_type == ColumnType.NEWDECIMAL:
        return _decimals(meta & 0xFF, meta >> 8)
    if column_type == ColumnType.YEAR:
        return st.one_of(st.just(0), st.integers(1901, 2155))
    if column_type == ColumnType.BIT:
        bits = (meta >> 8) * 8 + (meta & 0xFF)
        return st.one_of(st.integers(0, (1 << bits) - 1), st.just((1 << bits) - 1))
    if column_type == ColumnType.DATE:
        return _dates()
    # For the old temporal types ``meta`` is the schema's precision (MariaDB 5.3 format if > 0).
    if column_type == ColumnType.TIME:
        return _times(meta)
    if column_type == ColumnType.DATETIME:
        return _datetimes(meta)
    if column_type == ColumnType.TIMESTAMP:
        return st.builds(
            lambda seconds, microsecond: Timestamp(seconds, microsecond),
            st.integers(0, 0x7FFFFFFF),  # a replica keeps 2038-01-19 03:14:07 at most
            _fraction(meta),
        )
    if column_type == ColumnType.DATETIME2:
        return _datetimes(meta)
    if column_type == ColumnType.TIMESTAMP2:
        return st.builds(Timestamp, st.integers(0, 0x7FFFFFFF), _fraction(meta))
    if column_type == ColumnType.TIME2:
        return _times(meta)
    if column_type == ColumnType.STRING:
        byte0 = meta & 0xFF
        if byte0 in (STRING_REAL_ENUM, STRING_REAL_SET):
            highest = (1 << (8 * (meta >> 8))) - 1
            if members is not None:
                # ENUM index 0 is the server's '' for an invalid value.
                limit = members if byte0 == STRING_REAL_ENUM else (1 << members) - 1
                highest = min(highest, limit)
            return st.integers(0, highest)
        _, max_len = string_metadata(meta)
        return st.binary(max_size=min(max_len, max_string))
    if column_type in VARCHAR_TYPES:
        return st.binary(max_size=min(meta, max_string))
    if column_type in BLOB_TYPES:
        return st.binary(max_size=min((1 << (8 * meta)) - 1, max_string))
    raise ValueError(f"no value strategy for column type {column_type}")


# --- table maps ---------------------------------------------------------------------------


def _default_charset(collations: list[int]) -> Any:
    default = max(sorted(set(collations)), key=collations.count)
    return (
        default,
        tuple((index, c) for index, c in enumerate(collations) if c != default),
    )


def _charset_field(collations: list[int], default_kind: int, column_kind: int) -> MetadataField:
    # The server's choice: per-column list iff it is shorter than default + exceptions.
    with_default = _default_charset(collations)
    if len(collations) < 1 + 2 * len(with_default[1]):
        return MetadataField(column_kind, tuple(collations))
    return MetadataField(default_kind, with_default)


def optional_metadata_for(specs: list[ColumnSpec], full: bool) -> tuple[MetadataField, ...]:
    """The optional metadata MariaDB writes with binlog_row_metadata MINIMAL or FULL."""
    fields = []
    signedness = tuple(spec.unsigned for spec in specs if spec.column_type in NUMERIC_TYPES)
    if signedness:
        fields.append(MetadataField(OptionalMetadata.SIGNEDNESS, signedness))
    characters = [spec.collation for spec in specs if spec.is_character]
    if characters:
        fields.append(
            _charset_field(
                characters, OptionalMetadata.DEFAULT_CHARSET, OptionalMetadata.COLUMN_CHARSET
            )
        )
    geometries = tuple(s.geometry_type for s in specs if s.column_type == ColumnType.GEOMETRY)
    if geometries:
        fields.append(MetadataField(OptionalMetadata.GEOMETRY_TYPE, geometries))
    if not full:
        return tuple(fields)
    fields.append(MetadataField(OptionalMetadata.COLUMN_NAME, tuple(s.name for s in specs)))
    enum_sets = [spec for spec in specs if spec.is_enum_or_set]
    if enum_sets:
        fields.append(
            _charset_field(
                [spec.collation for spec in enum_sets],
                OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET,
                OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET,
            )
        )
    sets = tuple(s.members for s in enum_sets if s.real_type == STRING_REAL_SET)
    if sets:
        fields.append(MetadataField(OptionalMetadata.SET_STR_VALUE, sets))
    enums = tuple(s.members for s in enum_sets if s.real_type == STRING_REAL_ENUM)
    if enums:
        fields.append(MetadataField(OptionalMetadata.ENUM_STR_VALUE, enums))
    return tuple(fields)


_names = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    max_size=20,
)


@st.composite
def _extra_fields(draw: st.DrawFn, specs: list[ColumnSpec]) -> list[MetadataField]:
    """Fields a test may add: a primary key, and kinds the codec keeps as raw bytes."""
    extra = []
    count = len(specs)
    key = draw(st.lists(st.integers(0, count - 1), unique=True, max_size=3))
    if key:
        if draw(st.booleans()):
            extra.append(MetadataField(OptionalMetadata.SIMPLE_PRIMARY_KEY, tuple(key)))
        else:
            prefixes = tuple((column, draw(st.integers(0, 300))) for column in key)
            extra.append(MetadataField(OptionalMetadata.PRIMARY_KEY_WITH_PREFIX, prefixes))
    if draw(st.booleans()):
        kind = draw(st.sampled_from([OptionalMetadata.COLUMN_VISIBILITY, 13, 200, 255]))
        extra.append(MetadataField(kind, draw(st.binary(max_size=300))))
    return extra


@st.composite
def table_maps(
    draw: st.DrawFn,
    min_columns: int = 1,
    max_columns: int = 12,
    specs: st.SearchStrategy[ColumnSpec] | None = None,
    max_table_id: int = (1 << 48) - 1,
) -> TableMapEvent:
    """A TABLE_MAP of random columns, with no, MINIMAL or FULL optional metadata."""
    column_strategy = column_specs() if specs is None else specs
    columns = draw(st.lists(column_strategy, min_size=min_columns, max_size=max_columns))
    columns = [
        ColumnSpec(
            spec.column_type,
            spec.meta,
            spec.unsigned,
            draw(st.booleans()),
            b"c%d" % index,
            spec.collation,
            spec.members,
            spec.geometry_type,
        )
        for index, spec in enumerate(columns)
    ]
    level = draw(st.sampled_from(["none", "minimal", "full"]))
    optional: tuple[MetadataField, ...] = ()
    if level != "none":
        optional = optional_metadata_for(columns, full=level == "full")
        if level == "full":
            optional += tuple(draw(_extra_fields(columns)))
    return TableMapEvent(
        timestamp=draw(st.integers(0, 0xFFFFFFFF)),
        table_id=draw(st.one_of(st.integers(0, max_table_id), st.just(max_table_id))),
        table_flags=draw(
            st.one_of(
                st.just(TableMapFlag.BIT_LEN_EXACT),
                st.just(TableMapFlag.BIT_LEN_EXACT | TableMapFlag.HAS_TRIGGERS),
                u16,
            )
        ),
        database=draw(_names),
        table=draw(_names),
        column_types=tuple(spec.column_type for spec in columns),
        column_meta=tuple(spec.meta for spec in columns),
        nullable=tuple(spec.nullable for spec in columns),
        optional_metadata=optional,
    )


# --- rows events --------------------------------------------------------------------------


@st.composite
def _present_bitmap(draw: st.DrawFn, width: int, partial: bool) -> bytes:
    size = (width + 7) >> 3
    if partial:
        mask = draw(st.integers(1, (1 << width) - 1)) if width else 0
    else:
        mask = (1 << width) - 1
    # The server writes zero padding bits; others must be kept as they came.
    padding = draw(st.one_of(st.just(0), st.integers(0, (1 << (8 * size - width)) - 1)))
    return (mask | padding << width).to_bytes(size, "little")


def images_for(
    table_map: TableMapEvent,
    present: bytes,
    width: int | None = None,
    max_string: int = DEFAULT_MAX_STRING,
) -> st.SearchStrategy[tuple[Any, ...]]:
    """Row images (full-width tuples) with a value, None or ABSENT per column."""
    width = len(table_map.column_types) if width is None else width
    mask = int.from_bytes(present, "little")
    unsigned = unsigned_flags(table_map)
    members = member_counts(table_map) or (None,) * len(table_map.column_types)
    columns = []
    for column in range(width):
        if not mask >> column & 1:
            columns.append(st.just(ABSENT))
            continue
        values = values_for(
            table_map.column_types[column],
            table_map.column_meta[column],
            unsigned[column],
            max_string,
            members[column],
        )
        if table_map.nullable[column]:
            values = st.one_of(st.none(), values)
        columns.append(values)
    return st.tuples(*columns)


_ROWS_FLAGS = st.one_of(
    st.sampled_from(
        [
            0,
            RowsFlag.STMT_END,
            RowsFlag.STMT_END | RowsFlag.NO_FOREIGN_KEY_CHECKS | RowsFlag.RELAXED_UNIQUE_CHECKS,
            RowsFlag.NO_CHECK_CONSTRAINT_CHECKS,
            RowsFlag.COMPLETE_ROWS,
        ]
    ),
    u16,
)

# MySQL 8 partition info: tag 1, partition id (and source partition id for UPDATE).
_EXTRA_DATA = st.one_of(
    st.just(b""),
    st.builds(lambda pid: b"\x01" + pid.to_bytes(2, "little"), u16),
    st.binary(max_size=20),
)


@st.composite
def rows_events_for(
    draw: st.DrawFn,
    table_map: TableMapEvent,
    kinds: tuple[str, ...] = ("write", "update", "delete"),
    versions: tuple[int, ...] = (1, 2),
    compressed: st.SearchStrategy[bool] | None = None,
    max_rows: int = 4,
    max_string: int = DEFAULT_MAX_STRING,
) -> RowsEvent:
    """A WRITE/UPDATE/DELETE rows event of ``table_map``'s table (full or partial images)."""
    kind = draw(st.sampled_from(kinds))
    version = draw(st.sampled_from(versions))
    width = len(table_map.column_types)
    present = draw(_present_bitmap(width, partial=draw(st.booleans())))
    # A compressed rows area is never empty; rows without columns take no bytes at all.
    is_compressed = width > 0 and draw(st.booleans() if compressed is None else compressed)
    min_rows = 1 if is_compressed else 0
    fields: dict[str, Any] = dict(
        timestamp=draw(st.integers(0, 0xFFFFFFFF)),
        table_id=table_map.table_id,
        rows_flags=draw(_ROWS_FLAGS),
        version=version,
        extra_data=draw(_EXTRA_DATA) if version == 2 else b"",
        compressed=is_compressed,
        width=width,
        columns_present=present,
    )
    if not width:
        return draw(st.sampled_from([WriteRowsEvent, DeleteRowsEvent]))(**fields, rows=())
    before = images_for(table_map, present, width, max_string)
    if kind == "update":
        present_after = draw(_present_bitmap(width, partial=draw(st.booleans())))
        after = images_for(table_map, present_after, width, max_string)
        rows = draw(st.lists(st.tuples(before, after), min_size=min_rows, max_size=max_rows))
        return UpdateRowsEvent(**fields, columns_present_after=present_after, rows=tuple(rows))
    rows = draw(st.lists(before, min_size=min_rows, max_size=max_rows))
    cls = WriteRowsEvent if kind == "write" else DeleteRowsEvent
    return cls(**fields, rows=tuple(rows))


@st.composite
def table_maps_with_rows(
    draw: st.DrawFn,
    /,
    max_columns: int = 12,
    max_table_id: int = (1 << 48) - 1,
    **rows_options: Any,
) -> tuple[TableMapEvent, RowsEvent]:
    """A TABLE_MAP and a rows event of its table."""
    table_map = draw(table_maps(max_columns=max_columns, max_table_id=max_table_id))
    return table_map, draw(rows_events_for(table_map, **rows_options))
