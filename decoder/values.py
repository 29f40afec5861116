"""Single column values of ROWS events: readers per column type and TABLE_MAP metadata (the
column facts are in fakemaster/columns.py; whole row images in decoder/row_images.py; mirror of
encoder/values.py).

Values come back as:

* integers: int, signed unless the column is marked unsigned (SIGNEDNESS optional metadata);
* FLOAT/DOUBLE: float; NEWDECIMAL: ``Decimal`` with exactly ``scale`` fraction digits;
* YEAR: the year (0, or 1901..2155); BIT, ENUM (index), SET (bitmask): int;
* DATE: Date; DATETIME2/DATETIME: DateTime; TIMESTAMP2/TIMESTAMP: Timestamp; TIME2/TIME: Time;
* CHAR/BINARY, VARCHAR, BLOB/TEXT, GEOMETRY, JSON, compressed columns: bytes as stored.

A reader decodes whatever the bytes hold, also values a server would never write (a DATETIME with
month 15, a negative-zero DECIMAL), so that encoding the result gives back the same bytes.
A reader is a :class:`ColumnReader`: a ``struct`` code and statement templates, which the row
image readers compile into straight-line code and :func:`value_converter` into a function.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from fakemaster.columns import (
    BLOB_TYPES,
    FRAC_BYTES,
    FRAC_UNIT,
    HIRES_DATETIME_BYTES,
    HIRES_TIME_BYTES,
    HIRES_TIME_ZERO,
    HIRES_TYPES,
    INTEGER_SIZES,
    MAX_FSP,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    VARCHAR_TYPES,
    bit_size,
    decimal_groups,
    decimal_size,
    string_metadata,
    type_name,
)
from fakemaster.constants import ColumnType
from fakemaster.errors import DecodeError
from fakemaster.values import Date, DateTime, Time, Timestamp

__all__ = ["ColumnReader", "column_reader", "decode_value", "value_converter"]

_from_bytes = int.from_bytes
# Builds NamedTuple values without the Python-level __new__ frame (the hot path).
_new = tuple.__new__


class ColumnReader(NamedTuple):
    """How to read one column value.

    A fixed-size value is one ``struct`` item of code ``fmt`` (``size`` bytes), turned into the
    value by the statements ``code``, templates in which ``{v}`` is the variable holding the
    item and then the value (they may use ``t_``/``g<n>_`` temporaries and the names of
    ``CODE_GLOBALS``). A variable-size value (``fmt`` empty) is a ``size``-byte little-endian
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


def time_from_hms(negative: bool, hms: int, microsecond: int) -> Time:
    return _new(Time, (negative, hms >> 12, (hms >> 6) & 63, hms & 63, microsecond))


def _time2_reader(fsp: int) -> Callable[[bytes], Time]:
    nbytes = FRAC_BYTES[fsp]
    if nbytes == 0:

        def read_time2(raw: bytes) -> Time:
            value = _from_bytes(raw, "big") - 0x800000
            if value < 0:
                return time_from_hms(True, -value, 0)
            return time_from_hms(False, value, 0)

    elif nbytes == 3:

        def read_time2(raw: bytes) -> Time:
            packed = _from_bytes(raw, "big") - 0x800000000000
            negative = packed < 0
            if negative:
                packed = -packed
            return time_from_hms(negative, packed >> 24, packed & 0xFFFFFF)

    else:
        shift = 8 * nbytes
        mask = (1 << shift) - 1
        unit = FRAC_UNIT[nbytes]

        # A negative value with a fraction stores intpart - 1 and the fraction's complement,
        # so that the bytes sort like the values.
        def read_time2(raw: bytes) -> Time:
            whole = _from_bytes(raw, "big")
            intpart = (whole >> shift) - 0x800000
            frac = whole & mask
            if intpart >= 0:
                return time_from_hms(False, intpart, frac * unit)
            if frac:
                return time_from_hms(True, -intpart - 1, ((1 << shift) - frac) * unit)
            return time_from_hms(True, -intpart, 0)

    return read_time2


# Names the ``code`` templates may use (also globals of every generated reader).
CODE_GLOBALS: dict[str, Any] = {
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
    nbytes = FRAC_BYTES[fsp]
    shift = 8 * nbytes
    frac = f"(t_ & {(1 << shift) - 1}) * {FRAC_UNIT[nbytes]}" if nbytes else "0"
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
    nbytes = FRAC_BYTES[fsp]
    if not nbytes:
        return ("{v} = _new(_Timestamp, (_fb({v}, 'big'), 0))",)
    shift = 8 * nbytes
    return (
        "t_ = _fb({v}, 'big')",
        f"{{v}} = _new(_Timestamp, (t_ >> {shift}, (t_ & {(1 << shift) - 1}) * "
        f"{FRAC_UNIT[nbytes]}))",
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
            size = 5 + FRAC_BYTES[fsp]
            return ColumnReader(f"{size}s", size, _datetime2_code(fsp))
        if column_type == ColumnType.TIMESTAMP2:
            size = 4 + FRAC_BYTES[fsp]
            return ColumnReader(f"{size}s", size, _timestamp2_code(fsp))
        size = 3 + FRAC_BYTES[fsp]
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
        nbytes = FRAC_BYTES[fsp]
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


def fill_template(template: str, var: str) -> str:
    return template.replace("{v}", var)


@lru_cache(maxsize=4096)
def value_converter(code: tuple[str, ...]) -> Callable[[Any], Any]:
    """The ``code`` statements of a reader as a function of the struct item."""
    lines = ["def convert(v):", *("    " + fill_template(line, "v") for line in code), "    return v"]
    namespace = dict(CODE_GLOBALS)
    exec(compile("\n".join(lines) + "\n", "<column value>", "exec"), namespace)
    converter: Callable[[Any], Any] = namespace["convert"]
    return converter



def decode_value(
    column_type: int, meta: int, data: bytes, pos: int = 0, unsigned: bool = False
) -> tuple[Any, int]:
    """One non-NULL column value at ``pos``: ``(value, position after it)``."""
    reader = column_reader(column_type, meta, unsigned)
    if reader.fmt:
        if pos + reader.size > len(data):
            raise DecodeError(f"truncated {type_name(column_type)} value", offset=pos)
        raw = struct.unpack_from("<" + reader.fmt, data, pos)[0]
        value = value_converter(reader.code)(raw) if reader.code else raw
        return value, pos + reader.size
    prefix = reader.size
    if pos + prefix > len(data):
        raise DecodeError(f"truncated {type_name(column_type)} length", offset=pos)
    length = _from_bytes(data[pos : pos + prefix], "little")
    end = pos + prefix + length
    if end > len(data):
        raise DecodeError(f"truncated {type_name(column_type)} value", offset=pos)
    return bytes(data[pos + prefix : end]), end
