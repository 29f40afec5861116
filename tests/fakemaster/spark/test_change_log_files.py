"""The change log the data source's tasks write (fakemaster.spark.change_log_files): its flags
are those Spark computes (batch_overview.with_flags) on any events, hand-made ones at each
edge, and its files hold what Spark's own writer writes for the built-in scenarios' binlogs; a
file is whole or absent, and a replayed batch keeps none of the earlier run's files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scenarios.library import LIBRARY, build
from tests.budget import examples
from tests.fakemaster.spark.test_batch_overview import by_seq
from tests.fakemaster.spark.test_batch_scenarios import write_files

KEYS = ("id", "k2", "v")


def event(
    op: str,
    before: dict[str, str | None] | None = None,
    after: dict[str, str | None] | None = None,
    columns: list[str] | None = None,
    key: list[str] | None = None,
    row: int = 0,
) -> dict[str, Any]:
    return {
        "op": op,
        "database": "d",
        "table": "t",
        "before": before,
        "after": after,
        "source": None,
        "seq": {"file_index": 1, "pos": 4, "event": 0, "row": row},
        "ddl": None,
        "ddl_kind": None,
        "columns": columns,
        "column_types": None,
        "primary_key": key,
    }


def arrow_batch(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    from fakemaster.spark.changes import arrow_schema

    schema = arrow_schema()
    as_entries = [
        {
            k: (list(v.items()) if k in ("before", "after") and v is not None else v)
            for k, v in r.items()
        }
        for r in rows
    ]
    return pa.RecordBatch.from_pylist(as_entries, schema=schema)


def spark_flags(spark: Any, rows: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    import pyarrow as pa

    from fakemaster.spark.batch_overview import FLAGS, with_flags
    from fakemaster.spark.changes import CHANGE_EVENT_DDL

    table = pa.Table.from_batches([arrow_batch(rows)])
    frame = with_flags(spark.createDataFrame(table, CHANGE_EVENT_DDL))
    found = frame.select("seq.row", *FLAGS).collect()
    return [(r[FLAGS[0]], r[FLAGS[1]]) for r in sorted(found, key=lambda r: r["row"])]


def own_flags(rows: list[dict[str, Any]]) -> list[tuple[bool, bool]]:
    from fakemaster.spark.change_log_files import flag_arrays

    carries, partial = flag_arrays(arrow_batch(rows))
    return list(zip(carries.to_pylist(), partial.to_pylist(), strict=True))


values = st.one_of(st.none(), st.sampled_from(["1", "2", ""]))
images = st.one_of(st.none(), st.dictionaries(st.sampled_from(KEYS), values, max_size=3))
names = st.one_of(st.none(), st.lists(st.sampled_from(KEYS), max_size=3, unique=True))
events = st.builds(
    event,
    op=st.sampled_from(["u", "u", "c", "d", "r", "ddl"]),
    before=images,
    after=images,
    columns=names,
    key=names,
)


@settings(
    max_examples=examples(0.3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(rows=st.lists(events, min_size=1, max_size=12))
def test_the_tasks_flags_are_sparks(spark: Any, rows: list[dict[str, Any]]) -> None:
    rows = [{**r, "seq": {**r["seq"], "row": n}} for n, r in enumerate(rows)]
    assert own_flags(rows) == spark_flags(spark, rows)


def test_the_flags_at_each_edge(spark: Any) -> None:
    columns = ["id", "v"]
    cases = [
        # (event, carries, partial)
        (event("u", {"id": "1", "v": "a"}, {"id": "2"}, columns, ["id"]), True, True),
        (event("u", {"id": "1", "v": "a"}, {"id": "1"}, columns, ["id"]), False, True),
        (event("u", None, {"id": "1"}, columns, ["id"]), True, True),
        (event("u", {"id": "1"}, {"v": "b"}, columns, ["id"]), False, True),
        (event("u", {"id": "1"}, {"id": None}, columns, ["id"]), False, True),
        (event("u", {"id": "1"}, {"id": "2"}, columns, None), False, True),
        (event("u", {"id": "1"}, {"id": "2"}, columns, []), False, True),
        (event("u", {"id": "1"}, {"id": "2"}, None, ["id"]), False, True),
        (event("u", {"id": "1"}, {"id": "2", "v": "b"}, columns, ["id"]), False, False),
        (event("u", {"id": "1"}, None, columns, ["id"]), False, False),
        (event("c", None, {"id": "2"}, columns, ["id"]), False, False),
        (event("d", {"id": "1"}, None, None, ["id"]), False, False),
    ]
    rows = [{**e, "seq": {**e["seq"], "row": n}} for n, (e, _, _) in enumerate(cases)]
    expected = [(carries, partial) for _, carries, partial in cases]
    assert spark_flags(spark, rows) == expected
    assert own_flags(rows) == expected


def failing(batches: list[Any], after: int) -> Iterator[Any]:
    for n, batch in enumerate(batches):
        if n == after:
            raise OSError("the disk went away")
        yield batch


def test_a_part_is_whole_or_absent(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from fakemaster.spark.change_log_files import write_part

    rows = [event("c", None, {"id": str(n)}, ["id"], ["id"], n) for n in range(5)]
    batches = [arrow_batch(rows[:2]), arrow_batch(rows[2:])]
    with pytest.raises(OSError, match="went away"):
        write_part(failing(batches, 1), str(tmp_path), "part-1.parquet")
    assert os.listdir(tmp_path) == []
    assert write_part(iter([arrow_batch(rows[:0])]), str(tmp_path), "part-1.parquet") == 0
    assert os.listdir(tmp_path) == []
    assert write_part(iter(batches), str(tmp_path), "part-1.parquet") == 5
    assert os.listdir(tmp_path) == ["part-1.parquet"]
    written = pq.read_table(tmp_path / "part-1.parquet")
    assert written.num_rows == 5
    assert written.column_names[-2:] == ["carries", "partial"]


tables = st.sampled_from([("d", "t"), ("d", "u"), ("e", "t"), (None, None), ("d", None)])


@settings(max_examples=examples(0.5), deadline=None)
@given(
    names=st.lists(tables, min_size=1, max_size=60),
    cuts=st.lists(st.integers(1, 60), max_size=6),
    group_rows=st.sampled_from([2, 7, 1 << 16]),
)
def test_a_parts_row_groups_are_of_one_table_each_in_sequence_order(
    tmp_path_factory: pytest.TempPathFactory,
    names: list[tuple[str | None, str | None]],
    cuts: list[int],
    group_rows: int,
) -> None:
    """Events of tables interleaved, in batches cut anywhere: the part holds every event once,
    each row group of one table (what lets Spark skip the other tables' row groups when it reads
    one), each table's events in sequence order; a batch of one table is its own row group."""
    import pyarrow.parquet as pq

    from fakemaster.spark import change_log_files

    rows = []
    for n, (database, table) in enumerate(names):
        row = event("c", None, {"id": str(n)}, ["id"], ["id"], n)
        rows.append({**row, "database": database, "table": table})
    bounds = sorted({0, len(rows), *(c for c in cuts if c < len(rows))})
    batches = [arrow_batch(rows[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    directory = tmp_path_factory.mktemp("part")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(change_log_files, "_GROUP_ROWS", group_rows)
        written = change_log_files.write_part(iter(batches), str(directory), "p.parquet")
    assert written == len(rows)
    part = pq.ParquetFile(directory / "p.parquet")
    seen = []
    for index in range(part.num_row_groups):
        group = part.read_row_group(index).to_pylist()
        assert len({(r["database"], r["table"]) for r in group}) == 1, group
        seen += [(r["database"], r["table"], r["seq"]["row"]) for r in group]
    assert sorted(r for _, _, r in seen) == list(range(len(rows)))
    for database, table in set(names):
        order = [r for d, t, r in seen if (d, t) == (database, table)]
        assert order == sorted(order)
    single = [b for b in batches if len({(r["database"], r["table"]) for r in b.to_pylist()}) == 1]
    assert part.num_row_groups >= len(single)


def test_the_tasks_change_log_is_the_spark_writers(spark: Any, tmp_path: Path) -> None:
    """Every built-in scenario's binlogs, read once: the events and flags the tasks write are
    the rows Spark's writer writes from the same read."""
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.batch_overview import with_flags

    files: list[str] = []
    for name in sorted(LIBRARY):
        files += write_files(build(name), tmp_path / "binlogs" / name)
    through = tmp_path / "through"
    written = spark.read.format(FORMAT_NAME).option("changeLog", str(through)).load(files)
    counts = written.collect()
    assert len(counts) == len(files)
    spark_written = tmp_path / "spark"
    with_flags(spark.read.format(FORMAT_NAME).load(files)).write.parquet(str(spark_written))
    expected = spark.read.parquet(str(spark_written))
    found = spark.read.schema(expected.schema).parquet(str(through))
    assert sum(r["events"] for r in counts) == expected.count() > 0
    assert sorted(r["file"] for r in counts if r["file"]) == sorted(os.listdir(through))
    assert by_seq(found.collect()) == by_seq(expected.collect())


def test_a_replayed_batch_keeps_none_of_the_earlier_runs_files(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.materialiser import Materialiser

    files = write_files(build("rotation_storm"), tmp_path / "binlogs")
    assert len(files) > 2
    materialiser = Materialiser(spark, str(tmp_path / "out"))
    materialiser.apply_files(spark.read.format(FORMAT_NAME), files, 0)
    log = tmp_path / "out" / "changes" / "batch_id=0"
    every = set(os.listdir(log))
    materialiser.apply_files(spark.read.format(FORMAT_NAME), files[:5], 0)
    # part-<first file's number>-<digest>.parquet; a file without change events writes none.
    expected = {name for name in every if int(name.split("-")[1]) <= 5}
    assert 0 < len(expected) < len(every)
    assert set(os.listdir(log)) == expected


def test_a_change_log_of_one_tables_typed_images_is_refused(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark import FORMAT_NAME

    files = write_files(build("primary_key_updates"), tmp_path / "binlogs")
    reader = spark.read.format(FORMAT_NAME).option("changeLog", str(tmp_path / "log"))
    with pytest.raises(Exception, match="changeLog and table exclude each other"):
        reader.option("table", "s.t").load(files).collect()
    assert not (tmp_path / "log").exists()
