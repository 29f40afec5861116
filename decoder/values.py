"""Single column values of ROWS events: readers per column type and TABLE_MAP metadata (the
column facts are in fakemaster/vocabulary/columns.py; whole row images in decoder/row_images.py; mirror of
encoder/values.py).

Values come back as:

* integers: int, signed unless the column is marked unsigned (SIGNEDNESS optional metadata);
* FLOAT/DOUBLE: float; NEWDECIMAL: ``Decimal`` with exactly ``scale`` fraction digits;
* YEAR: the year (0, or 1901..2155); BIT, ENUM (index), SET (bitmask): int;
* DATE: Date; DATETIME2/DATETIME: DateTime; TIMESTAMP2/TIMESTAMP: Timestamp; TIME2/TIME: Time;
* CHAR/BINARY, VARCHAR, BLOB/TEXT, GEOMETRY, JSON, compressed columns: bytes as stored.

A reader decodes whatever the bytes hold, also values a server would never write (a DATETIME with
month 15, a negative-zero DECIMAL), so that encoding the result gives back the same bytes. The
exception are temporal bytes that MariaDB itself reads as another value than they spell (limits
in fakemaster/vocabulary/columns.py): TIME2 hours beyond 10 bits, a fraction of a second or more (which is
how a DATETIME2/TIMESTAMP2 fraction MariaDB reads as negative looks unsigned), TIMESTAMP seconds
beyond 2038-01-19 03:14:07, an old DATETIME beyond a 32-bit date part, a MariaDB 5.3 TIME(n) of
9984 hours or more or DATETIME(n) beyond 64 bits of microseconds. Those are a DecodeError: read
as the server reads them they would not encode back to the same bytes, and read as they spell
they would not be what a replica sees.
A reader is a :class:`ColumnReader`: a ``struct`` code and statement templates, which the row
image readers compile into straight-line code and :func:`value_converter` into a function.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from fakemaster.vocabulary.columns import (
    BLOB_TYPES,
    FRAC_BYTES,
    FRAC_UNIT,
    HIRES_DATETIME_BYTES,
    HIRES_DATETIME_LIMIT,
    HIRES_TIME_BYTES,
    HIRES_TIME_HOURS,
    HIRES_TIME_ZERO,
    HIRES_TYPES,
    INTEGER_SIZES,
    MAX_FSP,
    MICROSECONDS,
    OLD_DATETIME_LIMIT,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    VARCHAR_TYPES,
    bit_size,
    decimal_groups,
    decimal_size,
    string_metadata,
    type_name,
)
from fakemaster.vocabulary.columns import TIME2_HOURS as _TIME2_HOURS
from fakemaster.vocabulary.columns import TIMESTAMP_MAX_SECONDS as _MAX_SECONDS
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp

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


# --- bytes MariaDB reads as another value (see the module docstring) ----------------------

# A TIME2 value's hour/minute/second field from this on has hour bits MariaDB ignores.
_TIME2_HMS_LIMIT = _TIME2_HOURS << 12


def _fraction_invalid(
    column: str, fsp: int, microseconds: int, nbytes: int, signed: bool
) -> DecodeError:
    """The error of fraction bytes worth ``microseconds`` (read unsigned), a second or more;
    ``signed``: whether MariaDB reads these fraction bytes as a signed number."""
    unit = FRAC_UNIT[nbytes]
    units = microseconds // unit
    sign_bit = 1 << (8 * nbytes - 1)
    if signed and units & sign_bit:
        as_signed = (units - 2 * sign_bit) * unit
        return DecodeError(
            f"{column}({fsp}) fraction bytes {units:#x}: MariaDB reads them as a signed "
            f"number, {as_signed} microseconds, not {microseconds}"
        )
    return DecodeError(
        f"{column}({fsp}) fraction of {microseconds} microseconds is a second or more "
        f"(MariaDB does not read it as that)"
    )


def _time2_invalid(fsp: int, negative: bool, hms: int, microsecond: int) -> DecodeError:
    hours = hms >> 12
    if hours >= _TIME2_HOURS:
        sign = "-" if negative else ""
        return DecodeError(
            f"TIME2({fsp}) hours {sign}{hours} do not fit its 10 hour bits: MariaDB reads "
            f"{sign}{hours % _TIME2_HOURS}"
        )
    return _fraction_invalid("TIME2", fsp, microsecond, FRAC_BYTES[fsp], signed=False)


def _timestamp_invalid(column: str, seconds: int) -> DecodeError:
    return DecodeError(
        f"{column} seconds {seconds} are beyond {_MAX_SECONDS} (2038-01-19 03:14:07), the "
        f"most MariaDB keeps"
    )


def _hires_fraction_invalid(column: str, fsp: int, units: int) -> DecodeError:
    return DecodeError(
        f"{column}({fsp}) (MariaDB 5.3 format) fraction of {units} units of 10^-{fsp} s is a "
        f"second or more (MariaDB does not read it as that)"
    )


def _hires_time_invalid(fsp: int, hours: int) -> DecodeError:
    return DecodeError(
        f"TIME({fsp}) (MariaDB 5.3 format) hours {hours} are {HIRES_TIME_HOURS} or more: MariaDB "
        f"reads {hours % HIRES_TIME_HOURS}"
    )


def _hires_datetime_invalid(fsp: int, number: int) -> DecodeError:
    return DecodeError(
        f"DATETIME({fsp}) (MariaDB 5.3 format) value {number:#x} overflows MariaDB's 64-bit "
        f"microsecond count: it reads another date"
    )


# --- readers ------------------------------------------------------------------------------


def _time_old(raw: bytes) -> Time:
    value = _from_bytes(raw, "little", signed=True)
    negative = value < 0
    if negative:
        value = -value
    return _new(Time, (negative, value // 10000, value // 100 % 100, value % 100, 0))


def _datetime_old(value: int) -> DateTime:
    if value >= OLD_DATETIME_LIMIT:
        raise DecodeError(
            f"DATETIME {value:#x}: MariaDB reads its date part {value // 10**6} as 32 bits "
            f"(signed 64 bits in all), another date"
        )
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
            negative = value < 0
            if negative:
                value = -value
            if value >= _TIME2_HMS_LIMIT:
                raise _time2_invalid(fsp, negative, value, 0)
            return time_from_hms(negative, value, 0)

    elif nbytes == 3:

        def read_time2(raw: bytes) -> Time:
            packed = _from_bytes(raw, "big") - 0x800000000000
            negative = packed < 0
            if negative:
                packed = -packed
            hms, microsecond = packed >> 24, packed & 0xFFFFFF
            if hms >= _TIME2_HMS_LIMIT or microsecond >= MICROSECONDS:
                raise _time2_invalid(fsp, negative, hms, microsecond)
            return time_from_hms(negative, hms, microsecond)

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
                negative, hms, microsecond = False, intpart, frac * unit
            elif frac:
                negative, hms, microsecond = True, -intpart - 1, ((1 << shift) - frac) * unit
            else:
                negative, hms, microsecond = True, -intpart, 0
            if hms >= _TIME2_HMS_LIMIT or microsecond >= MICROSECONDS:
                raise _time2_invalid(fsp, negative, hms, microsecond)
            return time_from_hms(negative, hms, microsecond)

    return read_time2


# Names the ``code`` templates may use (also globals of every generated reader).
CODE_GLOBALS: dict[str, Any] = {
    "_fb": _from_bytes,
    "_new": _new,
    "_invalid": _invalid,
    "_fraction_invalid": _fraction_invalid,
    "_timestamp_invalid": _timestamp_invalid,
    "_hires_fraction_invalid": _hires_fraction_invalid,
    "_hires_time_invalid": _hires_time_invalid,
    "_hires_datetime_invalid": _hires_datetime_invalid,
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
    lines = ["t_ = _fb({v}, 'big')"]
    if nbytes:
        unit = FRAC_UNIT[nbytes]
        lines += [
            f"f_ = (t_ & {(1 << shift) - 1}) * {unit}",
            f"if f_ >= {MICROSECONDS}:",
            f"    raise _fraction_invalid('DATETIME2', {fsp}, f_, {nbytes}, True)",
            f"p_ = (t_ >> {shift}) - 0x8000000000",
        ]
    else:
        lines += ["f_ = 0", "p_ = t_ - 0x8000000000"]
    return (
        *lines,
        "if p_ < 0:",
        "    raise _invalid('negative DATETIME2 value')",
        "d_ = p_ >> 17",
        "m_ = d_ >> 5",
        "h_ = p_ & 0x1FFFF",
        "{v} = _new(_DateTime, (m_ // 13, m_ % 13, d_ & 31, h_ >> 12, h_ >> 6 & 63, h_ & 63, f_))",
    )


def _timestamp2_code(fsp: int) -> tuple[str, ...]:
    nbytes = FRAC_BYTES[fsp]
    if not nbytes:
        return (
            "t_ = _fb({v}, 'big')",
            f"if t_ > {_MAX_SECONDS}:",
            "    raise _timestamp_invalid('TIMESTAMP2(0)', t_)",
            "{v} = _new(_Timestamp, (t_, 0))",
        )
    shift = 8 * nbytes
    return (
        "t_ = _fb({v}, 'big')",
        f"s_ = t_ >> {shift}",
        f"f_ = (t_ & {(1 << shift) - 1}) * {FRAC_UNIT[nbytes]}",
        f"if s_ > {_MAX_SECONDS}:",
        f"    raise _timestamp_invalid('TIMESTAMP2({fsp})', s_)",
        f"if f_ >= {MICROSECONDS}:",
        # compat56.cc reads one fraction byte unsigned, two or three as a signed number.
        f"    raise _fraction_invalid('TIMESTAMP2', {fsp}, f_, {nbytes}, {nbytes > 1})",
        "{v} = _new(_Timestamp, (s_, f_))",
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
        return _integer_reader(size, unsigned)
    reader = _READERS.get(column_type)
    if reader is None:
        raise _invalid(f"unknown column type {column_type}")
    return reader(column_type, meta)


def _integer_reader(size: int, unsigned: bool) -> ColumnReader:
    if size == 3:
        signed = "" if unsigned else ", signed=True"
        return ColumnReader("3s", 3, (f"{{v}} = _fb({{v}}, 'little'{signed})",))
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
    return ColumnReader(code.upper() if unsigned else code, size)


def _float_reader(column_type: int, meta: int) -> ColumnReader:
    if column_type == ColumnType.FLOAT:
        _expect_meta(column_type, meta, 4)
        return ColumnReader("f", 4)
    _expect_meta(column_type, meta, 8)
    return ColumnReader("d", 8)


def _newdecimal_reader(column_type: int, meta: int) -> ColumnReader:
    precision, scale = meta & 0xFF, meta >> 8
    if not 1 <= precision or scale > precision:
        raise _invalid(f"invalid DECIMAL({precision},{scale}) metadata")
    size = decimal_size(precision, scale)
    return ColumnReader(f"{size}s", size, _decimal_code(precision, scale))


def _old_decimal_reader(column_type: int, meta: int) -> ColumnReader:
    raise _invalid("old DECIMAL (type 0) values carry no length in the binlog")


def _year_reader(column_type: int, meta: int) -> ColumnReader:
    return ColumnReader("B", 1, ("{v} = {v} + 1900 if {v} else 0",))


def _date_reader(column_type: int, meta: int) -> ColumnReader:
    return ColumnReader(
        "3s",
        3,
        ("t_ = _fb({v}, 'little')", "{v} = _new(_Date, (t_ >> 9, t_ >> 5 & 15, t_ & 31))"),
    )


def _old_temporal_reader(column_type: int, meta: int) -> ColumnReader:
    """TIME, DATETIME, TIMESTAMP: MySQL 5.5's formats, or MariaDB 5.3's with a precision."""
    if meta:
        return _hires_reader(column_type, meta)
    if column_type == ColumnType.TIME:
        return ColumnReader("3s", 3, ("{v} = _time_old({v})",))
    if column_type == ColumnType.DATETIME:
        return ColumnReader("Q", 8, ("{v} = _datetime_old({v})",))
    return ColumnReader(
        "I",
        4,
        (
            f"if {{v}} > {_MAX_SECONDS}:",
            "    raise _timestamp_invalid('TIMESTAMP', {v})",
            "{v} = _new(_Timestamp, ({v}, 0))",
        ),
    )


def _temporal2_reader(column_type: int, meta: int) -> ColumnReader:
    """DATETIME2, TIMESTAMP2, TIME2 (MySQL 5.6's formats)."""
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


def _bit_reader(column_type: int, meta: int) -> ColumnReader:
    size = bit_size(meta)
    return ColumnReader(f"{size}s", size, ("{v} = _fb({v}, 'big')",))


def _string_reader(column_type: int, meta: int) -> ColumnReader:
    """STRING (CHAR, BINARY, or an ENUM or SET by its real type), ENUM, SET."""
    byte0 = meta & 0xFF
    if byte0 in (STRING_REAL_ENUM, STRING_REAL_SET) or column_type != ColumnType.STRING:
        return _little_endian_reader(meta >> 8)
    _, max_len = string_metadata(meta)
    return ColumnReader("", 2 if max_len > 255 else 1)


def _varchar_reader(column_type: int, meta: int) -> ColumnReader:
    return ColumnReader("", 2 if meta > 255 else 1)


def _blob_reader(column_type: int, meta: int) -> ColumnReader:
    if not 1 <= meta <= 4:
        raise _invalid(f"{type_name(column_type)} length-prefix size {meta} is not 1..4")
    return ColumnReader("", meta)


def _null_reader(column_type: int, meta: int) -> ColumnReader:
    return ColumnReader("0s", 0)


# column_reader's reader per column type (integers aside), from its type and metadata.
_READERS: dict[int, Callable[[int, int], ColumnReader]] = {
    ColumnType.FLOAT: _float_reader,
    ColumnType.DOUBLE: _float_reader,
    ColumnType.NEWDECIMAL: _newdecimal_reader,
    ColumnType.DECIMAL: _old_decimal_reader,
    ColumnType.YEAR: _year_reader,
    ColumnType.DATE: _date_reader,
    ColumnType.NEWDATE: _date_reader,
    **dict.fromkeys(HIRES_TYPES, _old_temporal_reader),
    ColumnType.DATETIME2: _temporal2_reader,
    ColumnType.TIMESTAMP2: _temporal2_reader,
    ColumnType.TIME2: _temporal2_reader,
    ColumnType.BIT: _bit_reader,
    ColumnType.STRING: _string_reader,
    ColumnType.ENUM: _string_reader,
    ColumnType.SET: _string_reader,
    **dict.fromkeys(VARCHAR_TYPES, _varchar_reader),
    **dict.fromkeys(BLOB_TYPES, _blob_reader),
    ColumnType.NULL: _null_reader,
}


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
                f"s_ = t_ >> {8 * nbytes}",
                f"f_ = t_ & {(1 << (8 * nbytes)) - 1}",
                f"if s_ > {_MAX_SECONDS}:",
                f"    raise _timestamp_invalid('TIMESTAMP({fsp})', s_)",
                f"if f_ >= {10**fsp}:",
                f"    raise _hires_fraction_invalid('TIMESTAMP', {fsp}, f_)",
                f"{{v}} = _new(_Timestamp, (s_, f_ * {unit}))",
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
                "h_ = p_ // 3600",
                f"if h_ >= {HIRES_TIME_HOURS}:",
                f"    raise _hires_time_invalid({fsp}, h_)",
                f"{{v}} = _new(_Time, (s_, h_, p_ // 60 % 60, p_ % 60, t_ % {10**fsp} * {unit}))",
            ),
        )
    size = HIRES_DATETIME_BYTES[fsp]
    # Only where the bytes can hold a number that overflows MariaDB's microsecond count.
    limit = HIRES_DATETIME_LIMIT[fsp]
    check = (
        (f"if t_ >= {limit}:", f"    raise _hires_datetime_invalid({fsp}, t_)")
        if limit < 1 << (8 * size)
        else ()
    )
    return ColumnReader(
        f"{size}s",
        size,
        (
            "t_ = _fb({v}, 'big')",
            *check,
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
    lines = [
        "def convert(v):",
        *("    " + fill_template(line, "v") for line in code),
        "    return v",
    ]
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
