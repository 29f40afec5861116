"""numpy: fixed-size raw columns converted a column at a time (integers, DECIMALs, DATE,
DATETIME2, TIMESTAMP2, TIME2, YEAR), from a matrix of their bytes or from unsigned integers read
in place; None where the per-value path (arrow_types.py) must say what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from decoder.columnar.arrow_types import (
    _DAY_US,
    IntConverter,
    MatrixConverter,
    VectorConverter,
    _fraction,
)
from decoder.columnar.libraries import _np, _pa
from fakemaster.vocabulary.columns import MICROSECONDS, TIME2_HOURS, decimal_groups
from fakemaster.vocabulary.columns import TIMESTAMP_MAX_SECONDS as _MAX_SECONDS

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "_by_matrix",
    "_date_vector",
    "_datetime2_vector",
    "_decimal_vector",
    "_decimal_words",
    "_int_vector",
    "_time2_vector",
    "_timestamp2_vector",
    "_values_vector",
    "_wide_decimal_vector",
    "_year_vector",
]


if TYPE_CHECKING:
    from decoder.columnar.images import _Images


# A TIME2 hour/minute/second field from this on has hour bits MariaDB ignores (values.py).
_TIME2_HMS_LIMIT = TIME2_HOURS << 12


def _byte_matrix(values: Sequence[Any], size: int) -> tuple[Any, Any]:
    """The values (bytes of ``size``, or None) as an (n, size) uint8 matrix, and the NULL
    mask (None when there is no NULL)."""
    np = _np()
    nulls = None
    if None in values:
        zero = bytes(size)
        nulls = np.fromiter((v is None for v in values), bool, len(values))
        values = [zero if v is None else v for v in values]
    matrix = np.frombuffer(b"".join(values), np.uint8).reshape(len(values), size)
    return matrix, nulls


def _big_endian(matrix: Any) -> Any:
    """The rows of an (n, size) uint8 matrix as big-endian unsigned integers (uint64)."""
    return _unsigned(matrix, ">")


# The numpy unsigned integer width holding a value of 1 to 8 bytes.
_WIDTHS = (0, 1, 2, 4, 4, 8, 8, 8, 8)


def _unsigned(matrix: Any, order: str) -> Any:
    np = _np()
    count, size = matrix.shape
    if size > 8:
        raise ValueError(f"an integer of {size} bytes")
    width = _WIDTHS[size]
    if width != size:  # zero bytes on the high side
        full = np.zeros((count, width), np.uint8)
        if order == "<":
            full[:, :size] = matrix
        else:
            full[:, width - size :] = matrix
        matrix = full
    else:
        matrix = np.ascontiguousarray(matrix)
    return matrix.view(f"{order}u{width}").reshape(count).astype(np.uint64)


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _civil_days(year: Any, month: Any, day: Any) -> tuple[Any, Any]:
    """Days since 1970-01-01 of int64 arrays (Howard Hinnant's days_from_civil) and whether
    each is a calendar date Python's datetime.date accepts (year 1..9999)."""
    np = _np()
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_days = np.take(np.array(_MONTH_DAYS, np.int64), np.clip(month, 1, 12) - 1)
    month_days = month_days + ((month == 2) & leap)
    valid = (year >= 1) & (year <= 9999) & (month >= 1) & (month <= 12) & (day >= 1)
    valid &= day <= month_days
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468, valid


# Per year * 13 + month (MySQL's packing) of years 0 to 9999 and one past them: the days from
# 1970-01-01 to the month's day 0, and the month's length (0: not a month of years 1 to 9999,
# or not a month): built once, by summing the months' lengths.
_MONTHS: list[tuple[Any, Any]] = []
_MONTHS_END = 10_000 * 13


def _month_days(year_month: Any, day: Any) -> tuple[Any, Any]:
    """_civil_days of (year * 13 + month, day) int64 arrays, by table."""
    np = _np()
    if not _MONTHS:
        years = np.arange(10_001)
        leap = ((years % 4 == 0) & (years % 100 != 0)) | (years % 400 == 0)
        table = np.tile(np.array((0, *_MONTH_DAYS), np.int32), (10_001, 1))  # month 0: none
        table[:, 2] += leap
        table[0] = table[10_000] = 0
        length = table.ravel()[: _MONTHS_END + 1]
        first = np.cumsum(length, dtype=np.int32) - length  # (days from 0001-01-01)
        _MONTHS.append((first - (first[1970 * 13 + 1] + 1), length.astype(np.uint8)))
    before, lengths = _MONTHS[0]
    year_month = np.clip(year_month, 0, _MONTHS_END)  # (a NULL's bytes are not its own)
    return before[year_month] + day, (day >= 1) & (day <= lengths[year_month])


def _masked(values: Any, valid: Any, nulls: Any, arrow: Any) -> Any:
    np = _np()
    if nulls is not None:
        valid = valid & ~nulls
    mask = None if valid.all() else ~valid
    return _pa().array(values, type=arrow, mask=mask if mask is None else np.asarray(mask))


def _values_vector(matrix: MatrixConverter, size: int) -> VectorConverter:
    """A MatrixConverter applied to a sequence of raw values (bytes or None)."""

    def vector(values: Sequence[Any]) -> Any:
        return matrix(*_byte_matrix(values, size))

    return vector


def _any_valid(flags: Any, nulls: Any) -> bool:
    """Whether a flag is set on a row that is not NULL (a NULL row's bytes are not its own)."""
    if nulls is not None:
        flags = flags & ~nulls
    return bool(flags.any())


def _by_matrix(convert: IntConverter, order: str) -> MatrixConverter:
    """An IntConverter applied to an (n, size) uint8 matrix of the raw values."""

    def vector(matrix: Any, nulls: Any) -> Any:
        return convert(_unsigned(matrix, order), nulls)

    return vector


def _datetime2_vector(fsp: int, arrow: Any) -> IntConverter:
    nbytes, shift, mask, unit = _fraction(fsp)

    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        frac = ((t & np.uint64(mask)) * np.uint64(unit)).astype(np.int64)
        packed = (t >> np.uint64(shift)).astype(np.int64) - 0x8000000000
        if _any_valid((packed < 0) | (frac >= MICROSECONDS), nulls):
            return None  # the per-value path raises the row decoder's error
        ymd = packed >> 17
        ym = ymd >> 5
        days, valid = _month_days(ym, ymd & 31)
        hms = packed & 0x1FFFF
        hour, minute, second = hms >> 12, (hms >> 6) & 63, hms & 63
        valid &= (hour <= 23) & (minute <= 59) & (second <= 59)
        micros = days * _DAY_US + (hour * 3600 + minute * 60 + second) * MICROSECONDS + frac
        return _masked(np.where(valid, micros, 0), valid, nulls, arrow)

    return vector


def _timestamp2_vector(fsp: int, arrow: Any) -> IntConverter:
    nbytes, shift, mask, unit = _fraction(fsp)

    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        frac = ((t & np.uint64(mask)) * np.uint64(unit)).astype(np.int64)
        seconds = (t >> np.uint64(shift)).astype(np.int64)
        if _any_valid((seconds > _MAX_SECONDS) | (frac >= MICROSECONDS), nulls):
            return None
        return _masked(seconds * MICROSECONDS + frac, seconds != 0, nulls, arrow)

    return vector


def _time2_vector(fsp: int, arrow: Any) -> IntConverter:
    """TIME2 (decoder/values.py _time2_reader, a column at a time): signed microseconds."""
    nbytes, shift, _, unit = _fraction(fsp)

    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        t = t.astype(np.int64)
        if nbytes == 0:
            value = t - 0x800000
            negative = value < 0
            hms, micro = np.abs(value), np.zeros_like(value)
        elif nbytes == 3:
            packed = t - 0x800000000000
            negative = packed < 0
            packed = np.abs(packed)
            hms, micro = packed >> 24, packed & 0xFFFFFF
        else:
            intpart = (t >> shift) - 0x800000
            frac = t & ((1 << shift) - 1)
            negative = intpart < 0
            with_frac = negative & (frac != 0)
            hms = np.where(negative, np.where(with_frac, -intpart - 1, -intpart), intpart)
            micro = np.where(with_frac, ((1 << shift) - frac) * unit, frac * unit)
        if nulls is not None:
            hms = np.where(nulls, 0, hms)
            micro = np.where(nulls, 0, micro)
        if (hms >= _TIME2_HMS_LIMIT).any() or (micro >= MICROSECONDS).any():
            return None  # the per-value path raises the row decoder's error
        seconds = (hms >> 12) * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63)
        micros = seconds * MICROSECONDS + micro
        micros = np.where(negative, -micros, micros)
        return _masked(micros, np.ones(len(micros), bool), nulls, arrow)

    return vector


def _date_vector(arrow: Any) -> IntConverter:
    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        t = t.astype(np.int64)
        month = (t >> 5) & 15
        days, valid = _month_days((t >> 9) * 13 + month, t & 31)
        valid &= month <= 12
        return _masked(np.where(valid, days, 0).astype(np.int32), valid, nulls, arrow)

    return vector


def _decimal_vector(precision: int, scale: int, arrow: Any) -> IntConverter | None:
    """DECIMALs of up to 18 digits in up to 8 bytes: their unscaled values fit an int64."""
    groups = decimal_groups(precision, scale)
    size = sum(nbytes for nbytes, _ in groups)
    if precision > 18 or size > 8:
        return None
    sign_bit = 1 << (8 * size - 1)
    negative_mask = ((1 << (8 * size)) - 1) ^ sign_bit
    parts = []
    shift = 8 * size
    digits_after = precision
    for nbytes, digits in groups:
        shift -= 8 * nbytes
        digits_after -= digits
        parts.append((shift, (1 << (8 * nbytes)) - 1, 10**digits, 10**digits_after))

    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        count = len(t)
        positive = (t & np.uint64(sign_bit)) != 0
        t = np.where(positive, t ^ np.uint64(sign_bit), t ^ np.uint64(negative_mask))
        unscaled = np.zeros(count, np.int64)
        for group_shift, group_mask, limit, weight in parts:
            group = ((t >> np.uint64(group_shift)) & np.uint64(group_mask)).astype(np.int64)
            if _any_valid(group >= limit, nulls):
                return None
            unscaled += group * weight
        unscaled = np.where(positive, unscaled, -unscaled)
        if nulls is not None:
            unscaled[nulls] = 0
        words = np.empty((count, 2), np.int64)
        words[:, 0] = unscaled
        words[:, 1] = unscaled >> 63
        pa = _pa()
        validity = None
        if nulls is not None:
            validity = pa.array(~nulls).buffers()[1]
        return pa.Array.from_buffers(arrow, count, [validity, pa.py_buffer(words.tobytes())])

    return vector


def _wide_decimal_vector(precision: int, scale: int, arrow: Any) -> MatrixConverter:
    """DECIMALs of more digits than an int64 holds: the unscaled value built in 32-bit limbs
    (numpy uint64 arrays, little-endian limb order), one digit group at a time (value * 10**digits
    + group), then written as the decimal128/256's little-endian two's complement words.
    The converter of an (n, size) uint8 matrix of the raw values; its ``from_images``
    attribute: the same from a batch's images and the values' positions."""
    groups = decimal_groups(precision, scale)
    limbs = 4 if precision <= 38 else 8  # decimal128 / decimal256
    spans = []
    offset = 0
    total = 0
    for nbytes, digits in groups:
        total += digits
        # (the limbs the value can reach after this group: it is under 10**total)
        spans.append(
            (offset, nbytes, 10**digits, min(limbs, ((10**total).bit_length() + 31) // 32))
        )
        offset += nbytes
    first_bytes = groups[0][0]

    def convert(read: Callable[[int, int], Any], count: int, nulls: Any) -> Any:
        """``read(start, nbytes)``: every value's bytes ``start`` to ``start + nbytes`` as
        big-endian unsigned integers (uint64)."""
        np = _np()
        pa = _pa()
        # The sign: the first byte's top bit set for a value >= 0; a negative value is stored
        # with every bit inverted.
        head = read(0, first_bytes)
        sign_bit = np.uint64(1 << (8 * first_bytes - 1))
        positive = (head & sign_bit) != 0
        negative = ~positive
        if nulls is not None:
            negative &= ~nulls
        acc = np.zeros((limbs, count), np.uint64)
        low = np.uint64(0xFFFFFFFF)
        bits = np.uint64(32)
        for start, nbytes, limit, used in spans:
            group = head if start == 0 else read(start, nbytes)
            group = np.where(negative, group ^ np.uint64((1 << (8 * nbytes)) - 1), group)
            if start == 0:
                group &= ~sign_bit
            if nulls is not None:
                group[nulls] = 0
            if (group >= limit).any():
                return None  # the per-value path raises the row decoder's error
            if start == 0:
                acc[0] = group  # (under 2**32: a group has at most 4 bytes)
                continue
            carry = group
            factor = np.uint64(limit)
            for limb in range(used):  # acc = acc * limit + group, limb by limb
                value = acc[limb] * factor + carry
                acc[limb] = value & low
                carry = value >> bits
        # Negative values: two's complement over the limbs (invert, add one).
        if negative.any():
            carry = negative.astype(np.uint64)
            for limb in range(limbs):
                value = np.where(negative, acc[limb] ^ low, acc[limb]) + carry
                acc[limb] = value & low
                carry = value >> bits
        words = np.ascontiguousarray(acc.T).astype("<u4")
        validity = None
        if nulls is not None:
            validity = pa.array(~nulls).buffers()[1]
        return pa.Array.from_buffers(arrow, count, [validity, pa.py_buffer(words.tobytes())])

    def vector(matrix: Any, nulls: Any) -> Any:
        return convert(
            lambda start, nbytes: _big_endian(matrix[:, start : start + nbytes]), len(matrix), nulls
        )

    def from_images(images: _Images, positions: Any, nulls: Any) -> Any:
        np = _np()
        # (a value's bytes end at most at the images' end: past it, a NULL's, or wrong)
        return convert(
            lambda start, nbytes: images.unsigned(
                np.minimum(positions + start, images.limit), nbytes, ">"
            ),
            len(positions),
            nulls,
        )

    vector.from_images = from_images  # type: ignore[attr-defined]
    return vector


def _int_vector(size: int, signed: bool, arrow: Any) -> IntConverter | None:
    """Integers of ``size`` bytes (MEDIUMINT, BIT, ENUM, SET: the row decoder's
    ``int.from_bytes``) as an Arrow integer array; None (the row decoder's way, which says
    what is wrong) when a value does not fit ``arrow``."""
    np = _np()
    pa = _pa()
    if not pa.types.is_integer(arrow) or size > 7:
        return None
    dtype = np.dtype(arrow.to_pandas_dtype())
    high = np.iinfo(dtype).max
    half = 1 << (8 * size - 1)
    whole = 1 << (8 * size)

    def vector(t: Any, nulls: Any) -> Any:
        values = t.astype(np.int64)
        if signed:
            values = np.where(values >= half, values - whole, values)
        elif nulls is not None:
            if int(np.where(nulls, 0, values).max(initial=0)) > high:
                return None
        elif int(values.max(initial=0)) > high:
            return None
        return pa.array(values.astype(dtype), type=arrow, mask=nulls)

    return vector


def _year_vector(arrow: Any) -> IntConverter:
    np = _np()

    def vector(t: Any, nulls: Any) -> Any:
        years = t.astype(np.int16)
        return _pa().array(np.where(years > 0, years + 1900, 0), type=arrow, mask=nulls)

    return vector


def _decimal_words(arrow: Any) -> IntConverter:
    """Unsigned 64-bit values as a decimal(20, 0) array (its two little-endian words)."""

    def vector(t: Any, nulls: Any) -> Any:
        np = _np()
        pa = _pa()
        count = len(t)
        words = np.zeros((count, 2), np.uint64)
        words[:, 0] = t
        validity = None
        if nulls is not None:
            words[nulls] = 0
            validity = pa.array(~nulls).buffers()[1]
        return pa.Array.from_buffers(arrow, count, [validity, pa.py_buffer(words.tobytes())])

    return vector
