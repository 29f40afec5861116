"""The change-event table of one binlog file built from the columnar decoder's typed Arrow columns
(``decoder.columnar.read_changes``): the same table as :func:`fakemaster.spark.changes.read_changes`
(the reference, kept), without a Python object per value on the common column types.

Per column the typed values become the text form of docs/spark.md with ``pyarrow.compute``
casts (integers, BIT, YEAR, DECIMAL, DATE, utf-8 text, ENUM by a ``take`` over its members),
DATETIME/TIMESTAMP as fixed-width digits computed from the integer microseconds, FLOAT/DOUBLE by
Arrow's cast where it writes ``repr``'s text (``_double_texts``); the other column types (other
charsets, binary bytes, SET) and the values those casts cannot give go through the reference
converter one value at a time, for that column only. The images are MapArrays built
from offsets/keys/items arrays (numpy over the columns-present bitmaps). Where the typed columns
cannot give the reference form, the whole file is read by the reference path instead: a schema
catalogue is given (it may change signedness the decoder does not know), a TIME column, or a
null in a DATE/DATETIME/TIMESTAMP column (the decoder makes zero dates null, the text form keeps
them). The file is decoded whole before its batches are given out (sorted by ``seq``).
"""

from __future__ import annotations

import bisect
import dataclasses
import io
import os
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from fakemaster.spark import changes
from fakemaster.spark.columns import BINARY, Catalogue, TableInfo, _real_type, table_info
from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    ColumnType,
    EventType,
    GtidFlag,
)
from fakemaster.vocabulary.events import FormatDescriptionEvent, GtidEvent
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET, SERVER_ID_OFFSET
from fakemaster.vocabulary.layouts import GTID_BODY_MIN, GTID_FIXED

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

    from decoder.binlog_file import Source
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.events import RowPair
    from fakemaster.vocabulary.layouts import Buffer

__all__ = ["NON_ROWS_TYPES", "events_table", "read_changes_fast"]


RawEvents = Callable[[], "tuple[BinlogContext, Iterator[tuple[int, Any]]]"]
"""The events of a table again, with a context to decode them (see ``_repairs``)."""


class _Fallback(Exception):
    """The typed columns cannot give the reference text form: read the file the reference way."""


_ROWS_TYPES = frozenset(
    int(t)
    for t in EventType
    if "ROWS" in t.name and "ANNOTATE" not in t.name and "PARTIAL" not in t.name
)
NON_ROWS_TYPES = frozenset(int(t) for t in EventType) - _ROWS_TYPES
"""The type codes the columnar decoder gives back decoded (every type but the rows events)."""
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
    import pyarrow as pa
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


def _present_matrix(present: Any, width: int) -> Any:
    import numpy as np

    n = len(present)
    valid = np.asarray(present.is_valid())
    out = np.zeros((n, width), dtype=bool)
    if not valid.any():
        return out
    length = (width + 7) // 8
    buffers = present.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[present.offset : present.offset + n + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8)
    starts = offsets[:-1][valid]
    matrix = data[starts[:, None] + np.arange(length)]
    bits = np.unpackbits(matrix, axis=1, bitorder="little")[:, :width].astype(bool)
    out[valid] = bits
    return out


def _image(valid: Any, mask: Any, names: tuple[str, ...], texts: list[Any], map_type: Any) -> Any:
    """The MapArray of one side's images: ``valid[row]`` says the row has an image,
    ``mask[row, column]`` that the column is in it, ``texts`` are the columns' texts."""
    import numpy as np
    import pyarrow as pa

    n = len(valid)
    width = len(names)
    counts = mask.sum(axis=1)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    rows, cols = np.nonzero(mask)
    keys = pa.array(list(names), pa.string()).take(pa.array(cols, pa.int64()))
    if width:
        flat = pa.concat_arrays([t.cast(pa.string()) for t in texts])
        items = flat.take(pa.array(cols.astype(np.int64) * n + rows, pa.int64()))
    else:
        items = pa.array([], pa.string())
    offset_mask = np.append(~valid, False)
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32(), mask=offset_mask), keys, items, type=map_type
    )


def _temporal_nulls(rb: Any, side: str, c: int, width: int) -> Any:
    """Row positions of ``rb`` whose ``side`` image holds column ``c`` as null (a NULL or a
    zero date the decoder made null)."""
    import numpy as np

    struct = rb.column(side)
    present = _present_matrix(rb.column(f"{side}_present"), width)[:, c]
    valid = np.asarray(struct.is_valid())
    return np.nonzero(present & valid & np.asarray(struct.field(c).is_null()))[0]


def _repairs(
    raw_events: RawEvents, batches: list[Any], verify_checksum: bool
) -> dict[tuple[int, int, str, int], Any]:
    """The row decoder's values of the temporal columns the columnar decoder gave as null:
    ``(event_offset, row, side, column) -> value`` (None for a NULL)."""
    import numpy as np

    from decoder.core import decode_event
    from fakemaster.vocabulary.events import RowsEvent, UpdateRowsEvent

    wanted: dict[int, list[tuple[int, str, int]]] = {}
    for cb in batches:
        rb = cb.record_batch
        tm = cb.table_map
        width = len(tm.column_types)
        offsets = np.asarray(rb.column("event_offset"))
        rows = np.asarray(rb.column("row"))
        for side in ("before", "after"):
            struct = rb.column(side)
            for c in range(width):
                if tm.column_types[c] in _TEMPORAL and struct.field(c).null_count:
                    for i in _temporal_nulls(rb, side, c, width):
                        wanted.setdefault(int(offsets[i]), []).append((int(rows[i]), side, c))
    if not wanted:
        return {}
    ctx, events = raw_events()
    found: dict[tuple[int, int, str, int], Any] = {}
    for offset, data in events:
        kind = data[4]
        if offset not in wanted and kind not in (
            int(EventType.FORMAT_DESCRIPTION),
            int(EventType.TABLE_MAP),
        ):
            continue
        event = decode_event(data, ctx, offset, verify_checksum)
        if offset not in wanted or not isinstance(event, RowsEvent):
            continue
        for row, side, c in wanted[offset]:
            image = event.rows[row]
            if isinstance(event, UpdateRowsEvent):
                pair = cast("RowPair", image)  # an UPDATE's rows are pairs
                image = pair[0] if side == "before" else pair[1]
            found[(offset, row, side, c)] = image[c]
    return found


def _patched(texts: Any, rb: Any, side: str, c: int, repairs: Any, convert: Any) -> Any:
    import pyarrow as pa

    positions = _temporal_nulls(rb, side, c, len(rb.column(side).type))
    if not len(positions):
        return texts
    values = texts.to_pylist()
    offsets = rb.column("event_offset")
    rows = rb.column("row")
    for i in positions:
        value = repairs[(offsets[int(i)].as_py(), rows[int(i)].as_py(), side, c)]
        values[int(i)] = None if value is None else convert(value)
    return pa.array(values, pa.string())


def _repeated(text: str, n: int) -> Any:
    """A string array of ``n`` times ``text``, built from its buffers (no Python list)."""
    import numpy as np
    import pyarrow as pa

    data = text.encode()
    if len(data) * n >= 1 << 31:
        return pa.array([text] * n, pa.string())
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(data))
    return pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)]
    )


def _list_column(items: tuple[str, ...], n: int, type_: Any) -> Any:
    import numpy as np
    import pyarrow as pa

    width = len(items)
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * width, pa.int32())
    # Every row has the same list: its strings are repeated by index, not as Python objects.
    values = pa.array(items, pa.string()).take(pa.array(np.tile(np.arange(width), n)))
    return pa.ListArray.from_arrays(offsets, values, type=type_)


def read_changes_fast(
    source: Source,
    name: str,
    index: int,
    *,
    catalogue: Catalogue | None = None,
    batch_rows: int = 8192,
    verify_checksum: bool = True,
    table: TableInfo | None = None,
) -> Iterator[pa.RecordBatch]:
    """:func:`fakemaster.spark.changes.read_changes` through the columnar decoder (same
    batches' rows, same order; the module docstring says when it reads the reference way).

    With ``table``, only that table's events (and the DDL of its database), with typed images,
    as :func:`fakemaster.spark.changes.typed_batch` gives them: the columnar decoder's typed
    values cast to the table's Spark types, no text in between (text columns excepted)."""
    if not isinstance(source, str | bytes | os.PathLike):
        # A stream is read whole (the rare columns are read again from it).
        chunks = []
        while chunk := source.read(1 << 20):
            chunks.append(bytes(chunk))
        source = io.BytesIO(b"".join(chunks))
    if not catalogue:
        try:
            found = _read_table(source, name, index, verify_checksum, table)
        except _Fallback:
            if isinstance(source, io.BytesIO):
                source.seek(0)
        else:
            yield from found.to_batches(max_chunksize=batch_rows)
            return
    reference = changes.read_changes(
        source,
        name,
        index,
        catalogue=catalogue,
        batch_rows=batch_rows,
        verify_checksum=verify_checksum,
    )
    if table is None:
        yield from reference
        return
    for batch in reference:
        typed = changes.typed_batch(batch, table)
        if typed.num_rows:
            yield typed


def _typed_image(
    struct: Any,
    info: TableInfo,
    padded: Sequence[bool],
    wanted: TableInfo,
    text: Callable[[int], Any],
) -> Any:
    """The image ``struct`` (columns of ``info``, the batch's TABLE_MAP) as the struct of
    ``wanted``'s typed columns, matched by name (a column the batch does not have is null)."""
    import numpy as np
    import pyarrow as pa

    index = {column.name: c for c, column in enumerate(info.columns)}
    arrays = []
    fields = []
    for column in wanted.columns:
        type_ = changes._arrow_type(column.spark_type)
        fields.append(pa.field(column.name, type_))
        c = index.get(column.name)
        if c is None:
            arrays.append(pa.nulls(len(struct), type_))
            continue
        if info.columns[c].spark_type != column.spark_type:
            raise _Fallback  # the column changed type (ALTER ... MODIFY): the reference casts
        if column.spark_type == "string":
            arrays.append(text(c))
        elif padded[c]:
            raise _Fallback  # BINARY(n): the reference pads the stored bytes
        else:
            arrays.append(struct.field(c).cast(type_))
    return pa.StructArray.from_arrays(
        arrays, fields=fields, mask=pa.array(np.asarray(struct.is_null()), pa.bool_())
    )


def _typed_schema(table: TableInfo) -> Any:
    """The Arrow schema of :func:`fakemaster.spark.changes.typed_batch`'s batches."""
    import pyarrow as pa

    generic = changes.arrow_schema()
    image = pa.struct([pa.field(c.name, changes._arrow_type(c.spark_type)) for c in table.columns])
    text = pa.string()
    return pa.schema(
        [
            pa.field("op", text),
            pa.field("database", text),
            pa.field("table", text),
            pa.field("before", image),
            pa.field("after", image),
            generic.field("source"),
            generic.field("seq"),
            pa.field("ddl", text),
            pa.field("ddl_kind", text),
        ]
    )


# The events whose decoding the change events need (GTIDs, statements, annotated queries);
# the others are only counted (seq.event) from a walk of the headers.
_STATE_TYPES = frozenset(
    int(t)
    for t in (
        EventType.FORMAT_DESCRIPTION,
        EventType.GTID,
        EventType.QUERY,
        EventType.QUERY_COMPRESSED,
        EventType.ANNOTATE_ROWS,
    )
)
_QUERY_RESET_TYPES = [int(EventType.XID), int(EventType.ROTATE)]
_HEADER = struct.Struct("<IBII")  # timestamp, type, server id, length


def _event_heads(source: Any) -> tuple[Any, Any, _CommonGtids | None] | None:
    """The offset and type code of every event of a binlog file (a path or a BytesIO), from a
    walk of the headers, and its GTIDs when every one is a common GTID (``_common_gtids``);
    None when the walk cannot tell (no magic, an encrypted file, a length that does not
    frame): the decoder then decodes every event."""
    import mmap

    import numpy as np

    if isinstance(source, io.BytesIO):
        return _walk(source.getbuffer())
    with open(source, "rb") as f:
        if os.fstat(f.fileno()).st_size < 4:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = _walk(memoryview(data))
    return found if found is None else (np.asarray(found[0]), np.asarray(found[1]), found[2])


class _CommonGtids(NamedTuple):
    """A file's GTIDs read from its bytes, not decoded: every one the common GTID (a 19-byte
    body without commit id or XA, zero padding), so that what the change events take from it
    (server id, timestamp, domain-server-seq) lies at fixed places."""

    offsets: Any  # int64 array, ascending
    length: int  # the events' length (every one the same: 38, or 42 with a CRC)
    server_ids: list[int]
    ts_ms: list[int]
    texts: list[str]


def _common_gtids(data: Any, offsets: Any) -> _CommonGtids | None:
    """The GTIDs at ``offsets`` of ``data`` (whole events, framed by the walk), or None when
    one of them is not a common GTID (the decoder then decodes them, and says what is wrong
    with one). Each GTID's CRC and length are checked by the decoder all the same."""
    import numpy as np

    buf = np.frombuffer(data, np.uint8)
    try:
        if not len(offsets):
            return _CommonGtids(offsets, 0, [], [], [])
        at = EVENT_LENGTH_OFFSET
        lengths = buf[offsets[:, None] + np.arange(at, at + 4)].view("<u4").ravel()
        length = int(lengths[0])
        if length not in _COMMON_GTID_LENGTHS or (lengths != length).any():
            return None
        head = buf[offsets[:, None] + np.arange(_COMMON_GTID_LENGTHS[0])]  # header and body
        flags, padding = head[:, _GTID_FLAGS_AT], head[:, _GTID_FLAGS_AT + 1 :]
        if (flags & (GtidFlag.GROUP_COMMIT_ID | _XA_FLAGS)).any() or padding.any():
            return None

        def numbers(at: int, dtype: str) -> list[int]:
            width = np.dtype(dtype).itemsize
            values: list[int] = head[:, at : at + width].copy().view(dtype).ravel().tolist()
            return values

        servers = numbers(SERVER_ID_OFFSET, "<u4")
        seqs = numbers(HEADER_LEN, "<u8")
        domains = numbers(HEADER_LEN + 8, "<u4")
        texts = list(map(changes.gtid_text, domains, servers, seqs))
        ts_ms = [t * 1000 for t in numbers(0, "<u4")]
        return _CommonGtids(offsets, length, servers, ts_ms, texts)
    finally:
        del buf  # (the caller releases the buffer: no export may be left)


_XA_FLAGS = GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA
# A common GTID event: the header, seq_no, domain_id, flags2, zero padding to GTID_BODY_MIN;
# then a CRC or not.
_COMMON_GTID_LENGTHS = (HEADER_LEN + GTID_BODY_MIN, HEADER_LEN + GTID_BODY_MIN + CHECKSUM_LEN)
_GTID_FLAGS_AT = HEADER_LEN + GTID_FIXED.size - 1


def _runs(offsets: Any) -> tuple[Any, Any]:
    """``offsets`` as runs of equal values (a rows event's rows share its offset): each run's
    value and length, for work done once per event and repeated for its rows."""
    import numpy as np

    if not len(offsets):
        return offsets, np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], offsets[1:] != offsets[:-1])))
    return offsets[starts], np.diff(np.append(starts, len(offsets)))


def _frames_gtids(fde: FormatDescriptionEvent, gtids: _CommonGtids) -> bool:
    """Whether the file's FDE agrees with where ``_common_gtids`` read the GTIDs' fields (a
    19-byte header; a CRC after each event when it says CRC32)."""
    crc = fde.checksum_alg == ChecksumAlg.CRC32
    return fde.header_length == HEADER_LEN and (
        not gtids.texts or gtids.length == _COMMON_GTID_LENGTHS[crc]
    )


def _apply_gtid(state: changes.FileState, gtids: _CommonGtids, k: int) -> None:
    """What GTID ``k`` of ``gtids`` sets in ``state`` (no XA in a common GTID)."""
    changes.start_group(state, gtids.texts[k], gtids.server_ids[k], gtids.ts_ms[k])


def _walk(data: Any) -> tuple[Any, Any, _CommonGtids | None] | None:
    import numpy as np

    try:
        if bytes(data[:4]) != b"\xfebin":
            return None
        offsets = array("q")
        types = bytearray()
        unpack = _HEADER.unpack_from
        size = len(data)
        pos = 4
        encrypted = int(EventType.START_ENCRYPTION)
        while pos + 19 <= size:
            _, code, _, length = unpack(data, pos)
            if length < 19 or code == encrypted:
                return None
            offsets.append(pos)
            types.append(code)
            pos += length
        if pos != size:
            return None  # a partial event: the decoder says what is wrong
        every = np.frombuffer(offsets, np.int64).copy()
        codes = np.frombuffer(bytes(types), np.uint8)
        return every, codes, _common_gtids(data, every[codes == int(EventType.GTID)])
    finally:
        if isinstance(data, memoryview):
            data.release()


def _read_table(
    source: Any, name: str, index: int, verify_checksum: bool, typed: TableInfo | None = None
) -> Any:
    from decoder.binlog_file import iter_raw_events
    from decoder.columnar import read_changes
    from fakemaster.vocabulary.context import BinlogContext

    def raw_events() -> tuple[BinlogContext, Iterator[tuple[int, Any]]]:
        def events() -> Iterator[tuple[int, Any]]:
            if isinstance(source, io.BytesIO):
                source.seek(0)
            yield from iter_raw_events(source)
            if isinstance(source, io.BytesIO):
                source.seek(0)

        return BinlogContext(), events()

    heads = _event_heads(source)
    walked = None if heads is None else heads[:2]
    gtids = None if heads is None else heads[2]
    if walked is None:
        wanted = NON_ROWS_TYPES
    elif gtids is None:
        wanted = _STATE_TYPES
    else:
        wanted = _STATE_TYPES - {int(EventType.GTID)}  # read from the walk: not decoded
    state = changes.FileState(PurePosixPath(name).name, index, None)
    items = read_changes(source, verify_checksum=verify_checksum, events=wanted)
    return _changes_table(items, state, raw_events, verify_checksum, typed, walked, gtids)


def events_table(
    events: Sequence[tuple[int, Buffer]], state: changes.FileState, *, checksum: bool
) -> tuple[pa.Table, changes.FileState] | None:
    """The change-event table of whole event groups of ``state``'s file, given as ``(position,
    event bytes)`` (header to CRC, as a replica receives them; ``position`` is what the
    table's ``pos`` fields hold: a stream gives the events' end positions), built as
    :func:`read_changes_fast` builds a file's, and the state after them (``state`` itself is
    left as it was).

    None where the columnar path cannot give the reference form (the module docstring): read
    those events with :func:`fakemaster.spark.changes.add_event` instead, from ``state``. The
    CRCs are not checked again (the replica client checked them)."""
    from decoder.columnar import ColumnarDecoder
    from fakemaster.vocabulary.context import BinlogContext

    if state.catalogue:
        return None

    def raw_events() -> tuple[BinlogContext, Iterator[tuple[int, Any]]]:
        return BinlogContext.for_checksum(checksum), iter(events)

    after = dataclasses.replace(state, maps=dict(state.maps), shapes=dict(state.shapes))
    decoder = ColumnarDecoder(
        BinlogContext.for_checksum(checksum), verify_checksum=False, events=NON_ROWS_TYPES
    )
    items: list[Any] = []
    for position, data in events:
        items += decoder.feed(position, data if isinstance(data, bytes) else bytes(data))
    items += decoder.flush()
    try:
        table = _changes_table(items, after, raw_events, False, None)
    except _Fallback:
        return None
    return table, after


def _changes_table(
    items: Iterable[Any],
    state: changes.FileState,
    raw_events: RawEvents,
    verify_checksum: bool,
    typed: TableInfo | None = None,
    walked: tuple[Any, Any] | None = None,
    read_gtids: _CommonGtids | None = None,
) -> Any:
    """The table of the columnar decoder's output ``items`` (ChangeBatch objects and the
    ``(offset, event)`` of the other events) for one file's events, ``state`` its state (updated
    by the other events); ``raw_events`` gives the events again with a context to decode them
    (for the columns read value by value), only when needed. ``walked``: every event's offset
    and type code (``_event_heads``) when ``items`` has only the events of ``_STATE_TYPES``;
    None when it has every event but the rows events. ``read_gtids``: the file's GTIDs read from
    its bytes, when ``items`` has none of them (they set the state as decoded ones would)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from decoder.columnar import ChangeBatch

    index = state.index
    # XID/ROTATE end a group's annotated query (changes.add_event): with the walk they are not
    # decoded, so their offsets reset it here, before the next decoded event and in state_of.
    resets = (
        walked[0][np.isin(walked[1], _QUERY_RESET_TYPES)]
        if walked is not None
        else np.zeros(0, np.int64)
    )
    next_reset = 0
    schema = changes.arrow_schema()
    ddl = changes.EventColumns()
    event_offsets: list[int] = []
    gtid_offsets: list[int] = []
    marks: list[int] = []
    mark_state: list[tuple[Any, Any, Any, Any]] = []
    batches: list[ChangeBatch] = []
    ddl_offsets: list[int] = []
    gtid_at = [] if read_gtids is None else read_gtids.offsets.tolist()
    applied = -1  # the last of ``gtids`` applied to ``state``
    for item in items:
        if isinstance(item, ChangeBatch):
            batches.append(item)
            continue
        pos, event = item
        if read_gtids is not None:
            if isinstance(event, FormatDescriptionEvent) and not _frames_gtids(event, read_gtids):
                raise _Fallback
            # The last GTID before this event sets the state, as add_event does.
            last = bisect.bisect_left(gtid_at, pos) - 1
            if last > applied:
                applied = last
                _apply_gtid(state, read_gtids, last)
        while next_reset < len(resets) and resets[next_reset] < pos:
            state.query = None
            next_reset += 1
        before = len(ddl)
        changes.add_event(state, ddl, pos, event)
        ddl_offsets.extend([pos] * (len(ddl) - before))
        event_offsets.append(pos)
        if isinstance(event, GtidEvent):
            gtid_offsets.append(pos)
        marks.append(pos)
        mark_state.append((state.server_id, state.gtid, state.ts_ms, state.query))
    if walked is not None:
        # Only the events that carry state were decoded: the others are counted from the walk
        # of the headers, and XID/ROTATE end the group's annotated query there.
        every, types = walked
        gtids = every[types == int(EventType.GTID)]
    else:
        rows_offsets = [np.asarray(b.record_batch.column("event_offset")) for b in batches]
        every = np.unique(np.concatenate([np.asarray(event_offsets, np.int64), *rows_offsets]))
        gtids = np.asarray(sorted(set(gtid_offsets)), np.int64)
    if read_gtids is not None and len(gtid_at) - 1 > applied:
        _apply_gtid(state, read_gtids, len(gtid_at) - 1)
    # Each mark's state (server id, GTID, timestamp, query), in offset order, then a null one.
    mark_values = [
        pa.array([s[k] for s in mark_state] + [None], type_)
        for k, type_ in enumerate((pa.int64(), pa.string(), pa.int64(), pa.string()))
    ]
    mark_at = np.asarray(marks, np.int64)
    if read_gtids is not None and len(gtid_at):
        # Each GTID is a mark too: the state it sets, with no query.
        at = np.concatenate([read_gtids.offsets, mark_at])
        order = np.argsort(at, kind="stable")
        mark_at = at[order]
        taken = pa.array(np.append(order, len(order)))  # (the null state stays last)
        read = (
            pa.array(read_gtids.server_ids, pa.int64()),
            pa.array(read_gtids.texts, pa.string()),
            pa.array(read_gtids.ts_ms, pa.int64()),
            pa.nulls(len(gtid_at), pa.string()),
        )
        mark_values = [
            pa.concat_arrays([first, rest]).take(taken)
            for first, rest in zip(read, mark_values, strict=True)
        ]

    def event_numbers(offsets: Any) -> Any:
        offsets, counts = _runs(offsets)
        return np.repeat(_event_numbers(offsets), counts)

    def _event_numbers(offsets: Any) -> Any:
        rank = np.searchsorted(every, offsets)
        g = np.searchsorted(gtids, offsets, side="right") - 1
        grank = np.searchsorted(every, gtids[np.maximum(g, 0)]) if len(gtids) else rank
        return np.where(g >= 0, rank - grank, rank + 1).astype(np.int32)

    def state_of(offsets: Any) -> list[Any]:
        offsets, counts = _runs(offsets)
        m = np.searchsorted(mark_at, offsets, side="right") - 1
        at = np.where(m >= 0, m, len(mark_at))
        columns = []
        for k, values in enumerate(mark_values):
            if k == 3 and len(resets):
                # A reset after the last mark: no query (the reference's XID/ROTATE).
                r = np.searchsorted(resets, offsets, side="right") - 1
                since = (r >= 0) & (
                    (m < 0) | (resets[np.maximum(r, 0)] > mark_at[np.maximum(m, 0)])
                )
                at = np.where(since, len(mark_at), at)
            columns.append(values.take(pa.array(np.repeat(at, counts))))
        return columns

    if typed is not None:
        batches = [cb for cb in batches if (cb.database, cb.table) == (typed.database, typed.table)]
        schema = _typed_schema(typed)
    # The typed images keep the decoder's nulls for zero dates (Spark cannot hold them).
    repairs = _repairs(raw_events, batches, verify_checksum) if typed is None else {}
    out: list[Any] = []
    for cb in batches:
        rb = cb.record_batch
        n = rb.num_rows
        info = table_info(cb.table_map, None)
        tm = cb.table_map
        width = len(tm.column_types)
        from fakemaster.spark import columns as spark_columns

        real_types = [
            _real_type(t, m) for t, m in zip(tm.column_types, tm.column_meta, strict=True)
        ]
        member_lists = spark_columns._member_lists(tm, real_types)
        members: list[list[str] | None] = list(member_lists)
        images = {}
        for side in ("before", "after") if typed is not None else ():
            struct = rb.column(side)

            def text(
                c: int, struct: Any = struct, tm: Any = tm, info: Any = info, members: Any = members
            ) -> Any:
                return _texts(
                    struct.field(c),
                    tm.column_types[c],
                    tm.column_meta[c],
                    info.columns[c],
                    members[c],
                )

            padded = [
                info.columns[c].spark_type == BINARY and real_types[c] == ColumnType.STRING
                for c in range(len(info.columns))
            ]
            assert typed is not None
            images[side] = _typed_image(struct, info, padded, typed, text)
        for side in ("before", "after") if typed is None else ():
            struct = rb.column(side)
            if struct.null_count == n:
                # No image on this side (an insert's before, a delete's after): no texts.
                images[side] = pa.nulls(n, schema.field(side).type)
                continue
            valid = np.asarray(struct.is_valid())
            mask = _present_matrix(rb.column(f"{side}_present"), width) & valid[:, None]
            texts = [
                _texts(
                    struct.field(c),
                    tm.column_types[c],
                    tm.column_meta[c],
                    info.columns[c],
                    members[c],
                )
                if mask[:, c].any()
                else pa.nulls(n, pa.string())  # in no image of the batch: never read
                for c in range(width)
            ]
            for c in range(width):
                if tm.column_types[c] in _TEMPORAL and struct.field(c).null_count:
                    texts[c] = _patched(texts[c], rb, side, c, repairs, info.columns[c].to_text)
            images[side] = _image(valid, mask, info.names, texts, schema.field(side).type)
        offsets = np.asarray(rb.column("event_offset"))
        rows = rb.column("row").cast(pa.int32())
        server_id, gtid, ts_ms, query = state_of(offsets)
        pos = pa.array(offsets, pa.int64())
        source_type = schema.field("source").type
        source_arr = pa.StructArray.from_arrays(
            [
                server_id,
                gtid,
                _repeated(state.name, n),
                pos,
                rows,
                pa.nulls(n, pa.int64()),
                _repeated(info.database, n),
                _repeated(info.table, n),
                ts_ms,
                query,
            ],
            fields=list(source_type),
        )
        seq_type = schema.field("seq").type
        seq_arr = pa.StructArray.from_arrays(
            [
                pa.array(np.full(n, index, np.int64)),
                pos,
                pa.array(event_numbers(offsets), pa.int32()),
                rows,
            ],
            fields=list(seq_type),
        )
        out.append(
            pa.RecordBatch.from_arrays(
                [
                    rb.column("op"),
                    _repeated(info.database, n),
                    _repeated(info.table, n),
                    images["before"],
                    images["after"],
                    source_arr,
                    seq_arr,
                    pa.nulls(n, pa.string()),
                    pa.nulls(n, pa.string()),
                    *(
                        ()
                        if typed is not None
                        else (
                            _list_column(info.names, n, schema.field("columns").type),
                            _list_column(info.spark_types, n, schema.field("column_types").type),
                            _list_column(info.primary_key, n, schema.field("primary_key").type),
                        )
                    ),
                ],
                schema=schema,
            )
        )
    if len(ddl):
        batch = changes.rows_to_arrow(ddl)
        seq = batch.column("seq")
        fixed = pa.StructArray.from_arrays(
            [
                seq.field("file_index"),
                seq.field("pos"),
                pa.array(event_numbers(np.asarray(ddl_offsets, np.int64)), pa.int32()),
                seq.field("row"),
            ],
            fields=list(schema.field("seq").type),
        )
        batch = batch.set_column(6, "seq", fixed)
        if typed is not None:
            batch = changes.typed_batch(batch, typed)
        out.append(batch)
    table = pa.Table.from_batches(out, schema=schema)
    if not table.num_rows:
        return table
    flat = pc.sort_indices(
        pa.table(
            {
                "p": table.column("seq").combine_chunks().field("pos"),
                "e": table.column("seq").combine_chunks().field("event"),
                "r": table.column("seq").combine_chunks().field("row"),
            }
        ),
        sort_keys=[("p", "ascending"), ("e", "ascending"), ("r", "ascending")],
    )
    order = np.asarray(flat)
    if bool((order[1:] > order[:-1]).all()):
        return table  # already in seq order (one table's batches, no statements among them)
    return table.take(flat)
