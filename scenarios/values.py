"""Plain Python values to the model's value of a column, exactly or not at all.

The model keeps each value as the codec does (:mod:`fakemaster.vocabulary.values`, decoder/values.py), in
its true range:

==========================  ========================================  ===========================
column                      accepted                                  kept as
==========================  ========================================  ===========================
TINYINT..BIGINT [UNSIGNED]  ``int`` in range                          ``int`` (unsigned positive)
DECIMAL(p,s)                ``Decimal``, ``int``, ``str``, exact at s  ``Decimal`` with s digits
FLOAT                       a ``float`` a float32 holds exactly        ``float``
DOUBLE                      ``float`` (or an ``int`` it holds)         ``float``
BIT(n)                      ``int`` below 2**n, or big-endian bytes    ``int``
YEAR                        ``int`` 1901..2155 (or 0)                  ``int``
DATE                        ``datetime.date``, ``Date``, 'YYYY-MM-DD'  ``Date``
TIME(fsp)                   ``timedelta``, ``Time``, '[-]h:mm:ss[.f]'  ``Time``
DATETIME(fsp)               naive ``datetime``, ``DateTime``, text     ``DateTime``
TIMESTAMP(fsp)              aware ``datetime``, ``Timestamp``, text    ``Timestamp``
                            in UTC (the scenario's SQL time zone)
CHAR/VARCHAR/TEXT/JSON      ``str`` (encoded in the column's charset)  ``bytes``
                            or ``bytes`` already encoded
BINARY/VARBINARY/BLOB       ``bytes``                                  ``bytes``
ENUM                        a member (``str``) or its index ``int``    ``int`` index (1-based)
SET                         ``str`` 'a,b', a set/list of members, or   ``int`` bitmask
                            the bitmask ``int``
UUID/INET4/INET6            the text the server accepts, the value,   ``Uuid``/``Inet4``/
                            or its 16/4 bytes (fewer: as logged,      ``Inet6``
                            zero-padded)
==========================  ========================================  ===========================

``None`` is NULL (refused in a NOT NULL column). Anything else raises
:class:`~scenarios.errors.ValueDoesNotFit` naming the table, the column and the value: too long,
out of range, fractional seconds beyond the column's precision, not a member, a FLOAT that a
float32 does not hold (round it yourself with :func:`float32`), a CHAR with trailing spaces (the
server drops them), a negative zero (its sign is not kept).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import struct
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from fakemaster.protocol.conversion import PYTHON_CODECS as MULTI_BYTE_CODECS
from fakemaster.vocabulary.columns import MICROSECONDS, TIMESTAMP_MAX_SECONDS
from fakemaster.vocabulary.mariadb_types import (
    FIXED_BINARY_TYPES,
    FixedBinaryTextError,
    FixedBinaryValue,
)
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.errors import ValueDoesNotFit
from scenarios.schema import BLOB_SIZES, INTEGER_RANGES, NO_DEFAULT, Column
from scenarios.text import format_float

__all__ = ["PYTHON_CODECS", "convert", "copied_default", "float32", "python_codec"]

# MariaDB character sets -> Python codecs: the protocol's multi-byte ones (one table) and the
# single-byte ones a column may use (MariaDB's latin1 is Windows-1252).
PYTHON_CODECS: dict[str, str] = {
    **MULTI_BYTE_CODECS,
    "latin1": "cp1252",
    "ascii": "ascii",
    "cp1251": "cp1251",
}
# Python's UTF-8 and UTF-16 hold what utf8mb3 and ucs2 cannot: a character beyond the BMP.
_BMP_ONLY = frozenset({"utf8mb3", "ucs2"})
_F32 = struct.Struct("<f")
TIME_MAX_HOURS = 838


def python_codec(charset: str | None) -> str | None:
    """The Python codec of a MariaDB character set, None for ``binary``."""
    if charset is None or charset == "binary":
        return None
    try:
        return PYTHON_CODECS[charset]
    except KeyError:
        raise ValueError(f"character set {charset!r} is not modelled") from None


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (what a FLOAT column keeps)."""
    result: float = _F32.unpack(_F32.pack(value))[0]
    return result


def copied_default(column: Column) -> Any:
    """The default ``column`` has after an ``ALTER TABLE`` that does not redefine it.

    The server rebuilds every column it keeps from its old definition, and reads the old
    default back through its text (``Create_field`` from ``Field::val_str``): a FLOAT prints
    at most 6 significant digits (:func:`scenarios.text.format_float`), so a default needing
    more becomes the float32 nearest to its 6-digit text (-4.187074711047373e+16 becomes
    -4.187069986583347e+16). Every other type reads back as itself (a DOUBLE prints its
    shortest round-trip digits)."""
    value = column.default
    if column.type != "float" or value is NO_DEFAULT or value is None:
        return value
    return float32(float(format_float(value)))


def convert(column: Column, value: Any, *, table: str = "?") -> Any:
    """The model value of ``value`` in ``column`` (see the module docstring)."""
    if value is None:
        if not column.nullable:
            raise ValueDoesNotFit(table, column.name, value, "the column is NOT NULL")
        return None
    try:
        return _CONVERTERS[column.type](column, value)
    except _Refused as refused:
        raise ValueDoesNotFit(table, column.name, value, str(refused)) from None


class _Refused(Exception):
    pass


def _no_bool(value: Any) -> None:
    if isinstance(value, bool):
        raise _Refused("a bool is not a number here (give 0 or 1)")


def _integer(column: Column, value: Any) -> int:
    _no_bool(value)
    if not isinstance(value, int):
        raise _Refused(f"{column.type} takes an int, not {type(value).__name__}")
    bits = 8 * INTEGER_RANGES[column.type][0]
    low, high = (0, (1 << bits) - 1) if column.unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)
    if not low <= value <= high:
        unsigned = " unsigned" if column.unsigned else ""
        raise _Refused(f"out of range for {column.type}{unsigned} ({low}..{high})")
    return value


def _decimal(column: Column, value: Any) -> Decimal:
    _no_bool(value)
    precision, scale = column.precision or 10, column.scale or 0
    if isinstance(value, float):
        raise _Refused("give a Decimal, an int or a str (a float is not exact)")
    try:
        number = Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise _Refused(f"not a decimal number: {type(value).__name__}") from None
    if not number.is_finite():
        raise _Refused("not a finite number")
    with localcontext() as ctx:
        ctx.prec = 200
        exact = number.quantize(Decimal(1).scaleb(-scale))
    if exact != number:
        raise _Refused(f"more than {scale} digits after the point")
    digits = len(exact.as_tuple().digits) if exact else 0
    integer_digits = max(digits - scale, 0) if exact else 0
    if integer_digits > precision - scale:
        raise _Refused(f"more than {precision - scale} digits before the point")
    if column.unsigned and exact < 0:
        raise _Refused("negative in an UNSIGNED column")
    if exact.is_zero() and exact.is_signed():
        raise _Refused("a negative zero (its sign is not kept)")
    return exact


def _real(column: Column, value: Any) -> float:
    _no_bool(value)
    if isinstance(value, int):
        number = float(value)
        if number != value:
            raise _Refused("the int is not exact as a double")
    elif isinstance(value, float):
        number = value
    else:
        raise _Refused(f"{column.type} takes a float, not {type(value).__name__}")
    if not math.isfinite(number):
        raise _Refused("not a finite number")
    if number == 0 and math.copysign(1, number) < 0:
        raise _Refused("a negative zero (its sign is not kept)")
    if column.type == "float":
        try:
            rounded = float32(number)
        except OverflowError:
            raise _Refused("beyond a FLOAT's range") from None
        if rounded != number:
            raise _Refused(
                f"a FLOAT keeps {rounded!r}: round it with scenarios.values.float32 first"
            )
    if column.unsigned and number < 0:
        raise _Refused("negative in an UNSIGNED column")
    return number


def _bit(column: Column, value: Any) -> int:
    _no_bool(value)
    bits = column.length or 1
    if isinstance(value, bytes | bytearray):
        value = int.from_bytes(value, "big")
    if not isinstance(value, int):
        raise _Refused(f"BIT takes an int or bytes, not {type(value).__name__}")
    if not 0 <= value < 1 << bits:
        raise _Refused(f"not within {bits} bits")
    return value


def _year(column: Column, value: Any) -> int:
    _no_bool(value)
    if not isinstance(value, int):
        raise _Refused(f"YEAR takes an int, not {type(value).__name__}")
    if value != 0 and not 1901 <= value <= 2155:
        raise _Refused("YEAR is 1901..2155 (or 0)")
    return value


def _date(column: Column, value: Any) -> Date:
    if isinstance(value, str):
        value = _parse_date(value)
    if isinstance(value, _dt.datetime):
        raise _Refused("a DATE takes a date, not a datetime")
    if isinstance(value, _dt.date):
        return Date(value.year, value.month, value.day)
    if isinstance(value, Date):
        if value.is_zero() or value.to_date() is not None:
            return value
        raise _Refused("not a calendar date (nor the zero date)")
    raise _Refused(f"DATE takes a date, not {type(value).__name__}")


def _parse_date(text: str) -> Date:
    parts = text.split("-")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise _Refused("not 'YYYY-MM-DD'")
    return Date(int(parts[0]), int(parts[1]), int(parts[2]))


def _check_fraction(column: Column, microsecond: int) -> None:
    unit = 10 ** (6 - column.fsp)
    if microsecond % unit:
        raise _Refused(
            f"fractional seconds beyond the column's precision {column.fsp}"
            + (" (it has none)" if column.fsp == 0 else "")
        )


def _split_time_text(text: str) -> tuple[int, int, int, int]:
    whole, _, fraction = text.partition(".")
    parts = whole.split(":")
    if (
        len(parts) != 3
        or not all(p.isdigit() for p in parts)
        or fraction
        and not fraction.isdigit()
    ):
        raise _Refused("not 'hh:mm:ss[.ffffff]'")
    if len(fraction) > 6:
        raise _Refused("more than 6 fraction digits")
    return int(parts[0]), int(parts[1]), int(parts[2]), int(fraction.ljust(6, "0") or 0)


def _time(column: Column, value: Any) -> Time:
    if isinstance(value, str):
        negative = value.startswith("-")
        hour, minute, second, micro = _split_time_text(value[1:] if negative else value)
        value = Time(negative, hour, minute, second, micro)
    if isinstance(value, _dt.timedelta):
        value = Time.from_timedelta(value)
    if not isinstance(value, Time):
        raise _Refused(f"TIME takes a timedelta or a Time, not {type(value).__name__}")
    if not (
        0 <= value.minute < 60 and 0 <= value.second < 60 and 0 <= value.microsecond < MICROSECONDS
    ):
        raise _Refused("minutes and seconds are 0..59, microseconds below a second")
    if (
        value.hour > TIME_MAX_HOURS
        or value.hour == TIME_MAX_HOURS
        and (value.minute, value.second, value.microsecond) > (59, 59, 0)
    ):
        raise _Refused("beyond TIME's range of +-838:59:59")
    if value.hour < 0:
        raise _Refused("give the sign in the negative field")
    _check_fraction(column, value.microsecond)
    if value.negative and not (value.hour or value.minute or value.second or value.microsecond):
        raise _Refused("a negative zero (its sign is not kept)")
    return Time(bool(value.negative), value.hour, value.minute, value.second, value.microsecond)


def _datetime_fields(value: Any) -> DateTime:
    if isinstance(value, str):
        day, _, clock = value.partition(" ")
        date = _parse_date(day)
        hour, minute, second, micro = _split_time_text(clock) if clock else (0, 0, 0, 0)
        return DateTime(*date, hour, minute, second, micro)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            raise _Refused("a DATETIME has no time zone (give a naive datetime)")
        return DateTime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
    if isinstance(value, DateTime):
        return value
    raise _Refused(f"DATETIME takes a naive datetime, not {type(value).__name__}")


def _datetime(column: Column, value: Any) -> DateTime:
    fields = _datetime_fields(value)
    is_zero = fields == DateTime(0, 0, 0)
    if not is_zero and (fields.to_datetime() is None or fields.year < 1000):
        raise _Refused("not a date and time of years 1000..9999 (nor the zero value)")
    _check_fraction(column, fields.microsecond)
    return fields


def _timestamp(column: Column, value: Any) -> Timestamp:
    if isinstance(value, str):
        fields = _datetime_fields(value)
        if fields == DateTime(0, 0, 0):
            return Timestamp(0, 0)
        moment = fields.to_datetime()
        if moment is None:
            raise _Refused("not a date and time")
        value = moment.replace(tzinfo=_dt.UTC)  # the scenario's SQL runs in UTC
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise _Refused("a TIMESTAMP needs an aware datetime (a naive one is ambiguous)")
        moment = value.astimezone(_dt.UTC)
        seconds = int((moment - _EPOCH).total_seconds() // 1)
        value = Timestamp(seconds, moment.microsecond)
    if not isinstance(value, Timestamp):
        raise _Refused(
            f"TIMESTAMP takes an aware datetime or a Timestamp, not {type(value).__name__}"
        )
    if value == Timestamp(0, 0):
        return value
    if not 1 <= value.seconds <= TIMESTAMP_MAX_SECONDS or not 0 <= value.microsecond < MICROSECONDS:
        raise _Refused("beyond TIMESTAMP's range (1970-01-01 00:00:01 .. 2038-01-19 03:14:07 UTC)")
    _check_fraction(column, value.microsecond)
    return value


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def _encode_text(column: Column, value: Any) -> bytes:
    codec = python_codec(column.charset)
    if isinstance(value, str):
        if codec is None:
            raise _Refused("a byte column takes bytes, not str")
        try:
            data = value.encode(codec)
        except UnicodeEncodeError as exc:
            raise _Refused(f"not representable in {column.charset}: {exc.reason}") from None
        if column.charset in _BMP_ONLY and any(ord(char) > 0xFFFF for char in value):
            raise _Refused(f"not representable in {column.charset}: a character beyond U+FFFF")
        return data
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
        if codec is not None:
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                raise _Refused(f"bytes that are not {column.charset} text") from None
            if column.charset in _BMP_ONLY and any(ord(char) > 0xFFFF for char in text):
                raise _Refused(f"not representable in {column.charset}: a character beyond U+FFFF")
        return data
    raise _Refused(f"{column.type} takes str or bytes, not {type(value).__name__}")


def _characters(column: Column, data: bytes) -> int:
    codec = python_codec(column.charset)
    return len(data) if codec is None else len(data.decode(codec))


def _ends_with_space(column: Column, data: bytes) -> bool:
    codec = python_codec(column.charset)
    return data.endswith(b" ") if codec is None else data.decode(codec).endswith(" ")


def _string(column: Column, value: Any) -> bytes:
    if column.type == "json":
        if not isinstance(value, str | bytes | bytearray):
            value = json.dumps(value, ensure_ascii=False)
        try:
            json.loads(value)
        except ValueError:
            raise _Refused("not valid JSON") from None
    data = _encode_text(column, value)
    kind = column.type
    if kind in BLOB_SIZES:
        limit = (1 << 8 * BLOB_SIZES[kind]) - 1
        if len(data) > limit:
            raise _Refused(f"{len(data)} bytes, {kind.upper()} holds {limit}")
        return data
    length = column.length or 0
    if _characters(column, data) > length:
        unit = "bytes" if column.charset in (None, "binary") else "characters"
        raise _Refused(f"longer than {length} {unit}")
    if kind == "char" and _ends_with_space(column, data):
        raise _Refused("a CHAR drops trailing spaces")
    if kind == "binary":
        data = data.ljust(length, b"\x00")
    return data


def _enum(column: Column, value: Any) -> int:
    _no_bool(value)
    if isinstance(value, int):
        if not 1 <= value <= len(column.members):
            raise _Refused(f"index beyond the {len(column.members)} members")
        return value
    if isinstance(value, str):
        try:
            return column.members.index(value) + 1
        except ValueError:
            raise _Refused(f"not a member of {column.members}") from None
    raise _Refused(f"ENUM takes a member or its index, not {type(value).__name__}")


def _set(column: Column, value: Any) -> int:
    _no_bool(value)
    members = column.members
    if isinstance(value, int):
        if not 0 <= value < 1 << len(members):
            raise _Refused(f"bits beyond the {len(members)} members")
        return value
    if isinstance(value, str):
        names: Iterable[Any] = value.split(",") if value else []
    elif isinstance(value, set | frozenset | list | tuple):
        names = value
    else:
        raise _Refused(f"SET takes members or a bitmask, not {type(value).__name__}")
    mask = 0
    for name in names:
        if not isinstance(name, str) or name not in members:
            raise _Refused(f"{name!r} is not a member of {members}")
        mask |= 1 << members.index(name)
    return mask


def _fixed_binary(column: Column, value: Any) -> FixedBinaryValue:
    kind = FIXED_BINARY_TYPES[column.type]
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        try:
            return kind.parse(value)
        except FixedBinaryTextError:
            raise _Refused(f"not a valid {column.type.upper()} text") from None
    if isinstance(value, bytes) and len(value) <= kind.LENGTH:
        return kind.from_logged(value)  # its bytes, or as the binlog logs them (no trailing NULs)
    raise _Refused(
        f"{column.type.upper()} takes its text, a {kind.__name__} or up to {kind.LENGTH} bytes,"
        f" not {type(value).__name__}" + (f" of {len(value)}" if isinstance(value, bytes) else "")
    )


_CONVERTERS: dict[str, Any] = {
    **dict.fromkeys(INTEGER_RANGES, _integer),
    "decimal": _decimal,
    "float": _real,
    "double": _real,
    "bit": _bit,
    "year": _year,
    "date": _date,
    "time": _time,
    "datetime": _datetime,
    "timestamp": _timestamp,
    **dict.fromkeys(("char", "varchar", "binary", "varbinary", "json", *BLOB_SIZES), _string),
    "enum": _enum,
    "set": _set,
    **dict.fromkeys(FIXED_BINARY_TYPES, _fixed_binary),
}
