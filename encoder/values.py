"""Column values of ROWS events: values to bytes per column type and metadata, and compiled
writers of whole row images (mirror of decoder/values.py, whose column facts it shares).

Values are those decoder/values.py returns, and each is encoded exactly or refused with an
EncodeError that names it: nothing is truncated, rounded or wrapped (where MariaDB itself would
truncate or round, as it does fractional seconds beyond a column's precision, the encoder is
not the server). Integers are given in the column's range (signed, or unsigned when the
TABLE_MAP's SIGNEDNESS metadata says so); FLOAT takes a number a float32 holds exactly, DOUBLE
a ``float`` (or an int a double holds exactly); NEWDECIMAL takes a ``Decimal`` (or int, or
str) that is exact at the column's scale (``-0.00`` gives the negative-zero bytes
``7f ff ..``); fractional seconds have at most the column's precision in digits (none for the
old TIME/DATETIME/TIMESTAMP, whose MariaDB 5.3-format precision must come from the schema);
DATE/DATETIME take any object with ``year``, ``month``, ... attributes (``datetime`` too, but
not one with a time zone, nor a DATE with a time of day); TIME also takes a ``timedelta``, and
refuses a negative zero (the sign of a zero is not stored); an ENUM index or SET bitmask stays
within the members when the TABLE_MAP lists them; BIT within its width; strings, blobs, JSON
and geometry are ``bytes`` (a ``str`` is refused: its charset is not the encoder's to choose).

A value is accepted when its bytes hold it and the decoder gives it back unchanged, even where
the server would never write it (a VARCHAR longer than its column but within what its length
prefix holds, minute 61 in a DATETIME2, a NULL in a NOT NULL column): encoding what the decoder
returned from a real server's bytes gives back those bytes, and a fake master can produce
deliberately odd values. Unless a replica would read those bytes as another value: TIME2 hours
above 1023 (MariaDB reads 10 bits), TIMESTAMP seconds after 2038-01-19 03:14:07, an old DATETIME
whose year*10000+month*100+day needs more than 32 bits, a MariaDB 5.3 TIME(n) of 9984 hours or
more and a DATETIME(n) beyond 64 bits of microseconds are refused (fakemaster/vocabulary/columns.py).
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import cache, lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from fakemaster.vocabulary.columns import (
    BLOB_TYPES,
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
    frac_bytes,
    string_metadata,
    type_name,
)
from fakemaster.vocabulary.columns import FRAC_UNIT as _FRAC_UNIT
from fakemaster.vocabulary.columns import TIME2_HOURS as _TIME2_HOURS
from fakemaster.vocabulary.columns import TIMESTAMP_MAX_SECONDS as _MAX_SECONDS
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.layouts import F32 as _F32
from fakemaster.vocabulary.layouts import F64 as _F64
from fakemaster.vocabulary.layouts import U8 as _U8
from fakemaster.vocabulary.layouts import U16 as _U16
from fakemaster.vocabulary.layouts import U32 as _U32
from fakemaster.vocabulary.mariadb_types import FixedBinaryValue
from fakemaster.vocabulary.table_shapes import TableShapeCache
from fakemaster.vocabulary.values import ABSENT, DateTime, Time, Timestamp

__all__ = [
    "ColumnWriter",
    "RowsWriter",
    "TableEncoder",
    "column_writer",
    "compile_rows_writer",
    "describe_value",
    "encode_value",
    "table_encoder",
]

_MICROSECONDS = MICROSECONDS
# An error message shows a value's repr up to this many characters.
_MAX_REPR = 120
_OLD_TEMPORAL_HINT = (
    " (a MariaDB 5.3-format column with fractional seconds needs its precision from the "
    "schema: BinlogContext.temporal_precisions, or --temporal-precision on the command line)"
)


class ColumnWriter(NamedTuple):
    """How to write one column value.

    A fixed-size value is one ``struct`` item of code ``fmt`` (``size`` bytes) made by ``pre``
    (the value itself when None), which may raise anything on a bad value; ``guard``, when
    set, is an expression template (``{v}`` the value) that must hold before ``pre`` and the
    struct call may be trusted with the value. A variable-size one (``fmt`` empty) is a
    ``size``-byte length then the bytes. ``encode`` checks the value and gives its bytes or
    raises EncodeError; ``pre`` and the struct call accept no value that ``encode`` refuses,
    and give the same bytes.
    """

    fmt: str
    size: int
    pre: Callable[[Any], Any] | None
    encode: Callable[[Any], bytes]
    guard: str = ""


def describe_value(value: Any) -> str:
    """The repr of ``value`` for an error message, shortened when it is long."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still described
        return f"<{type(value).__name__} object>"
    if len(text) <= _MAX_REPR:
        return text
    if isinstance(value, str):
        size = f", {len(value)} characters"
    elif isinstance(value, (bytes, bytearray, memoryview)):
        size = f", {len(bytes(value))} bytes"
    else:
        size = ""
    return f"{text[: _MAX_REPR - 20]}...{text[-8:]} ({type(value).__name__}{size})"


def _cannot(name: str, value: Any, why: str) -> EncodeError:
    return EncodeError(f"{name} cannot hold {describe_value(value)}: {why}", value=value)


def _fixed_writer(name: str, fmt: str, pre: Callable[[Any], Any] | None) -> ColumnWriter:
    packer = struct.Struct("<" + fmt)
    pack = packer.pack

    def encode(value: Any) -> bytes:
        try:
            return pack(value if pre is None else pre(value))
        except EncodeError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever a bad value makes pre or pack raise
            raise _cannot(name, value, str(exc) or type(exc).__name__) from exc

    return ColumnWriter(fmt, packer.size, pre, encode)


# --- numbers ------------------------------------------------------------------------------


def _integer(value: Any) -> int:
    """``value`` as an int if it is one (``operator.index``: what ``struct`` packs), else
    TypeError."""
    if value.__class__ is int:
        return value
    index = getattr(type(value), "__index__", None)
    if index is None:
        raise TypeError("not an int")
    number: int = index(value)
    return number


def _int_writer(column_type: int, size: int, unsigned: bool) -> ColumnWriter:
    bits = 8 * size
    if unsigned:
        low, high = 0, (1 << bits) - 1
        name = f"{type_name(column_type)} UNSIGNED"
        hint = ""
    else:
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        name = f"{type_name(column_type)} (signed)"
        hint = " (a TABLE_MAP marks unsigned columns in its SIGNEDNESS metadata)"
    signed = not unsigned

    def encode(value: Any) -> bytes:
        try:
            number = _integer(value)
        except TypeError:
            raise _cannot(name, value, "not an int") from None
        if not low <= number <= high:
            raise _cannot(name, value, f"outside {low}..{high}{hint}")
        return number.to_bytes(size, "little", signed=signed)

    if size == 3:

        def pre(value: Any) -> bytes:
            packed: bytes = value.to_bytes(3, "little", signed=signed)
            return packed

        return ColumnWriter("3s", 3, pre, encode)
    # struct's own range check is exactly the column's: signed codes for signed columns.
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
    return ColumnWriter(code.upper() if unsigned else code, size, None, encode)


def _float32(value: Any) -> bytes:
    if not isinstance(value, (int, float)):
        raise _cannot("FLOAT", value, "not a float")
    packed = _F32.pack(value)  # OverflowError beyond float32's range
    stored = _F32.unpack(packed)[0]
    if stored != value and value == value:  # a NaN stays a NaN
        raise _cannot("FLOAT", value, f"not exact in 32 bits (it would be {stored!r})")
    return packed


def _float64(value: Any) -> bytes:
    if isinstance(value, float):
        return _F64.pack(value)
    if isinstance(value, int):
        try:
            as_float = float(value)
        except OverflowError:
            raise _cannot("DOUBLE", value, "outside a double's range") from None
        if as_float != value:
            raise _cannot("DOUBLE", value, f"not exact in a double (it would be {as_float!r})")
        return _F64.pack(as_float)
    raise _cannot("DOUBLE", value, "not a float")


def _double_writer() -> ColumnWriter:
    # Only a float is packed as it is by the compiled writers; anything else is checked.
    return ColumnWriter("d", 8, None, _float64, "{v}.__class__ is float")


@cache
def _decimal_pre(precision: int, scale: int) -> Callable[[Any], bytes]:
    groups = decimal_groups(precision, scale)
    size = sum(nbytes for nbytes, _ in groups)
    sign_bit = 1 << (8 * size - 1)
    negative_mask = ((1 << (8 * size)) - 1) ^ sign_bit
    plan: list[tuple[int, int]] = []  # (shift, 10 ** digits), least significant first
    shift = 0
    for nbytes, digits in reversed(groups):
        plan.append((shift, 10**digits))
        shift += 8 * nbytes
    scale_factor = 10**scale
    limit = 10**precision
    integer_digits = precision - scale
    name = f"DECIMAL({precision},{scale})"

    def encode_decimal(value: Any) -> bytes:
        number = value
        if number.__class__ is not Decimal and isinstance(number, str):
            try:
                number = Decimal(number)
            except ArithmeticError:
                raise _cannot(name, value, "not a decimal number") from None
        if isinstance(number, Decimal):
            if not number.is_finite():
                raise _cannot(name, value, "not a finite number")
            # Bounds first: as_integer_ratio of 1E-999999999 would take forever. (A zero's
            # exponent says nothing: 0E+9 is 0.)
            adjusted = number.adjusted()
            if (adjusted >= integer_digits or adjusted < -scale) and number:
                if adjusted >= integer_digits:
                    raise _cannot(name, value, f"more than {precision} digits")
                raise _cannot(name, value, f"more than {scale} fraction digits")
            numerator, denominator = number.as_integer_ratio()
            negative = number.is_signed()
        elif isinstance(number, int) and not isinstance(number, bool):
            numerator, denominator = number, 1
            negative = number < 0
        else:
            raise _cannot(name, value, "not a Decimal")
        magnitude, remainder = divmod(abs(numerator) * scale_factor, denominator)
        if remainder:
            raise _cannot(name, value, f"more than {scale} fraction digits")
        if magnitude >= limit:
            raise _cannot(name, value, f"more than {precision} digits")
        packed = 0
        for group_shift, power in plan:
            magnitude, group = divmod(magnitude, power)
            packed |= group << group_shift
        # Negative values have every byte inverted; the top bit is flipped for both signs.
        packed ^= negative_mask if negative else sign_bit
        return packed.to_bytes(size, "big")

    return encode_decimal


def _year(value: Any) -> int:
    if not isinstance(value, int):
        raise _cannot("YEAR", value, "not an int")
    if value == 0:
        return 0
    if not 1901 <= value <= 2155:
        raise _cannot("YEAR", value, "not 0 or 1901..2155")
    return value - 1900


# --- temporal -----------------------------------------------------------------------------


# Why a field has a lower limit than its bits: MariaDB reads a larger one as another value.
_TIME2_HOUR_BITS = "MariaDB reads TIME2 hours as 10 bits"
_HIRES_TIME_HOURS = f"MariaDB reads these hours modulo {HIRES_TIME_HOURS}"
_TIMESTAMP_END = "2038-01-19 03:14:07 is the last second MariaDB keeps"


def _check_fields(
    name: str, value: Any, fields: Sequence[tuple[str, Any, int]], why: str = ""
) -> None:
    """Each field an int in 0..limit-1; ``why`` says why the limits are what they are."""
    for field, got, limit in fields:
        if not isinstance(got, int) or not 0 <= got < limit:
            because = f" ({why})" if why and isinstance(got, int) and got >= limit else ""
            raise _cannot(name, value, f"{field} {got!r} not in 0..{limit - 1}{because}")


def _fraction_error(name: str, value: Any, microsecond: Any, fsp: int, hint: str = "") -> None:
    """Raise the EncodeError of fractional seconds that a precision ``fsp`` cannot hold."""
    if not isinstance(microsecond, int):
        why = f"microsecond {microsecond!r} is not an int"
    elif not 0 <= microsecond < _MICROSECONDS:
        why = f"microsecond {microsecond} not in 0..999999"
    elif fsp == 0:
        why = f"fractional seconds .{microsecond:06d}: the column has none{hint}"
    else:
        why = f"fractional seconds .{microsecond:06d} have more than {fsp} digits"
    raise _cannot(name, value, why)


def _no_fraction(name: str, value: Any, microsecond: Any) -> None:
    if microsecond != 0 or not isinstance(microsecond, int):
        _fraction_error(name, value, microsecond, 0, _OLD_TEMPORAL_HINT)


def _no_time_zone(name: str, value: Any) -> None:
    if getattr(value, "tzinfo", None) is not None:
        raise _cannot(name, value, "the column has no time zone (give a naive datetime)")


def _date(value: Any) -> bytes:
    year, month, day = value.year, value.month, value.day
    hour = getattr(value, "hour", None)
    if hour is not None and (hour or value.minute or value.second or value.microsecond):
        raise _cannot("DATE", value, "a DATE has no time of day")
    _check_fields("DATE", value, (("year", year, 1 << 15), ("month", month, 16), ("day", day, 32)))
    packed: int = day | month << 5 | year << 9
    return packed.to_bytes(3, "little")


def _time_fields(name: str, value: Any) -> tuple[bool, Any, Any, Any, Any]:
    time = Time.from_timedelta(value) if isinstance(value, _dt.timedelta) else value
    negative, hour, minute, second, microsecond = (
        bool(time.negative),
        time.hour,
        time.minute,
        time.second,
        time.microsecond,
    )
    if negative and not (hour or minute or second or microsecond):
        raise _cannot(name, value, "a negative zero: the sign of a zero TIME is not stored")
    return negative, hour, minute, second, microsecond


def _time_old(value: Any) -> bytes:
    negative, hour, minute, second, microsecond = _time_fields("TIME", value)
    _check_fields(
        "TIME", value, (("hour", hour, 1 << 24), ("minute", minute, 100), ("second", second, 100))
    )
    _no_fraction("TIME", value, microsecond)
    number: int = hour * 10000 + minute * 100 + second
    try:
        return (-number if negative else number).to_bytes(3, "little", signed=True)
    except OverflowError:
        raise _cannot("TIME", value, "out of range") from None


def _datetime_old(value: Any) -> int:
    fields = (
        ("month", value.month, 100),
        ("day", value.day, 100),
        ("hour", value.hour, 100),
        ("minute", value.minute, 100),
        ("second", value.second, 100),
    )
    _check_fields("DATETIME", value, (("year", value.year, 1 << 64), *fields))
    _no_fraction("DATETIME", value, value.microsecond)
    _no_time_zone("DATETIME", value)
    number: int = value.year
    for _, field, _ in fields:
        number = number * 100 + field
    if number >= OLD_DATETIME_LIMIT:
        raise _cannot(
            "DATETIME",
            value,
            f"year*10000+month*100+day is {number // 10**6}: MariaDB reads it as 32 bits",
        )
    return number


def _timestamp_parts(value: Any) -> tuple[Any, Any]:
    seconds, microsecond = value
    return seconds, microsecond


def _timestamp_old(value: Any) -> int:
    seconds: int
    seconds, microsecond = _timestamp_parts(value)
    _check_fields("TIMESTAMP", value, (("seconds", seconds, _MAX_SECONDS + 1),), _TIMESTAMP_END)
    _no_fraction("TIMESTAMP", value, microsecond)
    return seconds


@cache
def _datetime2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 5 + nbytes
    name = f"DATETIME2({fsp})"
    unit = 10 ** (MAX_FSP - fsp)
    byte_unit = _FRAC_UNIT[nbytes] or 1

    def encode_datetime2(value: Any) -> bytes:
        year, month, day = value.year, value.month, value.day
        hour, minute, second = value.hour, value.minute, value.second
        microsecond = value.microsecond
        if not (
            0 <= month < 13
            and 0 <= day < 32
            and 0 <= hour < 32
            and 0 <= minute < 64
            and 0 <= second < 64
            and 0 <= year * 13 + month < 1 << 17
        ):
            _check_fields(
                name,
                value,
                (
                    ("month", month, 13),
                    ("day", day, 32),
                    ("hour", hour, 32),
                    ("minute", minute, 64),
                    ("second", second, 64),
                    ("year", year, ((1 << 17) - month + 12) // 13),
                ),
            )
        if not (isinstance(microsecond, int) and 0 <= microsecond < _MICROSECONDS) or (
            microsecond % unit
        ):
            _fraction_error(name, value, microsecond, fsp)
        if value.__class__ is not DateTime:
            _no_time_zone(name, value)
        ymd = (year * 13 + month) << 5 | day
        packed = (ymd << 17 | hour << 12 | minute << 6 | second) + 0x8000000000
        stored: int = packed << (8 * nbytes) | microsecond // byte_unit
        return stored.to_bytes(size, "big")

    return encode_datetime2


@cache
def _timestamp2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 4 + nbytes
    name = f"TIMESTAMP2({fsp})"
    unit = 10 ** (MAX_FSP - fsp)
    byte_unit = _FRAC_UNIT[nbytes] or 1

    def encode_timestamp2(value: Any) -> bytes:
        seconds, microsecond = _timestamp_parts(value)
        _check_fields(name, value, (("seconds", seconds, _MAX_SECONDS + 1),), _TIMESTAMP_END)
        if not (isinstance(microsecond, int) and 0 <= microsecond < _MICROSECONDS) or (
            microsecond % unit
        ):
            _fraction_error(name, value, microsecond, fsp)
        packed: int = seconds << (8 * nbytes) | microsecond // byte_unit
        return packed.to_bytes(size, "big")

    return encode_timestamp2


@cache
def _time2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 3 + nbytes
    name = f"TIME2({fsp})"
    shift = 8 * nbytes
    unit = 10 ** (MAX_FSP - fsp)
    byte_unit = _FRAC_UNIT[nbytes] or 1

    def encode_time2(value: Any) -> bytes:
        negative, hour, minute, second, microsecond = _time_fields(name, value)
        _check_fields(
            name,
            value,
            (("hour", hour, _TIME2_HOURS), ("minute", minute, 64), ("second", second, 64)),
            _TIME2_HOUR_BITS,
        )
        if not (isinstance(microsecond, int) and 0 <= microsecond < _MICROSECONDS) or (
            microsecond % unit
        ):
            _fraction_error(name, value, microsecond, fsp)
        hms = hour << 12 | minute << 6 | second
        stored: int
        if nbytes == 3:
            packed = hms << 24 | microsecond
            stored = (-packed if negative else packed) + 0x800000000000
        else:
            frac = microsecond // byte_unit
            # A negative value with a fraction stores intpart - 1 and the fraction's complement.
            if not negative:
                intpart = hms
            elif frac:
                intpart = -hms - 1
                frac = (1 << shift) - frac
            else:
                intpart = -hms
            stored = (intpart + 0x800000) << shift | frac
        if not 0 <= stored < 1 << (8 * size):
            raise _cannot(name, value, "out of range")
        return stored.to_bytes(size, "big")

    return encode_time2


_HIRES_SAMPLE: dict[int, Any] = {
    ColumnType.TIME: Time(False, 0, 0, 0),
    ColumnType.DATETIME: DateTime(0, 0, 0),
    ColumnType.TIMESTAMP: Timestamp(0),
}


@cache
def _hires_pre(column_type: int, fsp: int) -> Callable[[Any], bytes]:
    """MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n) (see decoder/values.py)."""
    unit = 10 ** (MAX_FSP - fsp)
    name = f"{type_name(column_type)}({fsp}) (MariaDB 5.3 format)"

    def check_fraction(value: Any, microsecond: Any) -> None:
        if not (isinstance(microsecond, int) and 0 <= microsecond < _MICROSECONDS) or (
            microsecond % unit
        ):
            _fraction_error(name, value, microsecond, fsp)

    if column_type == ColumnType.TIMESTAMP:
        nbytes = frac_bytes(fsp)

        def encode_timestamp(value: Any) -> bytes:
            seconds, microsecond = _timestamp_parts(value)
            _check_fields(name, value, (("seconds", seconds, _MAX_SECONDS + 1),), _TIMESTAMP_END)
            check_fraction(value, microsecond)
            packed: int = seconds << (8 * nbytes) | microsecond // unit
            return packed.to_bytes(4 + nbytes, "big")

        return encode_timestamp
    if column_type == ColumnType.TIME:
        size = HIRES_TIME_BYTES[fsp]
        zero = HIRES_TIME_ZERO[fsp]

        def encode_time(value: Any) -> bytes:
            negative, hour, minute, second, microsecond = _time_fields(name, value)
            _check_fields(
                name,
                value,
                (("hour", hour, HIRES_TIME_HOURS), ("minute", minute, 60), ("second", second, 60)),
                _HIRES_TIME_HOURS,
            )
            check_fraction(value, microsecond)
            packed = ((hour * 60 + minute) * 60 + second) * 10**fsp + microsecond // unit
            stored: int = zero - packed if negative else zero + packed
            if not 0 <= stored < 1 << (8 * size):
                raise _cannot(name, value, "out of range")
            return stored.to_bytes(size, "big")

        return encode_time
    size = HIRES_DATETIME_BYTES[fsp]
    limit = min(1 << (8 * size), HIRES_DATETIME_LIMIT[fsp])
    why = (
        "out of range"
        if limit == 1 << (8 * size)
        else "beyond the 64-bit microsecond count MariaDB reads it into"
    )

    def encode_datetime(value: Any) -> bytes:
        year, month, day = value.year, value.month, value.day
        hour, minute, second, microsecond = (
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
        _check_fields(
            name,
            value,
            (
                ("year", year, 1 << 32),
                ("month", month, 13),
                ("day", day, 32),
                ("hour", hour, 24),
                ("minute", minute, 60),
                ("second", second, 60),
            ),
        )
        check_fraction(value, microsecond)
        _no_time_zone(name, value)
        seconds = ((((year * 13 + month) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second
        packed: int = seconds * 10**fsp + microsecond // unit
        if packed >= limit:
            raise _cannot(name, value, why)
        return packed.to_bytes(size, "big")

    return encode_datetime


# --- BIT, ENUM, SET -----------------------------------------------------------------------


def _bit_pre(size: int, bits: int) -> Callable[[Any], bytes]:
    width = min(bits, 8 * size)
    limit = 1 << width
    name = f"BIT({bits})"

    def encode_bits(value: Any) -> bytes:
        if not isinstance(value, int) or not 0 <= value < limit:
            raise _cannot(name, value, f"not an int in 0..{limit - 1} ({width} bits)")
        return value.to_bytes(size, "big")

    return encode_bits


def _little_endian_writer(name: str, size: int, limit: int | None) -> ColumnWriter:
    """ENUM index / SET bitmask of ``size`` bytes; below ``limit`` when the members are known."""
    top = 1 << (8 * size)
    if limit is None or limit >= top:
        limit = top
    why = f"not an int in 0..{limit - 1}"

    def pre(value: Any) -> bytes:
        try:
            number = _integer(value)  # what struct takes for an int, as the compiled writers
        except TypeError:
            raise _cannot(name, value, why) from None
        if not 0 <= number < limit:
            raise _cannot(name, value, why)
        return number.to_bytes(size, "little")

    writer = _fixed_writer(name, f"{size}s", pre)
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}.get(size)
    if code is None:
        return writer
    # A whole-byte code packs exactly the ints of 0..top-1: only a member limit needs a guard.
    guard = "" if limit == top else f"{{v}} < {limit}"
    return ColumnWriter(code, size, None, writer.encode, guard)


# --- strings ------------------------------------------------------------------------------


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{type(value).__name__} is not bytes")


def _variable_writer(name: str, prefix: int) -> ColumnWriter:
    limit = (1 << (8 * prefix)) - 1

    def encode(value: Any) -> bytes:
        if value.__class__ is not bytes:
            if isinstance(value, FixedBinaryValue):  # UUID/INET4/INET6: logged as BINARY(n)
                value = value.logged()
            elif isinstance(value, str):
                raise _cannot(
                    name, value, "a str, not bytes (encode it in the column's charset first)"
                )
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise _cannot(name, value, "not bytes")
            value = bytes(value)
        data: bytes = value
        if len(data) > limit:
            raise _cannot(
                name,
                value,
                f"{len(data)} bytes, its {prefix}-byte length holds at most {limit}",
            )
        return len(data).to_bytes(prefix, "little") + data

    return ColumnWriter("", prefix, None, encode)


def _null_pre(value: Any) -> bytes:
    if value != b"":
        raise _cannot("NULL", value, "a NULL-type column holds only b'' (or None)")
    return b""


# --- the writer of one column -------------------------------------------------------------


@lru_cache(maxsize=4096)
def column_writer(
    column_type: int, meta: int, unsigned: bool = False, members: int | None = None
) -> ColumnWriter:
    """The writer of one column; EncodeError for a type or metadata no value can have.

    ``members``: the number of members of an ENUM or SET column, when the TABLE_MAP lists
    them (an ENUM index is then at most that, 0 being the server's '' for an invalid value;
    a SET bitmask has no bit beyond them).
    """
    build = _WRITER_BUILDERS.get(column_type)
    if build is None:
        raise EncodeError(f"unknown column type {column_type}")
    return build(column_type, meta, unsigned, members)


# Each builder takes (column_type, meta, unsigned, members); most need only some of them.


def _integer_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    return _int_writer(column_type, INTEGER_SIZES[column_type], unsigned)


def _float_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    _expect_meta(column_type, meta, 4)
    return _fixed_writer("FLOAT", "4s", _float32)


def _double_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    _expect_meta(column_type, meta, 8)
    return _double_writer()


def _decimal_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    precision, scale = meta & 0xFF, meta >> 8
    if not 1 <= precision or scale > precision:
        raise EncodeError(f"invalid DECIMAL({precision},{scale}) metadata")
    pre = _decimal_pre(precision, scale)
    return _fixed_writer(f"DECIMAL({precision},{scale})", f"{len(pre(0))}s", pre)


def _year_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    return _fixed_writer("YEAR", "B", _year)


def _date_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    return _fixed_writer(type_name(column_type), "3s", _date)


# The old TIME, DATETIME and TIMESTAMP without fractional seconds: (struct code, encoder).
_OLD_TEMPORAL: dict[int, tuple[str, Callable[[Any], Any]]] = {
    ColumnType.TIME: ("3s", _time_old),
    ColumnType.DATETIME: ("Q", _datetime_old),
    ColumnType.TIMESTAMP: ("I", _timestamp_old),
}


def _old_temporal_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    if not meta:
        fmt, pre = _OLD_TEMPORAL[column_type]
        return _fixed_writer(type_name(column_type), fmt, pre)
    # A precision (from the schema) means the MariaDB 5.3 format with fractional seconds.
    if meta > MAX_FSP:
        raise EncodeError(f"{type_name(column_type)} precision {meta} is above {MAX_FSP}")
    hires = _hires_pre(column_type, meta)
    name = f"{type_name(column_type)}({meta})"
    return _fixed_writer(name, f"{len(hires(_HIRES_SAMPLE[column_type]))}s", hires)


# DATETIME2, TIMESTAMP2, TIME2: (bytes before the fraction, encoder for a precision).
_TEMPORAL2: dict[int, tuple[int, Callable[[int], Callable[[Any], bytes]]]] = {
    ColumnType.DATETIME2: (5, _datetime2_pre),
    ColumnType.TIMESTAMP2: (4, _timestamp2_pre),
    ColumnType.TIME2: (3, _time2_pre),
}


def _temporal2_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    fsp = meta
    if fsp > MAX_FSP:
        raise EncodeError(f"{type_name(column_type)} precision {fsp} is above {MAX_FSP}")
    whole_bytes, encoder_for = _TEMPORAL2[column_type]
    name = f"{type_name(column_type)}({fsp})"
    return _fixed_writer(name, f"{whole_bytes + frac_bytes(fsp)}s", encoder_for(fsp))


def _bit_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    size = bit_size(meta)
    bits = (meta >> 8) * 8 + (meta & 0xFF)
    return _fixed_writer(f"BIT({bits})", f"{size}s", _bit_pre(size, bits))


def _string_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    byte0 = meta & 0xFF
    real_type = column_type if column_type != ColumnType.STRING else byte0
    if real_type in (STRING_REAL_ENUM, STRING_REAL_SET):
        if members is None:
            return _little_endian_writer(type_name(real_type), meta >> 8, None)
        if real_type == STRING_REAL_ENUM:
            return _little_endian_writer(f"ENUM({members} members)", meta >> 8, members + 1)
        return _little_endian_writer(f"SET({members} members)", meta >> 8, 1 << members)
    _, max_len = string_metadata(meta)
    return _variable_writer(f"CHAR({max_len} bytes)", 2 if max_len > 255 else 1)


def _varchar_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    return _variable_writer(f"{type_name(column_type)}({meta} bytes)", 2 if meta > 255 else 1)


def _blob_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    if not 1 <= meta <= 4:
        raise EncodeError(f"{type_name(column_type)} length-prefix size {meta} is not 1..4")
    return _variable_writer(type_name(column_type), meta)


def _null_column(column_type: int, meta: int, unsigned: bool, members: int | None) -> ColumnWriter:
    return _fixed_writer("NULL", "0s", _null_pre)


def _old_decimal_column(
    column_type: int, meta: int, unsigned: bool, members: int | None
) -> ColumnWriter:
    raise EncodeError("old DECIMAL (type 0) values carry no length in the binlog")


_WRITER_BUILDERS: dict[int, Callable[[int, int, bool, int | None], ColumnWriter]] = {
    **dict.fromkeys(INTEGER_SIZES, _integer_column),
    ColumnType.FLOAT: _float_column,
    ColumnType.DOUBLE: _double_column,
    ColumnType.NEWDECIMAL: _decimal_column,
    ColumnType.YEAR: _year_column,
    ColumnType.DATE: _date_column,
    ColumnType.NEWDATE: _date_column,
    **dict.fromkeys(HIRES_TYPES, _old_temporal_column),
    **dict.fromkeys(_TEMPORAL2, _temporal2_column),
    ColumnType.BIT: _bit_column,
    ColumnType.STRING: _string_column,
    ColumnType.ENUM: _string_column,
    ColumnType.SET: _string_column,
    **dict.fromkeys(VARCHAR_TYPES, _varchar_column),
    **dict.fromkeys(BLOB_TYPES, _blob_column),
    ColumnType.NULL: _null_column,
    ColumnType.DECIMAL: _old_decimal_column,
}


def _expect_meta(column_type: int, meta: int, expected: int) -> None:
    if meta != expected:
        raise EncodeError(f"{type_name(column_type)} metadata {meta}, expected {expected}")


def encode_value(
    column_type: int, meta: int, value: Any, unsigned: bool = False, members: int | None = None
) -> bytes:
    """The bytes of one non-NULL column value (EncodeError if the column cannot hold it
    exactly)."""
    return column_writer(column_type, meta, unsigned, members).encode(value)


# --- whole row images ---------------------------------------------------------------------

RowsWriter = Callable[[Sequence[Any]], list[bytes]]


class _Mismatch(Exception):
    """A row that the generated writer does not handle; the checked writer explains it."""


def _variable_length_packer(prefix: int) -> Callable[[int], bytes]:
    if prefix == 1:
        return _U8.pack
    if prefix == 2:
        return _U16.pack
    if prefix == 4:
        return _U32.pack

    def pack3(length: int) -> bytes:
        return length.to_bytes(3, "little")

    return pack3


class _CodeWriter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {
            "_ABSENT": ABSENT,
            "_Mismatch": _Mismatch,
            "_as_bytes": _as_bytes,
        }

    def name(self, prefix: str, obj: Any) -> str:
        found = f"_{prefix}{len(self.names)}"
        self.names[found] = obj
        return found

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def _null_padding(count: int) -> int:
    """The NULL bitmap with no NULLs: padding bits are 1 (the server's ``pack_row``)."""
    size = (count + 7) >> 3
    return ((1 << (8 * size)) - 1) ^ ((1 << count) - 1)


def _emit_image(
    code: _CodeWriter,
    indent: int,
    writers: Sequence[ColumnWriter],
    present: Sequence[int],
    width: int,
    var: str,
) -> None:
    """Statements appending the bytes of the image in ``var`` to ``out``."""
    code.emit(indent, f"if len({var}) != {width}:")
    code.emit(indent + 1, "raise _Mismatch")
    present_set = set(present)
    absent = [column for column in range(width) if column not in present_set]
    if len(absent) == 1:
        code.emit(indent, f"if {var}[{absent[0]}] is not _ABSENT:")
        code.emit(indent + 1, "raise _Mismatch")
    elif absent:
        getter = code.name("g", itemgetter(*absent))
        absents = code.name("a", (ABSENT,) * len(absent))
        code.emit(indent, f"if {getter}({var}) != {absents}:")
        code.emit(indent + 1, "raise _Mismatch")
    if not present:
        return
    if len(present) == width:
        code.emit(indent, f"if None not in {var}:")
    elif len(present) == 1:
        code.emit(indent, f"if {var}[{present[0]}] is not None:")
    else:
        getter = code.name("g", itemgetter(*present))
        code.emit(indent, f"if None not in {getter}({var}):")

    # No NULLs: consecutive fixed-size values are packed by one struct call.
    null_size = (len(present) + 7) >> 3
    padding = _null_padding(len(present))
    code.emit(indent + 1, f"append({padding.to_bytes(null_size, 'little')!r})")
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        fmt = "<" + "".join(writers[column].fmt for column in run)
        pack = code.name("s", struct.Struct(fmt).pack)
        args = []
        guards = []
        for column in run:
            writer = writers[column]
            item = f"{var}[{column}]"
            args.append(item if writer.pre is None else f"{code.name('p', writer.pre)}({item})")
            if writer.guard:
                guards.append(writer.guard.replace("{v}", item))
        if guards:
            code.emit(indent + 1, f"if not ({' and '.join(guards)}):")
            code.emit(indent + 2, "raise _Mismatch")
        code.emit(indent + 1, f"append({pack}({', '.join(args)}))")
        run.clear()

    for column in present:
        writer = writers[column]
        if writer.fmt:
            run.append(column)
            continue
        flush()
        code.emit(indent + 1, f"v = {var}[{column}]")
        code.emit(indent + 1, "if v.__class__ is not bytes:")
        code.emit(indent + 2, "v = _as_bytes(v)")
        length = code.name("l", _variable_length_packer(writer.size))
        code.emit(indent + 1, f"append({length}(len(v)))")
        code.emit(indent + 1, "append(v)")
    flush()

    code.emit(indent, "else:")
    code.emit(indent + 1, "mark = len(out)")
    code.emit(indent + 1, "append(b'')")
    code.emit(indent + 1, f"nulls = {padding}")
    for bit, column in enumerate(present):
        code.emit(indent + 1, f"v = {var}[{column}]")
        code.emit(indent + 1, "if v is None:")
        code.emit(indent + 2, f"nulls |= {1 << bit}")
        code.emit(indent + 1, "else:")
        encode = code.name("e", writers[column].encode)
        code.emit(indent + 2, f"append({encode}(v))")
    code.emit(indent + 1, f"out[mark] = nulls.to_bytes({null_size}, 'little')")


def _present_columns(mask: int, width: int) -> tuple[int, ...]:
    return tuple(column for column in range(width) if mask >> column & 1)


def compile_rows_writer(
    writers: Sequence[ColumnWriter], width: int, present: int, present_after: int | None
) -> RowsWriter:
    """A function ``rows -> list of byte strings`` writing every row image.

    It raises _Mismatch (or any error of a bad value) for rows it does not handle; the
    checked writer then gives the EncodeError.
    """
    before = _present_columns(present, width)
    code = _CodeWriter()
    code.emit(0, "def write_rows(rows):")
    code.emit(1, "out = []")
    code.emit(1, "append = out.append")
    code.emit(1, "for row in rows:")
    if present_after is None:
        _emit_image(code, 2, writers, before, width, "row")
    else:
        after = _present_columns(present_after, width)
        code.emit(2, "before, after = row")
        _emit_image(code, 2, writers, before, width, "before")
        _emit_image(code, 2, writers, after, width, "after")
    code.emit(1, "return out")
    source = "\n".join(code.lines) + "\n"
    namespace = code.names
    exec(compile(source, f"<rows writer {width} columns>", "exec"), namespace)
    writer: RowsWriter = namespace["write_rows"]
    return writer


def _write_image_checked(
    out: list[bytes],
    writers: Sequence[ColumnWriter],
    present: int,
    width: int,
    image: Any,
    where: str,
    bitmap: str = "columns_present",
) -> None:
    """Append one row image; ``bitmap`` names the event field that says which columns it has."""
    if not isinstance(image, (tuple, list)) or len(image) != width:
        raise EncodeError(
            f"{where}: expected a sequence of {width} column values (the event's width), "
            f"got {describe_value(image)}"
        )
    mark = len(out)
    out.append(b"")
    nulls = 0
    bit = 0
    for column, value in enumerate(image):
        if not present >> column & 1:
            if value is not ABSENT:
                raise EncodeError(
                    f"not in the image ({bitmap}) but has value {describe_value(value)}",
                    value=value,
                    column=column,
                    where=where,
                )
            continue
        if value is ABSENT:
            raise EncodeError(
                f"in the image ({bitmap}) but ABSENT", value=value, column=column, where=where
            )
        if value is None:
            nulls |= 1 << bit
        else:
            try:
                out.append(writers[column].encode(value))
            except EncodeError as exc:
                raise exc.in_column(column, where=where) from None
        bit += 1
    null_size = (bit + 7) >> 3
    out[mark] = (nulls | _null_padding(bit)).to_bytes(null_size, "little")


class TableEncoder:
    """Row-image writers of one table shape, per column-present bitmap(s): the checked writer
    for a bitmap seen once, a compiled one from the second time on.

    ``members``: per column, the number of ENUM/SET members the TABLE_MAP lists (None where it
    lists none); :meth:`with_members` gives the encoder of the same shape with them.
    """

    MAX_WRITERS = 256
    MAX_VARIANTS = 64

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
        members: tuple[int | None, ...] | None = None,
    ) -> None:
        self.column_types = column_types
        self.column_meta = column_meta
        self.unsigned = unsigned
        self.members = members
        self._columns: list[ColumnWriter] | None = None
        self._writers: dict[tuple[int, int, int | None], RowsWriter] = {}
        self._seen_once: set[tuple[int, int, int | None]] = set()
        self._variants: dict[tuple[int | None, ...], TableEncoder] = {}

    def with_members(self, members: tuple[int | None, ...] | None) -> TableEncoder:
        """This shape's encoder that also keeps ENUM/SET values within their members."""
        if not members or members == self.members:
            return self
        variant = self._variants.get(members)
        if variant is None:
            if len(self._variants) >= self.MAX_VARIANTS:
                self._variants.clear()
            variant = TableEncoder(self.column_types, self.column_meta, self.unsigned, members)
            self._variants[members] = variant
        return variant

    def columns(self) -> list[ColumnWriter]:
        if self._columns is None:
            if not len(self.column_types) == len(self.column_meta) == len(self.unsigned):
                raise EncodeError("TABLE_MAP column_types and column_meta differ in length")
            members = self.members or ()
            writers = []
            for index, (column_type, meta, unsigned) in enumerate(
                zip(self.column_types, self.column_meta, self.unsigned, strict=True)
            ):
                count = members[index] if index < len(members) else None
                try:
                    writers.append(column_writer(column_type, meta, unsigned, count))
                except EncodeError as exc:
                    raise exc.in_column(index) from None
            self._columns = writers
        return self._columns

    def write_rows(
        self, width: int, present: int, present_after: int | None, rows: Sequence[Any]
    ) -> bytes:
        """The rows area of a ROWS event; EncodeError naming the row, column and value of the
        first value that cannot be encoded exactly."""
        if not isinstance(rows, (tuple, list)):
            raise EncodeError(f"rows must be a tuple of row images, not {describe_value(rows)}")
        key = (width, present, present_after)
        writer = self._writers.get(key)
        if writer is None:
            if key not in self._seen_once:
                if len(self._seen_once) >= self.MAX_WRITERS:
                    self._seen_once.clear()
                self._seen_once.add(key)
                return b"".join(self.write_rows_checked(width, present, present_after, rows))
            if len(self._writers) >= self.MAX_WRITERS:
                self._writers.clear()
            writer = compile_rows_writer(self.columns()[:width], width, present, present_after)
            self._writers[key] = writer
        try:
            return b"".join(writer(rows))
        except Exception:  # noqa: BLE001 - the checked writer names what was wrong, and where
            return b"".join(self.write_rows_checked(width, present, present_after, rows))

    def write_rows_checked(
        self, width: int, present: int, present_after: int | None, rows: Sequence[Any]
    ) -> list[bytes]:
        columns = self.columns()[:width]
        out: list[bytes] = []
        for index, row in enumerate(rows):
            if present_after is None:
                _write_image_checked(out, columns, present, width, row, f"row {index}")
                continue
            if not isinstance(row, (tuple, list)) or len(row) != 2:
                raise EncodeError(f"row {index}: an UPDATE row is a (before, after) pair")
            _write_image_checked(out, columns, present, width, row[0], f"row {index} before")
            _write_image_checked(
                out, columns, present_after, width, row[1], f"row {index} after",
                "columns_present_after",
            )  # fmt: skip
        return out


table_encoder = TableShapeCache(TableEncoder).get
