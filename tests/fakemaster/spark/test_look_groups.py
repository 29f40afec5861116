"""The first look's groups computed by the tasks (fakemaster.spark.look_groups) are the groups
Spark's look_query gives on the same change log, for every built-in scenario's binlogs (one
file per task, and several files per task); where what they rest on does not hold (events out
of order, a GTID that is not three numbers, a NUL in a column name, a sequence one number
cannot hold) the tasks give none, and the driver's look is Spark's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scenarios import Oracle
from scenarios.library import LIBRARY, build
from tests.fakemaster.spark.test_batch_overview import plain
from tests.fakemaster.spark.test_batch_scenarios import write_files
from tests.fakemaster.spark.test_change_log_files import arrow_batch, event


def canonical(rows: list[Any]) -> list[str]:
    return sorted(json.dumps(plain(r), sort_keys=True) for r in rows)


def spark_groups(spark: Any, log: Any) -> list[Any]:
    from fakemaster.spark.batch_overview import carries_columns, look_query

    return look_query(log, carries_columns(), None, position=True).collect()


@pytest.mark.parametrize(
    ("names", "per_partition", "snapshot"),
    # Several files per task: of one scenario, in the order of their numbers (as
    # expand_paths gives them), a task's events in sequence order. A snapshot's rows: tasks
    # of their own, before every binlog event.
    [
        (sorted(LIBRARY), 1, False),
        (["rotation_storm"], 3, False),
        (["snapshot_then_stream"], 1, True),
    ],
)
def test_the_tasks_groups_are_sparks(
    spark: Any, tmp_path: Path, names: list[str], per_partition: int, snapshot: bool
) -> None:
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.batch_overview import merge_fine_groups
    from fakemaster.spark.change_log_files import WRITTEN_DDL
    from fakemaster.spark.look_groups import look_rows

    files: list[str] = []
    for name in names:
        files += write_files(build(name), tmp_path / "binlogs" / name)
    through = tmp_path / "through"
    reader = spark.read.format(FORMAT_NAME)
    if snapshot:
        (name,) = names
        Oracle(build(name)).export(tmp_path / "snapshot", after=0)
        assert list((tmp_path / "snapshot").iterdir())
        reader = reader.option("snapshot", str(tmp_path / "snapshot"))
    written = (
        reader.option("changeLog", str(through))
        .option("filesPerPartition", str(per_partition))
        .load(files)
        .collect()
    )
    assert written[0].__fields__ == [f.split()[0] for f in WRITTEN_DDL.split(", ")]
    assert all(row["look"] is not None for row in written)
    ours = look_rows([row["look"] for row in written])
    theirs = spark_groups(spark, spark.read.parquet(str(through)))
    assert len(theirs) > len(names)
    # Field for field, in Spark's order.
    assert {tuple(r.__fields__) for r in ours} == {tuple(theirs[0].__fields__)}
    # The scenarios' files share their numbers (mysql-bin.000001...): Spark's groups of one
    # number span several tasks' groups, which the driver merges as it merges across files.
    assert canonical(merge_fine_groups(ours, True)) == canonical(merge_fine_groups(theirs, True))


def looked(*batches: Any) -> str | None:
    import pyarrow as pa

    from fakemaster.spark.change_log_files import flag_arrays
    from fakemaster.spark.look_groups import LookGroups

    look = LookGroups()
    for batch in batches:
        flags = flag_arrays(batch)
        look.add(
            pa.RecordBatch.from_arrays(
                [*batch.columns, *flags], names=[*batch.schema.names, "carries", "partial"]
            )
        )
    return look.result()


def with_source(row: dict[str, Any], gtid: str | None, pos: int, n: int) -> dict[str, Any]:
    source = {
        "server_id": 1,
        "gtid": gtid,
        "file": "mysql-bin.000001",
        "pos": pos,
        "row": n,
        "thread": None,
        "db": "d",
        "table": "t",
        "ts_ms": 0,
        "query": None,
    }
    return {**row, "source": source, "seq": {"file_index": 1, "pos": pos, "event": 1, "row": n}}


def inserts(
    *at: tuple[int, int], gtid: str | None = "0-1-5", columns: list[str] | None = None
) -> Any:
    names = columns or ["id"]
    return arrow_batch(
        [
            with_source(event("c", None, {names[0]: str(n)}, names, names), gtid, pos, n)
            for pos, n in at
        ]
    )


def test_orderly_events_give_groups() -> None:
    found = looked(inserts((100, 0), (100, 1)), inserts((200, 0)))
    assert found is not None
    (group,) = json.loads(found)
    assert (group["n"], group["first_order"], group["last_order"]) == (3, 100 << 31, 200 << 31)
    assert (group["domain"], group["gtid_server"], group["gtid_seq"]) == (0, 1, 5)


@pytest.mark.parametrize(
    "batches",
    [
        pytest.param(lambda: [inserts((200, 0), (100, 0))], id="out-of-order-in-a-batch"),
        pytest.param(lambda: [inserts((100, 1)), inserts((100, 0))], id="out-of-order-across"),
        pytest.param(lambda: [inserts((100, 0), (100, 0))], id="one-sequence-twice"),
        pytest.param(lambda: [inserts((1 << 32, 0))], id="offset-of-4-GiB"),
        pytest.param(lambda: [inserts((100, -1))], id="negative-row"),
        pytest.param(lambda: [inserts((100, 0), gtid="0-1")], id="gtid-of-two-numbers"),
        pytest.param(lambda: [inserts((100, 0), gtid="0-1-x")], id="gtid-not-numbers"),
        pytest.param(lambda: [inserts((100, 0), columns=["a\0b"])], id="nul-in-a-column-name"),
    ],
)
def test_what_the_groups_rest_on_broken_gives_none(batches: Any) -> None:
    assert looked(inserts((1, 0))) is not None
    assert looked(*batches()) is None


def test_a_batch_without_gtids_groups_under_none() -> None:
    found = looked(inserts((100, 0), gtid=None))
    assert found is not None
    (group,) = json.loads(found)
    assert (group["domain"], group["gtid_server"], group["gtid_seq"]) == (None, None, None)


def test_a_batch_the_tasks_cannot_look_at_is_looked_at_by_spark(spark: Any, tmp_path: Path) -> None:
    """One task reading the files last to first: its events are out of order, it gives no
    groups, and the tables are still the scenario's."""
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.materialiser import Materialiser
    from tests.support.spark_tables import read_tables

    scenario = build("rotation_storm")
    files = write_files(scenario, tmp_path / "binlogs")[::-1]
    reader = spark.read.format(FORMAT_NAME).option("filesPerPartition", str(len(files)))
    written = reader.option("changeLog", str(tmp_path / "probe")).load(files).collect()
    assert [row["look"] for row in written] == [None]
    Materialiser(spark, str(tmp_path / "out")).apply_files(reader, files, 0)
    Oracle(scenario).assert_matches(read_tables(tmp_path / "out"))


def test_an_event_without_a_source_has_no_gtid_or_source_file() -> None:
    """A NULL ``source`` struct whose children still hold values (Arrow keeps them): Spark
    reads its fields as NULL, and so do the groups."""
    import pyarrow as pa

    batch = inserts((100, 0))
    source = batch.column("source")
    hidden = pa.StructArray.from_arrays(
        source.flatten(), fields=list(source.type), mask=pa.array([True])
    )
    columns = [hidden if name == "source" else batch.column(name) for name in batch.schema.names]
    found = looked(pa.RecordBatch.from_arrays(columns, schema=batch.schema))
    assert found is not None
    (group,) = json.loads(found)
    assert (group["domain"], group["source_file"], group["source_pos"]) == (None, None, None)


def assert_the_tasks_agree_with_spark(spark: Any, files: list[str], directory: Path) -> Any:
    """On ``files``: the change log the tasks write (events and flags) is the rows Spark's
    writer writes from the same read, and the tasks' groups, merged, are look_query's.
    Returns the tasks' change log (a DataFrame)."""
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.batch_overview import merge_fine_groups, with_flags
    from fakemaster.spark.look_groups import look_rows
    from tests.fakemaster.spark.test_batch_overview import by_seq

    through = directory / "through"
    written = spark.read.format(FORMAT_NAME).option("changeLog", str(through)).load(files)
    looks = [row["look"] for row in written.collect()]
    assert looks and all(look is not None for look in looks)
    expected_path = directory / "spark"
    with_flags(spark.read.format(FORMAT_NAME).load(files)).write.parquet(str(expected_path))
    expected = spark.read.parquet(str(expected_path))
    found = spark.read.schema(expected.schema).parquet(str(through))
    assert by_seq(found.collect()) == by_seq(expected.collect())
    ours = merge_fine_groups(look_rows(looks), True)
    theirs = merge_fine_groups(spark_groups(spark, found), True)
    assert canonical(ours) == canonical(theirs)
    return found
