"""A batch's row images read a column at a time (numpy): the joined images of all its rows
(``_Images``), each fixed-size column by strided views, each string column as offsets and one
copy, one image of every row at once (``_vector_image``).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from typing import Any

from decoder.columnar.arrow_types import _Column
from decoder.columnar.libraries import _np, _pa
from decoder.values import ColumnReader, value_converter

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "_Images",
    "_PADDING",
    "_VIEWS",
    "_vector_image",
]


_NUMERIC_DTYPES = {
    "b": "<i1", "B": "<u1", "h": "<i2", "H": "<u2", "i": "<i4", "I": "<u4", "q": "<i8",
    "Q": "<u8", "f": "<f4", "d": "<f8",
}  # fmt: skip


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
