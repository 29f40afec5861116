"""The decoder's fast paths give what the straightforward paths give, event for event and error
for error:

* ``read_binlog`` (events framed a block at a time, small events decoded in its own loop) and
  ``decode_event`` applied to each event of a file read one event at a time (a file object:
  header, then body);
* ``iter_raw_events`` on a path (block framing) and on a file object (event by event);
* ``read_changes`` (``ColumnarDecoder.feed_block``) and ``ColumnarDecoder.feed`` called for each
  event.

The inputs are generated binlog streams of every event family (scenarios' strategies), read with
small read blocks so that events straddle them, and the same bytes with one byte changed (bad
CRCs, lengths, bodies), so that the fast paths' fallbacks and errors are compared too.
"""

from __future__ import annotations

import dataclasses
import io
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder import binlog_file
from decoder.binlog_file import iter_raw_events, read_binlog
from decoder.builders import event_builder
from decoder.core import decode_event
from encoder.binlog_file import BinlogWriter
from fakemaster.vocabulary.constants import ColumnType, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    QueryEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)
from scenarios.strategies.rows import rows_events_for, table_maps
from scenarios.strategies.streams import event_streams
from tests.budget import examples

Outcome = tuple[list[Any], tuple[str, str] | None]


def binlog_bytes(events: list[Event]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bin.000001"
        with BinlogWriter(path, fix_positions=True) as writer:
            for event in events:
                writer.write(event)
        return path.read_bytes()


def outcome(items: Callable[[], Iterator[Any]]) -> Outcome:
    """What an iterator gives before it stops, and the error it stops with (type, text)."""
    got: list[Any] = []
    try:
        for item in items():
            got.append(item)
    except (DecodeError, ValueError) as exc:
        return got, (type(exc).__name__, str(exc))
    return got, None


@st.composite
def transactions(draw: st.DrawFn) -> list[Event]:
    """Row transactions as a server writes them (GTID, ANNOTATE_ROWS, TABLE_MAP, rows, XID or,
    for a non-transactional table, a COMMIT query: the same bytes every time), the same
    TABLE_MAP before each statement on a table (the fast paths' repeated shapes); maybe a DDL
    statement between them."""
    fde = FormatDescriptionEvent(checksum_alg=draw(st.sampled_from([0, 1])))
    table_map = draw(table_maps(max_columns=8))
    statements = draw(st.lists(rows_events_for(table_map), min_size=1, max_size=6))
    server = draw(st.integers(0, 2**32 - 1))
    commit = QueryEvent(thread_id=5, database="db", query=b"COMMIT")
    ddl = QueryEvent(thread_id=5, database="db", query=b"ALTER TABLE t FORCE")
    events: list[Event] = [fde]
    for seq, rows in enumerate(statements, 1):
        events += [
            GtidEvent(seq_no=seq, domain_id=draw(st.integers(0, 3)), server_id=server, flags2=8),
            AnnotateRowsEvent(query=b"INSERT ..."),
            table_map,
            rows,
            draw(st.sampled_from([XidEvent(xid=seq), commit, commit, ddl])),
        ]
    return events


@st.composite
def binlogs(draw: st.DrawFn) -> bytes:
    """A generated binlog file, maybe with one byte changed after the magic."""
    data = binlog_bytes(draw(st.one_of(event_streams(), transactions())))
    if draw(st.booleans()):
        where = draw(st.integers(4, len(data) - 1))
        data = data[:where] + bytes([data[where] ^ draw(st.integers(1, 255))]) + data[where + 1 :]
    return data


FAST = settings(
    max_examples=examples(2),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    deadline=None,
)


@FAST
@given(binlogs(), st.sampled_from([19, 64, 500, 1 << 18]), st.booleans())
def test_read_binlog_equals_decode_event_per_event(data: bytes, block: int, verify: bool) -> None:
    saved = binlog_file._READ_BUFFER
    binlog_file._READ_BUFFER = block
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bin.000001"
            path.write_bytes(data)

            def straightforward() -> Iterator[tuple[int, Event]]:
                ctx = BinlogContext()
                for offset, raw in iter_raw_events(io.BytesIO(data)):
                    yield offset, decode_event(raw, ctx, offset, verify)

            expected = outcome(straightforward)
            assert outcome(lambda: read_binlog(path, verify_checksum=verify)) == expected
            assert outcome(lambda: iter_raw_events(path)) == outcome(
                lambda: iter_raw_events(io.BytesIO(data))
            )
    finally:
        binlog_file._READ_BUFFER = saved


class NoMemo(set[bytes]):
    """A set that keeps nothing."""

    def add(self, item: bytes) -> None:
        pass


def batch_items(outputs: list[Any]) -> list[Any]:
    from decoder.columnar import ChangeBatch

    items = []
    for item in outputs:
        if isinstance(item, ChangeBatch):
            items.append(
                (item.database, item.table, item.column_names, item.record_batch.to_pylist())
            )
        else:
            items.append(item)
    return items


@FAST
@given(
    binlogs(),
    st.sampled_from([64, 1 << 18]),
    st.sampled_from([1, 3, 65536]),
    st.sampled_from([frozenset(), frozenset({int(EventType.XID), int(EventType.GTID)})]),
    st.booleans(),
    st.booleans(),
)
def test_read_changes_equals_feed_per_event(
    data: bytes, block: int, batch_rows: int, events: frozenset[int], verify: bool, memo: bool
) -> None:
    """(``memo`` False: every QUERY decoded, none passed over as one seen before.)"""
    from tests.peers.policy import require_module

    require_module("pyarrow", "pip install 'fakemaster[spark]' (or pip install pyarrow)")
    from decoder.columnar import ColumnarDecoder, read_changes

    saved = binlog_file._READ_BUFFER
    binlog_file._READ_BUFFER = block
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bin.000001"
            path.write_bytes(data)

            def straightforward() -> Iterator[Any]:
                decoder = ColumnarDecoder(
                    batch_rows=batch_rows, events=events, verify_checksum=verify
                )
                if not memo:
                    decoder._queries = NoMemo()
                for offset, raw in iter_raw_events(io.BytesIO(data)):
                    yield from decoder.feed(offset, raw)
                yield from decoder.flush()

            got, error = outcome(
                lambda: read_changes(
                    path, batch_rows=batch_rows, events=events, verify_checksum=verify
                )
            )
            expected, expected_error = outcome(straightforward)
            assert error == expected_error
            assert batch_items(got) == batch_items(expected)
    finally:
        binlog_file._READ_BUFFER = saved


# --- event builders (decoder/builders.py) -----------------------------------------------------


def builders() -> list[tuple[str, Any, Any]]:
    from decoder import gtid, rows, statement

    found = [
        ("xid", statement._new_xid, XidEvent),
        ("annotate", statement._new_annotate, AnnotateRowsEvent),
        ("gtid", gtid._new_gtid, GtidEvent),
        ("table_map", rows._new_table_map, TableMapEvent),
        ("update", rows._new_update_rows, UpdateRowsEvent),
        *((cls.__name__, build, cls) for cls, build in rows._ROWS_BUILDERS.items()),
    ]
    return [(name, build, cls) for name, build, cls in found]


@pytest.mark.parametrize("name", [name for name, _, _ in builders()])
def test_a_builder_gives_what_init_gives(name: str) -> None:
    [(_, build, cls)] = [b for b in builders() if b[0] == name]
    names = build.__code__.co_varnames[: build.__code__.co_argcount]
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(cls))
    # A distinct value per field: a field set from the wrong argument shows.
    values = [object() for _ in names]
    built = build(*values)
    assert type(built) is cls
    expected = cls(**dict(zip(names, values, strict=True)))
    for field in dataclasses.fields(cls):
        assert getattr(built, field.name) is getattr(expected, field.name), field.name


def test_a_builder_must_take_every_field() -> None:
    with pytest.raises(TypeError, match="fields"):
        event_builder(XidEvent, ("timestamp", "server_id", "log_pos", "flags"))
    with pytest.raises(TypeError, match="frozen"):
        event_builder(Gtid, ("domain_id", "server_id", "seq_no"))


@FAST
@given(st.one_of(event_streams(), transactions()))
def test_decoded_events_have_every_field_set(events: list[Event]) -> None:
    """dataclasses.replace reads every field (an unset slot raises) and calls __init__."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bin.000001"
        path.write_bytes(binlog_bytes(events))
        decoded = [event for _, event in read_binlog(path)]
    assert [dataclasses.replace(event) for event in decoded] == decoded


# --- QUERY events the Arrow path passes over (ColumnarDecoder._queries) -----------------------


def commit_binlog(damage: int | None = None) -> tuple[bytes, list[int]]:
    """A file of single-row statements on a non-transactional table, each ended by the same
    COMMIT query, and a DDL statement after the second: its bytes and where each QUERY starts;
    ``damage``: that QUERY's last byte (its CRC's) changed."""
    table_map = TableMapEvent(
        table_id=9, database="d", table="t", column_types=(ColumnType.LONG,),
        column_meta=(0,), nullable=(False,),
    )  # fmt: skip
    commit = QueryEvent(thread_id=7, database="d", query=b"COMMIT")
    events: list[Event] = [FormatDescriptionEvent()]
    for seq in range(1, 5):
        events += [
            GtidEvent(seq_no=seq, flags2=8),
            table_map,
            WriteRowsEvent(table_id=9, rows_flags=1, width=1, columns_present=b"\x01",
                           rows=((seq,),)),
            commit,
        ]  # fmt: skip
        if seq == 2:
            events.append(QueryEvent(thread_id=7, database="d", query=b"ALTER TABLE t FORCE"))
    data = binlog_bytes(events)
    queries = []
    pos = 4
    while pos < len(data):
        if data[pos + 4] == EventType.QUERY:
            queries.append(pos)
        pos += int.from_bytes(data[pos + 9 : pos + 13], "little")
    if damage is not None:
        at = queries[damage]
        end = at + int.from_bytes(data[at + 9 : at + 13], "little")
        data = data[: end - 1] + bytes([data[end - 1] ^ 1]) + data[end:]
    return data, queries


@pytest.mark.parametrize("block", [64, 1 << 18])
def test_repeated_commit_queries_pass_and_ddl_still_flushes(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.peers.policy import require_module

    require_module("pyarrow", "pip install 'fakemaster[spark]' (or pip install pyarrow)")
    from decoder.columnar import ChangeBatch, read_changes

    monkeypatch.setattr(binlog_file, "_READ_BUFFER", block)
    data, queries = commit_binlog()
    path = tmp_path / "bin.000001"
    path.write_bytes(data)
    out = list(read_changes(path))
    assert [type(item) for item in out] == [ChangeBatch, ChangeBatch]
    assert [b.record_batch.column("after").to_pylist() for b in out] == [  # type: ignore[union-attr]
        [{"c0": 1}, {"c0": 2}],
        [{"c0": 3}, {"c0": 4}],
    ]
    # Given out when asked for: every QUERY, in order (the batch flushed by the DDL first).
    out = list(read_changes(path, events={EventType.QUERY}))
    assert [item[0] if isinstance(item, tuple) else "batch" for item in out] == [
        queries[0], queries[1], "batch", queries[2], queries[3], queries[4], "batch",
    ]  # fmt: skip
    for damage in (1, 3):  # the second and the third COMMIT (the first was decoded)
        data, queries = commit_binlog(damage)
        path.write_bytes(data)
        with pytest.raises(ChecksumError) as error:
            list(read_changes(path))
        assert error.value.event_type == "QUERY"
        assert list(read_changes(path, verify_checksum=False)) != []


@pytest.mark.parametrize("damage", [False, True])
def test_large_rows_events_from_the_read_buffer_equal_feed(damage: bool, tmp_path: Path) -> None:
    """Rows events of 100 KB (a blob table's), taken from the read buffer by feed_buffer,
    give what feed gives per event; a changed byte in one, the same error."""
    from tests.peers.policy import require_module

    require_module("pyarrow", "pip install 'fakemaster[spark]' (or pip install pyarrow)")
    from decoder.columnar import ColumnarDecoder, read_changes

    table_map = TableMapEvent(
        table_id=9, database="d", table="t", column_types=(ColumnType.LONG, ColumnType.BLOB),
        column_meta=(0, 4), nullable=(False, True),
    )  # fmt: skip
    events: list[Event] = [FormatDescriptionEvent()]
    for seq in range(1, 9):
        rows = tuple((seq * 10 + k, bytes([seq + k]) * (30_000 + k)) for k in range(4))
        events += [
            GtidEvent(seq_no=seq, flags2=8),
            table_map,
            WriteRowsEvent(table_id=9, rows_flags=1, width=2, columns_present=b"\x03", rows=rows),
            UpdateRowsEvent(
                table_id=9, rows_flags=1, width=2, columns_present=b"\x03",
                columns_present_after=b"\x03", rows=tuple((row, (row[0], None)) for row in rows),
            ),
            XidEvent(xid=seq),
        ]  # fmt: skip
    data = binlog_bytes(events)
    if damage:
        where = len(data) * 2 // 3
        data = data[:where] + bytes([data[where] ^ 0x10]) + data[where + 1 :]
    path = tmp_path / "bin.000001"
    path.write_bytes(data)

    def per_event() -> Iterator[Any]:
        decoder = ColumnarDecoder()
        for offset, raw in iter_raw_events(io.BytesIO(data)):
            yield from decoder.feed(offset, raw)
        yield from decoder.flush()

    got, error = outcome(lambda: read_changes(path))
    expected, expected_error = outcome(per_event)
    assert error == expected_error
    assert (error is not None) == damage
    assert batch_items(got) == batch_items(expected)
    if not damage:
        assert sum(item.num_rows for item in got) == 64
