"""Column values of ROWS events: values to bytes per column type and metadata, and compiled
writers of whole row images (mirror of decoder/values.py, whose column facts it shares).

Values are those decoder/values.py returns. Integers may be given in the signed or the unsigned
range of their width; NEWDECIMAL takes a ``Decimal`` (or int, or str) that is exact at the
column's scale (``-0.00`` gives the negative-zero bytes ``7f ff ..``); DATE/DATETIME take any
object with ``year``, ``month``, ... attributes (``datetime`` too); TIME also takes a
``timedelta``. Fractional seconds below a column's precision are dropped, as the server does.

A value is accepted when its bytes can hold it, even where the server would never write it (a
VARCHAR longer than its column, minute 61): encoding what the decoder returned gives back the
bytes it came from, and a fake master can produce deliberately odd values.
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import cache, lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from fakemaster.columns import (
    BLOB_TYPES,
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
    frac_bytes,
    string_metadata,
    type_name,
)
from fakemaster.constants import ColumnType
from fakemaster.errors import EncodeError
from fakemaster.table_shapes import TableShapeCache
from fakemaster.values import ABSENT, DateTime, Time, Timestamp

_FRAC_UNIT = (0, 10000, 100, 1)
_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")


class ColumnWriter(NamedTuple):
    """How to write one column value.

    A fixed-size value is one ``struct`` item of code ``fmt`` (``size`` bytes) made by ``pre``
    (the value itself when None), which may raise anything on a bad value; a variable-size one
    (``fmt`` empty) is a ``size``-byte length then the bytes. ``encode`` checks the value and
    gives its bytes or raises EncodeError.
    """

    fmt: str
    size: int
    pre: Callable[[Any], Any] | None
    encode: Callable[[Any], bytes]


def _fail(column_type: int, value: Any, why: str) -> EncodeError:
    return EncodeError(f"{type_name(column_type)} cannot hold {value!r}: {why}")


def _fixed_writer(column_type: int, fmt: str, pre: Callable[[Any], Any] | None) -> ColumnWriter:
    packer = struct.Struct("<" + fmt)
    pack = packer.pack

    def encode(value: Any) -> bytes:
        try:
            return pack(value if pre is None else pre(value))
        except EncodeError:
            raise
        except (struct.error, TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise _fail(column_type, value, str(exc)) from None

    return ColumnWriter(fmt, packer.size, pre, encode)


def _int_writer(column_type: int, size: int, unsigned: bool) -> ColumnWriter:
    low = -(1 << (8 * size - 1))
    high = (1 << (8 * size)) - 1

    def encode(value: Any) -> bytes:
        if not isinstance(value, int):
            raise _fail(column_type, value, "not an int")
        if not low <= value <= high:
            raise _fail(column_type, value, f"outside {low}..{high}")
        return (value & high).to_bytes(size, "little")

    if size == 3:
        signed = not unsigned

        def pre(value: Any) -> bytes:
            return value.to_bytes(3, "little", signed=signed)

        return ColumnWriter("3s", 3, pre, encode)
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[size]
    return ColumnWriter(code.upper() if unsigned else code, size, None, encode)


def _float_writer(column_type: int, fmt: str) -> ColumnWriter:
    def pre(value: Any) -> float:
        if not isinstance(value, (int, float)):
            raise _fail(column_type, value, "not a float")
        return value

    writer = _fixed_writer(column_type, fmt, pre)
    return writer._replace(pre=None)


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
    name = f"DECIMAL({precision},{scale})"

    def encode_decimal(value: Any) -> bytes:
        if value.__class__ is not Decimal and isinstance(value, str):
            value = Decimal(value)
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise EncodeError(f"{name} cannot hold {value}")
            numerator, denominator = value.as_integer_ratio()
            negative = value.is_signed()
        elif isinstance(value, int) and not isinstance(value, bool):
            numerator, denominator = value, 1
            negative = value < 0
        else:
            raise EncodeError(f"{name} cannot hold {value!r}: not a Decimal")
        magnitude, remainder = divmod(abs(numerator) * scale_factor, denominator)
        if remainder:
            raise EncodeError(f"{name} cannot hold {value}: more than {scale} fraction digits")
        if magnitude >= limit:
            raise EncodeError(f"{name} cannot hold {value}: more than {precision} digits")
        packed = 0
        for group_shift, power in plan:
            magnitude, group = divmod(magnitude, power)
            packed |= group << group_shift
        # Negative values have every byte inverted; the top bit is flipped for both signs.
        packed ^= negative_mask if negative else sign_bit
        return packed.to_bytes(size, "big")

    return encode_decimal


def _year(value: Any) -> int:
    if value == 0:
        return 0
    if not isinstance(value, int) or not 1901 <= value <= 2155:
        raise EncodeError(f"YEAR cannot hold {value!r}: not 0 or 1901..2155")
    return value - 1900


def _check_fields(name: str, value: Any, fields: Sequence[tuple[str, int, int]]) -> None:
    for field, got, limit in fields:
        if not isinstance(got, int) or not 0 <= got < limit:
            raise EncodeError(
                f"{name} cannot hold {value!r}: {field} {got!r} not in 0..{limit - 1}"
            )


def _date(value: Any) -> bytes:
    year, month, day = value.year, value.month, value.day
    _check_fields("DATE", value, (("year", year, 1 << 15), ("month", month, 16), ("day", day, 32)))
    return (day | month << 5 | year << 9).to_bytes(3, "little")


def _time_fields(value: Any) -> tuple[bool, int, int, int, int]:
    if isinstance(value, _dt.timedelta):
        value = Time.from_timedelta(value)
    return (bool(value.negative), value.hour, value.minute, value.second, value.microsecond)


def _time_old(value: Any) -> bytes:
    negative, hour, minute, second, _ = _time_fields(value)
    _check_fields(
        "TIME", value, (("hour", hour, 1 << 24), ("minute", minute, 100), ("second", second, 100))
    )
    number = hour * 10000 + minute * 100 + second
    try:
        return (-number if negative else number).to_bytes(3, "little", signed=True)
    except OverflowError:
        raise EncodeError(f"TIME cannot hold {value!r}: out of range") from None


def _datetime_old(value: Any) -> int:
    fields = (
        ("month", value.month, 100),
        ("day", value.day, 100),
        ("hour", value.hour, 100),
        ("minute", value.minute, 100),
        ("second", value.second, 100),
    )
    _check_fields("DATETIME", value, (("year", value.year, 1 << 64), *fields))
    number = value.year
    for _, field, _ in fields:
        number = number * 100 + field
    if number >= 1 << 64:
        raise EncodeError(f"DATETIME cannot hold {value!r}: out of range")
    return number


def _timestamp_parts(value: Any) -> tuple[int, int]:
    seconds, microsecond = value
    return seconds, microsecond


def _timestamp_old(value: Any) -> int:
    seconds, _ = _timestamp_parts(value)
    _check_fields("TIMESTAMP", value, (("seconds", seconds, 1 << 32),))
    return seconds


def _fraction(name: str, value: Any, microsecond: Any, nbytes: int) -> int:
    if not isinstance(microsecond, int) or microsecond < 0:
        raise EncodeError(f"{name} cannot hold {value!r}: microsecond {microsecond!r}")
    if nbytes == 0:
        return 0
    units = microsecond // _FRAC_UNIT[nbytes]
    if units >= 1 << (8 * nbytes):
        raise EncodeError(f"{name} cannot hold {value!r}: microsecond {microsecond} too large")
    return units


@cache
def _datetime2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 5 + nbytes
    name = f"DATETIME2({fsp})"

    def encode_datetime2(value: Any) -> bytes:
        year, month, day = value.year, value.month, value.day
        hour, minute, second = value.hour, value.minute, value.second
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
        frac = _fraction(name, value, value.microsecond, nbytes)
        ymd = (year * 13 + month) << 5 | day
        packed = (ymd << 17 | hour << 12 | minute << 6 | second) + 0x8000000000
        return (packed << (8 * nbytes) | frac).to_bytes(size, "big")

    return encode_datetime2


@cache
def _timestamp2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 4 + nbytes
    name = f"TIMESTAMP2({fsp})"

    def encode_timestamp2(value: Any) -> bytes:
        seconds, microsecond = _timestamp_parts(value)
        _check_fields(name, value, (("seconds", seconds, 1 << 32),))
        frac = _fraction(name, value, microsecond, nbytes)
        return (seconds << (8 * nbytes) | frac).to_bytes(size, "big")

    return encode_timestamp2


@cache
def _time2_pre(fsp: int) -> Callable[[Any], bytes]:
    nbytes = frac_bytes(fsp)
    size = 3 + nbytes
    name = f"TIME2({fsp})"
    shift = 8 * nbytes

    def encode_time2(value: Any) -> bytes:
        negative, hour, minute, second, microsecond = _time_fields(value)
        _check_fields(
            name,
            value,
            (("hour", hour, 1 << 12), ("minute", minute, 64), ("second", second, 64)),
        )
        hms = hour << 12 | minute << 6 | second
        if nbytes == 3:
            _check_fields(name, value, (("microsecond", microsecond, 1 << 24),))
            packed = hms << 24 | microsecond
            stored = (-packed if negative else packed) + 0x800000000000
        else:
            frac = _fraction(name, value, microsecond, nbytes)
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
            raise EncodeError(f"{name} cannot hold {value!r}: out of range")
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
    unit = 10 ** (6 - fsp)
    name = f"{type_name(column_type)}({fsp}) (MariaDB 5.3 format)"
    if column_type == ColumnType.TIMESTAMP:
        nbytes = frac_bytes(fsp)

        def encode_timestamp(value: Any) -> bytes:
            seconds, microsecond = _timestamp_parts(value)
            _check_fields(name, value, (("seconds", seconds, 1 << 32),))
            units = microsecond // unit
            if not 0 <= units < 1 << (8 * nbytes):
                raise EncodeError(f"{name} cannot hold {value!r}: microsecond {microsecond}")
            return (seconds << (8 * nbytes) | units).to_bytes(4 + nbytes, "big")

        return encode_timestamp
    if column_type == ColumnType.TIME:
        size = HIRES_TIME_BYTES[fsp]
        zero = HIRES_TIME_ZERO[fsp]

        def encode_time(value: Any) -> bytes:
            negative, hour, minute, second, microsecond = _time_fields(value)
            _check_fields(
                name,
                value,
                (
                    ("hour", hour, 1 << 32),
                    ("minute", minute, 60),
                    ("second", second, 60),
                    ("microsecond", microsecond, 10**6),
                ),
            )
            packed = ((hour * 60 + minute) * 60 + second) * 10**fsp + microsecond // unit
            stored = zero - packed if negative else zero + packed
            if not 0 <= stored < 1 << (8 * size):
                raise EncodeError(f"{name} cannot hold {value!r}: out of range")
            return stored.to_bytes(size, "big")

        return encode_time
    size = HIRES_DATETIME_BYTES[fsp]

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
                ("microsecond", microsecond, 10**6),
            ),
        )
        seconds = ((((year * 13 + month) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second
        packed = seconds * 10**fsp + microsecond // unit
        if packed >= 1 << (8 * size):
            raise EncodeError(f"{name} cannot hold {value!r}: out of range")
        return packed.to_bytes(size, "big")

    return encode_datetime


def _big_endian_pre(size: int) -> Callable[[Any], bytes]:
    def encode_bits(value: Any) -> bytes:
        if not isinstance(value, int) or value < 0:
            raise EncodeError(f"BIT cannot hold {value!r}: not a non-negative int")
        return value.to_bytes(size, "big")

    return encode_bits


def _little_endian_writer(column_type: int, size: int) -> ColumnWriter:
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}.get(size)
    if code is not None:

        def check(value: Any) -> int:
            if not isinstance(value, int):
                raise _fail(column_type, value, "not an int")
            return value

        return _fixed_writer(column_type, code, check)._replace(pre=None)

    def pre(value: Any) -> bytes:
        if not isinstance(value, int) or value < 0:
            raise _fail(column_type, value, "not a non-negative int")
        return value.to_bytes(size, "little")

    return _fixed_writer(column_type, f"{size}s", pre)


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{type(value).__name__} is not bytes")


def _variable_writer(column_type: int, prefix: int) -> ColumnWriter:
    limit = (1 << (8 * prefix)) - 1

    def encode(value: Any) -> bytes:
        if value.__class__ is not bytes:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise _fail(column_type, value, "not bytes")
            value = bytes(value)
        if len(value) > limit:
            raise _fail(column_type, f"<{len(value)} bytes>", f"longer than {limit} bytes")
        return len(value).to_bytes(prefix, "little") + value

    return ColumnWriter("", prefix, None, encode)


def _null_pre(value: Any) -> bytes:
    if value != b"":
        raise EncodeError(f"a NULL-type column holds only b'' (or None), not {value!r}")
    return b""


@lru_cache(maxsize=4096)
def column_writer(column_type: int, meta: int, unsigned: bool = False) -> ColumnWriter:
    """The writer of one column; EncodeError for a type or metadata no value can have."""
    size = INTEGER_SIZES.get(column_type)
    if size is not None:
        return _int_writer(column_type, size, unsigned)
    if column_type == ColumnType.FLOAT:
        _expect_meta(column_type, meta, 4)
        return _float_writer(column_type, "f")
    if column_type == ColumnType.DOUBLE:
        _expect_meta(column_type, meta, 8)
        return _float_writer(column_type, "d")
    if column_type == ColumnType.NEWDECIMAL:
        precision, scale = meta & 0xFF, meta >> 8
        if not 1 <= precision or scale > precision:
            raise EncodeError(f"invalid DECIMAL({precision},{scale}) metadata")
        pre = _decimal_pre(precision, scale)
        return _fixed_writer(column_type, f"{len(pre(0))}s", pre)
    if column_type == ColumnType.YEAR:
        return _fixed_writer(column_type, "B", _year)
    if column_type in (ColumnType.DATE, ColumnType.NEWDATE):
        return _fixed_writer(column_type, "3s", _date)
    if column_type in HIRES_TYPES and meta:
        if meta > MAX_FSP:
            raise EncodeError(f"{type_name(column_type)} precision {meta} is above {MAX_FSP}")
        pre = _hires_pre(column_type, meta)
        return _fixed_writer(column_type, f"{len(pre(_HIRES_SAMPLE[column_type]))}s", pre)
    if column_type == ColumnType.TIME:
        return _fixed_writer(column_type, "3s", _time_old)
    if column_type == ColumnType.DATETIME:
        return _fixed_writer(column_type, "Q", _datetime_old)
    if column_type == ColumnType.TIMESTAMP:
        return _fixed_writer(column_type, "I", _timestamp_old)
    if column_type in (ColumnType.DATETIME2, ColumnType.TIMESTAMP2, ColumnType.TIME2):
        fsp = meta
        if fsp > MAX_FSP:
            raise EncodeError(f"{type_name(column_type)} precision {fsp} is above {MAX_FSP}")
        if column_type == ColumnType.DATETIME2:
            return _fixed_writer(column_type, f"{5 + frac_bytes(fsp)}s", _datetime2_pre(fsp))
        if column_type == ColumnType.TIMESTAMP2:
            return _fixed_writer(column_type, f"{4 + frac_bytes(fsp)}s", _timestamp2_pre(fsp))
        return _fixed_writer(column_type, f"{3 + frac_bytes(fsp)}s", _time2_pre(fsp))
    if column_type == ColumnType.BIT:
        size = bit_size(meta)
        return _fixed_writer(column_type, f"{size}s", _big_endian_pre(size))
    if column_type in (ColumnType.STRING, ColumnType.ENUM, ColumnType.SET):
        byte0 = meta & 0xFF
        if byte0 in (STRING_REAL_ENUM, STRING_REAL_SET) or column_type != ColumnType.STRING:
            return _little_endian_writer(column_type, meta >> 8)
        _, max_len = string_metadata(meta)
        return _variable_writer(column_type, 2 if max_len > 255 else 1)
    if column_type in VARCHAR_TYPES:
        return _variable_writer(column_type, 2 if meta > 255 else 1)
    if column_type in BLOB_TYPES:
        if not 1 <= meta <= 4:
            raise EncodeError(f"{type_name(column_type)} length-prefix size {meta} is not 1..4")
        return _variable_writer(column_type, meta)
    if column_type == ColumnType.NULL:
        return _fixed_writer(column_type, "0s", _null_pre)
    if column_type == ColumnType.DECIMAL:
        raise EncodeError("old DECIMAL (type 0) values carry no length in the binlog")
    raise EncodeError(f"unknown column type {column_type}")


def _expect_meta(column_type: int, meta: int, expected: int) -> None:
    if meta != expected:
        raise EncodeError(f"{type_name(column_type)} metadata {meta}, expected {expected}")


def encode_value(column_type: int, meta: int, value: Any, unsigned: bool = False) -> bytes:
    """The bytes of one non-NULL column value."""
    return column_writer(column_type, meta, unsigned).encode(value)


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
        for column in run:
            pre = writers[column].pre
            item = f"{var}[{column}]"
            args.append(item if pre is None else f"{code.name('p', pre)}({item})")
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
) -> None:
    if not isinstance(image, (tuple, list)) or len(image) != width:
        raise EncodeError(f"{where}: expected a sequence of {width} column values, got {image!r}")
    mark = len(out)
    out.append(b"")
    nulls = 0
    bit = 0
    for column, value in enumerate(image):
        if not present >> column & 1:
            if value is not ABSENT:
                raise EncodeError(
                    f"{where}: column {column} is not in the image but has value {value!r}"
                )
            continue
        if value is ABSENT:
            raise EncodeError(f"{where}: column {column} is in the image but ABSENT")
        if value is None:
            nulls |= 1 << bit
        else:
            try:
                out.append(writers[column].encode(value))
            except EncodeError as exc:
                raise EncodeError(f"{where}, column {column}: {exc}") from None
        bit += 1
    null_size = (bit + 7) >> 3
    out[mark] = (nulls | _null_padding(bit)).to_bytes(null_size, "little")


class TableEncoder:
    """Row-image writers of one table shape, per column-present bitmap(s): the checked writer
    for a bitmap seen once, a compiled one from the second time on."""

    MAX_WRITERS = 256

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
    ) -> None:
        self.column_types = column_types
        self.column_meta = column_meta
        self.unsigned = unsigned
        self._columns: list[ColumnWriter] | None = None
        self._writers: dict[tuple[int, int, int | None], RowsWriter] = {}
        self._seen_once: set[tuple[int, int, int | None]] = set()

    def columns(self) -> list[ColumnWriter]:
        if self._columns is None:
            if not len(self.column_types) == len(self.column_meta) == len(self.unsigned):
                raise EncodeError("TABLE_MAP column_types and column_meta differ in length")
            writers = []
            for index, (column_type, meta, unsigned) in enumerate(
                zip(self.column_types, self.column_meta, self.unsigned, strict=True)
            ):
                try:
                    writers.append(column_writer(column_type, meta, unsigned))
                except EncodeError as exc:
                    raise EncodeError(f"column {index}: {exc}") from None
            self._columns = writers
        return self._columns

    def write_rows(
        self, width: int, present: int, present_after: int | None, rows: Sequence[Any]
    ) -> bytes:
        """The rows area of a ROWS event."""
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
        except EncodeError:
            raise
        except Exception:  # noqa: BLE001 - the checked writer names what was wrong
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
            _write_image_checked(out, columns, present_after, width, row[1], f"row {index} after")
        return out


table_encoder = TableShapeCache(TableEncoder).get
