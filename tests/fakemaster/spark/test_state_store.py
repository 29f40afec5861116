"""Incremental materialisation (fakemaster.spark.state_store): a history streamed one point
(transaction, DDL statement, XA COMMIT/ROLLBACK) per micro-batch gives the oracle's tables
after every batch; a replayed batch gives the same tables; the change log and the states on
disk do not grow with the number of batches (one batch's events, two states)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark import FORMAT_NAME, Materialiser
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


class _History:
    """A built-in scenario's binlog read by the data source, cut into batches at its points."""

    def __init__(self, spark: Any, tmp_path: Path, name: str) -> None:
        self.scenario = build(name)
        self.ends = _ends(self.scenario, tmp_path / "binlogs")
        self.oracle = Oracle(self.scenario)
        reader = spark.read.format(FORMAT_NAME)
        if self.scenario.settings.binlog_row_metadata != "FULL":
            reader = reader.option("catalog", json.dumps(catalogue_of(self.scenario)))
        if any(self.scenario.initial.rows.values()):
            self.oracle.export(tmp_path / "snapshot", after=0)
            reader = reader.option("snapshot", str(tmp_path / "snapshot"))
        self.events = reader.load(sorted(str(p) for p in (tmp_path / "binlogs").iterdir()))
        self.out = tmp_path / "out"

    def materialiser(self, spark: Any) -> Any:
        # With the tables' CREATE statements: a point that ends with an ALTER has the table's
        # new shape before any TABLE_MAP shows it.
        return Materialiser(spark, str(self.out), catalogue_with_create(self.scenario))

    def points(self, first: int, last: int) -> Any:
        """The events of points ``first``..``last`` (1-based): past the binlog's end before
        ``first``, up to its end after ``last`` (the snapshot's rows, file_index -1, with the
        first point)."""
        from pyspark.sql import functions as F

        at = F.struct(F.col("seq.file_index").alias("f"), F.col("seq.pos").alias("p"))

        def point_at(end: tuple[int, int]) -> Any:
            return F.struct(
                F.lit(end[0]).cast("bigint").alias("f"), F.lit(end[1]).cast("bigint").alias("p")
            )

        upper = at < point_at(self.ends[last])
        lower = at >= point_at(self.ends[first - 1])
        return self.events.where(upper & (lower if first > 1 else F.lit(True)))


# ddl_mid_stream and xa (17 and 14 batches) pass too and take minutes each: the stream tests
# (test_stream.py, test_stream_property.py) run them through the same state store in CI.
@pytest.mark.parametrize("name", ["no_key_duplicates"])
def test_a_history_streamed_point_by_point_equals_the_oracle_after_every_batch(
    spark: Any, tmp_path: Path, name: str
) -> None:
    history = _History(spark, tmp_path, name)
    out, oracle = history.out, history.oracle
    materialiser = history.materialiser(spark)
    for point in range(1, len(history.ends)):
        batch = history.points(point, point)
        materialiser.apply(batch, point)
        tables = read_tables(out)
        oracle.assert_matches(tables, after=point)
        if point % 3 == 0:  # replayed (a crash before Spark's commit): the same tables
            materialiser.apply(batch, point)
            assert read_tables(out) == tables
        changes, states = _kept(out)
        assert changes == [point]
        # A history of rows only: every state keeps no event, written without a scan of
        # the batch (an events directory with nothing but _SUCCESS).
        events = out / "state" / f"batch_id={point}" / "events"
        assert sorted(p.name for p in events.iterdir()) == ["_SUCCESS"]
        assert states == [b for b in (point - 1, point) if b > 0]
    assert materialiser.apply(history.events.limit(0), 1) == []  # an older batch: skipped
    oracle.assert_matches(read_tables(out))


# The DDL a state keeps for the next batch (the shaping statements, as the materialiser lists
# them in KEPT_DDL).
_SHAPING_DDL = {"CREATE_TABLE", "ALTER_TABLE", "RENAME_TABLE", "DROP_TABLE", "DROP_DATABASE"}


def _shaping_ddl(events: list[dict[str, Any]]) -> set[tuple[tuple[int, ...], str]]:
    return {
        (tuple(e["seq"].values()), e["ddl"])
        for e in events
        if e["op"] == "ddl" and e["ddl_kind"] in _SHAPING_DDL
    }


def _batch_events(out: Path, batch_id: int) -> list[dict[str, Any]]:
    """Batch ``batch_id``'s change events as the change log holds them (read with pyarrow)."""
    import pyarrow.parquet as pq

    path = out / "changes" / f"batch_id={batch_id}"
    return [
        row for part in sorted(path.glob("*.parquet")) for row in pq.read_table(part).to_pylist()
    ]


def _state_events(out: Path, batch_id: int) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    path = out / "state" / f"batch_id={batch_id}" / "events"
    return pq.read_table(path).to_pylist() if any(path.glob("*.parquet")) else []


# Cuts (the last point of each batch) that put a batch boundary right after DDL, the rows that
# follow it in the next batch (ddl_mid_stream: ALTER ADD + DROP COLUMN, CREATE TABLE, RENAME
# TABLE; a table's rows in one batch, its DROP in the next), and between XA PREPARE and its end
# (xa: the transfer's PREPARE in batch 1, its COMMIT in batch 2; "undone" prepared in batch 2,
# rolled back in batch 3; the last transaction still prepared at the end).
@pytest.mark.parametrize(
    ("name", "cuts"), [("ddl_mid_stream", (2, 8, 12, 15, 17)), ("xa", (3, 5, 9))]
)
def test_batches_that_split_ddl_and_xa_transactions_equal_the_oracle(
    spark: Any, tmp_path: Path, name: str, cuts: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakemaster.spark import materialiser as module

    history = _History(spark, tmp_path, name)
    assert cuts[-1] == len(history.ends) - 1, "the cuts must end at the history's last point"
    materialiser = history.materialiser(spark)
    first = 1
    for batch_id, last in enumerate(cuts, start=1):
        with monkeypatch.context() as patch:
            if name == "xa" and batch_id == 1:
                # Batch 1 as written before the change log stored the first look's flags: the
                # state it leaves (an XA PREPARE and its rows held over) has none.
                patch.setattr(module, "with_flags", lambda frame: frame)
            materialiser.apply(history.points(first, last), batch_id)
        if name == "xa" and batch_id == 1:
            assert not any("carries" in event for event in _state_events(history.out, 1))
        history.oracle.assert_matches(read_tables(history.out), after=last)
        # The state keeps the shaping DDL of its batch and of the state before it, whether or
        # not the batch has any (read from the change log and the states with pyarrow).
        before = _state_events(history.out, batch_id - 1) if batch_id > 1 else []
        expected = _shaping_ddl(_batch_events(history.out, batch_id) + before)
        assert _shaping_ddl(_state_events(history.out, batch_id)) == expected
        if name == "ddl_mid_stream":
            assert expected, "each batch of ddl_mid_stream has a CREATE/ALTER/RENAME to keep"
        if name == "xa" and batch_id < len(cuts):  # what makes the case: a prepare held over
            kept = {(e["op"], e["ddl_kind"]) for e in _state_events(history.out, batch_id)}
            assert ("xa", "XA_PREPARE") in kept
        first = last + 1
    tables = read_tables(history.out)
    # Replayed after compaction (only states N-1 and N on disk): the same tables.
    assert _kept(history.out)[1] == [len(cuts) - 1, len(cuts)]
    materialiser.apply(history.points(cuts[-2] + 1, cuts[-1]), len(cuts))
    assert read_tables(history.out) == tables
    # Older than N-1 (its state is gone): skipped, nothing changed.
    assert materialiser.apply(history.points(1, cuts[0]), len(cuts) - 2) == []
    assert read_tables(history.out) == tables


class _Killed(BaseException):
    """A kill: not an Exception, so nothing in the materialiser catches it."""


def test_a_batch_killed_before_or_after_its_state_is_replayed_to_the_oracle(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakemaster.spark.state_store import StateStore

    history = _History(spark, tmp_path, "no_key_duplicates")
    last = len(history.ends) - 1
    middle = last // 2
    history.materialiser(spark).apply(history.points(1, middle), 1)

    # Killed before state 2 is whole, after its tables were written: none of it is taken.
    def killed(*_: Any) -> None:
        raise _Killed

    monkeypatch.setattr(StateStore, "finish", killed)
    with pytest.raises(_Killed):
        history.materialiser(spark).apply(history.points(middle + 1, last), 2)
    monkeypatch.undo()
    assert not (history.out / "state" / "batch_id=2" / "meta.json").exists()  # not a state
    assert json.loads((history.out / "position.json").read_text())["batch_id"] == 1
    # A dataset cut mid-write (no _SUCCESS, a file missing) is not taken for whole.
    table = next((history.out / "tables").iterdir())
    (table / "_SUCCESS").unlink()
    next(table.glob("*.parquet")).unlink()
    # The restarted stream replays batch 2 from state 1.
    history.materialiser(spark).apply(history.points(middle + 1, last), 2)
    history.oracle.assert_matches(read_tables(history.out), after=last)
    tables = read_tables(history.out)

    # Killed after state 2 is whole, before the position names it: the replay gives the same.
    original = Materialiser._write_json

    def position_killed(self: Any, target: str, value: Any) -> None:
        if target.endswith("position.json"):
            raise _Killed
        original(self, target, value)

    monkeypatch.setattr(Materialiser, "_write_json", position_killed)
    with pytest.raises(_Killed):
        history.materialiser(spark).apply(history.points(middle + 1, last), 2)
    monkeypatch.undo()
    assert json.loads((history.out / "position.json").read_text())["batch_id"] == 2
    history.materialiser(spark).apply(history.points(middle + 1, last), 2)
    assert read_tables(history.out) == tables
