"""Per column: its Arrow type (``arrow_type``, the table in the package docstring) and the
conversion of its raw values to an Arrow array, value by value in Python (``_Column``; the numpy
conversions a column at a time are numeric.py's).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from decoder.columnar import libraries
from decoder.columnar.libraries import _np, _pa
from decoder.values import value_converter
from fakemaster.vocabulary.columns import (
    BLOB_TYPES,
    FRAC_BYTES,
    FRAC_UNIT,
    INTEGER_SIZES,
    MICROSECONDS,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    VARCHAR_TYPES,
    decimal_groups,
)
from fakemaster.vocabulary.columns import TIMESTAMP_MAX_SECONDS as _MAX_SECONDS
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "IntConverter",
    "ListConverter",
    "MatrixConverter",
    "VectorConverter",
    "arrow_type",
    "_Column",
    "_DAY_US",
    "_TEMPORAL_KIND",
    "_date_converter",
    "_datetime2_converter",
    "_decimal_converter",
    "_fraction",
    "_nulls",
    "_objects_converter",
    "_timestamp2_converter",
]


_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_DAY_US = 86_400 * MICROSECONDS
_from_bytes = int.from_bytes


def _bits_type(bits: int) -> Any:
    """The smallest signed Arrow type holding every unsigned value of ``bits`` bits."""
    pa = _pa()
    if bits <= 7:
        return pa.int8()
    if bits <= 15:
        return pa.int16()
    if bits <= 31:
        return pa.int32()
    if bits <= 63:
        return pa.int64()
    return pa.decimal128(20, 0)


_TEMPORAL_KIND: dict[int, str] = {
    ColumnType.DATE: "date",
    ColumnType.NEWDATE: "date",
    ColumnType.DATETIME: "datetime",
    ColumnType.DATETIME2: "datetime",
    ColumnType.TIMESTAMP: "timestamp",
    ColumnType.TIMESTAMP2: "timestamp",
    ColumnType.TIME: "time",
    ColumnType.TIME2: "time",
}


def arrow_type(column_type: int, meta: int, unsigned: bool = False) -> Any:
    """The Arrow type of a column's values (see the module docstring)."""
    pa = _pa()
    size = INTEGER_SIZES.get(column_type)
    if size is not None:
        return _bits_type(8 * size) if unsigned else _bits_type(8 * size - 1)
    if column_type == ColumnType.FLOAT:
        return pa.float32()
    if column_type == ColumnType.DOUBLE:
        return pa.float64()
    if column_type == ColumnType.NEWDECIMAL:
        precision, scale = meta & 0xFF, meta >> 8
        return (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale)
    if column_type == ColumnType.YEAR:
        return pa.int16()
    kind = _TEMPORAL_KIND.get(column_type)
    if kind == "date":
        return pa.date32()
    if kind == "datetime":
        return pa.timestamp("us")
    if kind == "timestamp":
        return pa.timestamp("us", tz="UTC")
    if kind == "time":
        return pa.duration("us")
    if column_type == ColumnType.BIT:
        return _bits_type((meta >> 8) * 8 + (meta & 0xFF))
    if column_type in (ColumnType.STRING, ColumnType.ENUM, ColumnType.SET):
        byte0 = meta & 0xFF
        if byte0 in (STRING_REAL_ENUM, STRING_REAL_SET) or column_type != ColumnType.STRING:
            return _bits_type(8 * (meta >> 8))
        return pa.binary()
    if column_type in VARCHAR_TYPES or column_type in BLOB_TYPES:
        return pa.binary()
    if column_type in (ColumnType.JSON, ColumnType.GEOMETRY):
        return pa.binary()
    if column_type == ColumnType.NULL:
        return pa.null()
    raise DecodeError(f"no Arrow type for column type {column_type}")


# Date ordinals (days since 1970-01-01) per packed date, None for what is not a calendar date.
_DAYS: dict[tuple[int, int, int], int | None] = {}


def _days(year: int, month: int, day: int) -> int | None:
    key = (year, month, day)
    found = _DAYS.get(key, -1)
    if found != -1:
        return found
    try:
        days: int | None = datetime.date(year, month, day).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        days = None
    if len(_DAYS) > 100_000:
        _DAYS.clear()
    _DAYS[key] = days
    return days


def _object_value(value: Any) -> int | None:
    """A row decoder temporal value as the Arrow column's integer (days for a Date)."""
    if isinstance(value, DateTime):
        days = _days(value.year, value.month, value.day)
        if days is None or value.hour > 23 or value.minute > 59 or value.second > 59:
            return None
        return (
            days * _DAY_US
            + (value.hour * 3600 + value.minute * 60 + value.second) * MICROSECONDS
            + value.microsecond
        )
    if isinstance(value, Timestamp):
        if value.seconds == 0:
            return None
        return value.seconds * MICROSECONDS + value.microsecond
    if isinstance(value, Time):
        micros = (value.hour * 3600 + value.minute * 60 + value.second) * MICROSECONDS
        micros += value.microsecond
        return -micros if value.negative else micros
    if isinstance(value, Date):
        return _days(value.year, value.month, value.day)
    raise TypeError(f"not a temporal value: {value!r}")


ListConverter = Callable[[Sequence[Any]], list[Any]]


def _objects_converter(code: tuple[str, ...]) -> ListConverter:
    """Raw struct items -> row decoder objects (value_converter) -> Arrow integers."""
    convert = value_converter(code) if code else None

    def convert_list(values: Sequence[Any]) -> list[Any]:
        if convert is None:
            return [None if v is None else _object_value(v) for v in values]
        return [None if v is None else _object_value(convert(v)) for v in values]

    return convert_list


def _fraction(fsp: int) -> tuple[int, int, int, int]:
    """How a temporal column of ``fsp`` stores its fraction: its bytes, the shift and mask
    that split it off the packed value, and the microseconds of one unit of it."""
    nbytes = FRAC_BYTES[fsp]
    shift = 8 * nbytes
    return nbytes, shift, (1 << shift) - 1, FRAC_UNIT[nbytes] if nbytes else 0


def _datetime2_converter(fsp: int, code: tuple[str, ...]) -> ListConverter:
    nbytes, shift, mask, unit = _fraction(fsp)
    checked = value_converter(code)  # raises what the row decoder raises

    def convert_list(values: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        append = out.append
        days_of = _DAYS.get
        for v in values:
            if v is None:
                append(None)
                continue
            t = _from_bytes(v, "big")
            frac = (t & mask) * unit
            packed = (t >> shift) - 0x8000000000
            if packed < 0 or frac >= MICROSECONDS:
                checked(v)
            ymd = packed >> 17
            ym = ymd >> 5
            key = (ym // 13, ym % 13, ymd & 31)
            days = days_of(key, -1)
            if days == -1:
                days = _days(*key)
            hms = packed & 0x1FFFF
            hour, minute, second = hms >> 12, hms >> 6 & 63, hms & 63
            if days is None or hour > 23 or minute > 59 or second > 59:
                append(None)
            else:
                append(days * _DAY_US + (hour * 3600 + minute * 60 + second) * MICROSECONDS + frac)
        return out

    return convert_list


def _timestamp2_converter(fsp: int, code: tuple[str, ...]) -> ListConverter:
    nbytes, shift, mask, unit = _fraction(fsp)
    checked = value_converter(code)

    def convert_list(values: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        append = out.append
        for v in values:
            if v is None:
                append(None)
                continue
            t = _from_bytes(v, "big")
            seconds = t >> shift
            frac = (t & mask) * unit
            if seconds > _MAX_SECONDS or frac >= MICROSECONDS:
                checked(v)
            append(seconds * MICROSECONDS + frac if seconds else None)
        return out

    return convert_list


def _date_converter(values: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    append = out.append
    days_of = _DAYS.get
    for v in values:
        if v is None:
            append(None)
            continue
        t = _from_bytes(v, "little")
        key = (t >> 9, t >> 5 & 15, t & 31)
        days = days_of(key, -1)
        append(_days(*key) if days == -1 else days)
    return out


def _decimal_converter(precision: int, scale: int) -> ListConverter:
    """NEWDECIMAL bytes -> the unscaled integer (value * 10**scale), generated per (p, s)."""
    groups = decimal_groups(precision, scale)
    size = sum(nbytes for nbytes, _ in groups)
    sign_bit = 1 << (8 * size - 1)
    negative_mask = ((1 << (8 * size)) - 1) ^ sign_bit
    lines = [
        "def convert_list(values):",
        "    out = []",
        "    append = out.append",
        "    for v in values:",
        "        if v is None:",
        "            append(None)",
        "            continue",
        "        t = _fb(v, 'big')",
        f"        if t & {sign_bit}:",
        f"            t ^= {sign_bit}",
        "            negative = False",
        "        else:",
        f"            t ^= {negative_mask}",
        "            negative = True",
    ]
    shift = 8 * size
    digits_after = precision
    terms, checks = [], []
    for index, (nbytes, digits) in enumerate(groups):
        shift -= 8 * nbytes
        digits_after -= digits
        lines.append(f"        g{index} = t >> {shift} & {(1 << (8 * nbytes)) - 1}")
        checks.append(f"g{index} >= {10**digits}")
        terms.append(f"g{index} * {10**digits_after}" if digits_after else f"g{index}")
    lines += [
        f"        if {' or '.join(checks)}:",
        f"            raise _DecodeError('DECIMAL({precision},{scale}) has a digit group out of "
        "range')",
        f"        n = {' + '.join(terms)}",
        "        append(-n if negative else n)",
        "    return out",
    ]
    namespace: dict[str, Any] = {"_fb": _from_bytes, "_DecodeError": DecodeError}
    exec(
        compile("\n".join(lines) + "\n", f"<decimal({precision},{scale}) column>", "exec"),
        namespace,
    )
    converter: ListConverter = namespace["convert_list"]
    return converter


def _nulls(values: Sequence[Any]) -> list[Any]:
    return [None] * len(values)


def _decimal_array(arrow: Any, unscaled: list[Any]) -> Any:
    """A decimal128/256 array of unscaled integers (None: null), from its buffers."""
    pa = _pa()
    width = 16 if pa.types.is_decimal128(arrow) else 32
    zero = bytes(width)
    data = b"".join(
        [zero if v is None else v.to_bytes(width, "little", signed=True) for v in unscaled]
    )
    validity = None
    if None in unscaled:
        validity = pa.array([v is not None for v in unscaled], pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(arrow, len(unscaled), [validity, pa.py_buffer(data)])


VectorConverter = Callable[[Sequence[Any]], Any]
# (an (n, size) uint8 matrix of the raw values, the NULL mask or None) -> Arrow array or None
MatrixConverter = Callable[[Any, Any], Any]
# (the raw values as unsigned integers, uint64, the NULL mask or None) -> Arrow array or None
IntConverter = Callable[[Any, Any], Any]


class _Column:
    """How one column's raw values (struct items, bytes, None) become an Arrow array:
    ``vector`` (numpy, when installed) gives the array or None to leave it to ``convert``."""

    __slots__ = ("arrow", "convert", "decimal", "integer", "matrix", "vector")

    def __init__(
        self,
        arrow: Any,
        convert: ListConverter | None,
        decimal: bool,
        vector: VectorConverter | None = None,
        matrix: MatrixConverter | None = None,
    ) -> None:
        self.arrow = arrow
        self.convert = convert
        self.decimal = decimal
        self.vector = vector
        self.matrix = matrix
        # (byte order, converter): the raw values of up to 8 bytes as unsigned integers in
        # that order (uint64) give the array (numpy; a batch's images read in place).
        self.integer: tuple[str, IntConverter] | None = None

    def array(self, values: Sequence[Any]) -> Any:
        pa = _pa()
        if self.vector is not None and len(values) >= libraries._VECTOR_MIN and _np() is not None:
            array = self.vector(values)
            if array is not None:
                return array
        if self.convert is not None:
            values = self.convert(values)
        if self.decimal:
            return _decimal_array(self.arrow, list(values))
        return pa.array(values, self.arrow)
