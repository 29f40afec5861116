"""Rows events decoded straight into Arrow columns, per table (the Spark pipeline's hot path).

pyarrow is imported when the first batch is built (``pip install 'fakemaster[spark]'``), not
when this module is.

The function the pipeline calls::

    read_changes(
        source,                      # a binlog file path, or a binary file object
        *,
        ctx=None,                    # BinlogContext: temporal_precisions, checksum, table maps
        keys=None,                   # BinlogKeys of an encrypted file
        batch_rows=65536,            # a table's rows are given out in batches of about this many
        verify_checksum=True,
        allow_truncated_tail=False,  # a file still being written: stop before a partial event
        events=frozenset(),          # type codes of the other events to give out, decoded
        flush_on=DDL_EVENT_TYPES,    # type codes before which every table's rows are given out
        offset=0, expect_magic=True, # where ``source`` starts (a file object read mid-file)
    ) -> Iterator[ChangeBatch | tuple[int, Event]]

It yields :class:`ChangeBatch` objects (one table's rows, an Arrow record batch) and, for the
type codes in ``events``, ``(offset, event)`` pairs decoded as ``decoder.read_binlog`` decodes
them. Everything is in binlog order except that a table's rows are held until its batch is
full: they come out when ``batch_rows`` is reached, when a TABLE_MAP gives the table id another
shape, before an event whose type is in ``flush_on`` (QUERY and QUERY_COMPRESSED by default:
DDL; not before BEGIN, COMMIT or ROLLBACK), and at the end of the input. The order of the rows
themselves is always given by ``(event_offset, row)``; within a batch they are in that order.
:class:`ColumnarDecoder` is the same thing sans-IO (``feed(offset, event_bytes)`` per event,
``flush()``), for a replication stream; ``read_changes`` on a path hands it the file's events
straight from the read buffer (``ColumnarDecoder.feed_buffer``: one header unpack per event, no
``(offset, bytes)`` pair), the others framed and fed as usual.

Each batch's record batch has one row per changed row:

============== ====================== ====================================================
column         Arrow type             value
============== ====================== ====================================================
op             string                 ``c`` WRITE (insert), ``u`` UPDATE, ``d`` DELETE
event_offset   int64                  the rows event's offset in its file (or stream)
row            int32                  the row's index in its event
log_pos        int64                  the event header's end position
timestamp      int64                  the event header's timestamp (seconds)
server_id      int64                  the event header's server id
gtid_domain    int64 (nullable)       the last GTID event before the rows event: domain,
gtid_server    int64 (nullable)       server id and sequence number (null when the input
gtid_seq       decimal(20,0) (null.)  had none before it)
before         struct (nullable)      the before image (UPDATE, DELETE), null for ``c``
after          struct (nullable)      the after image (WRITE, UPDATE), null for ``d``
before_present binary (nullable)      the image's columns-present bitmap as in the event
after_present  binary (nullable)      (a column it leaves out is null in the struct)
============== ====================== ====================================================

The struct fields are the table's columns, named as the TABLE_MAP's COLUMN_NAME metadata says
(``binlog_row_metadata=FULL``), otherwise ``c0``, ``c1``...; typed per column type:

* integers: the smallest signed type that holds every value (TINYINT int8, TINYINT UNSIGNED
  int16, ..., INT UNSIGNED int64, BIGINT UNSIGNED decimal(20,0)); YEAR int16; BIT(M), ENUM
  (index) and SET (bitmask) the same, from their bit count (Spark has no unsigned types);
* FLOAT float32, DOUBLE float64; DECIMAL(p,s) decimal128(p,s), or decimal256(p,s) above 38
  digits (Spark reads up to 38);
* DATE date32; DATETIME timestamp[us] (no time zone); TIMESTAMP timestamp[us, tz=UTC]; TIME
  duration[us] (negative and over 24 hours as MariaDB keeps them); every fsp and the MariaDB
  5.3 formats (with ``ctx.temporal_precisions``). A DATE or DATETIME that is not a calendar
  date (zero dates, month or day 0, year 0) and the zero TIMESTAMP (0 seconds) are null;
* CHAR/BINARY, VARCHAR, TEXT/BLOB, JSON, GEOMETRY, compressed columns: binary, the bytes as
  stored (the column's charset, if any, is the TABLE_MAP's);
* columns of type NULL: null.

The values are those the row decoder (``decoder.read_binlog``) gives, converted
(tests/decoder/test_columnar.py checks that against the row decoder's values handed to
``pyarrow.array`` as Python objects). How they are read: when a rows event is fed, a walk
compiled per table shape and column-present bitmaps (the row decoder's, without reading the
values) finds where each row starts; when the batch is built, every column is read at once over
all the rows of the same kind and bitmaps with numpy (the row images of all those events side by
side): fixed-size columns as a byte matrix converted by array arithmetic (integers, floats,
DECIMALs of up to 18 digits, DATE, DATETIME2, TIMESTAMP2, TIME2), strings as offsets and one
join. The rarer columns (longer DECIMALs, MariaDB 5.3 and old temporal formats, INT24, YEAR...)
go through the row decoder's own value statements one value at a time. Without numpy, or for a
batch of fewer than ``_VECTOR_MIN`` rows, the rows are read by the row decoder's generated code
(decoder/row_images.py) into tuples of raw values and converted a column at a time. The row
decoder's refusals (digit groups out of range, fractions of a second or more...) are raised
here too. Events of types not in ``events`` other than FORMAT_DESCRIPTION, TABLE_MAP, GTID, the
rows events and (for ``flush_on``) QUERY are checked for framing and CRC32 only, not decoded; a
GTID is read for its numbers only; a QUERY of ``flush_on`` not in ``events`` whose body equals
one decoded before as not DDL (a server's COMMIT after each statement on a non-transactional
table) is only checked.

numpy: it comes with PySpark's Arrow support (``pyspark[sql]``) and with most pyarrow installs;
this module imports it lazily and works without it (slower).
"""

from __future__ import annotations

import datetime
import itertools
import struct
import sys
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from decoder.binlog_file import Source, iter_raw_blocks
from decoder.compression import decompress_record
from decoder.core import CRC_RESIDUE, decode_event
from decoder.row_images import TableDecoder
from decoder.rows import RowsHeader, read_row_images, read_rows_header
from decoder.values import ColumnReader, column_reader, value_converter
from fakemaster.vocabulary.columns import (
    BLOB_TYPES,
    FRAC_BYTES,
    FRAC_UNIT,
    HIRES_TYPES,
    INTEGER_SIZES,
    MICROSECONDS,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    TIME2_HOURS,
    VARCHAR_TYPES,
    column_names,
    decimal_groups,
    schema_precisions,
)
from fakemaster.vocabulary.columns import TIMESTAMP_MAX_SECONDS as _MAX_SECONDS
from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, ColumnType, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import ROWS_EVENT_CLASSES, Event, QueryEvent, TableMapEvent
from fakemaster.vocabulary.header import CRC, HEADER
from fakemaster.vocabulary.layouts import GTID_BODY_MIN, GTID_FIXED, U32
from fakemaster.vocabulary.table_shapes import TableShapeCache
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp

__all__ = [
    "DDL_EVENT_TYPES",
    "ChangeBatch",
    "ColumnarDecoder",
    "arrow_type",
    "read_changes",
]

DDL_EVENT_TYPES = frozenset({int(EventType.QUERY), int(EventType.QUERY_COMPRESSED)})
# Statements of these QUERY events change no table: no flush before them.
_NOT_DDL = frozenset({b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA END", b"XA COMMIT"})

_ROWS_CODES = frozenset(int(code) for code in ROWS_EVENT_CLASSES)
_FDE = int(EventType.FORMAT_DESCRIPTION)
_TABLE_MAP = int(EventType.TABLE_MAP)
_GTID = int(EventType.GTID)
_QUERY = int(EventType.QUERY)
_START_ENCRYPTION = int(EventType.START_ENCRYPTION)
_OPS = {"write": "c", "update": "u", "delete": "d"}
# ColumnarDecoder.feed_buffer's actions per type code: only check it (CRC32, framing), a rows
# event, a TABLE_MAP, a GTID, a QUERY that may be one passed over.
_DO_CHECK, _DO_ROWS, _DO_TABLE_MAP, _DO_GTID, _DO_QUERY = range(5)
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
# A TIME2 hour/minute/second field from this on has hour bits MariaDB ignores (values.py).
_TIME2_HMS_LIMIT = TIME2_HOURS << 12
_DAY_US = 86_400 * MICROSECONDS
_MALFORMED = (struct.error, IndexError, ValueError, OverflowError, zlib.error)
_from_bytes = int.from_bytes


_PYARROW: list[Any] = []


def _pa() -> Any:
    """pyarrow, imported on first use."""
    if not _PYARROW:
        import pyarrow  # type: ignore[import-untyped]

        _PYARROW.append(pyarrow)
    return _PYARROW[0]


# --- per column: Arrow type and conversion ----------------------------------------------------


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
        if self.vector is not None and len(values) >= _VECTOR_MIN and _np() is not None:
            array = self.vector(values)
            if array is not None:
                return array
        if self.convert is not None:
            values = self.convert(values)
        if self.decimal:
            return _decimal_array(self.arrow, list(values))
        return pa.array(values, self.arrow)


# --- numpy: fixed-size raw columns converted a column at a time ---------------------------------

# Below this many values the per-value Python loops are as fast as setting numpy up.
_VECTOR_MIN = 32
_NUMPY: list[Any] = []


def _np() -> Any:
    """numpy, or None when it is not installed (the per-value Python conversions then)."""
    if not _NUMPY:
        try:
            import numpy

            _NUMPY.append(numpy)
        except ImportError:  # pragma: no cover - numpy comes with pyarrow's usual installs
            _NUMPY.append(None)
    return _NUMPY[0]


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


# The row decoder's statements for an unsigned 8-byte value read as bytes (BIT(64), SET of 64
# members), and its byte order.
_WORD_CODES = {
    ("{v} = _fb({v}, 'big')",): ">",
    ("{v} = _fb({v}, 'little')",): "<",
}


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


def _column(column_type: int, meta: int, unsigned: bool) -> tuple[ColumnReader, _Column]:
    """The reader of a column's raw value in a row image and its Arrow conversion."""
    base = column_reader(column_type, meta, unsigned)
    reader, column, integer = _column_parts(base, column_type, meta, unsigned)
    if integer is not None and _np() is not None and 0 < reader.size <= 8:
        column.integer = integer
    return reader, column


def _integer_column(
    arrow: Any,
    convert: ListConverter | None,
    integer: IntConverter,
    order: str,
    size: int,
) -> tuple[_Column, tuple[str, IntConverter]]:
    """A column whose raw values of ``size`` bytes are unsigned integers in byte ``order``,
    converted by ``integer``."""
    matrix = _by_matrix(integer, order)
    return _Column(arrow, convert, False, _values_vector(matrix, size), matrix), (order, integer)


def _column_parts(
    base: ColumnReader, column_type: int, meta: int, unsigned: bool
) -> tuple[ColumnReader, _Column, tuple[str, IntConverter] | None]:
    arrow = arrow_type(column_type, meta, unsigned)
    raw = ColumnReader(base.fmt, base.size)
    size = base.size
    if column_type == ColumnType.NEWDECIMAL:
        precision, scale = meta & 0xFF, meta >> 8
        narrow = _decimal_vector(precision, scale, arrow)
        convert = _decimal_converter(precision, scale)
        if narrow is not None:
            matrix = _by_matrix(narrow, ">")
            column = _Column(arrow, convert, True, _values_vector(matrix, size), matrix)
            return raw, column, (">", narrow)
        matrix = _wide_decimal_vector(precision, scale, arrow)
        return raw, _Column(arrow, convert, True, _values_vector(matrix, size), matrix), None
    if column_type in HIRES_TYPES and meta:  # MariaDB 5.3 formats
        return raw, _Column(arrow, _objects_converter(base.code), False), None
    if column_type == ColumnType.DATETIME2:
        convert = _datetime2_converter(meta, base.code)
        return raw, *_integer_column(arrow, convert, _datetime2_vector(meta, arrow), ">", size)
    if column_type == ColumnType.TIMESTAMP2:
        convert = _timestamp2_converter(meta, base.code)
        return raw, *_integer_column(arrow, convert, _timestamp2_vector(meta, arrow), ">", size)
    if column_type in (ColumnType.DATE, ColumnType.NEWDATE):
        return raw, *_integer_column(arrow, _date_converter, _date_vector(arrow), "<", 3)
    if column_type == ColumnType.TIME2:
        convert = _objects_converter(base.code)
        return raw, *_integer_column(arrow, convert, _time2_vector(meta, arrow), ">", size)
    if column_type in _TEMPORAL_KIND:  # old TIME/DATETIME/TIMESTAMP
        return raw, _Column(arrow, _objects_converter(base.code), False), None
    if column_type == ColumnType.NULL:
        return base, _Column(arrow, _nulls, False), None
    if _pa().types.is_decimal(arrow):  # BIGINT UNSIGNED, BIT(64), SET of 64 members
        code = base.code
        if _np() is not None and base.fmt == "8s" and code in _WORD_CODES:
            word_order = _WORD_CODES[code]
            words = _decimal_words(arrow)
            matrix = _by_matrix(words, word_order)
            return base, _Column(arrow, None, True, None, matrix), (word_order, words)
        return base, _Column(arrow, None, True), None
    if _np() is not None and size:
        integer: IntConverter | None = None
        order = "<"
        if base.code == ("{v} = {v} + 1900 if {v} else 0",):  # YEAR
            integer = _year_vector(arrow)
        elif base.fmt == f"{size}s" and len(base.code) == 1:
            little = base.code[0].startswith("{v} = _fb({v}, 'little'")
            big = base.code[0] == "{v} = _fb({v}, 'big')"
            if little or big:  # MEDIUMINT, BIT, ENUM, SET (int.from_bytes)
                signed = base.code[0].endswith("signed=True)")
                integer = _int_vector(size, signed, arrow)
                order = "<" if little else ">"
        if integer is not None:
            matrix = _by_matrix(integer, order)
            return base, _Column(arrow, None, False, None, matrix), (order, integer)
    return base, _Column(arrow, None, False), None


class ColumnarShape(TableDecoder):
    """A table shape's row-image readers giving raw column values (decimals and temporal
    values as their bytes), and its columns' Arrow conversions."""

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
    ) -> None:
        super().__init__(column_types, column_meta, unsigned)
        self._arrow: list[_Column] | None = None
        self._scanners: dict[tuple[int, int, int | None], Scanner] = {}
        self._fields: dict[tuple[str, ...], tuple[list[Any], Any]] = {}

    def _build(self) -> None:
        readers, columns = [], []
        for index, spec in enumerate(
            zip(self.column_types, self.column_meta, self.unsigned, strict=True)
        ):
            try:
                reader, column = _column(*spec)
            except DecodeError as exc:
                raise DecodeError(f"column {index}: {exc.reason}") from None
            readers.append(reader)
            columns.append(column)
        self._columns, self._arrow = readers, columns

    def columns(self) -> list[ColumnReader]:
        if self._columns is None:
            self._build()
        assert self._columns is not None
        return self._columns

    def scanner(self, width: int, present: int, present_after: int | None) -> Scanner:
        key = (width, present, present_after)
        scanner = self._scanners.get(key)
        if scanner is None:
            if len(self._scanners) >= self.MAX_READERS:
                self._scanners.clear()
            scanner = compile_scanner(self.columns()[:width], width, present, present_after)
            self._scanners[key] = scanner
        return scanner

    def arrow_columns(self) -> list[_Column]:
        if self._arrow is None:
            self._build()
        assert self._arrow is not None
        return self._arrow

    def arrow_fields(self, names: tuple[str, ...]) -> tuple[list[Any], Any]:
        """The Arrow fields of the first ``len(names)`` columns so named, and their struct."""
        found = self._fields.get(names)
        if found is None:
            pa = _pa()
            columns = self.arrow_columns()[: len(names)]
            fields = [pa.field(name, c.arrow) for name, c in zip(names, columns, strict=True)]
            if len(self._fields) >= self.MAX_READERS:
                self._fields.clear()
            found = self._fields[names] = (fields, pa.struct(fields))
        return found


columnar_shape = TableShapeCache(ColumnarShape).get


# --- row images read a column at a time (numpy) -----------------------------------------------

_NUMERIC_DTYPES = {
    "b": "<i1", "B": "<u1", "h": "<i2", "H": "<u2", "i": "<i4", "I": "<u4", "q": "<i8",
    "Q": "<u8", "f": "<f4", "d": "<f8",
}  # fmt: skip
Scanner = Callable[[bytes, int, int], Sequence[int] | None]


def _scan_image(lines: list[str], readers: Sequence[ColumnReader], present: Sequence[int]) -> None:
    """Statements moving ``pos`` over one row image (its values are not read)."""
    null_bytes = (len(present) + 7) >> 3
    if not present:
        return
    if null_bytes <= 4:  # (indexing costs less than a slice and int.from_bytes)
        flags = " | ".join(
            f"data[pos + {k}] << {8 * k}" if k else "data[pos]" for k in range(null_bytes)
        )
        lines.append(f"        nulls = {flags}")
    else:
        lines.append(f"        nulls = _fb(data[pos:pos + {null_bytes}], 'little')")
    lines.append(f"        pos += {null_bytes}")

    def skip(indent: str, reader: ColumnReader, fixed: int = 0) -> list[str]:
        """``pos`` moved over ``fixed`` bytes then the column's value."""
        if reader.fmt:
            step = fixed + reader.size
            return [f"{indent}pos += {step}"] if step else []
        prefix = reader.size
        at = f"pos + {fixed}" if fixed else "pos"
        length = {
            1: f"data[{at}]",
            2: f"(data[{at}] | data[{at} + 1] << 8)",
            3: f"(data[{at}] | data[{at} + 1] << 8 | data[{at} + 2] << 16)",
        }.get(prefix, f"_u32(data, {at})[0]")
        return [f"{indent}pos += {fixed + prefix} + {length}"]

    lines.append(f"        if not nulls & {(1 << len(present)) - 1}:")
    fixed = 0
    body: list[str] = []
    for column in present:
        reader = readers[column]
        if reader.fmt:
            fixed += reader.size
            continue
        body += skip("            ", reader, fixed)  # (the fixed-size values before it too)
        fixed = 0
    if fixed:
        body.append(f"            pos += {fixed}")
    lines += body or ["            pass"]
    lines.append("        else:")
    for bit, column in enumerate(present):
        step = skip("                ", readers[column])
        if step:
            lines.append(f"            if not nulls & {1 << bit}:")
            lines += step
    lines.append("            pass")


def compile_scanner(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> Scanner:
    """A function ``(data, pos, end) -> image start positions`` in ``data`` (None if the rows
    do not end at ``end``): the row decoder's walk over the images without reading the
    values. One start per row; for an UPDATE (``present_after`` given) two, the before and
    the after image's. The first row is walked before the loop: an event of one row (not an
    UPDATE) gives the shared ``_ONE_ROW`` tuple, its start relative to ``pos``."""
    walk: list[str] = []
    columns = [c for c in range(width) if present >> c & 1]
    any_column = bool(columns)
    _scan_image(walk, readers, columns)
    first_walk = list(walk)
    if present_after is not None:
        columns = [c for c in range(width) if present_after >> c & 1]
        any_column = any_column or bool(columns)
        first_walk.append("        middle = pos")
        walk.append("        append(pos)")
        _scan_image(first_walk, readers, columns)
        _scan_image(walk, readers, columns)
    if not any_column:
        walk.append("        return None")
        first_walk.append("        return None")
    one, begun = ("_one", "[first]") if present_after is None else (
        "(first, middle)", "[first, middle]"
    )  # fmt: skip
    lines = [
        "def scan(data, pos, end):",
        "    if pos >= end:",
        "        return () if pos == end else None",
        "    first = pos",
        "    while True:  # the first row",
        *first_walk,
        "        break",
        "    if pos == end:",
        f"        return {one}",
        f"    starts = {begun}",
        "    append = starts.append",
        "    while pos < end:",
        "        append(pos)",
        *walk,
        "    return starts if pos == end else None",
    ]
    namespace: dict[str, Any] = {
        "_fb": _from_bytes,
        "_u32": struct.Struct("<I").unpack_from,
        "_one": _ONE_ROW,
    }
    exec(compile("\n".join(lines) + "\n", f"<rows scanner {width} columns>", "exec"), namespace)
    scanner: Scanner = namespace["scan"]
    return scanner


# Zero bytes after a batch's joined row images: an 8-byte read at any position up to 24 bytes
# past the images' end stays in the buffer (a binary view's 12 bytes read as two words), and
# so does a fixed-size value of up to 32 bytes (DECIMAL(65, 30) takes 30) at any position up to
# the images' end (read through a strided view).
_PAD = 32
_PADDING = bytes(_PAD)


class _Images:
    """A batch's joined row images (``raw``: the images and ``_PAD`` zero bytes; ``limit``:
    where the images end) and strided numpy views of them: ``view(dtype)[positions]`` are
    the values of that dtype (up to 8 bytes) starting at those byte positions."""

    __slots__ = ("buf", "limit", "raw", "_views")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.limit = len(raw) - _PAD
        self.buf = _np().frombuffer(raw, _np().uint8)
        self._views: dict[str, Any] = {}

    def view(self, dtype: str) -> Any:
        found = self._views.get(dtype)
        if found is None:
            np = _np()
            kind = np.dtype(dtype)
            found = np.ndarray(
                shape=(len(self.raw) - kind.itemsize + 1,),
                dtype=kind,
                buffer=self.raw,
                strides=(1,),
            )
            self._views[dtype] = found
        return found

    def unsigned(self, positions: Any, size: int, order: str) -> Any:
        """The unsigned integers of ``size`` bytes (1 to 8) at ``positions`` (uint64)."""
        np = _np()
        if order == "<":
            values = self.view("<u8")[positions]
            return values if size == 8 else values & np.uint64((1 << (8 * size)) - 1)
        values = self.view(">u8")[positions]
        return values if size == 8 else values >> np.uint64(8 * (8 - size))

    def matrix(self, positions: Any, size: int) -> Any:
        """The ``size`` bytes at ``positions`` as an (n, size) uint8 matrix (positions past
        the end clipped: the caller finds them wrong)."""
        np = _np()
        if size > _PAD:
            index = positions[:, None] + np.arange(size)
            return self.buf[np.minimum(index, len(self.raw) - 1)]
        rows = len(self.raw) - size + 1
        view = np.ndarray(shape=(rows, size), dtype=np.uint8, buffer=self.raw, strides=(1, 1))
        return view[np.minimum(positions, rows - 1)]


def _vector_fixed(
    images: _Images, positions: Any, nulls: Any, reader: ColumnReader, column: _Column
) -> Any:
    """One fixed-size column's values at ``positions`` (rows where ``nulls`` are NULL; every
    position at most ``images.limit``)."""
    np = _np()
    pa = _pa()
    size = reader.size
    count = len(positions)
    if size == 0:
        return pa.nulls(count, column.arrow) if column.arrow == pa.null() else None
    mask = nulls if nulls is not None and nulls.any() else None
    dtype = _NUMERIC_DTYPES.get(reader.fmt)
    if dtype is not None and not reader.code and column.convert is None:
        values = images.view(dtype)[positions]
        if column.decimal:  # BIGINT UNSIGNED, 8-byte SET: decimal(20, 0)
            words = np.zeros((count, 2), np.uint64)
            words[:, 0] = values
            if mask is not None:
                words[mask] = 0
            validity = pa.array(~mask).buffers()[1] if mask is not None else None
            return pa.Array.from_buffers(
                column.arrow, count, [validity, pa.py_buffer(words.tobytes())]
            )
        return pa.array(values, type=column.arrow, mask=mask)
    integer = column.integer
    if integer is not None:
        return integer[1](images.unsigned(positions, size, integer[0]), mask)
    from_images = getattr(column.matrix, "from_images", None)
    if from_images is not None:  # wide DECIMALs
        return from_images(images, positions, mask)
    return _matrix_array(images.matrix(positions, size), mask, reader, column)


def _matrix_array(matrix: Any, nulls: Any, reader: ColumnReader, column: _Column) -> Any:
    """A fixed-size column's Arrow array from its raw values, an (n, size) uint8 matrix."""
    np = _np()
    pa = _pa()
    count = len(matrix)
    has_nulls = nulls is not None and bool(nulls.any())
    mask = nulls if has_nulls else None
    dtype = _NUMERIC_DTYPES.get(reader.fmt)
    if dtype is not None and not reader.code and column.convert is None:
        values = np.ascontiguousarray(matrix).view(dtype).ravel()
        if column.decimal:  # BIGINT UNSIGNED, 8-byte SET: decimal(20, 0)
            words = np.zeros((count, 2), np.uint64)
            words[:, 0] = values
            if has_nulls:
                words[nulls] = 0
            validity = pa.array(~nulls).buffers()[1] if has_nulls else None
            return pa.Array.from_buffers(
                column.arrow, count, [validity, pa.py_buffer(words.tobytes())]
            )
        return pa.array(values, type=column.arrow, mask=mask)
    if column.matrix is not None:
        return column.matrix(matrix, mask)
    # Any other column: its struct items and the row decoder's statements, value by value.
    convert = value_converter(reader.code) if reader.code else None
    items = [item for (item,) in struct.iter_unpack("<" + reader.fmt, matrix.tobytes())]
    if convert is not None:
        null_list = nulls.tolist() if has_nulls else None
        items = [
            None if null_list is not None and null_list[k] else convert(v)
            for k, v in enumerate(items)
        ]
    elif has_nulls:
        items = [None if n else v for v, n in zip(items, nulls.tolist(), strict=True)]
    saved = column.vector
    column.vector = None  # the items are converted already where a vector would
    try:
        return column.array(items)
    finally:
        column.vector = saved


# Whether pyarrow has binary views and casts them to binary (pyarrow 16+ or so): set False at
# the first failure.
_VIEWS = [True]
_INLINE = 12  # a binary view holds a value of up to 12 bytes itself


def _view_masks() -> tuple[Any, Any]:
    """Per value length 0 to 12, and 13 for any longer value: the bits of a 16-byte binary
    view's two little-endian words kept (the first: its length and up to 4 bytes of the value;
    the second: the value's bytes 4 to 11, none for a long value, whose offset goes there)."""
    np = _np()
    first = np.zeros(_INLINE + 2, np.uint64)
    second = np.zeros(_INLINE + 2, np.uint64)
    for length in range(_INLINE + 1):
        first[length] = (1 << (32 + 8 * min(length, 4))) - 1
        second[length] = (1 << (8 * max(0, length - 4))) - 1
    first[_INLINE + 1] = (1 << 64) - 1
    return first, second


_VIEW_MASKS: list[tuple[Any, Any]] = []


def _binary_by_views(images: _Images, starts: Any, lengths: Any, nulls: Any) -> Any:
    """The values at ``starts`` (of ``lengths``) in the images as a binary array, copied once
    by Arrow: a binary_view array over the images (a 16-byte view per value: its length and
    either the value itself, up to 12 bytes, or its first 4 bytes and its offset) cast to
    binary. Every value lies in the images (the caller checks it; a NULL's start is at most
    4 bytes past their end). None when pyarrow cannot."""
    np = _np()
    pa = _pa()
    count = len(starts)
    if sys.byteorder != "little":
        return None
    if not _VIEW_MASKS:
        _VIEW_MASKS.append(_view_masks())
    first_masks, second_masks = _VIEW_MASKS[0]
    le8 = images.view("<u8")
    head = le8[starts]  # the value's bytes 0 to 7 (past its end: other bytes, masked below)
    views = np.empty((count, 2), np.uint64)
    first = views[:, 0]
    second = views[:, 1]
    thirty_two = np.uint64(32)
    which = np.minimum(lengths, _INLINE + 1)
    np.left_shift(head, thirty_two, out=first)
    first &= first_masks[which]
    first |= lengths.astype(np.uint64)
    long = lengths > _INLINE
    if long.all():  # buffer 0 (the images) at the value's offset
        np.left_shift(starts.astype(np.uint64), thirty_two, out=second)
    else:
        tail = le8[starts + 8]  # the value's bytes 8 to 11
        np.right_shift(head, thirty_two, out=second)
        second |= tail << thirty_two
        second &= second_masks[which]
        if long.any():
            second[long] = starts[long].astype(np.uint64) << thirty_two
    validity = pa.array(~nulls).buffers()[1] if nulls is not None and nulls.any() else None
    try:
        array = pa.Array.from_buffers(
            pa.binary_view(),
            count,
            [validity, pa.py_buffer(views), pa.py_buffer(images.raw)],
        )
        return array.cast(pa.binary())
    except (AttributeError, NotImplementedError, pa.ArrowNotImplementedError):
        _VIEWS[0] = False
        return None


def _vector_binary(images: _Images, starts: Any, lengths: Any, nulls: Any) -> Any:
    np = _np()
    pa = _pa()
    count = len(starts)
    raw = images.raw
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 1 << 31:
        return None
    if _VIEWS[0] and len(raw) < 1 << 31:
        array = _binary_by_views(images, starts, lengths, nulls)
        if array is not None:
            return array
    # Long values are joined from memoryview slices (not copies); short ones from bytes slices
    # (memoryviews are objects the garbage collector tracks: many of them cost more than copies).
    view = memoryview(raw) if offsets[-1] > 4096 * count else raw
    data = b"".join(
        [view[a : a + n] for a, n in zip(starts.tolist(), lengths.tolist(), strict=True)]
    )
    validity = pa.array(~nulls).buffers()[1] if nulls is not None and nulls.any() else None
    return pa.Array.from_buffers(
        pa.binary(),
        count,
        [validity, pa.py_buffer(offsets.astype(np.int32).tobytes()), pa.py_buffer(data)],
    )


def _vector_image(
    images: _Images,
    starts: Any,
    readers: Sequence[ColumnReader],
    columns: Sequence[_Column],
    mask: int,
    width: int,
) -> tuple[list[Any], Any] | None:
    """The arrays of one image of every row (rows starting at ``starts``) and where each
    image ends; None when the bytes do not hold what the scanner said."""
    np = _np()
    pa = _pa()
    count = len(starts)
    present = [c for c in range(width) if mask >> c & 1]
    arrays: list[Any] = [None] * width
    pos = starts
    limit = images.limit
    if present:
        # ``bound``: at least the largest of ``pos`` (its max taken only when it could be past
        # the images' end: each position stays in the images, checked before it is read).
        bound = int(starts.max())
        if bound > limit or int(starts.min()) < 0:
            return None
        null_bytes = (len(present) + 7) >> 3
        if null_bytes <= 8:
            flags = images.unsigned(starts, null_bytes, "<")
            flags &= np.uint64((1 << len(present)) - 1)
            any_null = bool(flags.any())
            null_matrix = flags.astype("<u8").view(np.uint8).reshape(count, 8) if any_null else None
        else:
            null_matrix = images.matrix(starts, null_bytes)
            any_null = bool(null_matrix.any())
        pos = starts + null_bytes
        bound += null_bytes
        null_columns = None
        if any_null:
            # Every column's NULL flags at once: row k of null_columns is the k-th present
            # column's (the flags little-endian: bit k of byte k >> 3).
            unpacked = np.unpackbits(null_matrix, axis=1, bitorder="little")[:, : len(present)]
            null_columns = np.ascontiguousarray(unpacked.T, dtype=bool)
        for bit, column in enumerate(present):
            reader = readers[column]
            nulls = null_columns[bit] if null_columns is not None else None
            if bound > limit:
                bound = int(pos.max())
                if bound > limit:
                    return None
            if reader.fmt:
                array = _vector_fixed(images, pos, nulls, reader, columns[column])
                bound += reader.size
                if nulls is None:
                    pos = pos + reader.size
                else:
                    pos = pos + np.where(nulls, 0, reader.size)
            else:
                prefix = reader.size
                lengths = images.unsigned(pos, prefix, "<").astype(np.int64)
                if nulls is not None:
                    lengths[nulls] = 0
                value_starts = pos + prefix
                pos = value_starts + lengths
                if nulls is not None:
                    pos[nulls] -= prefix
                bound = int(pos.max())
                if bound > limit:
                    return None
                array = _vector_binary(images, value_starts, lengths, nulls)
            if array is None:
                return None
            arrays[column] = array
        if int(pos.max()) > limit:
            return None
    for column in range(width):
        if arrays[column] is None:
            arrays[column] = pa.nulls(count, columns[column].arrow)
    return arrays, pos


# --- batches ----------------------------------------------------------------------------------


@dataclass(slots=True)
class ChangeBatch:
    """One table's changed rows as an Arrow record batch (columns: the module docstring)."""

    database: str
    table: str
    table_id: int
    column_names: tuple[str, ...]
    table_map: TableMapEvent
    record_batch: Any  # pyarrow.RecordBatch

    @property
    def num_rows(self) -> int:
        return int(self.record_batch.num_rows)


# A rows event held in a table's buffer is a plain tuple of what the batch needs (ints, bytes,
# tuples of ints: the garbage collector stops tracking such tuples, so that the runs of a large
# batch cost it nothing), in this order:
#   (offset, log_pos, timestamp, server_id, gtid, rows, header index, starts, area, a_start,
#    a_end)
# ``rows``: the rows read at feed time (None: read when the batch is built); the header index:
# its RowsHeader in the buffer's ``headers``; the row images are ``area[a_start:a_end]`` (the
# event's bytes themselves when small: no copy of them); ``starts``: where each row starts in
# ``area`` (None: not walked; for one row ``_ONE_ROW``: relative to ``a_start``).
Record = tuple[Any, ...]
_R_GTID, _R_ROWS, _R_HEADER, _R_STARTS, _R_AREA, _R_A_START, _R_A_END = 4, 5, 6, 7, 8, 9, 10


class _Run:
    """The rows of one rows event: read (``rows``), or where each starts in ``area`` (a record
    of a buffer, for the row decoder's way of building a batch)."""

    __slots__ = ("offset", "log_pos", "timestamp", "server_id", "gtid", "rows", "header",
                 "starts", "area")  # fmt: skip

    def __init__(
        self,
        offset: int,
        log_pos: int,
        timestamp: int,
        server_id: int,
        gtid: tuple[int | None, int | None, int | None],
        rows: list[Any] | None,
        header: RowsHeader,
        starts: Sequence[int] | None,
        area: Any,
    ) -> None:
        self.offset = offset
        self.log_pos = log_pos
        self.timestamp = timestamp
        self.server_id = server_id
        self.gtid = gtid
        self.rows = rows
        self.header = header
        self.starts = starts
        self.area = area

    @property
    def op(self) -> str:
        return _OPS[self.header.cls.KIND]

    @property
    def present(self) -> bytes:
        return self.header.columns_present

    @property
    def present_after(self) -> bytes | None:
        header = self.header
        return header.columns_present_after if header.present_after is not None else None

    @property
    def partial(self) -> bool:
        header = self.header
        every = (1 << header.width) - 1
        return header.present != every or (
            header.present_after is not None and header.present_after != every
        )


@dataclass(slots=True)
class _TableBuffer:
    key: tuple[Any, ...]
    table_map: TableMapEvent
    shape: ColumnarShape
    width: int
    names: tuple[str, ...]
    runs: list[Record] = field(default_factory=list)
    rows: int = 0
    headers: list[RowsHeader] = field(default_factory=list)
    walked: bool = True  # every run's row starts are known (None in none of ``runs``)

    def header_index(self, header: RowsHeader) -> int:
        """The index of ``header`` in ``headers`` (the last one, or appended)."""
        headers = self.headers
        if not headers or headers[-1] is not header:
            headers.append(header)
        return len(headers) - 1

    def materialise(self) -> list[_Run]:
        headers = self.headers
        return [
            _Run(o, lp, ts, sid, gtid, rows, headers[h], starts,
                 area if a == 0 and e == len(area) else area[a:e])
            for o, lp, ts, sid, gtid, rows, h, starts, area, a, e in self.runs
        ]  # fmt: skip


def _column_names(table_map: TableMapEvent, width: int) -> tuple[str, ...]:
    names = column_names(table_map)
    if len(names) < width or len(set(names[:width])) != width:
        return tuple(f"c{index}" for index in range(width))
    return names[:width]


def _struct(
    columns: list[_Column],
    names: tuple[str, ...],
    rows: list[Any],
    valid: list[bool],
    partial: bool,
) -> Any:
    pa = _pa()
    count = len(rows)
    if columns and not any(valid):  # e.g. the before image of a batch of inserts
        fields = [pa.field(name, c.arrow) for name, c in zip(names, columns, strict=True)]
        return pa.nulls(count, pa.struct(fields))
    if columns:
        transposed = list(zip(*rows, strict=True)) if count else [() for _ in columns]
        arrays = []
        for column, values in zip(columns, transposed, strict=True):
            if partial and ABSENT in values:
                values = tuple(None if v is ABSENT else v for v in values)
            arrays.append(column.array(values))
    else:
        arrays = []
    fields = [pa.field(name, column.arrow) for name, column in zip(names, columns, strict=True)]
    mask = None if all(valid) else pa.array([not v for v in valid], pa.bool_())
    if not fields:
        return pa.array([{} if v else None for v in valid], pa.struct([]))
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


_BATCH_NAMES = [
    "op", "event_offset", "row", "log_pos", "timestamp", "server_id", "gtid_domain",
    "gtid_server", "gtid_seq", "before", "after", "before_present", "after_present",
]  # fmt: skip


_KIND_CODES = {"write": 0, "update": 1, "delete": 2}
# The op column's values by kind code (0 WRITE, 1 UPDATE, 2 DELETE), as the string data of a
# one-character-per-row string array.
_OP_LETTERS = b"cud"


def _vector_batch(buffer: _TableBuffer) -> ChangeBatch | None:
    """The batch of runs whose row starts are known, each column read at once over every row
    image of the batch with the same column-present bitmap (one call per column for the
    whole batch whatever its statement kinds, when every image has the same bitmap, as with
    FULL row images); None when the bytes do not agree with the walk.

    The runs' ``starts`` are image starts: one per row, two per row of an UPDATE (before and
    after image). The images are read in binlog order into one struct array per bitmap; the
    ``before`` and ``after`` columns are that array itself when every row is of one kind with
    one image, otherwise taken from it (null where the kind has no such image)."""
    np = _np()
    pa = _pa()
    width = buffer.width
    readers = buffer.shape.columns()[:width]
    columns = buffer.shape.arrow_columns()[:width]
    fields, struct_type = buffer.shape.arrow_fields(buffer.names)
    runs = buffer.runs
    headers = buffer.headers
    count = len(runs)
    kinds = [_KIND_CODES[header.cls.KIND] for header in headers]
    image_counts = np.fromiter(map(len, map(_get_starts, runs)), np.int64, count)
    numbers = np.empty((len(_RUN_NUMBERS), count), np.int64)  # one row per field
    for row, getter in enumerate(_RUN_NUMBERS):
        numbers[row] = np.fromiter(map(getter, runs), np.int64, count)
    if len(headers) == 1:
        run_header = None
        kind = kinds[0]
        row_counts = image_counts >> 1 if kind == 1 else image_counts
    else:
        run_header = numbers[4]
        kind = -1  # (several headers: maybe several kinds)
        run_kind = np.asarray(kinds, np.int64)[run_header]
        if (run_kind == run_kind[0]).all():
            kind = kinds[int(run_header[0])]
        row_counts = np.where(run_kind == 1, image_counts >> 1, image_counts)
    total = int(row_counts.sum())
    images = int(image_counts.sum())
    if not total:
        return None
    # Each image's bitmap: a run's images take its header's bitmaps in turn (an UPDATE's
    # before and after images).
    masks: list[int] = []
    image_masks = []
    for header in headers:
        first_mask = header.present
        second_mask = header.present if header.present_after is None else header.present_after
        for mask in (first_mask, second_mask):
            if mask not in masks:
                masks.append(mask)
        image_masks.append((masks.index(first_mask), masks.index(second_mask)))
    # With one bitmap and UPDATEs or several kinds, the images are read in the order of the
    # ``before`` column's rows then the ``after`` column's (no take after): a row without such
    # an image reads a placeholder image, first in the joined images (every column NULL:
    # nothing to copy, its children null), the struct null there.
    placeholder = b""
    if len(masks) == 1 and kind in (1, -1):
        placeholder = b"\xff" * (((masks[0] & ((1 << width) - 1)).bit_count() + 7) >> 3)
    areas = list(map(_get_area, runs))
    areas.append(_PADDING)
    if placeholder:  # (first: the images' largest start stays a real image's)
        areas.insert(0, placeholder)
    raw = b"".join(areas)
    if placeholder:
        del areas[0]
    areas.pop()
    sizes = np.fromiter(map(len, areas), np.int64, count)
    bases = np.full(count, len(placeholder), np.int64)
    np.cumsum(sizes[:-1], out=bases[1:])
    bases[1:] += len(placeholder)
    image_starts = bases + numbers[5]
    image_ends = bases + numbers[6]
    first_image = np.zeros(count, np.int64)  # each run's first image in the batch's images
    np.cumsum(image_counts[:-1], out=first_image[1:])
    if images == count and (image_counts == 1).all():  # one image per event: its images' start
        starts = image_starts
    else:
        # (an event of one image: _ONE_ROW, its start relative to its images')
        starts = np.fromiter(
            itertools.chain.from_iterable(map(_get_starts, runs)), np.int64, images
        ) + np.repeat(np.where(image_counts == 1, image_starts, bases), image_counts)
    images_read = _Images(raw)
    # The rows: each run's rows, their kinds and first images.
    row_kind = None
    if kind == 1:
        row_image = np.arange(0, images, 2, dtype=np.int64)
    elif kind == -1:
        row_kind = np.repeat(run_kind, row_counts)
        steps = np.where(row_kind == 1, 2, 1)
        row_image = np.zeros(total, np.int64)
        np.cumsum(steps[:-1], out=row_image[1:])
    before = after = None
    if placeholder:
        # Each row's before and after image (-1: none), read in that order.
        if row_kind is None:
            before_of = row_image
            after_of = row_image + 1
            absent = None
        else:
            before_of = np.where(row_kind == 0, -1, row_image)
            after_of = np.where(row_kind == 2, -1, row_image + (row_kind == 1))
            absent = np.concatenate((row_kind == 0, row_kind == 2))
        read_order = np.concatenate((before_of, after_of))
        read_starts = starts[read_order]
        if absent is not None:
            read_starts[absent] = 0  # the placeholder
        found = _vector_image(images_read, read_starts, readers, columns, masks[0], width)
        if found is None:
            return None
        arrays, read_ends = found
        ends = np.empty(images, np.int64)
        if absent is None:
            ends[read_order] = read_ends
        else:
            ends[read_order[~absent]] = read_ends[~absent]
        image = pa.StructArray.from_arrays(
            arrays, fields=fields, mask=None if absent is None else pa.array(absent)
        )
        before = image.slice(0, total)
        after = image.slice(total, total)
        positions = None
    elif len(masks) == 1:
        found = _vector_image(images_read, starts, readers, columns, masks[0], width)
        if found is None:
            return None
        arrays, ends = found
        image = pa.StructArray.from_arrays(arrays, fields=fields)
        positions = None  # an image's row in ``image``: its index
    else:
        image_header = np.repeat(
            run_header if run_header is not None else np.zeros(count, np.int64), image_counts
        )
        second = (np.arange(images) - np.repeat(first_image, image_counts)) & 1
        mask_ids = np.asarray(image_masks, np.int64)[image_header, second]
        ends = np.empty(images, np.int64)
        positions = np.empty(images, np.int64)
        parts = []
        base = 0
        for index, mask in enumerate(masks):
            selected = np.flatnonzero(mask_ids == index)
            if not len(selected):
                continue
            found = _vector_image(images_read, starts[selected], readers, columns, mask, width)
            if found is None:
                return None
            arrays, ends[selected] = found
            positions[selected] = base + np.arange(len(selected))
            base += len(selected)
            parts.append(pa.StructArray.from_arrays(arrays, fields=fields))
        image = pa.concat_arrays(parts)
    # Each image ends where the next image of its event starts, an event's last image where
    # its images end.
    expected = np.empty(images, np.int64)
    expected[:-1] = starts[1:]
    filled = image_counts > 0
    expected[(first_image + image_counts - 1)[filled]] = image_ends[filled]
    if not np.array_equal(ends, expected):
        return None
    if before is not None:  # (read in place)
        assert after is not None
    elif kind == 1 or kind == -1:  # (several bitmaps)
        before_at = row_image
        after_at = np.minimum(row_image + 1, images - 1)  # (a DELETE's: masked)
        if positions is not None:
            before_at = positions[before_at]
            after_at = positions[after_at]
        if row_kind is None:  # updates only
            before = image.take(pa.array(before_at))
            after = image.take(pa.array(after_at))
        else:
            inserts = row_kind == 0
            after_at = np.where(inserts, before_at, after_at)
            before = image.take(pa.array(before_at, mask=inserts))
            after = image.take(pa.array(after_at, mask=row_kind == 2))
    else:
        if positions is not None:
            image = image.take(pa.array(positions))
        if kind == 2:
            before, after = image, pa.nulls(total, struct_type)
        else:
            before, after = pa.nulls(total, struct_type), image
    # The other columns.
    first_row = np.zeros(count, np.int64)
    np.cumsum(row_counts[:-1], out=first_row[1:])
    if total == count and (row_counts == 1).all():
        run_rows = np.zeros(total, np.int32)
    else:
        run_rows = (np.arange(total) - np.repeat(first_row, row_counts)).astype(np.int32)
    if row_kind is None:
        op = pa.repeat(pa.scalar(_OPS[headers[0].cls.KIND], pa.string()), total)
    else:
        letters = np.frombuffer(_OP_LETTERS, np.uint8)[row_kind]
        op = pa.Array.from_buffers(
            pa.string(),
            total,
            [None, pa.py_buffer(np.arange(total + 1, dtype=np.int32)), pa.py_buffer(letters)],
        )
    before_present, after_present = _present_arrays(headers, run_header, row_counts, total)
    meta = _meta_arrays(runs, numbers, row_counts)
    record_batch = pa.RecordBatch.from_arrays(
        [
            op,
            meta[0],
            pa.array(run_rows, pa.int32()),
            *meta[1:],
            before,
            after,
            before_present,
            after_present,
        ],
        names=_BATCH_NAMES,
    )
    table_map = buffer.table_map
    return ChangeBatch(
        table_map.database, table_map.table, table_map.table_id, buffer.names, table_map,
        record_batch,
    )  # fmt: skip


def _present_arrays(
    headers: list[RowsHeader], run_header: Any, row_counts: Any, total: int
) -> tuple[Any, Any]:
    """The before_present and after_present columns: each row's header's bitmaps as in its
    event (null where its kind has no such image)."""
    np = _np()
    pa = _pa()
    befores: list[bytes | None] = []
    afters: list[bytes | None] = []
    for header in headers:
        kind = header.cls.KIND
        present = header.columns_present
        if kind == "write":
            befores.append(None)
            afters.append(present)
        elif kind == "delete":
            befores.append(present)
            afters.append(None)
        else:
            befores.append(present)
            afters.append(header.columns_present_after)
    out = []
    row_header = None
    for values in (befores, afters):
        if run_header is None or all(value == values[0] for value in values):
            if values[0] is None:
                out.append(pa.nulls(total, pa.binary()))
            else:
                out.append(pa.repeat(pa.scalar(values[0], pa.binary()), total))
            continue
        if row_header is None:
            row_header = np.repeat(run_header, row_counts)
        given = {value for value in values if value is not None}
        if len(given) == 1:  # one bitmap, null for some kinds (FULL images of several kinds)
            (value,) = given
            valid = np.asarray([v is not None for v in values])[row_header]
            offsets = np.arange(0, (total + 1) * len(value), len(value), dtype=np.int32)
            validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
            out.append(
                pa.Array.from_buffers(
                    pa.binary(),
                    total,
                    [validity, pa.py_buffer(offsets), pa.py_buffer(value * total)],
                )
            )
        else:
            out.append(pa.array(values, pa.binary()).take(pa.array(row_header.astype(np.int32))))
    return out[0], out[1]


_get_area = itemgetter(_R_AREA)
_get_gtid = itemgetter(_R_GTID)
_get_starts = itemgetter(_R_STARTS)
# The row starts of a one-row event (read only, shared by those events' runs).
_ONE_ROW = (0,)
# offset, log_pos, timestamp, server id, header index, a_start, a_end
_RUN_NUMBERS = [itemgetter(k) for k in (0, 1, 2, 3, _R_HEADER, _R_A_START, _R_A_END)]


def _meta_arrays(runs: Sequence[Record], fields: Any, counts: Any) -> list[Any]:
    """event_offset, log_pos, timestamp, server_id and the GTID columns of ``runs``' rows (one
    value per run, repeated for its rows); ``fields``: the runs' ``_RUN_NUMBERS``, an int64
    row each."""
    pa = _pa()
    np = _np()
    repeats = counts
    count = len(runs)
    total = int(counts.sum())
    # Each column's values contiguous (one repeat for the four): zero-copy buffers.
    repeated = np.repeat(fields[:4], repeats, axis=1)
    arrays = [
        pa.Array.from_buffers(pa.int64(), total, [None, pa.py_buffer(repeated[k])])
        for k in range(4)
    ]
    gtids = list(map(_get_gtid, runs))
    try:  # (a run before any GTID has None in its GTID: TypeError)
        numbers: Any = np.fromiter(itertools.chain.from_iterable(gtids), np.uint64, 3 * count)
    except TypeError:
        numbers = None
    if numbers is not None:
        numbers = np.repeat(numbers.reshape(count, 3).T.astype(np.int64), repeats, axis=1)
        seq = np.zeros((total, 2), np.int64)  # decimal128(20, 0): the seq as its low word
        seq[:, 0] = numbers[2]
        arrays += [
            pa.Array.from_buffers(pa.int64(), total, [None, pa.py_buffer(numbers[0])]),
            pa.Array.from_buffers(pa.int64(), total, [None, pa.py_buffer(numbers[1])]),
            pa.Array.from_buffers(pa.decimal128(20, 0), total, [None, pa.py_buffer(seq)]),
        ]
    else:
        domains: list[int | None] = []
        servers: list[int | None] = []
        seqs: list[int | None] = []
        for (domain, server, seq), n in zip(gtids, counts, strict=True):
            domains += [domain] * n
            servers += [server] * n
            seqs += [seq] * n
        arrays += [
            pa.array(domains, pa.int64()),
            pa.array(servers, pa.int64()),
            pa.array(seqs, pa.uint64()).cast(pa.decimal128(20, 0)),
        ]
    return arrays


def _read_deferred(buffer: _TableBuffer, runs: list[_Run]) -> None:
    """Read the rows of the runs whose rows were not read, the row decoder's way."""
    for run in runs:
        if run.rows is None:
            header = run.header
            assert header is not None
            reader = buffer.shape.rows_reader(header.width, header.present, header.present_after)
            area = run.area if isinstance(run.area, bytes) else bytes(run.area)
            try:
                run.rows = reader(area, 0, len(area))
            except DecodeError as exc:
                raise DecodeError(
                    f"{exc.reason} (at {exc.offset} in the row images)",
                    offset=run.offset,
                    event_type=_name(header.cls._CODES[(header.version, header.compressed)]),
                ) from None


def _vectorise(buffer: _TableBuffer) -> bool:
    """Whether the batch is read a column at a time (numpy): enough rows, every run walked,
    and, without binary views (``_binary_by_views``), rows of under ``_VECTOR_ROW_BYTES`` on
    average (large values joined from Python slices cost a copy more that way, and little
    Python per row the row decoder's way; with views Arrow copies them once)."""
    runs = buffer.runs
    if buffer.rows < _VECTOR_MIN or not buffer.walked:
        return False
    return (
        _VIEWS[0]
        or len(runs) > 1024
        or sum(map(len, map(_get_area, runs))) < _VECTOR_ROW_BYTES * buffer.rows
    )


# Above this many bytes per row on average, a batch is read the row decoder's way when
# pyarrow has no binary views.
_VECTOR_ROW_BYTES = 4096


def _build_batch(buffer: _TableBuffer) -> ChangeBatch:
    if _vectorise(buffer):
        try:
            batch = _vector_batch(buffer)
        except DecodeError:
            batch = None  # read again the row decoder's way, which says where
        if batch is not None:
            return batch
    runs = buffer.materialise()
    _read_deferred(buffer, runs)
    pa = _pa()
    columns = buffer.shape.arrow_columns()[: buffer.width]
    filler = (None,) * buffer.width
    ops: list[str] = []
    offsets: list[int] = []
    row_numbers: list[int] = []
    log_pos: list[int] = []
    timestamps: list[int] = []
    server_ids: list[int] = []
    domains: list[int | None] = []
    gtid_servers: list[int | None] = []
    seqs: list[int | None] = []
    before_rows: list[Any] = []
    after_rows: list[Any] = []
    before_valid: list[bool] = []
    after_valid: list[bool] = []
    before_present: list[bytes | None] = []
    after_present: list[bytes | None] = []
    partial = False
    for run in runs:
        assert run.rows is not None
        n = len(run.rows)
        ops += [run.op] * n
        offsets += [run.offset] * n
        row_numbers += range(n)
        log_pos += [run.log_pos] * n
        timestamps += [run.timestamp] * n
        server_ids += [run.server_id] * n
        domains += [run.gtid[0]] * n
        gtid_servers += [run.gtid[1]] * n
        seqs += [run.gtid[2]] * n
        partial = partial or run.partial
        if run.op == "c":
            after_rows += run.rows
            before_rows += [filler] * n
            after_valid += [True] * n
            before_valid += [False] * n
            after_present += [run.present] * n
            before_present += [None] * n
        elif run.op == "d":
            before_rows += run.rows
            after_rows += [filler] * n
            before_valid += [True] * n
            after_valid += [False] * n
            before_present += [run.present] * n
            after_present += [None] * n
        else:
            if n:
                before, after = zip(*run.rows, strict=True)
                before_rows += before
                after_rows += after
            before_valid += [True] * n
            after_valid += [True] * n
            before_present += [run.present] * n
            after_present += [run.present_after] * n
    try:
        before = _struct(columns, buffer.names, before_rows, before_valid, partial)
        after = _struct(columns, buffer.names, after_rows, after_valid, partial)
    except (OverflowError, pa.ArrowInvalid) as exc:
        raise DecodeError(
            f"`{buffer.table_map.database}`.`{buffer.table_map.table}`: a value does not fit "
            f"its Arrow column: {exc}",
            offset=buffer.runs[0][0],
        ) from None
    record_batch = pa.RecordBatch.from_arrays(
        [
            pa.array(ops, pa.string()),
            pa.array(offsets, pa.int64()),
            pa.array(row_numbers, pa.int32()),
            pa.array(log_pos, pa.int64()),
            pa.array(timestamps, pa.int64()),
            pa.array(server_ids, pa.int64()),
            pa.array(domains, pa.int64()),
            pa.array(gtid_servers, pa.int64()),
            pa.array(seqs, pa.uint64()).cast(pa.decimal128(20, 0)),
            before,
            after,
            pa.array(before_present, pa.binary()),
            pa.array(after_present, pa.binary()),
        ],
        names=[
            "op", "event_offset", "row", "log_pos", "timestamp", "server_id", "gtid_domain",
            "gtid_server", "gtid_seq", "before", "after", "before_present", "after_present",
        ],
    )  # fmt: skip
    table_map = buffer.table_map
    return ChangeBatch(
        table_map.database,
        table_map.table,
        table_map.table_id,
        buffer.names,
        table_map,
        record_batch,
    )


# --- the decoder ------------------------------------------------------------------------------

Output = ChangeBatch | tuple[int, Event]


class ColumnarDecoder:
    """Rows events into per-table Arrow batches, fed one whole event at a time (sans-IO).

    ``feed(offset, data)`` takes one event's bytes (header to CRC, decrypted) and returns what
    is ready, in order: ChangeBatch objects and ``(offset, event)`` for the type codes in
    ``events``; ``flush()`` gives out every table's held rows. ``ctx`` is updated as by
    ``decoder.decode_event`` (FDE, TABLE_MAPs).

    For a replication connection, feed the event bytes of each binlog packet
    (``decoder.packets.parse_binlog_packet``) with a context made for the checksum setting
    the replica asked for (``BinlogContext.for_checksum``), as ``decoder.StreamDecoder`` does:
    the stream's first events (artificial ROTATE, FDE) come before the rows. ``offset`` is
    whatever position the caller keeps for the event (its ``log_pos`` minus its length in a
    dump of one file); it is what the batches' ``event_offset`` column holds.
    """

    def __init__(
        self,
        ctx: BinlogContext | None = None,
        *,
        batch_rows: int = 65536,
        verify_checksum: bool = True,
        allow_unknown: bool = False,
        events: Collection[int] = frozenset(),
        flush_on: Collection[int] = DDL_EVENT_TYPES,
    ) -> None:
        self.ctx = ctx if ctx is not None else BinlogContext()
        self.batch_rows = batch_rows
        self.verify_checksum = verify_checksum
        self.allow_unknown = allow_unknown
        self.events = frozenset(int(code) for code in events)
        self.flush_on = frozenset(int(code) for code in flush_on)
        # The type codes feed_block handles itself (the others go through feed).
        # (feed only checks the framing and CRC of an event outside ``events`` and
        # ``flush_on`` that is not an FDE, a TABLE_MAP, a GTID or a rows event).
        self._checked = frozenset(range(256)) - {_FDE} - self.events - self.flush_on
        # Those feed_buffer takes from a file's read buffer (not a START_ENCRYPTION, which
        # the file reader acts on).
        self._inline = self._checked - {_START_ENCRYPTION}
        # A QUERY that only flushes when it is DDL, and is not given out: the bodies of those
        # seen before that are not DDL (a server's COMMIT of a non-transactional table's
        # statement: the same bytes every time) are passed over as they were (decoded, not DDL).
        self._skip_known_queries = _QUERY in self.flush_on and _QUERY not in self.events
        self._queries: set[bytes] = set()
        # What feed_buffer does with each type code it takes (the others stop it).
        self._actions = {code: _DO_CHECK for code in self._inline}
        self._actions.update({code: _DO_ROWS for code in _ROWS_CODES & self._inline})
        for code, action in ((_TABLE_MAP, _DO_TABLE_MAP), (_GTID, _DO_GTID)):
            if code in self._inline:
                self._actions[code] = action
        if self._skip_known_queries:
            self._actions[_QUERY] = _DO_QUERY
        self.gtid: tuple[int | None, int | None, int | None] = (None, None, None)
        self._buffers: dict[int, _TableBuffer] = {}
        # The last TABLE_MAP decoded from each body: a server repeats it before every statement.
        self._maps: dict[bytes, TableMapEvent] = {}
        # Per (type code, table id and flags bytes): the post-header and bitmaps last seen
        # (a statement's last event has STMT_END, the others not), for events
        # that repeat them (see _known_rows).
        self._templates: dict[
            tuple[int, bytes], tuple[RowsHeader, bytes, Scanner, _TableBuffer, int, int]
        ] = {}

    def flush(self) -> list[ChangeBatch]:
        """Every table's held rows, as batches (tables in the order their rows began)."""
        buffers = sorted(self._buffers.values(), key=lambda b: b.runs[0][0] if b.runs else 0)
        self._buffers.clear()
        return [_build_batch(buffer) for buffer in buffers if buffer.rows]

    def feed(self, offset: int, data: bytes) -> list[Output]:
        size = len(data)
        if size < HEADER_LEN:
            return self._decoded(offset, data)
        fields = _unpack_header(data, 0)
        type_code = fields[1]
        if fields[3] != size or type_code in self.events or type_code == _FDE:
            return self._decoded(offset, data)
        out: list[Output] = []
        if type_code in self.flush_on:
            if type_code in DDL_EVENT_TYPES:
                if type_code == _QUERY and self._queries and self._known_query(data):
                    return out
                return self._decoded(offset, data)
            out += self.flush()
        ctx = self.ctx
        end = size
        if ctx.checksum:
            end -= CHECKSUM_LEN
            if end < HEADER_LEN:
                raise DecodeError(
                    "truncated: no room for the CRC",
                    offset=offset + size,
                    event_type=_name(type_code),
                )
            if self.verify_checksum:
                # (a copy of a small event costs less than a view of it)
                computed = _crc32(data[:end] if end < 4096 else memoryview(data)[:end])
                stored = _unpack_crc(data, end)[0]
                if stored != computed:
                    raise ChecksumError(
                        f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                        offset=offset + end,
                        event_type=_name(type_code),
                    )
        start = ctx.fde.header_length
        if start < HEADER_LEN:
            start = HEADER_LEN
        if start > end:
            raise DecodeError(
                "truncated: shorter than the header",
                offset=offset + end,
                event_type=_name(type_code),
            )
        if type_code in _ROWS_CODES:
            if not self._known_rows(offset, data, fields, start, end, out):
                self._rows(offset, data, fields, start, end, out)
        elif type_code == _TABLE_MAP:
            body = data[start:end]
            table_map = self._maps.get(body)
            if table_map is None:
                event = decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
                assert isinstance(event, TableMapEvent)
                if len(self._maps) >= 1024:
                    self._maps.clear()
                self._maps[body] = event
            else:
                ctx.table_maps[table_map.table_id] = table_map
        elif type_code == _GTID:
            if end - start < GTID_BODY_MIN:
                decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
            seq_no, domain_id, _ = _unpack_gtid(data, start)
            self.gtid = (domain_id, fields[2], seq_no)
        return out

    def feed_block(self, block: Sequence[tuple[int, bytes]], out: list[Output]) -> None:
        """``feed`` for each ``(offset, event bytes)`` of ``block`` (what
        ``decoder.binlog_file.iter_raw_blocks`` gives), the outputs appended to ``out`` in
        order (those of the events before an error are there when it is raised).

        The events this decoder only checks (types outside ``events`` and ``flush_on`` other
        than FDE, GTID, TABLE_MAP and the rows events: ANNOTATE_ROWS, XID...), a GTID, a
        TABLE_MAP seen before and a rows event of a known post-header, all under 64 KiB, are
        handled in this loop; every other event, and any the short way finds wrong, goes to
        ``feed``."""
        ctx = self.ctx
        checked = self._checked
        verify = self.verify_checksum
        templates = self._templates
        maps = self._maps
        buffers = self._buffers
        table_maps = ctx.table_maps
        unpack_header = _unpack_header
        crc32 = _crc32
        batch_rows = self.batch_rows
        feed = self.feed
        # Only an FDE (which goes through feed) changes these: read again after feed.
        trailer = CHECKSUM_LEN if ctx.checksum else 0
        start = max(ctx.fde.header_length, HEADER_LEN)
        for offset, data in block:
            size = len(data)
            if size < HEADER_LEN or size >= _VIEW_MIN or data[4] not in checked:
                out += feed(offset, data)
                trailer = CHECKSUM_LEN if ctx.checksum else 0
                start = max(ctx.fde.header_length, HEADER_LEN)
                continue
            type_code = data[4]
            end = size - trailer
            if (
                start > end
                or _unpack_length(data, 9)[0] != size
                or (trailer and verify and crc32(data) != CRC_RESIDUE)
            ):
                out += feed(offset, data)  # the error, or what feed makes of it
                continue
            if type_code in _ROWS_CODES:
                template = templates.get((type_code, data[start : start + ctx.table_id_size + 2]))
                if template is not None:
                    header, prefix, scanner, buffer, header_index, shift = template
                    table_id = header.table_id
                    images = start + header.images_start
                    if (
                        buffers.get(table_id) is buffer
                        and table_maps.get(table_id) is header.table_map
                        and data[start:images] == prefix
                    ):
                        try:
                            starts = scanner(data, images, end)
                        except (IndexError, struct.error):
                            starts = None
                        if starts is not None:
                            fields = unpack_header(data, 0)
                            buffer.runs.append(
                                (offset, fields[4], fields[0], fields[2], self.gtid,
                                 None, header_index, starts, data, images, end)
                            )  # fmt: skip
                            buffer.rows += len(starts) >> shift
                            if buffer.rows >= batch_rows:
                                del buffers[table_id]
                                out.append(_build_batch(buffer))
                            continue
                out += feed(offset, data)
            elif type_code == _TABLE_MAP:
                table_map = maps.get(data[start:end])
                if table_map is None:
                    out += feed(offset, data)
                else:
                    table_maps[table_map.table_id] = table_map
            elif type_code == _GTID:
                if end - start < GTID_BODY_MIN:
                    out += feed(offset, data)
                else:
                    seq_no, domain_id, _ = _unpack_gtid(data, start)
                    self.gtid = (domain_id, _unpack_server(data, 5)[0], seq_no)

    def feed_buffer(self, buf: bytes, pos: int, offset: int, out: list[Output]) -> tuple[int, int]:
        """``feed_block`` on the events framed straight from a read buffer (the ``inline`` of
        ``decoder.binlog_file.iter_raw_blocks``): from ``pos`` (the event there at
        ``offset``), the events feed_block handles in its own loop, each wholly in ``buf``
        (of any size: the large rows events of a blob table too, kept as the event's bytes
        sliced from the buffer, as small ones are), and a QUERY seen before that is not DDL
        (``_queries``); returns where it stopped, ``(pos, offset)``: at the end of the
        buffer's whole events, or at an event to be framed and fed (to feed_block) as usual
        (one it does not handle, a bad length, a START_ENCRYPTION, one the short way finds
        wrong), before which nothing of it has been taken."""
        ctx = self.ctx
        actions = self._actions
        templates = self._templates
        maps = self._maps
        buffers = self._buffers
        table_maps = ctx.table_maps
        unpack_header = _unpack_header
        unpack_gtid = _unpack_gtid
        crc32 = _crc32
        residue = CRC_RESIDUE
        queries = self._queries
        batch_rows = self.batch_rows
        check = self.verify_checksum and ctx.checksum
        trailer = CHECKSUM_LEN if ctx.checksum else 0
        start = max(ctx.fde.header_length, HEADER_LEN)
        id_end = start + ctx.table_id_size + 2
        min_length = start + trailer  # (start is at least HEADER_LEN)
        gtid_min = min_length + GTID_BODY_MIN
        gtid = self.gtid
        size = len(buf)
        last = size - HEADER_LEN
        try:
            while pos <= last:
                fields = unpack_header(buf, pos)
                length = fields[3]
                end = pos + length
                if end > size or length < min_length:
                    break
                action = actions.get(fields[1])
                if action is None:
                    break
                data = buf[pos:end]
                if check and crc32(data) != residue:
                    break  # feed says what is wrong
                if not action:  # (only checked)
                    pass
                elif action == _DO_ROWS:
                    template = templates.get((fields[1], data[start:id_end]))
                    if template is None:
                        break
                    header, prefix, scanner, buffer, header_index, shift = template
                    table_id = header.table_id
                    images = start + header.images_start
                    if (
                        buffers.get(table_id) is not buffer
                        or table_maps.get(table_id) is not header.table_map
                        or data[start:images] != prefix
                    ):
                        break
                    images_end = length - trailer
                    try:
                        starts = scanner(data, images, images_end)
                    except (IndexError, struct.error):
                        break
                    if starts is None:
                        break
                    buffer.runs.append(
                        (offset, fields[4], fields[0], fields[2], gtid,
                         None, header_index, starts, data, images, images_end)
                    )  # fmt: skip
                    buffer.rows += len(starts) >> shift
                    if buffer.rows >= batch_rows:
                        del buffers[table_id]
                        out.append(_build_batch(buffer))
                elif action == _DO_TABLE_MAP:
                    table_map = maps.get(data[start : length - trailer])
                    if table_map is None:
                        break
                    table_maps[table_map.table_id] = table_map
                elif action == _DO_GTID:
                    if length < gtid_min:
                        break
                    seq_no, domain_id, _ = unpack_gtid(data, start)
                    gtid = (domain_id, fields[2], seq_no)
                elif data[start : length - trailer] not in queries:  # (_DO_QUERY)
                    break
                pos = end
                offset += length
        finally:
            self.gtid = gtid
        return pos, offset

    def _known_rows(
        self,
        offset: int,
        data: bytes,
        fields: tuple[int, ...],
        start: int,
        end: int,
        out: list[Output],
    ) -> bool:
        """A rows event whose post-header and bitmaps are those of an earlier event of the
        same table map (a server's single-row statements): its rows added without reading
        them again; False when it is not one."""
        id_end = start + self.ctx.table_id_size + 2  # the table id and the rows flags
        template = self._templates.get((fields[1], data[start:id_end]))
        if template is None:
            return False
        header, prefix, scanner, buffer, header_index, shift = template
        images = start + header.images_start
        if (
            self._buffers.get(header.table_id) is not buffer  # flushed since, or replaced
            or self.ctx.table_maps.get(header.table_id) is not header.table_map
            or data[start:images] != prefix
        ):
            return False
        area = _area(data, images, end)
        try:
            starts = scanner(area, 0, len(area))
        except (IndexError, struct.error):
            return False
        if starts is None:
            return False
        buffer.runs.append(
            (offset, fields[4], fields[0], fields[2], self.gtid, None, header_index, starts,
             area, 0, len(area))
        )  # fmt: skip
        buffer.rows += len(starts) >> shift
        if buffer.rows >= self.batch_rows:
            del self._buffers[header.table_id]
            out.append(_build_batch(buffer))
        return True

    def _known_query(self, data: bytes) -> bool:
        """Whether ``data`` (a QUERY event of the right length) has a body decoded before as
        not DDL, and its CRC32 (when checked) is right."""
        ctx = self.ctx
        end = len(data) - (CHECKSUM_LEN if ctx.checksum else 0)
        start = max(ctx.fde.header_length, HEADER_LEN)
        if start > end or data[start:end] not in self._queries:
            return False
        return not (ctx.checksum and self.verify_checksum and _crc32(data) != CRC_RESIDUE)

    def _decoded(self, offset: int, data: bytes) -> list[Output]:
        ctx = self.ctx
        event = decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
        out: list[Output] = []
        if event.type_code in self.flush_on:
            if isinstance(event, QueryEvent) and event.query.strip().upper() in _NOT_DDL:
                if event.type_code == _QUERY and self._skip_known_queries:
                    # (its body alone says what it is: QUERY's post-header has a fixed size)
                    if len(self._queries) >= 1024:
                        self._queries.clear()
                    end = len(data) - (CHECKSUM_LEN if ctx.checksum else 0)
                    self._queries.add(data[max(ctx.fde.header_length, HEADER_LEN) : end])
            else:
                out += self.flush()
        if event.type_code == _GTID:
            self.gtid = (event.domain_id, event.server_id, event.seq_no)  # type: ignore[attr-defined]
        if event.type_code in self.events:
            out.append((offset, event))
        return out

    def _rows(
        self,
        offset: int,
        data: bytes,
        fields: tuple[int, ...],
        start: int,
        end: int,
        out: list[Output],
    ) -> None:
        body = memoryview(data)[start:end]
        ctx = self.ctx
        body_start = offset + start
        scanner = None
        try:
            header: RowsHeader = read_rows_header(body, fields[1], ctx)
            table_map = header.table_map
            try:
                shape = columnar_shape(table_map, schema_precisions(ctx, table_map))
                shape.arrow_columns()
            except DecodeError as exc:
                raise DecodeError(
                    f"table id {header.table_id}: {exc.reason}", offset=header.images_start
                ) from None
            rows: list[Any] | None = None
            starts: Sequence[int] | None = None
            area = b""
            if _np() is not None:
                # Where each row starts, now (the values are read a column at a time when the
                # batch is built); anything the walk does not take is read the row decoder's way.
                if header.compressed:
                    area = decompress_record(body, header.images_start, ctx.max_uncompressed_length)
                else:
                    area = _area(data, start + header.images_start, end)
                scanner = shape.scanner(header.width, header.present, header.present_after)
                try:
                    starts = scanner(area, 0, len(area))
                except (IndexError, struct.error):
                    starts = None
            if starts is None:
                rows = read_row_images(body, header, ctx, shape)
        except DecodeError as exc:
            raise exc.relocated(body_start, _name(fields[1])) from None
        except _MALFORMED as exc:
            raise DecodeError(
                f"malformed body: {exc}", offset=body_start, event_type=_name(fields[1])
            ) from exc
        width = header.width
        key = (id(shape), width, table_map.database, table_map.table, id(table_map))
        buffer = self._buffers.get(header.table_id)
        if buffer is not None and buffer.key != key:
            if (
                buffer.shape is not shape
                or buffer.width != width
                or buffer.table_map.database != table_map.database
                or buffer.table_map.table != table_map.table
                or buffer.names != _column_names(table_map, width)
                # Names, charsets, signedness... a batch carries one TABLE_MAP's metadata.
                or buffer.table_map.optional_metadata != table_map.optional_metadata
            ):
                del self._buffers[header.table_id]
                if buffer.rows:
                    out.append(_build_batch(buffer))
                buffer = None
            else:
                buffer.key = key
        if buffer is None:
            buffer = _TableBuffer(key, table_map, shape, width, _column_names(table_map, width))
            self._buffers[header.table_id] = buffer
        header_index = buffer.header_index(header)
        if starts is None:
            buffer.walked = False
        buffer.runs.append(
            (offset, fields[4], fields[0], fields[2], self.gtid, rows, header_index, starts,
             area, 0, len(area))
        )  # fmt: skip
        shift = 0 if header.present_after is None else 1  # (an UPDATE's rows: two images)
        buffer.rows += len(rows) if rows is not None else len(starts or ()) >> shift
        if starts is not None and scanner is not None and not header.compressed:
            if len(self._templates) >= 1024:
                self._templates.clear()
            id_end = start + ctx.table_id_size + 2
            prefix = data[start : start + header.images_start]
            self._templates[(fields[1], data[start:id_end])] = (
                header, prefix, scanner, buffer, header_index, shift
            )  # fmt: skip
        if buffer.rows >= self.batch_rows:
            del self._buffers[header.table_id]
            out.append(_build_batch(buffer))


def _area(data: bytes, start: int, end: int) -> Any:
    """The row images of an event: a copy when small, a view of the event when large (the
    batch copies it once more; small copies are cheaper than views, which the garbage
    collector tracks)."""
    return memoryview(data)[start:end] if end - start > _VIEW_MIN else data[start:end]


_VIEW_MIN = 1 << 16
_unpack_header = HEADER.unpack_from
_unpack_crc = CRC.unpack_from
_unpack_gtid = GTID_FIXED.unpack_from
_unpack_length = U32.unpack_from
_unpack_server = U32.unpack_from
_crc32 = zlib.crc32


def _name(type_code: int) -> str:
    try:
        return EventType(type_code).name
    except ValueError:
        return f"UNKNOWN_{type_code}"


def read_changes(
    source: Source,
    *,
    ctx: BinlogContext | None = None,
    keys: BinlogKeys | None = None,
    batch_rows: int = 65536,
    verify_checksum: bool = True,
    allow_truncated_tail: bool = False,
    allow_unknown: bool = False,
    events: Collection[int] = frozenset(),
    flush_on: Collection[int] = DDL_EVENT_TYPES,
    offset: int = 0,
    expect_magic: bool = True,
) -> Iterator[Output]:
    """The changed rows of a binlog file as per-table Arrow batches (the module docstring)."""
    decoder = ColumnarDecoder(
        ctx,
        batch_rows=batch_rows,
        verify_checksum=verify_checksum,
        allow_unknown=allow_unknown,
        events=events,
        flush_on=flush_on,
    )
    feed_block = decoder.feed_block
    out: list[Output] = []  # (filled by feed_buffer too: emptied in place)

    def inline(buf: bytes, pos: int, at: int) -> tuple[int, int]:
        return decoder.feed_buffer(buf, pos, at, out)

    blocks = iter_raw_blocks(
        source,
        allow_truncated_tail=allow_truncated_tail,
        expect_magic=expect_magic,
        offset=offset,
        keys=keys,
        inline=inline,
    )
    while True:
        try:
            block = next(blocks, None)
            if block is not None:
                feed_block(block, out)
        except BaseException:
            ready = out[:]
            out.clear()
            yield from ready
            raise
        if out:
            ready = out[:]
            out.clear()
            yield from ready
        if block is None:
            break
    yield from decoder.flush()
