"""The before and after images of the change events from a ChangeBatch's struct columns: as maps
of column name to text (``_image``, built from offsets/keys/items arrays, numpy over the
columns-present bitmaps; the temporal values the decoder made null repaired from the row
decoder's, ``_repairs``), or as a table's typed structs (``_typed_image``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from fakemaster.spark import changes
from fakemaster.spark.column_texts import _TEMPORAL, _Fallback
from fakemaster.spark.columns import TableInfo
from fakemaster.vocabulary.constants import EventType
from fakemaster.vocabulary.header import TYPE_CODE_OFFSET

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "RawEvents",
    "_image",
    "_patched",
    "_present_matrix",
    "_repairs",
    "_typed_image",
    "_typed_schema",
]


if TYPE_CHECKING:
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.events import RowPair

RawEvents = Callable[[], "tuple[BinlogContext, Iterator[tuple[int, Any]]]"]
"""The events of a table again, with a context to decode them (see ``_repairs``)."""


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
    import pyarrow as pa  # type: ignore[import-untyped]

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
        kind = data[TYPE_CODE_OFFSET]
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
