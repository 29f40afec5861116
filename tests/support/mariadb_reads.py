"""What MariaDB 10.11 reads from the bytes of a temporal column: a model of its readers,
independent of the decoder, to hold the decoder to.

Transcribed from MariaDB's ``sql/compat56.cc`` (TIME2, DATETIME2, TIMESTAMP2) and
``sql/field.cc`` (the old TIME, DATETIME, TIMESTAMP, DATE, YEAR and MariaDB 5.3's
TIME(n)/DATETIME(n)/TIMESTAMP(n)), keeping C's integer semantics: signed and unsigned reads of
the same bytes, truncating division, casts to 32 bits, 64-bit products that wrap. The result is
the ``MYSQL_TIME`` the server fills (what ``HOUR()``, ``MICROSECOND()``, ... return), or for a
TIMESTAMP its seconds and microseconds. A TIMESTAMP beyond 2038-01-19 03:14:07 or with a fraction
of a second or more is not kept as it is by a replica (it clamps the value or refuses the row):
:func:`read` gives None for it. ``tests/integration/test_temporal_edges.py`` checks the model
against a real replica, canonical and non-canonical bytes alike.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp

__all__ = ["Reading", "Timeval", "read", "value_of"]

_U64 = 1 << 64
# TIME_MAX_VALUE_SECONDS + 1: MariaDB 5.3 TIME(n) values are stored offset by this many seconds.
_HIRES_TIME_ZERO_SECONDS = 838 * 3600 + 59 * 60 + 59 + 1


class Reading(NamedTuple):
    """The fields of the server's MYSQL_TIME."""

    negative: bool
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    microsecond: int


class Timeval(NamedTuple):
    seconds: int
    microsecond: int


def _signed(number: int, bits: int) -> int:
    """``number`` (0..2**bits-1) as C reads those bits into a signed integer."""
    return number - (1 << bits) if number >> (bits - 1) else number


def _c_div(a: int, b: int) -> int:
    """C's integer division: truncated toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _longlong(number: int) -> int:
    """A product as C's 64-bit ``longlong`` arithmetic leaves it (wrapped)."""
    return _signed(number % _U64, 64)


def _big(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def _frac_bytes(fsp: int) -> int:
    return (fsp + 1) // 2


# --- compat56.cc --------------------------------------------------------------------------


def _time_from_packed(packed: int) -> Reading:
    """TIME_from_longlong_time_packed."""
    negative = packed < 0
    if negative:
        packed = -packed
    hms = packed >> 24
    return Reading(
        negative, 0, 0, 0, (hms >> 12) % (1 << 10), (hms >> 6) % (1 << 6), hms % (1 << 6),
        packed % (1 << 24),
    )  # fmt: skip


def _time2(raw: bytes, fsp: int) -> Reading:
    """my_time_packed_from_binary: the fraction is read unsigned; a negative value's fraction is
    stored as its complement (``intpart`` moves to the next integer)."""
    intpart = _big(raw[:3]) - 0x800000
    nbytes = _frac_bytes(fsp)
    if nbytes == 0:
        return _time_from_packed(intpart << 24)
    if nbytes == 3:
        return _time_from_packed(_big(raw) - 0x800000000000)
    frac = _big(raw[3:])
    if intpart < 0 and frac:
        intpart += 1
        frac -= 1 << (8 * nbytes)
    unit = 10000 if nbytes == 1 else 100
    return _time_from_packed((intpart << 24) + frac * unit)


def _datetime2(raw: bytes, fsp: int) -> Reading:
    """my_datetime_packed_from_binary (the fraction is read SIGNED) and
    TIME_from_longlong_datetime_packed."""
    intpart = _big(raw[:5]) - 0x8000000000
    nbytes = _frac_bytes(fsp)
    frac = 0
    if nbytes:
        unit = (0, 10000, 100, 1)[nbytes]
        frac = _signed(_big(raw[5:]), 8 * nbytes) * unit
    packed = (intpart << 24) + frac
    negative = packed < 0
    if negative:
        packed = -packed
    ymdhms = packed >> 24
    ymd, hms = ymdhms >> 17, ymdhms % (1 << 17)
    ym = ymd >> 5
    return Reading(
        negative, ym // 13, ym % 13, ymd % (1 << 5), hms >> 12, (hms >> 6) % (1 << 6),
        hms % (1 << 6), packed % (1 << 24),
    )  # fmt: skip


def _timestamp2(raw: bytes, fsp: int) -> Timeval:
    """my_timestamp_from_binary: one fraction byte is read unsigned, two or three signed."""
    seconds = _big(raw[:4])
    nbytes = _frac_bytes(fsp)
    if nbytes == 0:
        return Timeval(seconds, 0)
    if nbytes == 1:
        return Timeval(seconds, raw[4] * 10000)
    unit = 100 if nbytes == 2 else 1
    return Timeval(seconds, _signed(_big(raw[4:]), 8 * nbytes) * unit)


# --- field.cc -----------------------------------------------------------------------------


def _time_old(raw: bytes) -> Reading:
    """Field_time: hhmmss as a signed 24-bit number."""
    number = _signed(int.from_bytes(raw, "little"), 24)
    negative = number < 0
    number = abs(number)
    return Reading(negative, 0, 0, 0, number // 10000, number // 100 % 100, number % 100, 0)


def _datetime_old(raw: bytes) -> Reading:
    """Field_datetime::get_TIME: YYYYMMDDhhmmss as a signed 64-bit number, its date part cast
    to 32 bits."""
    number = _signed(int.from_bytes(raw, "little"), 64)
    part1 = _c_div(number, 1_000_000) % (1 << 32)
    part2 = ((number - part1 * 1_000_000) % _U64) % (1 << 32)
    return Reading(
        False, part1 // 10000, part1 // 100 % 100, part1 % 100, part2 // 10000,
        part2 // 100 % 100, part2 % 100, 0,
    )  # fmt: skip


def _date(raw: bytes) -> Reading:
    """Field_newdate: day 5 bits, month 4, year the rest."""
    number = int.from_bytes(raw, "little")
    return Reading(False, number >> 9, (number >> 5) & 15, number & 31, 0, 0, 0, 0)


def _unpack_time(packed: int, is_time: bool) -> Reading:
    """field.cc unpack_time(): a mixed-radix microsecond count (a TIME's days and months are
    folded back into its hours; its year is dropped)."""
    negative = packed < 0
    if negative:
        packed = -packed
    fields = []
    for radix in (1_000_000, 60, 60, 24, 32, 13):
        fields.append(packed % radix)
        packed //= radix
    microsecond, second, minute, hour, day, month = fields
    year = packed % (1 << 32)  # (uint)
    if is_time:
        return Reading(negative, 0, 0, 0, hour + (month * 32 + day) * 24, minute, second,
                       microsecond)  # fmt: skip
    return Reading(negative, year, month, day, hour, minute, second, microsecond)


def _time_hires(raw: bytes, fsp: int) -> Reading:
    """Field_time_hires::get_date: (number - zero point) * 10 ** (6 - fsp), unpack_time()."""
    zero = _HIRES_TIME_ZERO_SECONDS * 10**fsp
    packed = _longlong((_big(raw) - zero) * 10 ** (6 - fsp))
    return _unpack_time(packed, is_time=True)


def _datetime_hires(raw: bytes, fsp: int) -> Reading:
    """Field_datetime_hires: the bytes as a longlong, times 10 ** (6 - fsp), unpack_time()."""
    packed = _longlong(_signed(_big(raw), 64) * 10 ** (6 - fsp))
    return _unpack_time(packed, is_time=False)


def _timestamp_hires(raw: bytes, fsp: int) -> Timeval:
    """Field_timestamp_hires: seconds, then the fraction in units of 10 ** -fsp."""
    return Timeval(_big(raw[:4]), _big(raw[4:]) * 10 ** (6 - fsp))


def read(column_type: int, fsp: int, raw: bytes) -> Reading | Timeval | None:
    """What MariaDB reads from ``raw``, a value of a column of ``column_type`` with fractional
    precision ``fsp`` (for TIME/DATETIME/TIMESTAMP, > 0 means MariaDB 5.3's format). None: a
    TIMESTAMP a replica does not keep as it is."""
    reading: Reading | Timeval
    if column_type == T.TIME2:
        return _time2(raw, fsp)
    if column_type == T.DATETIME2:
        return _datetime2(raw, fsp)
    if column_type in (T.DATE, T.NEWDATE):
        return _date(raw)
    if column_type == T.YEAR:
        return Reading(False, raw[0] + 1900 if raw[0] else 0, 0, 0, 0, 0, 0, 0)
    if column_type == T.TIME:
        return _time_hires(raw, fsp) if fsp else _time_old(raw)
    if column_type == T.DATETIME:
        return _datetime_hires(raw, fsp) if fsp else _datetime_old(raw)
    if column_type == T.TIMESTAMP2:
        reading = _timestamp2(raw, fsp)
    elif column_type == T.TIMESTAMP:
        reading = _timestamp_hires(raw, fsp) if fsp else Timeval(int.from_bytes(raw, "little"), 0)
    else:
        raise ValueError(f"not a temporal column type: {column_type}")
    if reading.seconds > 0x7FFFFFFF or not 0 <= reading.microsecond < 1_000_000:
        return None
    return reading


def value_of(column_type: int, reading: Reading | Timeval) -> Any:
    """A reading as the decoder's value types hold it (a DATETIME's sign, which the server
    ignores when it shows one, is dropped)."""
    if isinstance(reading, Timeval):
        return Timestamp(reading.seconds, reading.microsecond)
    if column_type == T.YEAR:
        return reading.year
    if column_type in (T.DATE, T.NEWDATE):
        return Date(reading.year, reading.month, reading.day)
    if column_type in (T.TIME, T.TIME2):
        return Time(reading.negative, reading.hour, reading.minute, reading.second,
                    reading.microsecond)  # fmt: skip
    return DateTime(*reading[1:])
