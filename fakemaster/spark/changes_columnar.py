"""The change-event table of one binlog file built from the columnar decoder's typed Arrow columns
(``decoder.columnar.read_changes``): the same table as :func:`fakemaster.spark.changes.read_changes`
(the reference, kept), without a Python object per value on the common column types.

Where the typed columns cannot give the reference form, the whole file is read by the reference
path instead: a schema catalogue is given (it may change signedness the decoder does not know), a
TIME column, or a null in a DATE/DATETIME/TIMESTAMP column (the decoder makes zero dates null, the
text form keeps them). The file is decoded whole before its batches are given out (sorted by
``seq``).

The parts, each in its module:

* fakemaster/spark/event_walk.py: every event's offset and type code from a walk of the
  headers, and the common GTIDs read from their bytes (only the events that carry state are
  decoded);
* fakemaster/spark/column_texts.py: a column's typed values as the text form, a column at a
  time (``_Fallback`` where they cannot give it);
* fakemaster/spark/change_images.py: the before and after images, as maps of texts or as typed
  structs;
* this module: the events read (``read_changes_fast`` a file, ``events_table`` a stream's
  groups) and the table assembled: each rows batch's source and seq columns from the state of
  the decoded events before it (``_Decoded``, ``_Marks``, ``_EventNumbers``), the DDL
  statements' rows, the whole in seq order.
"""

from __future__ import annotations

import bisect
import dataclasses
import io
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from fakemaster.spark import changes
from fakemaster.spark.change_images import (
    RawEvents,
    _image,
    _patched,
    _present_matrix,
    _repairs,
    _typed_image,
    _typed_schema,
)
from fakemaster.spark.column_texts import _TEMPORAL, _Fallback, _texts
from fakemaster.spark.columns import (
    BINARY,
    Catalogue,
    TableInfo,
    _member_lists,
    _real_type,
    table_info,
)
from fakemaster.spark.event_walk import _apply_gtid, _CommonGtids, _event_heads, _frames_gtids
from fakemaster.vocabulary.constants import ColumnType, EventType
from fakemaster.vocabulary.events import FormatDescriptionEvent, GtidEvent

__all__ = [
    "events_table",
    "read_changes_fast",
]


if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

    from decoder.binlog_file import Source
    from fakemaster.spark.progress import ProgressSender
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.layouts import Buffer

_ROWS_TYPES = frozenset(
    int(t)
    for t in EventType
    if "ROWS" in t.name and "ANNOTATE" not in t.name and "PARTIAL" not in t.name
)
NON_ROWS_TYPES = frozenset(int(t) for t in EventType) - _ROWS_TYPES
"""The type codes the columnar decoder gives back decoded (every type but the rows events)."""


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
    progress: ProgressSender | None = None,
) -> Iterator[pa.RecordBatch]:
    """:func:`fakemaster.spark.changes.read_changes` through the columnar decoder (same
    batches' rows, same order; the module docstring says when it reads the reference way).
    ``progress`` is told the events decoded and the offset reached as decoding proceeds.

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
            found = _read_table(source, name, index, verify_checksum, table, progress)
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


def _runs(offsets: Any) -> tuple[Any, Any]:
    """``offsets`` as runs of equal values (a rows event's rows share its offset): each run's
    value and length, for work done once per event and repeated for its rows."""
    import numpy as np

    if not len(offsets):
        return offsets, np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], offsets[1:] != offsets[:-1])))
    return offsets[starts], np.diff(np.append(starts, len(offsets)))


def _read_table(
    source: Any,
    name: str,
    index: int,
    verify_checksum: bool,
    typed: TableInfo | None = None,
    progress: ProgressSender | None = None,
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
    if progress is not None:
        if walked is not None:
            progress.count_events_at(walked[0])
        items = progress.items(items)
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

    # XID/ROTATE end a group's annotated query (changes.add_event): with the walk they are not
    # decoded, so their offsets reset it here, before the next decoded event and in _Marks.
    resets = (
        walked[0][np.isin(walked[1], _QUERY_RESET_TYPES)]
        if walked is not None
        else np.zeros(0, np.int64)
    )
    decoded = _Decoded(read_gtids)
    batches = decoded.read(items, state, resets)
    numbers = _EventNumbers(*_every_event(walked, decoded, batches))
    marks = _Marks(decoded, resets, read_gtids)
    marks.find_first_rows(batches)
    schema = changes.arrow_schema()
    if typed is not None:
        batches = [cb for cb in batches if (cb.database, cb.table) == (typed.database, typed.table)]
        schema = _typed_schema(typed)
    # The typed images keep the decoder's nulls for zero dates (Spark cannot hold them).
    repairs = _repairs(raw_events, batches, verify_checksum) if typed is None else {}
    out = [_rows_batch(cb, state, schema, typed, marks, numbers, repairs) for cb in batches]
    if len(decoded.ddl):
        out.append(_ddl_batch(decoded, numbers, schema, typed))
    return _in_seq_order(pa.Table.from_batches(out, schema=schema))


class _Decoded:
    """What a file's decoded events (all but the rows events) give its change events: the DDL
    statements' rows and their offsets, the events' and GTIDs' offsets, and the marks (the
    offset of each event and the state after it: server id, GTID, timestamp, query)."""

    __slots__ = ("applied", "ddl", "ddl_offsets", "event_offsets", "gtid_at", "gtid_offsets",
                 "mark_state", "marks", "read_gtids")  # fmt: skip

    def __init__(self, read_gtids: _CommonGtids | None) -> None:
        self.read_gtids = read_gtids
        self.ddl = changes.EventColumns()
        self.ddl_offsets: list[int] = []
        self.event_offsets: list[int] = []
        self.gtid_offsets: list[int] = []
        self.marks: list[int] = []
        self.mark_state: list[tuple[Any, Any, Any, Any]] = []
        self.gtid_at: list[int] = [] if read_gtids is None else read_gtids.offsets.tolist()
        self.applied = -1  # the last of ``gtid_at`` applied to the state

    def read(self, items: Iterable[Any], state: changes.FileState, resets: Any) -> list[Any]:
        """``state`` updated by the events of ``items``, what they give kept; their batches."""
        from decoder.columnar import ChangeBatch

        read_gtids = self.read_gtids
        gtid_at = self.gtid_at
        ddl = self.ddl
        next_reset = 0
        batches: list[ChangeBatch] = []
        for item in items:
            if isinstance(item, ChangeBatch):
                batches.append(item)
                continue
            pos, event = item
            if read_gtids is not None:
                if isinstance(event, FormatDescriptionEvent) and not _frames_gtids(
                    event, read_gtids
                ):
                    raise _Fallback
                # The last GTID before this event sets the state, as add_event does.
                last = bisect.bisect_left(gtid_at, pos) - 1
                if last > self.applied:
                    self.applied = last
                    _apply_gtid(state, read_gtids, last)
            while next_reset < len(resets) and resets[next_reset] < pos:
                state.query = None
                next_reset += 1
            before = len(ddl)
            changes.add_event(state, ddl, pos, event)
            self.ddl_offsets.extend([pos] * (len(ddl) - before))
            self.event_offsets.append(pos)
            if isinstance(event, GtidEvent):
                self.gtid_offsets.append(pos)
            self.marks.append(pos)
            self.mark_state.append((state.server_id, state.gtid, state.ts_ms, state.query))
        if read_gtids is not None and len(gtid_at) - 1 > self.applied:
            _apply_gtid(state, read_gtids, len(gtid_at) - 1)
        return batches


def _every_event(
    walked: tuple[Any, Any] | None, decoded: _Decoded, batches: list[Any]
) -> tuple[Any, Any]:
    """The offsets of every event of the file and of its GTIDs (sorted int64 arrays)."""
    import numpy as np

    if walked is not None:
        # Only the events that carry state were decoded: the others are counted from the walk
        # of the headers, and XID/ROTATE end the group's annotated query there.
        every, types = walked
        return every, every[types == int(EventType.GTID)]
    rows_offsets = [np.asarray(b.record_batch.column("event_offset")) for b in batches]
    every = np.unique(np.concatenate([np.asarray(decoded.event_offsets, np.int64), *rows_offsets]))
    return every, np.asarray(sorted(set(decoded.gtid_offsets)), np.int64)


class _EventNumbers:
    """The ``seq.event`` of events by offset: the event's number in its GTID group (from 0, the
    GTID's), or from 1 before the file's first GTID."""

    __slots__ = ("every", "gtids")

    def __init__(self, every: Any, gtids: Any) -> None:
        self.every = every
        self.gtids = gtids

    def __call__(self, offsets: Any) -> Any:
        """The numbers of the events at ``offsets`` (int32; a rows event's rows share one)."""
        import numpy as np

        offsets, counts = _runs(offsets)
        return np.repeat(self._numbers(offsets), counts)

    def _numbers(self, offsets: Any) -> Any:
        import numpy as np

        every = self.every
        gtids = self.gtids
        rank = np.searchsorted(every, offsets)
        g = np.searchsorted(gtids, offsets, side="right") - 1
        grank = np.searchsorted(every, gtids[np.maximum(g, 0)]) if len(gtids) else rank
        return np.where(g >= 0, rank - grank, rank + 1).astype(np.int32)


class _Marks:
    """The state (server id, GTID, timestamp, query) of the rows of events by offset: the last
    mark's before them (a GTID read from the walk is a mark too, with no query), none before
    the first, and no query after an XID/ROTATE that followed the mark. An annotated query is
    given once, on the first change event of its statement (changes.add_event)."""

    __slots__ = ("at", "first", "resets", "values")

    def __init__(self, decoded: _Decoded, resets: Any, read_gtids: _CommonGtids | None) -> None:
        import numpy as np
        import pyarrow as pa

        mark_state = decoded.mark_state
        # Each mark's state (server id, GTID, timestamp, query), in offset order, then a null
        # one.
        values = [
            pa.array([s[k] for s in mark_state] + [None], type_)
            for k, type_ in enumerate((pa.int64(), pa.string(), pa.int64(), pa.string()))
        ]
        at = np.asarray(decoded.marks, np.int64)
        if read_gtids is not None and len(decoded.gtid_at):
            # Each GTID is a mark too: the state it sets, with no query.
            joined = np.concatenate([read_gtids.offsets, at])
            order = np.argsort(joined, kind="stable")
            at = joined[order]
            taken = pa.array(np.append(order, len(order)))  # (the null state stays last)
            read = (
                pa.array(read_gtids.server_ids, pa.int64()),
                pa.array(read_gtids.texts, pa.string()),
                pa.array(read_gtids.ts_ms, pa.int64()),
                pa.nulls(len(decoded.gtid_at), pa.string()),
            )
            values = [
                pa.concat_arrays([first, rest]).take(taken)
                for first, rest in zip(read, values, strict=True)
            ]
        self.at = at
        self.values = values
        self.resets = resets
        # Per mark (and the null state last): the offset of the first rows event whose rows
        # carry its query, -1 for none (find_first_rows).
        self.first = np.full(len(at) + 1, -1, np.int64)

    def _marks_of(self, offsets: Any, query: bool) -> Any:
        """The index in ``values`` of the state of the events at ``offsets``; for the query
        (``query``), the null state after a reset that follows the mark."""
        import numpy as np

        mark_at = self.at
        resets = self.resets
        m = np.searchsorted(mark_at, offsets, side="right") - 1
        at = np.where(m >= 0, m, len(mark_at))
        if query and len(resets):
            # A reset after the last mark: no query (the reference's XID/ROTATE).
            r = np.searchsorted(resets, offsets, side="right") - 1
            since = (r >= 0) & ((m < 0) | (resets[np.maximum(r, 0)] > mark_at[np.maximum(m, 0)]))
            at = np.where(since, len(mark_at), at)
        return at

    def find_first_rows(self, batches: Sequence[Any]) -> None:
        """Note, for each query, the first rows event (of any table) that carries it: its
        text goes on that event's first row only, so a statement costs its size once, not
        once per row (a bulk INSERT of thousands of rows)."""
        import numpy as np

        if not batches:
            return
        offsets = np.unique(
            np.concatenate([np.asarray(cb.record_batch.column("event_offset")) for cb in batches])
        )
        at = self._marks_of(offsets, True)
        marks, first = np.unique(at, return_index=True)
        self.first[marks] = offsets[first]
        self.first[len(self.at)] = -1

    def of(self, offsets: Any, rows: Any) -> list[Any]:
        """The four state columns of the rows of the events at ``offsets`` (``rows``: each
        row's index in its event)."""
        import numpy as np
        import pyarrow as pa

        offsets, counts = _runs(offsets)
        columns = []
        for k, values in enumerate(self.values):
            at = self._marks_of(offsets, k == 3)
            taken = np.repeat(at, counts)
            if k == 3:
                first = np.repeat(self.first[at] == offsets, counts) & (rows == 0)
                taken = np.where(first, taken, len(self.at))
            columns.append(values.take(pa.array(taken)))
        return columns


def _rows_batch(
    cb: Any,
    state: changes.FileState,
    schema: Any,
    typed: TableInfo | None,
    marks: _Marks,
    numbers: _EventNumbers,
    repairs: dict[tuple[int, int, str, int], Any],
) -> Any:
    """The change events of one ChangeBatch ``cb``: its rows with their images and sources."""
    import numpy as np
    import pyarrow as pa

    rb = cb.record_batch
    n = rb.num_rows
    info = table_info(cb.table_map, None)
    if typed is not None:
        images = _typed_images(cb, info, typed)
    else:
        images = _text_images(cb, info, schema, repairs)
    offsets = np.asarray(rb.column("event_offset"))
    rows = rb.column("row").cast(pa.int32())
    server_id, gtid, ts_ms, query = marks.of(offsets, np.asarray(rows))
    pos = pa.array(offsets, pa.int64())
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
        fields=list(schema.field("source").type),
    )
    seq_arr = pa.StructArray.from_arrays(
        [
            pa.array(np.full(n, state.index, np.int64)),
            pos,
            pa.array(numbers(offsets), pa.int32()),
            rows,
        ],
        fields=list(schema.field("seq").type),
    )
    listed: tuple[Any, ...] = ()
    if typed is None:
        listed = (
            _list_column(info.names, n, schema.field("columns").type),
            _list_column(info.spark_types, n, schema.field("column_types").type),
            _list_column(info.primary_key, n, schema.field("primary_key").type),
        )
    return pa.RecordBatch.from_arrays(
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
            *listed,
        ],
        schema=schema,
    )


def _members(tm: Any) -> tuple[list[Any], list[list[str] | None]]:
    """The real types of a TABLE_MAP's columns and their ENUM/SET members (None: none)."""
    real_types = [_real_type(t, m) for t, m in zip(tm.column_types, tm.column_meta, strict=True)]
    return real_types, list(_member_lists(tm, real_types))


def _typed_images(cb: Any, info: TableInfo, typed: TableInfo) -> dict[str, Any]:
    """The before and after images of ``cb`` as ``typed``'s typed structs."""
    rb = cb.record_batch
    tm = cb.table_map
    real_types, members = _members(tm)
    padded = [
        info.columns[c].spark_type == BINARY and real_types[c] == ColumnType.STRING
        for c in range(len(info.columns))
    ]
    images = {}
    for side in ("before", "after"):
        struct = rb.column(side)

        def text(c: int, struct: Any = struct) -> Any:
            return _texts(
                struct.field(c), tm.column_types[c], tm.column_meta[c], info.columns[c], members[c]
            )

        images[side] = _typed_image(struct, info, padded, typed, text)
    return images


def _text_images(
    cb: Any, info: TableInfo, schema: Any, repairs: dict[tuple[int, int, str, int], Any]
) -> dict[str, Any]:
    """The before and after images of ``cb`` as maps of column name to text."""
    import numpy as np
    import pyarrow as pa

    rb = cb.record_batch
    n = rb.num_rows
    tm = cb.table_map
    width = len(tm.column_types)
    _, members = _members(tm)
    images = {}
    for side in ("before", "after"):
        struct = rb.column(side)
        if struct.null_count == n:
            # No image on this side (an insert's before, a delete's after): no texts.
            images[side] = pa.nulls(n, schema.field(side).type)
            continue
        valid = np.asarray(struct.is_valid())
        mask = _present_matrix(rb.column(f"{side}_present"), width) & valid[:, None]
        texts = [
            _texts(
                struct.field(c), tm.column_types[c], tm.column_meta[c], info.columns[c], members[c]
            )
            if mask[:, c].any()
            else pa.nulls(n, pa.string())  # in no image of the batch: never read
            for c in range(width)
        ]
        for c in range(width):
            if tm.column_types[c] in _TEMPORAL and struct.field(c).null_count:
                texts[c] = _patched(texts[c], rb, side, c, repairs, info.columns[c].to_text)
        images[side] = _image(valid, mask, info.names, texts, schema.field(side).type)
    return images


def _ddl_batch(
    decoded: _Decoded, numbers: _EventNumbers, schema: Any, typed: TableInfo | None
) -> Any:
    """The change events of the file's DDL statements, their ``seq.event`` numbered."""
    import numpy as np
    import pyarrow as pa

    batch = changes.rows_to_arrow(decoded.ddl)
    seq = batch.column("seq")
    fixed = pa.StructArray.from_arrays(
        [
            seq.field("file_index"),
            seq.field("pos"),
            pa.array(numbers(np.asarray(decoded.ddl_offsets, np.int64)), pa.int32()),
            seq.field("row"),
        ],
        fields=list(schema.field("seq").type),
    )
    batch = batch.set_column(6, "seq", fixed)
    if typed is not None:
        batch = changes.typed_batch(batch, typed)
    return batch


def _in_seq_order(table: Any) -> Any:
    """``table``'s rows sorted by ``seq`` (pos, event, row)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

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
