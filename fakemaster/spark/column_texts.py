"""A column's typed Arrow values (the columnar decoder's) as the change events' text form
(docs/spark.md), a column at a time: ``pyarrow.compute`` casts (integers, BIT, YEAR, DECIMAL,
DATE, utf-8 text, ENUM by a ``take`` over its members), DATETIME/TIMESTAMP as fixed-width
digits computed from the integer microseconds, FLOAT/DOUBLE by Arrow's cast where it writes
``repr``'s text (``_double_texts``); the other column types (other charsets, binary bytes, SET)
and the values those casts cannot give go through the reference converter one value at a time,
for that column only. ``_Fallback`` where the typed values cannot give the reference form.
"""

from __future__ import annotations

from typing import Any

from fakemaster.spark.columns import _real_type
from fakemaster.vocabulary.constants import ColumnType

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "_Fallback",
    "_TEMPORAL",
    "_datetime_text",
    "_datetime_vector",
    "_double_texts",
    "_texts",
]


class _Fallback(Exception):
    """The typed columns cannot give the reference text form: read the file the reference way."""


_INTEGER_TYPES = frozenset(
    {ColumnType.TINY, ColumnType.SHORT, ColumnType.INT24, ColumnType.LONG, ColumnType.LONGLONG}
)
_TEMPORAL = frozenset(
    {
        ColumnType.DATE,
        ColumnType.NEWDATE,
        ColumnType.DATETIME,
        ColumnType.DATETIME2,
        ColumnType.TIMESTAMP,
        ColumnType.TIMESTAMP2,
    }
)


def _datetime_text(fsp: int) -> Any:
    def convert(v: Any) -> str:
        text = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        return text + (f".{v.microsecond:06d}"[: fsp + 1] if fsp else "")

    return convert


def _texts(field: Any, column_type: int, meta: int, info_column: Any, members: Any) -> Any:
    """One struct field's values as the text form (a string array, nulls kept)."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    real = _real_type(column_type, meta)
    if column_type in (ColumnType.TIME, ColumnType.TIME2) or pa.types.is_null(field.type):
        raise _Fallback
    if real in (ColumnType.ENUM, ColumnType.SET) and members is not None:
        if real == ColumnType.SET:
            return _per_value(field, info_column.to_text)
        import numpy as np

        index = np.asarray(field.fill_null(0).cast(pa.int64()))
        index = np.where((index >= 1) & (index <= len(members)), index, 0)
        return pa.array(["", *members], pa.string()).take(
            pa.array(index, mask=np.asarray(field.is_null()))
        )
    if column_type == ColumnType.YEAR:
        return pc.utf8_lpad(field.cast(pa.string()), 4, "0")
    if (
        column_type in _INTEGER_TYPES
        or column_type == ColumnType.BIT
        or real in (ColumnType.ENUM, ColumnType.SET)
        or column_type in (ColumnType.DATE, ColumnType.NEWDATE)
    ):
        return field.cast(pa.string())
    if column_type in (ColumnType.NEWDECIMAL, ColumnType.DECIMAL):
        texts = field.cast(pa.string())
        # Arrow writes some values in scientific notation (0 at scale 30: 0E-30); the text
        # form never does: those columns go value by value.
        if pc.any(pc.match_substring(texts, "E")).as_py():
            return _per_value(field, info_column.to_text)
        return texts
    if column_type in (ColumnType.DATETIME, ColumnType.DATETIME2):
        fsp = meta if column_type == ColumnType.DATETIME2 else 0
        return _datetime_vector(field, fsp)
    if column_type in (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2):
        fsp = meta if column_type == ColumnType.TIMESTAMP2 else 0
        return _datetime_vector(field, fsp)
    if pa.types.is_binary(field.type) and info_column.spark_type == "string":
        if python_codec_is_utf8(info_column):
            try:
                return field.cast(pa.string())
            except pa.ArrowInvalid:
                pass
        return _per_value(field, info_column.to_text)
    if pa.types.is_floating(field.type) and column_type in (ColumnType.FLOAT, ColumnType.DOUBLE):
        return _double_texts(field)
    if pa.types.is_floating(field.type) or pa.types.is_binary(field.type):
        return _per_value(field, info_column.to_text)
    raise _Fallback


def python_codec_is_utf8(info_column: Any) -> bool:
    return bool(getattr(info_column.to_text, "__closure__", None)) and any(
        getattr(c, "cell_contents", None) == "utf-8" for c in info_column.to_text.__closure__
    )


def _datetime_vector(field: Any, fsp: int) -> Any:
    """DATETIME/TIMESTAMP values as ``YYYY-MM-DD hh:mm:ss[.fraction]`` (fsp digits, cut not
    rounded), built as fixed-width digits from the integer microseconds (UTC for a TIMESTAMP)."""
    import numpy as np
    import pyarrow as pa

    if field.null_count == len(field):
        return pa.nulls(len(field), pa.string())
    if field.type.unit != "us" or field.type.tz not in (None, "UTC", "+00:00"):
        return _per_value(field, _datetime_text(fsp))
    micros = np.asarray(field.cast(pa.int64()).fill_null(0))
    seconds, micro = np.divmod(micros, 1_000_000)
    days, second = np.divmod(seconds, 86_400)
    year, month, day = _civil(days)
    if int(year.min()) < 1000 or int(year.max()) > 9999:
        return _per_value(field, _datetime_text(fsp))
    hour, second = np.divmod(second, 3600)
    minute, second = np.divmod(second, 60)
    parts: list[tuple[Any, int]] = [
        (year, 4), (b"-", 1), (month, 2), (b"-", 1), (day, 2), (b" ", 1),
        (hour, 2), (b":", 1), (minute, 2), (b":", 1), (second, 2),
    ]  # fmt: skip
    if fsp:
        parts += [(b".", 1), (micro // 10 ** (6 - fsp), fsp)]
    return _fixed_width_texts(parts, len(field), field.is_valid() if field.null_count else None)


def _civil(days: Any) -> tuple[Any, Any, Any]:
    """Proleptic Gregorian (year, month, day) of days since 1970-01-01 (numpy int64 arrays;
    H. Hinnant's civil_from_days)."""
    import numpy as np

    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def _fixed_width_texts(parts: list[tuple[Any, int]], n: int, valid: Any) -> Any:
    """A string array of ``n`` texts of one width: each part an integer array written as that
    many zero-padded decimal digits, or a literal of bytes; null where ``valid`` (a boolean
    array; None: no nulls) is false."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    width = sum(w for _, w in parts)
    out = np.empty((n, width), np.uint8)
    at = 0
    for value, w in parts:
        if isinstance(value, bytes):
            out[:, at : at + w] = np.frombuffer(value, np.uint8)
        else:
            value = np.asarray(value, np.int64)
            for k in range(w - 1, -1, -1):
                value, digit = np.divmod(value, 10)
                out[:, at + k] = digit + 48
        at += w
    offsets = np.arange(n + 1, dtype=np.int32) * width
    texts = pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(out)], 0
    )
    if valid is None:
        return texts
    return pc.if_else(valid, texts, pa.scalar(None, pa.string()))


def _double_texts(field: Any) -> Any:
    """DOUBLE/FLOAT values as ``repr(float(v))`` (the shortest text that reads back as the
    same double): Arrow's cast gives the same shortest digits, written the same way where
    Python writes fixed notation (1e-4 <= |v| < 1e16) and Arrow did too (no exponent), once
    ``.0`` is added to an integral one; the other values go one by one."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    doubles = field.cast(pa.float64())
    texts = doubles.cast(pa.string())
    magnitude = np.abs(np.asarray(doubles.fill_null(1.0)))
    with np.errstate(invalid="ignore"):
        fixed = (magnitude >= 1e-4) & (magnitude < 1e16)
    has_e = np.asarray(pc.match_substring(texts, "e").fill_null(False))
    has_dot = np.asarray(pc.match_substring(texts, ".").fill_null(True))
    zero = np.asarray(pc.equal(doubles, 0.0).fill_null(False))
    good = (fixed | zero) & ~has_e
    texts = pc.if_else(
        pa.array(good & ~has_dot), pc.binary_join_element_wise(texts, ".0", ""), texts
    )
    bad = np.nonzero(~good & np.asarray(doubles.is_valid()))[0]
    if not len(bad):
        return texts
    values = texts.to_pylist()
    for i, v in zip(bad.tolist(), doubles.take(pa.array(bad)).to_pylist(), strict=True):
        values[i] = repr(v)
    return pa.array(values, pa.string())


def _per_value(field: Any, convert: Any) -> Any:
    import pyarrow as pa

    return pa.array([None if v is None else convert(v) for v in field.to_pylist()], pa.string())
