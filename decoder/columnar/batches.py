"""One table's held rows events made into a :class:`ChangeBatch` (an Arrow record batch, the
columns in the package docstring): a column at a time over every row image with numpy
(``_vector_batch``), or the row decoder's way (``_build_batch`` falls back to it).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from decoder.columnar import libraries
from decoder.columnar.arrow_types import _Column
from decoder.columnar.images import _PADDING, _VIEWS, _Images, _vector_image
from decoder.columnar.libraries import _np, _pa
from decoder.columnar.shape import ColumnarShape
from decoder.rows import RowsHeader
from fakemaster.vocabulary.columns import column_names
from fakemaster.vocabulary.constants import event_type_name
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import TableMapEvent
from fakemaster.vocabulary.values import ABSENT

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "ChangeBatch",
    "_TableBuffer",
    "_build_batch",
    "_column_names",
]


_OPS = {"write": "c", "update": "u", "delete": "d"}


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
    struct_type = buffer.shape.arrow_fields(buffer.names)[1]
    runs = buffer.runs
    headers = buffer.headers
    count = len(runs)
    image_counts = np.fromiter(map(len, map(_get_starts, runs)), np.int64, count)
    numbers = np.empty((len(_RUN_NUMBERS), count), np.int64)  # one row per field
    for row, getter in enumerate(_RUN_NUMBERS):
        numbers[row] = np.fromiter(map(getter, runs), np.int64, count)
    run_header = None if len(headers) == 1 else numbers[4]
    kind, run_kind, row_counts = _run_kinds(headers, run_header, image_counts)
    total = int(row_counts.sum())
    if not total:
        return None
    masks, image_masks = _bitmaps(headers)
    # With one bitmap and UPDATEs or several kinds, the images are read in the order of the
    # ``before`` column's rows then the ``after`` column's (no take after): a row without such
    # an image reads a placeholder image, first in the joined images (every column NULL:
    # nothing to copy, its children null), the struct null there.
    placeholder = b""
    if len(masks) == 1 and kind in (1, -1):
        placeholder = b"\xff" * (((masks[0] & ((1 << width) - 1)).bit_count() + 7) >> 3)
    raw, bases = _joined_images(runs, placeholder)
    layout = _ImageLayout(runs, image_counts, bases, numbers)
    images = _Images(raw)
    row_kind, row_image = _row_images(kind, run_kind, row_counts, layout.images, total)
    read = _ImageReads(buffer, images, layout)
    if placeholder:
        found = read.before_then_after(masks[0], row_kind, row_image, total)
        if found is None or not layout.ends_agree(found[2]):
            return None
        before, after, _ = found
    else:
        image_mask_ids = None
        if len(masks) > 1:
            image_mask_ids = layout.mask_ids(run_header, image_masks)
        in_order = read.in_binlog_order(masks, image_mask_ids)
        if in_order is None or not layout.ends_agree(in_order[1]):
            return None
        image, _, positions = in_order
        before, after = _before_and_after(
            image, positions, kind, row_kind, row_image, total, struct_type
        )
    if row_kind is None:
        op = pa.repeat(pa.scalar(_OPS[headers[0].cls.KIND], pa.string()), total)
    else:
        op = _op_column(row_kind, total)
    before_present, after_present = _present_arrays(headers, run_header, row_counts, total)
    meta = _meta_arrays(runs, numbers, row_counts)
    record_batch = pa.RecordBatch.from_arrays(
        [
            op,
            meta[0],
            pa.array(_rows_in_events(row_counts, count, total), pa.int32()),
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


def _run_kinds(headers: list[RowsHeader], run_header: Any, image_counts: Any) -> tuple[Any, ...]:
    """The batch's kind code (-1: maybe several), each run's kind code (None with one
    header) and each run's row count (an UPDATE's rows: two images each)."""
    np = _np()
    kinds = [_KIND_CODES[header.cls.KIND] for header in headers]
    if run_header is None:
        kind = kinds[0]
        return kind, None, image_counts >> 1 if kind == 1 else image_counts
    kind = -1  # (several headers: maybe several kinds)
    run_kind = np.asarray(kinds, np.int64)[run_header]
    if (run_kind == run_kind[0]).all():
        kind = kinds[int(run_header[0])]
    return kind, run_kind, np.where(run_kind == 1, image_counts >> 1, image_counts)


def _bitmaps(headers: list[RowsHeader]) -> tuple[list[int], list[tuple[int, int]]]:
    """The batch's distinct column-present bitmaps, and per header the index in them of its
    first and second image's (a run's images take its header's bitmaps in turn: an UPDATE's
    before and after images)."""
    masks: list[int] = []
    image_masks = []
    for header in headers:
        first_mask = header.present
        second_mask = header.present if header.present_after is None else header.present_after
        for mask in (first_mask, second_mask):
            if mask not in masks:
                masks.append(mask)
        image_masks.append((masks.index(first_mask), masks.index(second_mask)))
    return masks, image_masks


def _joined_images(runs: list[Record], placeholder: bytes) -> tuple[bytes, Any]:
    """The runs' row image areas joined after ``placeholder`` and before ``_PADDING``, and
    where each run's area starts in them."""
    np = _np()
    count = len(runs)
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
    return raw, bases


class _ImageLayout:
    """Where a batch's row images are in its joined images: per run its image count, where
    its images start and end and its first image's index; per image its start."""

    __slots__ = ("counts", "first", "images", "run_ends", "run_starts", "starts")

    def __init__(self, runs: list[Record], counts: Any, bases: Any, numbers: Any) -> None:
        """``bases``: where each run's area starts in the joined images; ``numbers``: the
        runs' ``_RUN_NUMBERS``."""
        np = _np()
        self.counts = counts
        self.run_starts = bases + numbers[5]
        self.run_ends = bases + numbers[6]
        self.images = int(counts.sum())
        self.first = np.zeros(len(counts), np.int64)  # each run's first image in the batch
        np.cumsum(counts[:-1], out=self.first[1:])
        self.starts = self._image_starts(runs, bases)

    def _image_starts(self, runs: list[Record], bases: Any) -> Any:
        """Each image's start in the joined images."""
        np = _np()
        counts = self.counts
        if self.images == len(runs) and (counts == 1).all():  # one image per event
            return self.run_starts
        # (an event of one image: _ONE_ROW, its start relative to its images')
        return np.fromiter(
            itertools.chain.from_iterable(map(_get_starts, runs)), np.int64, self.images
        ) + np.repeat(np.where(counts == 1, self.run_starts, bases), counts)

    def mask_ids(self, run_header: Any, image_masks: list[tuple[int, int]]) -> Any:
        """Each image's bitmap, as its index in the batch's bitmaps."""
        np = _np()
        counts = self.counts
        if run_header is None:
            run_header = np.zeros(len(counts), np.int64)
        image_header = np.repeat(run_header, counts)
        second = (np.arange(self.images) - np.repeat(self.first, counts)) & 1
        return np.asarray(image_masks, np.int64)[image_header, second]

    def ends_agree(self, ends: Any) -> bool:
        """Whether each image ends where the next image of its event starts, an event's last
        image where its images end."""
        np = _np()
        counts = self.counts
        expected = np.empty(self.images, np.int64)
        expected[:-1] = self.starts[1:]
        filled = counts > 0
        expected[(self.first + counts - 1)[filled]] = self.run_ends[filled]
        return bool(np.array_equal(ends, expected))


def _row_images(
    kind: int, run_kind: Any, row_counts: Any, images: int, total: int
) -> tuple[Any, Any]:
    """Each row's kind code (None when the batch has one kind) and first image (None when
    it is the row itself: one kind of one image)."""
    np = _np()
    if kind == 1:
        return None, np.arange(0, images, 2, dtype=np.int64)
    if kind == -1:
        row_kind = np.repeat(run_kind, row_counts)
        steps = np.where(row_kind == 1, 2, 1)
        row_image = np.zeros(total, np.int64)
        np.cumsum(steps[:-1], out=row_image[1:])
        return row_kind, row_image
    return None, None


class _ImageReads:
    """A batch's row images read into struct arrays of its columns (``_vector_image``)."""

    __slots__ = ("columns", "fields", "images", "layout", "readers", "width")

    def __init__(self, buffer: _TableBuffer, images: _Images, layout: _ImageLayout) -> None:
        width = buffer.width
        self.width = width
        self.readers = buffer.shape.columns()[:width]
        self.columns = buffer.shape.arrow_columns()[:width]
        self.fields = buffer.shape.arrow_fields(buffer.names)[0]
        self.images = images
        self.layout = layout

    def _read(self, starts: Any, mask: int) -> tuple[list[Any], Any] | None:
        return _vector_image(self.images, starts, self.readers, self.columns, mask, self.width)

    def before_then_after(
        self, mask: int, row_kind: Any, row_image: Any, total: int
    ) -> tuple[Any, Any, Any] | None:
        """The before and after columns read in place (one bitmap: each row's before then
        after image, the placeholder where it has none), and each image's end."""
        np = _np()
        pa = _pa()
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
        read_starts = self.layout.starts[read_order]
        if absent is not None:
            read_starts[absent] = 0  # the placeholder
        found = self._read(read_starts, mask)
        if found is None:
            return None
        arrays, read_ends = found
        ends = np.empty(self.layout.images, np.int64)
        if absent is None:
            ends[read_order] = read_ends
        else:
            ends[read_order[~absent]] = read_ends[~absent]
        image = pa.StructArray.from_arrays(
            arrays, fields=self.fields, mask=None if absent is None else pa.array(absent)
        )
        return image.slice(0, total), image.slice(total, total), ends

    def in_binlog_order(self, masks: list[int], mask_ids: Any) -> tuple[Any, Any, Any] | None:
        """Every image as a row of one struct array, each image's end and its row in that
        array (None: its index): with several bitmaps, the images of each read together."""
        np = _np()
        pa = _pa()
        starts = self.layout.starts
        if mask_ids is None:
            found = self._read(starts, masks[0])
            if found is None:
                return None
            arrays, ends = found
            return pa.StructArray.from_arrays(arrays, fields=self.fields), ends, None
        images = self.layout.images
        ends = np.empty(images, np.int64)
        positions = np.empty(images, np.int64)
        parts = []
        base = 0
        for index, mask in enumerate(masks):
            selected = np.flatnonzero(mask_ids == index)
            if not len(selected):
                continue
            found = self._read(starts[selected], mask)
            if found is None:
                return None
            arrays, ends[selected] = found
            positions[selected] = base + np.arange(len(selected))
            base += len(selected)
            parts.append(pa.StructArray.from_arrays(arrays, fields=self.fields))
        return pa.concat_arrays(parts), ends, positions


def _before_and_after(
    image: Any,
    positions: Any,
    kind: int,
    row_kind: Any,
    row_image: Any,
    total: int,
    struct_type: Any,
) -> tuple[Any, Any]:
    """The before and after columns taken from ``image`` (the batch's images in binlog order;
    ``positions``: each image's row in it, None: its index)."""
    np = _np()
    pa = _pa()
    if kind == 1 or kind == -1:  # (several bitmaps)
        before_at = row_image
        after_at = np.minimum(row_image + 1, len(image) - 1)  # (a DELETE's: masked)
        if positions is not None:
            before_at = positions[before_at]
            after_at = positions[after_at]
        if row_kind is None:  # updates only
            return image.take(pa.array(before_at)), image.take(pa.array(after_at))
        inserts = row_kind == 0
        after_at = np.where(inserts, before_at, after_at)
        before = image.take(pa.array(before_at, mask=inserts))
        return before, image.take(pa.array(after_at, mask=row_kind == 2))
    if positions is not None:
        image = image.take(pa.array(positions))
    nulls = pa.nulls(total, struct_type)
    return (image, nulls) if kind == 2 else (nulls, image)


def _op_column(row_kind: Any, total: int) -> Any:
    """The op column of rows of several kinds: one letter per row, as string data."""
    np = _np()
    pa = _pa()
    letters = np.frombuffer(_OP_LETTERS, np.uint8)[row_kind]
    return pa.Array.from_buffers(
        pa.string(),
        total,
        [None, pa.py_buffer(np.arange(total + 1, dtype=np.int32)), pa.py_buffer(letters)],
    )


def _rows_in_events(row_counts: Any, count: int, total: int) -> Any:
    """The row column: each row's index in its event."""
    np = _np()
    if total == count and (row_counts == 1).all():
        return np.zeros(total, np.int32)
    first_row = np.zeros(count, np.int64)
    np.cumsum(row_counts[:-1], out=first_row[1:])
    return (np.arange(total) - np.repeat(first_row, row_counts)).astype(np.int32)


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
                    event_type=event_type_name(
                        header.cls._CODES[(header.version, header.compressed)]
                    ),
                ) from None


def _vectorise(buffer: _TableBuffer) -> bool:
    """Whether the batch is read a column at a time (numpy): enough rows, every run walked,
    and, without binary views (``_binary_by_views``), rows of under ``_VECTOR_ROW_BYTES`` on
    average (large values joined from Python slices cost a copy more that way, and little
    Python per row the row decoder's way; with views Arrow copies them once)."""
    runs = buffer.runs
    if buffer.rows < libraries._VECTOR_MIN or not buffer.walked:
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
