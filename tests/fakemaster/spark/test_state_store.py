"""Incremental materialisation (fakemaster.spark.state_store): a history streamed one point
(transaction, DDL statement, XA COMMIT/ROLLBACK) per micro-batch gives the oracle's tables
after every batch; a replayed batch gives the same tables; the change log and the states on
disk do not grow with the number of batches (one batch's events, two states)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark.changes import file_index
from scenarios import Oracle
from scenarios.compiler import binlog_files
from scenarios.library import build
from scenarios.live import ScenarioStore
from tests.fakemaster.spark.test_batch_scenarios import catalogue_of
from tests.fakemaster.spark.test_stream import catalogue_with_create
from tests.support.spark_tables import read_tables


def _ends(scenario: Any, directory: Path) -> list[tuple[int, int]]:
    """(file index, size) of the binlog after each point; the whole binlog's files written
    to ``directory`` (the prefixes are its prefixes: a binlog only grows)."""
    store = ScenarioStore(scenario, released=0)
    ends = []
    for _ in range(store.total + 1):
        files = binlog_files(store)
        last = max(files, key=lambda name: file_index(name, -1))
        ends.append((file_index(last, -1), len(files[last])))
        store.release(1)
    directory.mkdir()
    for name, data in binlog_files(store).items():
        (directory / name).write_bytes(data)
    return ends


def _kept(out: Path) -> tuple[list[int], list[int]]:
    """The batch ids of the change log's partitions and of the states on disk."""
    return tuple(  # type: ignore[return-value]
        sorted(int(p.name.partition("=")[2]) for p in (out / d).iterdir() if "=" in p.name)
        for d in ("changes", "state")
    )


# ddl_mid_stream and xa (17 and 14 batches) pass too and take minutes each: the stream tests
# (test_stream.py, test_stream_property.py) run them through the same state store in CI.
@pytest.mark.parametrize("name", ["no_key_duplicates"])
def test_a_history_streamed_point_by_point_equals_the_oracle_after_every_batch(
    spark: Any, tmp_path: Path, name: str
) -> None:
    from pyspark.sql import functions as F

    from fakemaster.spark import FORMAT_NAME, Materialiser

    scenario = build(name)
    ends = _ends(scenario, tmp_path / "binlogs")
    oracle = Oracle(scenario)
    reader = spark.read.format(FORMAT_NAME)
    if scenario.settings.binlog_row_metadata != "FULL":
        reader = reader.option("catalog", json.dumps(catalogue_of(scenario)))
    if any(scenario.initial.rows.values()):
        oracle.export(tmp_path / "snapshot", after=0)
        reader = reader.option("snapshot", str(tmp_path / "snapshot"))
    events = reader.load(sorted(str(p) for p in (tmp_path / "binlogs").iterdir()))
    at = F.struct(F.col("seq.file_index").alias("f"), F.col("seq.pos").alias("p"))

    def point_at(end: tuple[int, int]) -> Any:
        return F.struct(
            F.lit(end[0]).cast("bigint").alias("f"), F.lit(end[1]).cast("bigint").alias("p")
        )

    out = tmp_path / "out"
    # With the tables' CREATE statements: a point that ends with an ALTER has the table's new
    # shape before any TABLE_MAP shows it.
    materialiser = Materialiser(spark, str(out), catalogue_with_create(scenario))
    for point, (end, start) in enumerate(zip(ends[1:], ends, strict=False), start=1):
        # A point's events: past the binlog's end before it, up to its end after it (the
        # snapshot's rows, file_index -1, with the first).
        upper = at < point_at(end)
        lower = at >= point_at(start)
        batch = events.where(upper & (lower if point > 1 else F.lit(True)))
        materialiser.apply(batch, point)
        tables = read_tables(out)
        oracle.assert_matches(tables, after=point)
        if point % 3 == 0:  # replayed (a crash before Spark's commit): the same tables
            materialiser.apply(batch, point)
            assert read_tables(out) == tables
        changes, states = _kept(out)
        assert changes == [point]
        assert states == [b for b in (point - 1, point) if b > 0]
    assert materialiser.apply(events.limit(0), 1) == []  # an older batch: skipped
    oracle.assert_matches(read_tables(out))
