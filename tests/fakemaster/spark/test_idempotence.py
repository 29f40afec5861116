"""Materialisation is idempotent under a replayed micro-batch: applying batch N again (what
Spark does after a crash between the sink's write and its commit) leaves the same tables and
the same change log, equal to the oracle; an older batch replayed late changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scenarios import Oracle
from scenarios.library import build
from tests.fakemaster.spark.test_batch_scenarios import write_files
from tests.support.spark_tables import read_tables


def _changes(out: Path) -> list[tuple[Any, ...]]:
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "changes").to_pylist()
    return sorted(
        (r["batch_id"], r["seq"]["file_index"], r["seq"]["pos"], r["seq"]["row"]) for r in rows
    )


def test_a_replayed_batch_changes_nothing(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    scenario = build("primary_key_updates")
    files = write_files(scenario, tmp_path / "binlogs")
    Oracle(scenario).export(tmp_path / "snapshot", after=0)
    out = tmp_path / "out"
    materialiser = Materialiser(spark, str(out))

    def batch(paths: list[str], snapshot: bool) -> Any:
        reader = spark.read.format(FORMAT_NAME)
        if snapshot:
            reader = reader.option("snapshot", str(tmp_path / "snapshot"))
        return reader.load(paths)

    # The scenario's transactions split in two batches by file (the first also has the
    # snapshot); a rotation-free scenario is one file, so split its events by position.
    first = batch(files, True).where("seq.file_index < 0 OR seq.pos < 1000")
    second = batch(files, False).where("seq.pos >= 1000")
    assert first.count() and second.count()
    materialiser.apply(first, 0)
    materialiser.apply(second, 1)
    once = read_tables(out)
    log_once = _changes(out)
    Oracle(scenario).assert_matches(once)

    materialiser.apply(second, 1)  # replayed
    assert read_tables(out) == once
    assert _changes(out) == log_once

    assert materialiser.apply(first, 0) == []  # late: skipped
    assert read_tables(out) == once
    assert _changes(out) == log_once
