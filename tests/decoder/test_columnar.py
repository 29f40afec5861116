"""decoder/columnar/: rows events into Arrow columns. Its output is checked against the row
decoder's values (decoder.decode_event / read_binlog) converted to Arrow independently: Python
objects (Decimal, datetime, timedelta, bytes) handed to ``pyarrow.array``, for generated rows
events of every column type and for the real MariaDB 10.11 golden binlogs."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.peers.policy import require_module

require_module("pyarrow", "pip install 'fakemaster[spark]' (or pip install pyarrow)")

import pyarrow as pa  # noqa: E402

from decoder.binlog_file import read_binlog  # noqa: E402
from decoder.columnar import (  # noqa: E402  # noqa: E402
    ChangeBatch,
    ColumnarDecoder,
    arrow_type,
    batches,
    images,
    libraries,
    numeric,
    read_changes,
)
from decoder.columnar import decoder as columnar_decoder  # noqa: E402
from decoder.core import decode_event  # noqa: E402
from encoder.core import encode_event  # noqa: E402
from fakemaster.vocabulary.constants import ColumnType as T  # noqa: E402
from fakemaster.vocabulary.constants import EventType  # noqa: E402
from fakemaster.vocabulary.context import BinlogContext  # noqa: E402
from fakemaster.vocabulary.errors import ChecksumError  # noqa: E402
from fakemaster.vocabulary.events import (  # noqa: E402
    DeleteRowsEvent,
    Event,
    GtidEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp  # noqa: E402
from scenarios.strategies.rows import rows_events_for, table_maps  # noqa: E402
from tests.budget import examples  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs"
OPS = {WriteRowsEvent: "c", UpdateRowsEvent: "u", DeleteRowsEvent: "d"}


# --- the independent conversion: row decoder values -> Python objects -> pyarrow.array --------


def python_value(value: Any) -> Any:
    """A row decoder value as the Python object pyarrow converts (the module's documented
    mapping: invalid calendar dates and the zero TIMESTAMP are null)."""
    if value is None or value is ABSENT:
        return None
    if isinstance(value, DateTime):
        return value.to_datetime()
    if isinstance(value, Date):
        return value.to_date()
    if isinstance(value, Timestamp):
        return None if value.seconds == 0 else value.to_datetime()
    if isinstance(value, Time):
        return value.to_timedelta()
    return value


def expected_array(values: list[Any], arrow: Any) -> Any:
    objects = [python_value(v) for v in values]
    if pa.types.is_decimal(arrow):
        objects = [None if v is None else Decimal(v) for v in objects]
    return pa.array(objects, arrow)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    return bool(a == b) and type(a) is type(b)


def assert_same_array(actual: Any, expected: Any, where: str) -> None:
    assert actual.type == expected.type, where
    got, want = actual.to_pylist(), expected.to_pylist()
    assert len(got) == len(want), where
    for index, (a, b) in enumerate(zip(got, want, strict=True)):
        assert same(a, b), f"{where} row {index}: {a!r} != {b!r}"


def expected_changes(events: list[tuple[int, Event]]) -> dict[str, list[Any]]:
    """Per output column, the expected values in (event_offset, row) order."""
    out: dict[str, list[Any]] = {
        "op": [], "event_offset": [], "row": [], "log_pos": [], "before": [], "after": [],
        "before_present": [], "after_present": [],
    }  # fmt: skip
    for offset, event in events:
        if not isinstance(event, RowsEvent):
            continue
        op = OPS[type(event)]
        for index, row in enumerate(event.rows):
            before, after = row if op == "u" else (row, None) if op == "d" else (None, row)
            out["op"].append(op)
            out["event_offset"].append(offset)
            out["row"].append(index)
            out["log_pos"].append(event.log_pos)
            out["before"].append(before)
            out["after"].append(after)
            out["before_present"].append(None if before is None else event.columns_present)
            after_present = (
                event.columns_present_after
                if isinstance(event, UpdateRowsEvent)
                else event.columns_present
            )
            out["after_present"].append(None if after is None else after_present)
    return out


def check_batches(batches: list[ChangeBatch], events: list[tuple[int, Event]], where: str) -> None:
    """The batches of one table hold exactly the rows of ``events`` (same table), as the
    independent conversion gives them."""
    expected = expected_changes(events)
    if not batches:
        assert not expected["op"], where
        return
    for batch in batches:  # each batch in binlog order
        keys = list(zip(batch.record_batch.column("event_offset").to_pylist(),
                        batch.record_batch.column("row").to_pylist(), strict=True))  # fmt: skip
        assert keys == sorted(set(keys)), f"{where}: batch rows out of order"
    table = pa.Table.from_batches([b.record_batch for b in batches])
    table = table.sort_by([("event_offset", "ascending"), ("row", "ascending")])
    for name in ("op", "event_offset", "row", "log_pos", "before_present", "after_present"):
        assert table.column(name).to_pylist() == expected[name], f"{where}: {name}"
    for image in ("before", "after"):
        column = table.column(image).combine_chunks()
        rows = expected[image]
        assert column.is_null().to_pylist() == [r is None for r in rows], f"{where}: {image}"
        for index, child_field in enumerate(column.type):
            values = [None if r is None else r[index] for r in rows]
            want = expected_array(values, child_field.type)
            got = column.field(index)
            # A null struct row's children are not part of the value.
            got_values = [
                None if r is None else v for r, v in zip(rows, got.to_pylist(), strict=True)
            ]
            assert_same_array(
                pa.array(got_values, child_field.type), want, f"{where}: {image}.{child_field.name}"
            )


# --- generated rows events ---------------------------------------------------------------------


@st.composite
def table_and_events(draw: st.DrawFn) -> tuple[TableMapEvent, list[RowsEvent]]:
    table_map = draw(table_maps(max_columns=10))
    events = draw(st.lists(rows_events_for(table_map), min_size=1, max_size=4))
    return table_map, events


def encoded(table_map: TableMapEvent, events: list[RowsEvent]) -> list[tuple[int, bytes]]:
    ctx = BinlogContext()
    offset = 4
    out = []
    for event in (table_map, *events):
        data = encode_event(event, ctx)
        out.append((offset, data))
        offset += len(data)
    return out


@settings(
    max_examples=examples(4),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(table_and_events(), st.sampled_from([1, 3, 65536]), st.sampled_from([1, 10**9]))
def test_generated_rows_events_equal_the_row_decoder_values_in_arrow(
    case: tuple[TableMapEvent, list[RowsEvent]], batch_rows: int, vector_min: int
) -> None:
    """``vector_min``: from how many values a column is converted by numpy (1: always), or
    never (the per-value Python conversions)."""
    table_map, events = case
    saved = libraries._VECTOR_MIN
    libraries._VECTOR_MIN = vector_min
    try:
        check_generated(table_map, events, batch_rows)
    finally:
        libraries._VECTOR_MIN = saved


def check_generated(table_map: TableMapEvent, events: list[RowsEvent], batch_rows: int) -> None:
    raw = encoded(table_map, events)
    decoded_ctx = BinlogContext()
    decoded = [(offset, decode_event(data, decoded_ctx, offset)) for offset, data in raw]
    columnar = ColumnarDecoder(batch_rows=batch_rows)
    batches: list[Any] = []
    for offset, data in raw:
        batches += columnar.feed(offset, data)
    batches += columnar.flush()
    assert all(isinstance(b, ChangeBatch) for b in batches)
    if batch_rows > 1:
        assert all(b.num_rows >= 1 for b in batches)
    check_batches(batches, decoded, f"{table_map.column_types}")


@st.composite
def wide_table_and_events(draw: st.DrawFn) -> tuple[TableMapEvent, list[RowsEvent]]:
    """Tables of 17 to 40 columns: row images with 3 to 5 bytes of NULL flags (the scanners
    read up to 4 by indexing, more with int.from_bytes)."""
    table_map = draw(table_maps(min_columns=17, max_columns=40))
    events = draw(st.lists(rows_events_for(table_map), min_size=1, max_size=3))
    return table_map, events


@settings(
    max_examples=examples(1),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    deadline=None,
)
@given(wide_table_and_events())
def test_wide_tables_equal_the_row_decoder_values_in_arrow(
    case: tuple[TableMapEvent, list[RowsEvent]],
) -> None:
    """Every batch read a column at a time (the walk and the reads agree: none left to the
    row decoder's way) with the row decoder's values."""
    table_map, events = case
    saved = libraries._VECTOR_MIN, batches._vector_batch
    built: list[bool] = []

    def vector_batch(buffer: Any) -> Any:
        batch = saved[1](buffer)
        built.append(batch is not None)
        return batch

    libraries._VECTOR_MIN, batches._vector_batch = 1, vector_batch
    try:
        check_generated(table_map, events, 65536)
    finally:
        libraries._VECTOR_MIN, batches._vector_batch = saved
    assert built == [True] * (any(event.rows for event in events))


# --- real binlogs ---------------------------------------------------------------------------------


def golden_files(variant: str) -> list[Path]:
    return sorted((GOLDEN / variant).glob("mysql-bin.0*"))


def precisions(variant: str) -> dict[tuple[str, str], tuple[int, ...]]:
    from tests.peers.workload import WorkloadResult

    return WorkloadResult.loads(
        (GOLDEN / variant / "expected.json").read_text()
    ).temporal_precisions()


@pytest.mark.parametrize(
    "variant", ["default", "full_metadata", "minimal", "compressed", "checksum_none"]
)
@pytest.mark.parametrize("vector_min", [1, 10**9])
def test_real_binlogs_equal_the_row_decoder_values_in_arrow(
    variant: str, vector_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(libraries, "_VECTOR_MIN", vector_min)
    monkeypatch.setattr(columnar_decoder, "_VIEW_MIN", 0)  # row images kept as views of the events
    files = golden_files(variant)
    assert files
    known = precisions(variant)
    for path in files:
        events = list(read_binlog(path, ctx=BinlogContext(temporal_precisions=dict(known))))
        batches = [
            item
            for item in read_changes(
                path, ctx=BinlogContext(temporal_precisions=dict(known)), batch_rows=7
            )
            if isinstance(item, ChangeBatch)
        ]
        maps: dict[int, TableMapEvent] = {}
        by_table: dict[tuple[str, str], list[tuple[int, Event]]] = {}
        for offset, event in events:
            if isinstance(event, TableMapEvent):
                maps[event.table_id] = event
            elif isinstance(event, RowsEvent):
                table_map = maps[event.table_id]
                by_table.setdefault((table_map.database, table_map.table), []).append(
                    (offset, event)
                )
        got: dict[tuple[str, str], list[ChangeBatch]] = {}
        for batch in batches:
            got.setdefault((batch.database, batch.table), []).append(batch)
        assert set(got) == {key for key, evs in by_table.items() if any(e.rows for _, e in evs)}
        for key, table_events in by_table.items():
            table_batches = got.get(key, [])
            # A table re-created with another shape comes in batches of each shape.
            shapes = {tuple(b.record_batch.schema.field("after").type) for b in table_batches}
            if len(shapes) > 1:
                continue
            check_batches(table_batches, table_events, f"{path.name} {key}")


def test_every_rows_event_type_is_covered_by_the_golden_binlogs() -> None:
    seen = set()
    for variant in ("default", "compressed"):
        for path in golden_files(variant):
            for _, event in read_binlog(
                path, ctx=BinlogContext(temporal_precisions=dict(precisions(variant)))
            ):
                if isinstance(event, RowsEvent):
                    seen.add(event.type_code)
    assert {EventType.WRITE_ROWS_V1, EventType.UPDATE_ROWS_V1, EventType.DELETE_ROWS_V1} <= seen
    assert {EventType.WRITE_ROWS_COMPRESSED_V1} <= seen


# --- types, errors, events ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column_type", "meta", "unsigned", "expected"),
    [
        (T.TINY, 0, False, pa.int8()),
        (T.TINY, 0, True, pa.int16()),
        (T.SHORT, 0, True, pa.int32()),
        (T.INT24, 0, True, pa.int32()),
        (T.LONG, 0, False, pa.int32()),
        (T.LONG, 0, True, pa.int64()),
        (T.LONGLONG, 0, False, pa.int64()),
        (T.LONGLONG, 0, True, pa.decimal128(20, 0)),
        (T.NEWDECIMAL, 10 | 2 << 8, False, pa.decimal128(10, 2)),
        (T.NEWDECIMAL, 65 | 30 << 8, False, pa.decimal256(65, 30)),
        (T.DATETIME2, 6, False, pa.timestamp("us")),
        (T.TIMESTAMP2, 3, False, pa.timestamp("us", tz="UTC")),
        (T.TIME2, 0, False, pa.duration("us")),
        (T.DATE, 0, False, pa.date32()),
        (T.YEAR, 0, False, pa.int16()),
        (T.BIT, 1, False, pa.int8()),
        (T.BIT, 8 << 8, False, pa.decimal128(20, 0)),
        (T.STRING, T.ENUM | 2 << 8, False, pa.int32()),
        (T.STRING, T.SET | 8 << 8, False, pa.decimal128(20, 0)),
        (T.VARCHAR, 300, False, pa.binary()),
        (T.BLOB, 4, False, pa.binary()),
        (T.NULL, 0, False, pa.null()),
    ],
)
def test_arrow_types(column_type: int, meta: int, unsigned: bool, expected: Any) -> None:
    assert arrow_type(column_type, meta, unsigned) == expected


def simple_stream() -> list[tuple[int, bytes]]:
    table_map = TableMapEvent(
        table_id=5, database="d", table="t", column_types=(T.LONG, T.VARCHAR),
        column_meta=(0, 20), nullable=(False, True),
    )  # fmt: skip
    rows = [
        WriteRowsEvent(table_id=5, width=2, columns_present=b"\x03", rows=((1, b"a"), (2, None))),
        UpdateRowsEvent(
            table_id=5, width=2, columns_present=b"\x03", columns_present_after=b"\x03",
            rows=(((1, b"a"), (1, b"b")),),
        ),
        DeleteRowsEvent(table_id=5, width=2, columns_present=b"\x03", rows=((2, None),)),
    ]  # fmt: skip
    return encoded(table_map, rows)


def test_a_small_stream_by_hand() -> None:
    decoder = ColumnarDecoder()
    out: list[Any] = []
    for offset, data in simple_stream():
        out += decoder.feed(offset, data)
    assert out == []  # held until flushed
    (batch,) = decoder.flush()
    assert (batch.database, batch.table, batch.column_names) == ("d", "t", ("c0", "c1"))
    assert batch.record_batch.to_pydict()["op"] == ["c", "c", "u", "d"]
    assert batch.record_batch.column("row").to_pylist() == [0, 1, 0, 0]
    assert batch.record_batch.column("after").to_pylist() == [
        {"c0": 1, "c1": b"a"}, {"c0": 2, "c1": None}, {"c0": 1, "c1": b"b"}, None,
    ]  # fmt: skip
    assert batch.record_batch.column("before").to_pylist() == [
        None, None, {"c0": 1, "c1": b"a"}, {"c0": 2, "c1": None},
    ]  # fmt: skip


def test_other_events_and_flushes() -> None:
    stream = simple_stream()
    decoder = ColumnarDecoder(events={EventType.TABLE_MAP}, flush_on={EventType.TABLE_MAP})
    out: list[Any] = []
    for offset, data in stream + [(10_000, stream[0][1])]:
        out += decoder.feed(offset, data)
    kinds = [type(item).__name__ if isinstance(item, ChangeBatch) else "event" for item in out]
    assert kinds == ["event", "ChangeBatch", "event"]
    assert out[0][0] == stream[0][0] and isinstance(out[0][1], TableMapEvent)
    assert decoder.flush() == []


def test_a_corrupted_rows_event_is_a_checksum_error() -> None:
    stream = simple_stream()
    offset, data = stream[1]
    damaged = data[:25] + bytes([data[25] ^ 1]) + data[26:]
    decoder = ColumnarDecoder()
    decoder.feed(*stream[0])
    with pytest.raises(ChecksumError) as error:
        decoder.feed(offset, damaged)
    assert error.value.event_type == "WRITE_ROWS_V1"
    assert error.value.offset == offset + len(data) - 4


@pytest.mark.parametrize("vector_min", [1, 10**9])
def test_rows_carry_the_gtid_and_header_of_their_transaction(
    vector_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(libraries, "_VECTOR_MIN", vector_min)
    known = precisions("default")
    for path in golden_files("default"):
        expected: dict[int, tuple[Any, ...]] = {}
        gtid: tuple[Any, ...] = (None, None, None)
        for offset, event in read_binlog(path, ctx=BinlogContext(temporal_precisions=dict(known))):
            if isinstance(event, GtidEvent):
                gtid = (event.domain_id, event.server_id, event.seq_no)
            elif isinstance(event, RowsEvent):
                expected[offset] = (*gtid, event.timestamp, event.server_id)
        ctx = BinlogContext(temporal_precisions=dict(known))
        seen = set()
        for batch in read_changes(path, ctx=ctx):
            assert isinstance(batch, ChangeBatch)
            columns = batch.record_batch.to_pydict()
            for index, offset in enumerate(columns["event_offset"]):
                got = tuple(
                    columns[name][index]
                    for name in ("gtid_domain", "gtid_server", "gtid_seq", "timestamp", "server_id")
                )
                assert got == expected[offset], offset
                seen.add(offset)
        assert seen and seen <= set(expected)


@pytest.mark.parametrize("vector_min", [1, 10**9])
def test_temporal_columns_of_every_precision(
    vector_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TIME2/DATETIME2/TIMESTAMP2 of fsp 0..6: negative times with and without a fraction,
    zero and invalid dates, the zero timestamp, NULLs."""
    monkeypatch.setattr(libraries, "_VECTOR_MIN", vector_min)
    fsps = range(7)
    types = (T.TIME2,) * 7 + (T.DATETIME2,) * 7 + (T.TIMESTAMP2,) * 7 + (T.DATE,)
    table_map = TableMapEvent(
        table_id=9, database="d", table="temporal", column_types=types,
        column_meta=(*fsps, *fsps, *fsps, 0), nullable=(True,) * len(types),
    )  # fmt: skip

    def micro(fsp: int, value: int) -> int:
        return value - value % 10 ** (6 - fsp)

    rows = []
    for k, (negative, hour, micros) in enumerate(
        [(True, 0, 500_000), (True, 838, 999_999), (False, 12, 1), (True, 1, 0), (False, 0, 0)]
    ):
        times = tuple(Time(negative, hour, 59 - k, 30, micro(f, micros)) for f in fsps)
        dates = tuple(
            DateTime(*((2024, 2, 29) if k % 2 else (0, 0, 0) if k == 4 else (2023, 2, 29)),
                     23, 59, 59, micro(f, micros))
            for f in fsps
        )  # fmt: skip
        stamps = tuple(
            Timestamp(0 if k == 4 else 1_700_000_000 + k, micro(f, micros)) for f in fsps
        )
        rows.append((*times, *dates, *stamps, Date(2024, 1 + k, 31 if k != 1 else 29)))
    rows.append((None,) * len(types))
    event = WriteRowsEvent(
        table_id=9, width=len(types), columns_present=b"\xff\xff\x3f", rows=tuple(rows)
    )
    check_generated(table_map, [event, event], 65536)


@pytest.mark.parametrize("variant", ["aes_cbc", "aes_ctr"])
def test_encrypted_golden_binlogs(variant: str) -> None:
    """An encrypted file read with its keys gives the rows of the row decoder."""
    from fakemaster.vocabulary.encryption import BinlogKeys

    directory = GOLDEN / "encrypted"
    keys = BinlogKeys.from_key_file(directory / f"{variant}.keys")
    for path in sorted(directory.glob(f"{variant}-bin.*.encrypted")):
        events = list(read_binlog(path, keys=keys))
        expected = sum(len(e.rows) for _, e in events if isinstance(e, RowsEvent))
        assert expected
        batches = list(read_changes(path, keys=keys))
        assert sum(b.num_rows for b in batches if isinstance(b, ChangeBatch)) == expected
        offsets = {offset for offset, e in events if isinstance(e, RowsEvent)}
        for batch in batches:
            assert isinstance(batch, ChangeBatch)
            assert set(batch.record_batch.column("event_offset").to_pylist()) <= offsets


@st.composite
def wide_decimal_rows(draw: st.DrawFn) -> tuple[TableMapEvent, WriteRowsEvent]:
    """A table of DECIMALs of 19 to 65 digits (more than an int64 holds: read in 32-bit limbs
    by numpy) and rows of them: extremes, zeros, negatives, NULLs."""
    specs = draw(
        st.lists(
            st.integers(19, 65).flatmap(
                lambda p: st.tuples(st.just(p), st.integers(0, min(p, 38)))
            ),
            min_size=1,
            max_size=3,
        )
    )
    table_map = TableMapEvent(
        table_id=9, database="d", table="wide_decimals",
        column_types=(T.NEWDECIMAL,) * len(specs),
        column_meta=tuple(p | s << 8 for p, s in specs), nullable=(True,) * len(specs),
    )  # fmt: skip

    def value(spec: tuple[int, int]) -> st.SearchStrategy[Decimal | None]:
        precision, scale = spec
        top = 10**precision - 1
        unscaled = st.one_of(
            st.integers(-top, top), st.sampled_from([0, top, -top, 1, -1, 10**18, -(2**63)])
        )
        return st.one_of(st.none(), unscaled.map(lambda n: Decimal(f"{n}e-{scale}")))

    rows = draw(st.lists(st.tuples(*(value(spec) for spec in specs)), min_size=1, max_size=40))
    event = WriteRowsEvent(table_id=9, width=len(specs), columns_present=b"\xff", rows=tuple(rows))
    return table_map, event


@settings(max_examples=examples(2), suppress_health_check=[HealthCheck.too_slow])
@given(wide_decimal_rows(), st.sampled_from([1, 10**9]))
def test_wide_decimals_equal_the_row_decoder_values_in_arrow(
    case: tuple[TableMapEvent, WriteRowsEvent], vector_min: int
) -> None:
    """DECIMALs of 19 to 65 digits converted a column at a time (numpy limbs: ``vector_min``
    1; never left to the row decoder's way) and value by value give the row decoder's values
    (decimal128 or decimal256)."""
    saved = libraries._VECTOR_MIN, batches._read_deferred
    libraries._VECTOR_MIN = vector_min

    def read_deferred(buffer: Any, runs: Any) -> None:
        assert vector_min > 1, "a column at a time, the values were left to the row decoder"
        saved[1](buffer, runs)

    batches._read_deferred = read_deferred
    try:
        table_map, event = case
        check_generated(table_map, [event, event], 65536)
    finally:
        libraries._VECTOR_MIN, batches._read_deferred = saved


FAST_VIEWS = settings(max_examples=examples(2), deadline=None)


@FAST_VIEWS
@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=40)), min_size=1, max_size=30),
    st.booleans(),
)
def test_binary_values_by_views_are_the_slices(values: list[bytes | None], long_only: bool) -> None:
    """_vector_binary (binary views over the joined images, cast to binary) gives the values
    at their starts: short (inline in the view), long (an offset), NULL, or every one long."""
    import numpy as np  # (with pyarrow)

    if long_only:
        values = [None if v is None else v + bytes(13) for v in values]
    raw = b""
    starts, lengths = [], []
    for index, value in enumerate(values):
        raw += bytes([index % 251]) * (index % 3)  # other bytes between the values
        starts.append(len(raw))
        lengths.append(0 if value is None else len(value))
        raw += value or b""
    joined = images._Images(raw + bytes(images._PAD))
    nulls = np.array([v is None for v in values])
    got = images._vector_binary(
        joined, np.array(starts, np.int64), np.array(lengths, np.int64), nulls
    )
    assert got.type == pa.binary()
    assert got.to_pylist() == values


def test_month_table_days_are_the_civil_days() -> None:
    """_month_days (by table) gives _civil_days' days and validity for every year * 13 + month
    of years 0 to 9999 and day 0 to 31, and invalid past them."""
    import numpy as np  # (with pyarrow)

    ym = np.repeat(np.arange(10_000 * 13, dtype=np.int64), 32)
    day = np.tile(np.arange(32, dtype=np.int64), 10_000 * 13)
    days, valid = numeric._month_days(ym, day)
    want_days, want_valid = numeric._civil_days(ym // 13, ym % 13, day)
    assert np.array_equal(valid, want_valid)
    assert np.array_equal(days[valid], want_days[valid])
    assert valid.sum() == 3_652_059  # the days of years 1 to 9999 (datetime.date)
    _, outside = numeric._month_days(np.array([-1, -13, 10_000 * 13, 1 << 40]), np.ones(4, int))
    assert not outside.any()
