"""Column values of ROWS events: what a column's type and TABLE_MAP metadata say about its bytes,
and compiled readers of whole row images (mirror of encoder/values.py).

Column metadata is kept as the little-endian value of its 0, 1 or 2 bytes (``column_meta`` of
TableMapEvent). Values come back as:

* integers: int, signed unless the column is marked unsigned (SIGNEDNESS optional metadata);
* FLOAT/DOUBLE: float; NEWDECIMAL: ``Decimal`` with exactly ``scale`` fraction digits;
* YEAR: the year (0, or 1901..2155); BIT, ENUM (index), SET (bitmask): int;
* DATE: Date; DATETIME2/DATETIME: DateTime; TIMESTAMP2/TIMESTAMP: Timestamp; TIME2/TIME: Time;
* CHAR/BINARY, VARCHAR, BLOB/TEXT, GEOMETRY, JSON, compressed columns: bytes as stored.

A reader decodes whatever the bytes hold, also values a server would never write (a DATETIME with
month 15, a negative-zero DECIMAL), so that encoding the result gives back the same bytes.

Row images are decoded by a function generated per table shape and column-present bitmap(s):
straight-line code with fixed-size columns fused into one ``struct`` call when the image has no
NULLs, and a per-column path otherwise. A bitmap is compiled the second time it is seen (the
first time an interpreted reader does the same work), and compiled readers are cached per table
shape, so a TABLE_MAP repeated before every statement costs a dictionary look-up.

``parse_mysql_json`` turns a MySQL binary JSON column value into Python values.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any, Generic, NamedTuple, TypeVar

from fakemaster.constants import ColumnType, OptionalMetadata
from fakemaster.context import BinlogContext
from fakemaster.errors import DecodeError
from fakemaster.events import TableMapEvent
from fakemaster.values import ABSENT, Date, DateTime, Time, Timestamp

_from_bytes = int.from_bytes
# Builds NamedTuple values without the Python-level __new__ frame (the hot path).
_new = tuple.__new__

# --- what the column types are ------------------------------------------------------------

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
_FRAC_BYTES = (0, 1, 1, 2, 2, 3, 3)
_FRAC_UNIT = (0, 10000, 100, 1)


# MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n), n > 0 (still made with
# mysql56_temporal_format=OFF): binlogged under the old type codes with no metadata, so their
# precision -- and thereby their length -- comes from the schema, given as the column's ``meta``.
HIRES_TYPES = frozenset({ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP})
HIRES_TIME_BYTES = (3, 4, 4, 5, 5, 5, 6)
HIRES_DATETIME_BYTES = (5, 6, 6, 7, 7, 7, 8)
# TIME(n) values are stored with this offset added, so that the bytes sort like the values.
HIRES_TIME_ZERO = tuple((838 * 3600 + 59 * 60 + 59 + 1) * 10**fsp for fsp in range(MAX_FSP + 1))


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
    return _FRAC_BYTES[fsp]


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


# --- single values ------------------------------------------------------------------------


class ColumnReader(NamedTuple):
    """How to read one column value.

    A fixed-size value is one ``struct`` item of code ``fmt`` (``size`` bytes), turned into the
    value by the statements ``code``, templates in which ``{v}`` is the variable holding the
    item and then the value (they may use ``t_``/``g<n>_`` temporaries and the names of
    ``_CODE_GLOBALS``). A variable-size value (``fmt`` empty) is a ``size``-byte little-endian
    length and that many bytes.
    """

    fmt: str
    size: int
    code: tuple[str, ...] = ()


def _invalid(message: str) -> DecodeError:
    return DecodeError(message)


def _time_old(raw: bytes) -> Time:
    value = _from_bytes(raw, "little", signed=True)
    negative = value < 0
    if negative:
        value = -value
    return _new(Time, (negative, value // 10000, value // 100 % 100, value % 100, 0))


def _datetime_old(value: int) -> DateTime:
    return _new(
        DateTime,
        (
            value // 10_000_000_000,
            value // 100_000_000 % 100,
            value // 1_000_000 % 100,
            value // 10_000 % 100,
            value // 100 % 100,
            value % 100,
            0,
        ),
    )


def _time_from_hms(negative: bool, hms: int, microsecond: int) -> Time:
    return _new(Time, (negative, hms >> 12, (hms >> 6) & 63, hms & 63, microsecond))


def _time2_reader(fsp: int) -> Callable[[bytes], Time]:
    nbytes = _FRAC_BYTES[fsp]
    if nbytes == 0:

        def read_time2(raw: bytes) -> Time:
            value = _from_bytes(raw, "big") - 0x800000
            if value < 0:
                return _time_from_hms(True, -value, 0)
            return _time_from_hms(False, value, 0)

    elif nbytes == 3:

        def read_time2(raw: bytes) -> Time:
            packed = _from_bytes(raw, "big") - 0x800000000000
            negative = packed < 0
            if negative:
                packed = -packed
            return _time_from_hms(negative, packed >> 24, packed & 0xFFFFFF)

    else:
        shift = 8 * nbytes
        mask = (1 << shift) - 1
        unit = _FRAC_UNIT[nbytes]

        # A negative value with a fraction stores intpart - 1 and the fraction's complement,
        # so that the bytes sort like the values.
        def read_time2(raw: bytes) -> Time:
            whole = _from_bytes(raw, "big")
            intpart = (whole >> shift) - 0x800000
            frac = whole & mask
            if intpart >= 0:
                return _time_from_hms(False, intpart, frac * unit)
            if frac:
                return _time_from_hms(True, -intpart - 1, ((1 << shift) - frac) * unit)
            return _time_from_hms(True, -intpart, 0)

    return read_time2


# Names the ``code`` templates may use (also globals of every generated reader).
_CODE_GLOBALS: dict[str, Any] = {
    "_fb": _from_bytes,
    "_new": _new,
    "_invalid": _invalid,
    "_Decimal": Decimal,
    "_Date": Date,
    "_DateTime": DateTime,
    "_Timestamp": Timestamp,
    "_Time": Time,
    "_time_old": _time_old,
    "_datetime_old": _datetime_old,
    **{f"_time2_{fsp}": _time2_reader(fsp) for fsp in range(MAX_FSP + 1)},
}


def _datetime2_code(fsp: int) -> tuple[str, ...]:
    nbytes = _FRAC_BYTES[fsp]
    shift = 8 * nbytes
    frac = f"(t_ & {(1 << shift) - 1}) * {_FRAC_UNIT[nbytes]}" if nbytes else "0"
    packed = f"(t_ >> {shift})" if nbytes else "t_"
    return (
        "t_ = _fb({v}, 'big')",
        f"p_ = {packed} - 0x8000000000",
        "if p_ < 0:",
        "    raise _invalid('negative DATETIME2 value')",
        "d_ = p_ >> 17",
        "m_ = d_ >> 5",
        "h_ = p_ & 0x1FFFF",
        "{v} = _new(_DateTime, (m_ // 13, m_ % 13, d_ & 31, h_ >> 12, h_ >> 6 & 63, h_ & 63, "
        + frac
        + "))",
    )


def _timestamp2_code(fsp: int) -> tuple[str, ...]:
    nbytes = _FRAC_BYTES[fsp]
    if not nbytes:
        return ("{v} = _new(_Timestamp, (_fb({v}, 'big'), 0))",)
    shift = 8 * nbytes
    return (
        "t_ = _fb({v}, 'big')",
        f"{{v}} = _new(_Timestamp, (t_ >> {shift}, (t_ & {(1 << shift) - 1}) * "
        f"{_FRAC_UNIT[nbytes]}))",
    )


def _decimal_code(precision: int, scale: int) -> tuple[str, ...]:
    """Statements reading one DECIMAL(precision, scale): its digit groups unrolled."""
    groups = decimal_groups(precision, scale)
    size = sum(nbytes for nbytes, _ in groups)
    sign_bit = 1 << (8 * size - 1)
    negative_mask = ((1 << (8 * size)) - 1) ^ sign_bit
    lines = [
        "t_ = _fb({v}, 'big')",
        # Negative values are stored with every byte inverted; the top bit is flipped for both.
        f"if t_ & {sign_bit}:",
        f"    t_ ^= {sign_bit}",
        "    s_ = ''",
        "else:",
        f"    t_ ^= {negative_mask}",
        "    s_ = '-'",
    ]
    shift = 8 * size
    digits_after = precision
    terms = []
    checks = []
    for index, (nbytes, digits) in enumerate(groups):
        shift -= 8 * nbytes
        digits_after -= digits
        lines.append(f"g{index}_ = t_ >> {shift} & {(1 << (8 * nbytes)) - 1}")
        checks.append(f"g{index}_ >= {10**digits}")
        terms.append(f"g{index}_ * {10**digits_after}" if digits_after else f"g{index}_")
    lines += [
        f"if {' or '.join(checks)}:",
        f"    raise _invalid('DECIMAL({precision},{scale}) has a digit group out of range')",
        f"{{v}} = _Decimal(f'{{s_}}{{{' + '.join(terms)}}}E-{scale}')",
    ]
    return tuple(lines)


@lru_cache(maxsize=4096)
def column_reader(column_type: int, meta: int, unsigned: bool = False) -> ColumnReader:
    """The reader of one column; DecodeError for a type or metadata no value can have."""
    size = INTEGER_SIZES.get(column_type)
    if size is not None:
        if size == 3:
            signed = "" if unsigned else ", signed=True"
            return ColumnReader("3s", 3, (f"{{v}} = _fb({{v}}, 'little'{signed})",))
        code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
        return ColumnReader(code.upper() if unsigned else code, size)
    if column_type == ColumnType.FLOAT:
        _expect_meta(column_type, meta, 4)
        return ColumnReader("f", 4)
    if column_type == ColumnType.DOUBLE:
        _expect_meta(column_type, meta, 8)
        return ColumnReader("d", 8)
    if column_type == ColumnType.NEWDECIMAL:
        precision, scale = meta & 0xFF, meta >> 8
        if not 1 <= precision or scale > precision:
            raise _invalid(f"invalid DECIMAL({precision},{scale}) metadata")
        size = decimal_size(precision, scale)
        return ColumnReader(f"{size}s", size, _decimal_code(precision, scale))
    if column_type == ColumnType.YEAR:
        return ColumnReader("B", 1, ("{v} = {v} + 1900 if {v} else 0",))
    if column_type in (ColumnType.DATE, ColumnType.NEWDATE):
        return ColumnReader(
            "3s",
            3,
            ("t_ = _fb({v}, 'little')", "{v} = _new(_Date, (t_ >> 9, t_ >> 5 & 15, t_ & 31))"),
        )
    if column_type in HIRES_TYPES and meta:
        return _hires_reader(column_type, meta)
    if column_type == ColumnType.TIME:
        return ColumnReader("3s", 3, ("{v} = _time_old({v})",))
    if column_type == ColumnType.DATETIME:
        return ColumnReader("Q", 8, ("{v} = _datetime_old({v})",))
    if column_type == ColumnType.TIMESTAMP:
        return ColumnReader("I", 4, ("{v} = _new(_Timestamp, ({v}, 0))",))
    if column_type in (ColumnType.DATETIME2, ColumnType.TIMESTAMP2, ColumnType.TIME2):
        fsp = meta
        if fsp > MAX_FSP:
            raise _invalid(f"{type_name(column_type)} precision {fsp} is above {MAX_FSP}")
        if column_type == ColumnType.DATETIME2:
            size = 5 + _FRAC_BYTES[fsp]
            return ColumnReader(f"{size}s", size, _datetime2_code(fsp))
        if column_type == ColumnType.TIMESTAMP2:
            size = 4 + _FRAC_BYTES[fsp]
            return ColumnReader(f"{size}s", size, _timestamp2_code(fsp))
        size = 3 + _FRAC_BYTES[fsp]
        return ColumnReader(f"{size}s", size, (f"{{v}} = _time2_{fsp}({{v}})",))
    if column_type == ColumnType.BIT:
        size = bit_size(meta)
        return ColumnReader(f"{size}s", size, ("{v} = _fb({v}, 'big')",))
    if column_type in (ColumnType.STRING, ColumnType.ENUM, ColumnType.SET):
        byte0 = meta & 0xFF
        if byte0 in (STRING_REAL_ENUM, STRING_REAL_SET) or column_type != ColumnType.STRING:
            return _little_endian_reader(meta >> 8)
        _, max_len = string_metadata(meta)
        return ColumnReader("", 2 if max_len > 255 else 1)
    if column_type in VARCHAR_TYPES:
        return ColumnReader("", 2 if meta > 255 else 1)
    if column_type in BLOB_TYPES:
        if not 1 <= meta <= 4:
            raise _invalid(f"{type_name(column_type)} length-prefix size {meta} is not 1..4")
        return ColumnReader("", meta)
    if column_type == ColumnType.NULL:
        return ColumnReader("0s", 0)
    if column_type == ColumnType.DECIMAL:
        raise _invalid("old DECIMAL (type 0) values carry no length in the binlog")
    raise _invalid(f"unknown column type {column_type}")


def _hires_reader(column_type: int, fsp: int) -> ColumnReader:
    if fsp > MAX_FSP:
        raise _invalid(f"{type_name(column_type)} precision {fsp} is above {MAX_FSP}")
    unit = 10 ** (6 - fsp)
    if column_type == ColumnType.TIMESTAMP:
        nbytes = _FRAC_BYTES[fsp]
        return ColumnReader(
            f"{4 + nbytes}s",
            4 + nbytes,
            (
                "t_ = _fb({v}, 'big')",
                f"{{v}} = _new(_Timestamp, (t_ >> {8 * nbytes}, "
                f"(t_ & {(1 << (8 * nbytes)) - 1}) * {unit}))",
            ),
        )
    if column_type == ColumnType.TIME:
        size = HIRES_TIME_BYTES[fsp]
        return ColumnReader(
            f"{size}s",
            size,
            (
                f"t_ = _fb({{v}}, 'big') - {HIRES_TIME_ZERO[fsp]}",
                "s_ = t_ < 0",
                "if s_:",
                "    t_ = -t_",
                f"p_ = t_ // {10**fsp}",
                f"{{v}} = _new(_Time, (s_, p_ // 3600, p_ // 60 % 60, p_ % 60, "
                f"t_ % {10**fsp} * {unit}))",
            ),
        )
    size = HIRES_DATETIME_BYTES[fsp]
    return ColumnReader(
        f"{size}s",
        size,
        (
            "t_ = _fb({v}, 'big')",
            f"p_ = t_ // {10**fsp}",
            "d_ = p_ // 86400",
            "m_ = d_ // 32",
            f"{{v}} = _new(_DateTime, (m_ // 13, m_ % 13, d_ % 32, p_ // 3600 % 24, "
            f"p_ // 60 % 60, p_ % 60, t_ % {10**fsp} * {unit}))",
        ),
    )


def _expect_meta(column_type: int, meta: int, expected: int) -> None:
    if meta != expected:
        raise _invalid(f"{type_name(column_type)} metadata {meta}, expected {expected}")


def _little_endian_reader(size: int) -> ColumnReader:
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}.get(size)
    if code is not None:
        return ColumnReader(code, size)
    return ColumnReader(f"{size}s", size, ("{v} = _fb({v}, 'little')",))


def _fill(template: str, var: str) -> str:
    return template.replace("{v}", var)


@lru_cache(maxsize=4096)
def _converter(code: tuple[str, ...]) -> Callable[[Any], Any]:
    """The ``code`` statements of a reader as a function of the struct item."""
    lines = ["def convert(v):", *("    " + _fill(line, "v") for line in code), "    return v"]
    namespace = dict(_CODE_GLOBALS)
    exec(compile("\n".join(lines) + "\n", "<column value>", "exec"), namespace)
    converter: Callable[[Any], Any] = namespace["convert"]
    return converter


_U32 = struct.Struct("<I")


def decode_value(
    column_type: int, meta: int, data: bytes, pos: int = 0, unsigned: bool = False
) -> tuple[Any, int]:
    """One non-NULL column value at ``pos``: ``(value, position after it)``."""
    reader = column_reader(column_type, meta, unsigned)
    if reader.fmt:
        if pos + reader.size > len(data):
            raise DecodeError(f"truncated {type_name(column_type)} value", offset=pos)
        raw = struct.unpack_from("<" + reader.fmt, data, pos)[0]
        value = _converter(reader.code)(raw) if reader.code else raw
        return value, pos + reader.size
    prefix = reader.size
    if pos + prefix > len(data):
        raise DecodeError(f"truncated {type_name(column_type)} length", offset=pos)
    length = _from_bytes(data[pos : pos + prefix], "little")
    end = pos + prefix + length
    if end > len(data):
        raise DecodeError(f"truncated {type_name(column_type)} value", offset=pos)
    return bytes(data[pos + prefix : end]), end


# --- whole row images ---------------------------------------------------------------------

RowsReader = Callable[[bytes, int, int], list[Any]]
_StructError = struct.error


def _truncated(offset: int) -> DecodeError:
    return DecodeError("truncated row image", offset=offset)


class _CodeWriter:
    """Source of one generated reader and the objects it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = dict(_CODE_GLOBALS)
        self.names.update(
            _ABSENT=ABSENT,
            _StructError=_StructError,
            _DecodeError=DecodeError,
            _truncated=_truncated,
            _u32=_U32.unpack_from,
        )
        self._ids: dict[str, str] = {}

    def unpacker(self, fmt: str) -> str:
        found = self._ids.get(fmt)
        if found is None:
            found = f"_s{len(self._ids)}"
            self._ids[fmt] = found
            self.names[found] = struct.Struct(fmt).unpack_from
        return found

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def convert(self, indent: int, reader: ColumnReader, var: str) -> None:
        for line in reader.code:
            self.emit(indent, _fill(line, var))


def _emit_variable(code: _CodeWriter, indent: int, var: str, prefix: int) -> None:
    if prefix == 1:
        length = "data[pos]"
    elif prefix == 2:
        length = "(data[pos] | data[pos + 1] << 8)"
    elif prefix == 3:
        length = "(data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)"
    else:
        length = "_u32(data, pos)[0]"
    code.emit(indent, f"e = pos + {prefix} + {length}")
    code.emit(indent, f"{var} = data[pos + {prefix}:e]")
    code.emit(indent, "pos = e")


def _emit_image(
    code: _CodeWriter,
    indent: int,
    readers: Sequence[ColumnReader],
    present: Sequence[int],
    width: int,
    image: str,
) -> None:
    """Statements that read one image at ``pos`` into the tuple variable ``r{image}``."""
    var = [f"{image}{column}" for column in range(width)]
    present_set = set(present)
    null_bytes = (len(present) + 7) >> 3
    if not present:
        code.emit(indent, f"r{image} = ({'_ABSENT, ' * width})")
        return
    if null_bytes == 1:
        code.emit(indent, "nulls = data[pos]")
    else:
        code.emit(indent, f"nulls = _fb(data[pos:pos + {null_bytes}], 'little')")
    code.emit(indent, f"pos += {null_bytes}")

    # No NULLs: consecutive fixed-size values are read by one struct call.
    code.emit(indent, f"if not nulls & {(1 << len(present)) - 1}:")
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        fmt = "<" + "".join(readers[column].fmt for column in run)
        size = sum(readers[column].size for column in run)
        targets = ", ".join(var[column] for column in run) + ","
        code.emit(indent + 1, f"{targets} = {code.unpacker(fmt)}(data, pos)")
        code.emit(indent + 1, f"pos += {size}")
        run.clear()

    for column in present:
        reader = readers[column]
        if reader.fmt:
            run.append(column)
        else:
            flush()
            _emit_variable(code, indent + 1, var[column], reader.size)
    flush()
    for column in present:
        code.convert(indent + 1, readers[column], var[column])
    items = [var[column] if column in present_set else "_ABSENT" for column in range(width)]
    code.emit(indent + 1, f"r{image} = ({', '.join(items)},)")

    code.emit(indent, "else:")
    for bit, column in enumerate(present):
        reader = readers[column]
        code.emit(indent + 1, f"if nulls & {1 << bit}:")
        code.emit(indent + 2, f"{var[column]} = None")
        code.emit(indent + 1, "else:")
        if reader.fmt:
            unpack = code.unpacker("<" + reader.fmt)
            code.emit(indent + 2, f"{var[column]} = {unpack}(data, pos)[0]")
            code.emit(indent + 2, f"pos += {reader.size}")
            code.convert(indent + 2, reader, var[column])
        else:
            _emit_variable(code, indent + 2, var[column], reader.size)
    items = [var[column] if column in present_set else "_ABSENT" for column in range(width)]
    code.emit(indent + 1, f"r{image} = ({', '.join(items)},)")


def _present_columns(mask: int, width: int) -> tuple[int, ...]:
    return tuple(column for column in range(width) if mask >> column & 1)


def compile_rows_reader(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> RowsReader:
    """A function ``(data, pos, end) -> rows`` reading every row image from ``pos`` to ``end``.

    ``present``/``present_after`` are the column-present bitmaps as integers; with
    ``present_after`` each row is a ``(before, after)`` pair. Offsets of its DecodeErrors are
    positions in ``data``.
    """
    before = _present_columns(present, width)
    after = None if present_after is None else _present_columns(present_after, width)
    if not before and not after:
        return _empty_images_reader
    code = _CodeWriter()
    code.emit(0, "def read_rows(data, pos, end):")
    code.emit(1, "rows = []")
    code.emit(1, "append = rows.append")
    code.emit(1, "start = pos")
    code.emit(1, "try:")
    code.emit(2, "while pos < end:")
    code.emit(3, "start = pos")
    _emit_image(code, 3, readers, before, width, "a")
    if after is None:
        code.emit(3, "append(ra)")
    else:
        _emit_image(code, 3, readers, after, width, "b")
        code.emit(3, "append((ra, rb))")
    code.emit(1, "except (IndexError, _StructError):")
    code.emit(2, "raise _truncated(start) from None")
    code.emit(1, "except _DecodeError as exc:")
    code.emit(2, "raise exc.relocated(start) from None")
    code.emit(1, "if pos != end:")
    code.emit(2, "raise _truncated(start)")
    code.emit(1, "return rows")
    source = "\n".join(code.lines) + "\n"
    namespace = code.names
    exec(compile(source, f"<rows reader {width} columns>", "exec"), namespace)
    reader: RowsReader = namespace["read_rows"]
    return reader


def _empty_images_reader(data: bytes, pos: int, end: int) -> list[Any]:
    # Rows without a single column take no bytes: there is no telling how many there are.
    if pos != end:
        raise DecodeError(f"{end - pos} bytes of rows whose images have no columns", offset=pos)
    return []


def interpreted_rows_reader(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> RowsReader:
    """The same function as :func:`compile_rows_reader` gives, without generating code: for
    bitmaps seen once (compiling costs more than reading a few rows)."""
    masks = [present] if present_after is None else [present, present_after]
    images = []
    for mask in masks:
        columns = []
        for column in _present_columns(mask, width):
            reader = readers[column]
            unpack = struct.Struct("<" + reader.fmt).unpack_from if reader.fmt else None
            convert = _converter(reader.code) if reader.code else None
            columns.append((column, unpack, reader.size, convert))
        images.append((tuple(columns), (len(columns) + 7) >> 3))
    if not any(columns for columns, _ in images):
        return _empty_images_reader

    def read_rows(data: bytes, pos: int, end: int) -> list[Any]:
        rows: list[Any] = []
        start = pos
        try:
            while pos < end:
                start = pos
                values = []
                for columns, null_bytes in images:
                    nulls = _from_bytes(data[pos : pos + null_bytes], "little")
                    pos += null_bytes
                    row: list[Any] = [ABSENT] * width
                    for bit, (column, unpack, size, convert) in enumerate(columns):
                        if nulls >> bit & 1:
                            row[column] = None
                        elif unpack is not None:
                            value = unpack(data, pos)[0]
                            pos += size
                            row[column] = value if convert is None else convert(value)
                        else:
                            value_end = pos + size + _from_bytes(data[pos : pos + size], "little")
                            row[column] = data[pos + size : value_end]
                            pos = value_end
                    values.append(tuple(row))
                rows.append(values[0] if len(values) == 1 else (values[0], values[1]))
        except (IndexError, _StructError):
            raise _truncated(start) from None
        except DecodeError as exc:
            raise exc.relocated(start) from None
        if pos != end:
            raise _truncated(start)
        return rows

    return read_rows


class TableDecoder:
    """Row-image readers of one table shape, per column-present bitmap(s).

    A bitmap seen for the first time is read by the interpreted reader; from the second time on,
    by a compiled one (a MINIMAL-image workload can show many bitmaps once each).
    """

    MAX_READERS = 256

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
    ) -> None:
        self.column_types = column_types
        self.column_meta = column_meta
        self.unsigned = unsigned
        self._columns: list[ColumnReader] | None = None
        self._readers: dict[tuple[int, int, int | None], RowsReader] = {}
        self._seen_once: set[tuple[int, int, int | None]] = set()

    def columns(self) -> list[ColumnReader]:
        if self._columns is None:
            readers = []
            for index, (column_type, meta, unsigned) in enumerate(
                zip(self.column_types, self.column_meta, self.unsigned, strict=True)
            ):
                try:
                    readers.append(column_reader(column_type, meta, unsigned))
                except DecodeError as exc:
                    raise DecodeError(f"column {index}: {exc.reason}") from None
            self._columns = readers
        return self._columns

    def rows_reader(self, width: int, present: int, present_after: int | None) -> RowsReader:
        key = (width, present, present_after)
        reader = self._readers.get(key)
        if reader is not None:
            return reader
        columns = self.columns()[:width]
        if key not in self._seen_once:
            if len(self._seen_once) >= self.MAX_READERS:
                self._seen_once.clear()
            self._seen_once.add(key)
            return interpreted_rows_reader(columns, width, present, present_after)
        if len(self._readers) >= self.MAX_READERS:
            self._readers.clear()
        reader = compile_rows_reader(columns, width, present, present_after)
        self._readers[key] = reader
        return reader


T = TypeVar("T")


class TableShapeCache(Generic[T]):
    """Compiled row codecs (decoders here, encoders in encoder/values.py) per table shape.

    Keyed by (types, metadata, signedness); repeated TABLE_MAPs of a table share their column
    tuples (decoder/rows.py caches them), so the codec is first looked up by the tuples'
    identities, before hashing their contents.
    """

    MAX_CACHED = 1024

    def __init__(self, build: Callable[[tuple[int, ...], tuple[int, ...], Any], T]) -> None:
        self._build = build
        self._by_shape: dict[tuple[Any, ...], T] = {}
        self._by_identity: dict[tuple[int, int, int], tuple[Any, Any, Any, T]] = {}

    def get(self, table_map: TableMapEvent, precisions: Sequence[int] | None = None) -> T:
        """``precisions``: the schema's fractional-second precision per column, for old
        TIME/DATETIME/TIMESTAMP columns (MariaDB 5.3 format), which the binlog does not
        describe."""
        types, meta, optional = (
            table_map.column_types,
            table_map.column_meta,
            table_map.optional_metadata,
        )
        identity = (id(types), id(meta), id(optional))
        entry = self._by_identity.get(identity)
        if (
            entry is not None
            and entry[0] is types
            and entry[1] is meta
            and entry[2] is optional
            and not precisions
        ):
            return entry[3]
        unsigned = unsigned_flags(table_map)
        if precisions:
            meta = with_precisions(types, meta, precisions)
        key = (tuple(types), tuple(meta), unsigned)
        codec = self._by_shape.get(key)
        if codec is None:
            if len(self._by_shape) >= self.MAX_CACHED:
                self._by_shape.clear()
            codec = self._build(key[0], key[1], unsigned)
            self._by_shape[key] = codec
        if precisions:
            return codec
        if len(self._by_identity) >= self.MAX_CACHED:
            self._by_identity.clear()
        self._by_identity[identity] = (types, meta, optional, codec)
        return codec


table_decoder = TableShapeCache(TableDecoder).get


# --- MySQL binary JSON ----------------------------------------------------------------------


class JsonOpaque(NamedTuple):
    """A MySQL-typed scalar inside a JSON document that has no JSON form (kept as stored)."""

    column_type: int
    data: bytes


_JSON_MAX_DEPTH = 100  # MySQL's own nesting limit
_JSON_INLINE_SMALL = frozenset({0x04, 0x05, 0x06})
_JSON_INLINE_LARGE = frozenset({0x04, 0x05, 0x06, 0x07, 0x08})
_JSON_SCALARS = {
    0x05: struct.Struct("<h"),
    0x06: struct.Struct("<H"),
    0x07: struct.Struct("<i"),
    0x08: struct.Struct("<I"),
    0x09: struct.Struct("<q"),
    0x0A: struct.Struct("<Q"),
    0x0B: struct.Struct("<d"),
}
_JSON_LITERALS: dict[int, Any] = {0: None, 1: True, 2: False}


def parse_mysql_json(document: bytes) -> Any:
    """The Python value of a MySQL binary JSON document (a JSON column's bytes).

    Objects become dicts, arrays lists, strings str; opaque DECIMAL becomes Decimal, DATE/
    DATETIME/TIMESTAMP DateTime, TIME Time, other opaque values JsonOpaque. An empty document
    (what MySQL stores for a JSON NULL written into a NOT NULL column) is None.
    """
    if not document:
        return None
    return _json_value(document[0], bytes(document), 1, len(document), 0)


def _json_need(data: bytes, pos: int, size: int, end: int) -> None:
    if size < 0 or pos + size > end:
        raise DecodeError(f"truncated JSON value: {size} bytes needed", offset=pos)


def _json_value(kind: int, data: bytes, pos: int, end: int, depth: int) -> Any:
    if kind <= 0x03:
        if depth >= _JSON_MAX_DEPTH:
            raise DecodeError("JSON document nested too deeply", offset=pos)
        return _json_container(kind, data, pos, end, depth + 1)
    if kind == 0x04:
        _json_need(data, pos, 1, end)
        if data[pos] not in _JSON_LITERALS:
            raise DecodeError(f"invalid JSON literal {data[pos]}", offset=pos)
        return _JSON_LITERALS[data[pos]]
    scalar = _JSON_SCALARS.get(kind)
    if scalar is not None:
        _json_need(data, pos, scalar.size, end)
        return scalar.unpack_from(data, pos)[0]
    if kind == 0x0C:
        length, pos = _json_varlen(data, pos, end)
        _json_need(data, pos, length, end)
        return data[pos : pos + length].decode("utf-8", "surrogateescape")
    if kind == 0x0F:
        _json_need(data, pos, 1, end)
        column_type = data[pos]
        length, pos = _json_varlen(data, pos + 1, end)
        _json_need(data, pos, length, end)
        return _json_opaque(column_type, data[pos : pos + length], pos)
    raise DecodeError(f"invalid JSON value type {kind}", offset=pos - 1)


def _json_varlen(data: bytes, pos: int, end: int) -> tuple[int, int]:
    length = 0
    for index in range(5):
        _json_need(data, pos, 1, end)
        byte = data[pos]
        pos += 1
        length |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return length, pos
    raise DecodeError("JSON string length longer than 5 bytes", offset=pos)


def _json_container(kind: int, data: bytes, start: int, end: int, depth: int) -> Any:
    large = kind in (0x01, 0x03)
    is_object = kind in (0x00, 0x01)
    offset_size = 4 if large else 2
    count_format = "<I" if large else "<H"
    _json_need(data, start, 2 * offset_size, end)
    count = struct.unpack_from(count_format, data, start)[0]
    size = struct.unpack_from(count_format, data, start + offset_size)[0]
    _json_need(data, start, size, end)
    limit = start + size
    key_entry = offset_size + 2
    value_entry = 1 + offset_size
    header = 2 * offset_size + count * (value_entry + (key_entry if is_object else 0))
    if header > size:
        raise DecodeError(
            f"JSON container header of {header} bytes > its size {size}", offset=start
        )
    inline = _JSON_INLINE_LARGE if large else _JSON_INLINE_SMALL
    values_at = start + 2 * offset_size + (count * key_entry if is_object else 0)
    values = []
    for index in range(count):
        entry = values_at + index * value_entry
        value_kind = data[entry]
        if value_kind in inline:
            values.append(_json_value(value_kind, data, entry + 1, entry + value_entry, depth))
            continue
        offset = struct.unpack_from(count_format, data, entry + 1)[0]
        if offset < header or offset >= size:
            raise DecodeError(f"JSON value offset {offset} outside its container", offset=entry)
        values.append(_json_value(value_kind, data, start + offset, limit, depth))
    if not is_object:
        return values
    result = {}
    for index in range(count):
        entry = start + 2 * offset_size + index * key_entry
        key_offset = struct.unpack_from(count_format, data, entry)[0]
        key_length = struct.unpack_from("<H", data, entry + offset_size)[0]
        if key_offset < header:
            raise DecodeError(f"JSON key offset {key_offset} inside the header", offset=entry)
        _json_need(data, start + key_offset, key_length, limit)
        key = data[start + key_offset : start + key_offset + key_length]
        result[key.decode("utf-8", "surrogateescape")] = values[index]
    return result


def _json_opaque(column_type: int, data: bytes, pos: int) -> Any:
    if column_type == ColumnType.NEWDECIMAL:
        if len(data) < 2:
            raise DecodeError("truncated DECIMAL in JSON", offset=pos)
        reader = column_reader(ColumnType.NEWDECIMAL, data[0] | data[1] << 8)
        if len(data) - 2 != reader.size:
            raise DecodeError("DECIMAL in JSON has the wrong size", offset=pos)
        return _converter(reader.code)(data[2:])
    if column_type in (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.TIME):
        if len(data) < 8:
            raise DecodeError("truncated temporal value in JSON", offset=pos)
        packed = int.from_bytes(data[:8], "little", signed=True)
        negative = packed < 0
        packed = abs(packed)
        intpart, microsecond = packed >> 24, packed & 0xFFFFFF
        if column_type == ColumnType.TIME:
            return _time_from_hms(negative, intpart, microsecond)
        ymd, hms = intpart >> 17, intpart & 0x1FFFF
        return DateTime(
            (ymd >> 5) // 13,
            (ymd >> 5) % 13,
            ymd & 31,
            hms >> 12,
            (hms >> 6) & 63,
            hms & 63,
            microsecond,
        )
    return JsonOpaque(column_type, data)
