"""The streaming source against the fake master (must-show 1 and 4, streaming half, first
steps): a scenario served by fakemaster, consumed by a Spark streaming query (availableNow,
small batches through admission control) into the materialiser, ends equal to the oracle; the
query restarted on its checkpoint after more transactions picks up exactly the rest."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakemaster.config.server_config import ServerConfig
from fakemaster.faults import Fault, FaultKind, Point, PointKind, Where
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from scenarios import Oracle
from scenarios.compiler import to_store
from scenarios.history import Rotate, Scenario, SetSettings, Settings
from scenarios.library import LIBRARY, build
from scenarios.serving import scenario_variables
from scenarios.sql import create_table_sql
from scenarios.strategies.history import scenarios
from scenarios.strategies.history import settings as settings_strategy
from tests.budget import examples
from tests.fakemaster.spark.test_batch_scenarios import catalogue_of
from tests.support.spark_tables import read_tables
from tests.support.spark_versions import admission_control


def _run(
    spark: Any, master: Any, out: Path, checkpoint: Path, max_rows: int, port: int | None = None
) -> int:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    materialiser = Materialiser(spark, str(out))
    batches: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        batches.append(batch_id)
        materialiser.apply(frame, batch_id)

    stream = (
        spark.readStream.format(FORMAT_NAME)
        .option("host", master.host)
        .option("port", str(port or master.port))
        .option("maxRowsPerBatch", str(max_rows))
        .load()
    )
    query = (
        stream.writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None
    return len(batches)


@pytest.mark.parametrize("name", ["multi_domain", "rotation_storm"])
def test_streamed_scenario_materialises_to_its_oracle(
    spark: Any, tmp_path: Path, name: str
) -> None:
    scenario = build(name)
    assert not any(scenario.initial.rows.values())
    with BackgroundFakeMaster(ServerConfig(), to_store(scenario)) as master:
        batches = _run(spark, master, tmp_path / "out", tmp_path / "checkpoint", max_rows=7)
        Oracle(scenario).assert_matches(read_tables(tmp_path / "out"))
        if admission_control():
            assert batches > 1, batches  # admission control cut the stream into several batches
        else:  # 4.0/4.1: maxRowsPerBatch ignored, availableNow reads to the end in one batch
            assert batches == 1, batches
        # Restarted on its checkpoint with nothing new: no batch, same tables.
        assert _run(spark, master, tmp_path / "out", tmp_path / "checkpoint", max_rows=7) == 0
        Oracle(scenario).assert_matches(read_tables(tmp_path / "out"))


def test_a_query_with_the_default_trigger_reads_to_the_end_and_waits(
    spark: Any, tmp_path: Path
) -> None:
    """Without availableNow (a micro-batch per trigger, as ``pipeline stream`` without
    ``--available-now``): ``processAllAvailable`` returns once the binlog's end is read, in
    batches of ``maxRowsPerBatch`` rows with admission control (4.2+), in one batch on 4.0/4.1
    (``latestOffset()`` reads to the end); later triggers find nothing new."""
    from fakemaster.spark import FORMAT_NAME, Materialiser

    scenario = build("multi_domain")
    materialiser = Materialiser(spark, str(tmp_path / "out"))
    batches: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        batches.append(batch_id)
        materialiser.apply(frame, batch_id)

    with BackgroundFakeMaster(ServerConfig(), to_store(scenario)) as master:
        query = (
            spark.readStream.format(FORMAT_NAME)
            .option("host", master.host)
            .option("port", str(master.port))
            .option("maxRowsPerBatch", "7")
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .start()
        )
        try:
            query.processAllAvailable()
            seen = list(batches)
            query.processAllAvailable()
            assert batches == seen  # nothing new: no batch
            assert query.exception() is None
        finally:
            query.stop()
    Oracle(scenario).assert_matches(read_tables(tmp_path / "out"))
    assert seen == list(range(len(seen)))
    assert (len(seen) > 1) is admission_control(), seen


def _store_until(scenario: Scenario, steps: int) -> MemoryBinlogStore:
    """The scenario's binlog after its first ``steps`` steps (``to_store`` of a prefix)."""
    prefix = Scenario(scenario.settings)
    prefix.tables = scenario.tables
    prefix.initial = scenario.initial
    prefix.gtid_state = scenario.gtid_state
    prefix.steps = scenario.steps[:steps]
    prefix.transactions = [s for s in prefix.steps if not isinstance(s, Rotate)]
    return to_store(prefix)


def test_restart_on_the_checkpoint_with_a_replayed_batch_and_a_cut_connection(
    spark: Any, tmp_path: Path
) -> None:
    """More transactions arrive while the query is down; its last batch is replayed (its
    commit record deleted, as after a crash between the sink's write and Spark's commit); the
    connection is cut mid-stream by a fault proxy: the tables still equal the oracle."""
    scenario = build("rotation_storm")
    half = len(scenario.steps) // 2
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    store = to_store(scenario)
    with BackgroundFakeMaster(ServerConfig(), _store_until(scenario, half)) as master:
        # One batch on 4.0/4.1 (no admission control: maxRowsPerBatch ignored).
        assert (_run(spark, master, out, checkpoint, max_rows=5) > 1) is admission_control()
    commits = sorted(
        (p for p in (checkpoint / "commits").iterdir() if p.name.isdigit()),
        key=lambda p: int(p.name),
    )
    commits[-1].unlink()  # the last batch is replayed on restart
    crc = commits[-1].with_name(f".{commits[-1].name}.crc")
    if crc.exists():
        crc.unlink()
    plan = [Fault(FaultKind.CUT, Point(PointKind.EVENT, 60, Where.INSIDE, 25))]
    with (
        BackgroundFakeMaster(ServerConfig(), store) as master,
        BackgroundFaultProxy((master.host, master.port), plan) as proxy,
    ):
        if admission_control():
            assert _run(spark, master, out, checkpoint, max_rows=5, port=proxy.port) > 1
        else:
            # 4.0/4.1: the reader has no SupportsTriggerAvailableNow, so Spark's availableNow
            # fallback runs only the replayed batch and ends; the next run reads the rest.
            assert _run(spark, master, out, checkpoint, max_rows=5, port=proxy.port) == 1
            assert _run(spark, master, out, checkpoint, max_rows=5, port=proxy.port) == 1
        assert sum(len(engine.applied) for engine in proxy.engines) == 1  # the cut happened
    Oracle(scenario).assert_matches(read_tables(out))


def catalogue_with_create(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """``catalogue_of`` (the tables as the history leaves them), and for each table there at
    its start its ``CREATE TABLE`` statement (``create``): what the materialiser applies the
    DDL of the binlog to when no TABLE_MAP follows it."""
    out = catalogue_of(scenario)
    for name, table in scenario.initial_tables.items():
        out.setdefault(name, {})["create"] = create_table_sql(table)
    return out


def served_variables(scenario: Scenario) -> dict[str, str]:
    """The server variables to serve the scenario with: its settings, but those the history
    changes midway are left out (the server then shows the binlog's own; the end's would
    contradict the binlog's first TABLE_MAP)."""
    variables = scenario_variables(scenario.settings)
    for step in scenario.steps:
        if isinstance(step, SetSettings):
            for name, _ in step.changes:
                variables.pop(name, None)
    return variables


def _full_metadata(value: Settings) -> Settings:
    return dataclasses.replace(value, binlog_row_metadata="FULL")


# Row changes under any settings, changed midway too; or row changes and DDL (CREATE, ALTER
# ADD/DROP/MODIFY, DROP, TRUNCATE, RENAME) with column names in the binlog (FULL metadata, not
# changed midway): a TABLE_MAP without names (MINIMAL, NO_LOG) is named from the catalogue,
# which describes one shape of a table, not each shape a DDL gives it.
HISTORIES = st.one_of(
    scenarios(settings_strategy=settings_strategy(), ddl=False, setting_changes_too=True),
    scenarios(
        settings_strategy=settings_strategy().map(_full_metadata),
        ddl=True,
        setting_changes_too=False,
    ),
)


@settings(
    max_examples=examples(0.05),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(scenario=HISTORIES)
def test_generated_histories_streamed_from_the_fake_master(spark: Any, scenario: Scenario) -> None:
    """Must-show 1 without faults (tests/fakemaster/spark/test_stream_property.py adds them): a generated
    history (any settings: checksum or NONE, metadata NO_LOG..FULL, row images, compression,
    rotations, domains; DDL under FULL metadata), its initial rows as a snapshot batch,
    streamed in small batches, equals the oracle."""
    _stream_to_oracle(spark, scenario)


def test_checksumless_rotations_resumed_by_file_and_position(spark: Any) -> None:
    """binlog_checksum NONE with rotations: batches of 3 rows make the source resume by
    file/position inside later files (positions > 4), past their FORMAT_DESCRIPTION (whose
    stale CRC the client ignores when checksums are off)."""
    scenario = build("rotation_storm")
    # The history starts with it (its settings before, during and after every step).
    changed = dataclasses.replace(scenario.initial_settings, binlog_checksum=False)
    scenario.settings = scenario.initial_settings = scenario.configured_settings = changed
    assert not scenario.settings.binlog_checksum
    _stream_to_oracle(spark, scenario)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_every_built_in_scenario_streamed_to_its_oracle(spark: Any, name: str) -> None:
    """Must-show 4, streaming half: each built-in scenario (its settings as the fake master's
    variables, its initial rows as a snapshot batch) streamed by file/position ends equal to
    its oracle."""
    _stream_to_oracle(spark, build(name), max_rows=500)


def _stream_to_oracle(
    spark: Any, scenario: Scenario, max_rows: int = 3, out: Path | None = None
) -> None:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    catalogue = catalogue_with_create(scenario)
    with tempfile.TemporaryDirectory() as tmp:
        out = out or Path(tmp) / "out"
        materialiser = Materialiser(spark, str(out), catalogue)
        if any(scenario.initial.rows.values()):
            Oracle(scenario).export(Path(tmp) / "snapshot", after=0)
            snapshot = (
                spark.read.format(FORMAT_NAME)
                .option("snapshot", str(Path(tmp) / "snapshot"))
                .option("catalog", json.dumps(catalogue))
                .load()
            )
            materialiser.apply(snapshot, -1)
        config = ServerConfig(variables=served_variables(scenario))
        with BackgroundFakeMaster(config, to_store(scenario)) as master:
            query = (
                spark.readStream.format(FORMAT_NAME)
                .option("host", master.host)
                .option("port", str(master.port))
                .option("catalog", json.dumps(catalogue))
                .option("maxRowsPerBatch", str(max_rows))
                .load()
                .writeStream.foreachBatch(lambda frame, n: materialiser.apply(frame, n))
                .option("checkpointLocation", str(Path(tmp) / "checkpoint"))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination(300)
            assert query.exception() is None
        Oracle(scenario).assert_matches(read_tables(out))


def test_ddl_with_no_later_row_event_streamed_to_its_oracle(spark: Any) -> None:
    """The last word on a table's shape is a DDL statement no TABLE_MAP follows: an ALTER
    (columns added with a default the existing rows take, dropped, re-typed, moved) of a table
    from before the binlog (its shape from the catalogue's ``create``) and of one the binlog
    creates, a table created and never written, one renamed: the tables still equal the
    oracle, with the DDL's columns."""
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE d.old (id INT PRIMARY KEY, a VARCHAR(10), n INT)",
        rows=[{"id": 1, "a": "x", "n": 1}],
    )
    scenario.insert("d.old", {"id": 2, "a": "y", "n": 2})
    scenario.ddl("CREATE TABLE d.new (k INT PRIMARY KEY, v TEXT)")
    scenario.insert("d.new", {"k": 1, "v": "one"})
    scenario.alter_table("d.old", "ADD COLUMN b INT NOT NULL DEFAULT 7 AFTER id", "DROP COLUMN n")
    scenario.alter_table("d.old", "MODIFY COLUMN a VARCHAR(20) NULL FIRST")
    scenario.alter_table("d.new", "ADD COLUMN w DECIMAL(6,2) DEFAULT 1.50 FIRST")
    scenario.ddl("CREATE TABLE d.empty (k BIGINT UNSIGNED PRIMARY KEY, s SET('a','b'))")
    scenario.rename_table("d.new", "d.renamed")
    with tempfile.TemporaryDirectory() as tmp:
        _stream_to_oracle(spark, scenario, out=Path(tmp) / "out")
        import pyarrow.parquet as pq

        schemas = {
            name: [
                (f.name, str(f.type)) for f in pq.read_table(Path(tmp) / "out/tables" / name).schema
            ]
            for name in ("d.old", "d.renamed", "d.empty")
        }
    assert schemas == {
        "d.old": [("a", "string"), ("id", "int32"), ("b", "int32")],
        "d.renamed": [("w", "decimal128(6, 2)"), ("k", "int32"), ("v", "string")],
        "d.empty": [("k", "decimal128(20, 0)"), ("s", "string")],
    }


def test_keyless_rows_are_counted_by_value_not_by_text(spark: Any) -> None:
    """Found by test_stream_property: a keyless table's snapshot row has the server's text of
    a DOUBLE (``4.458988370540405e16``), the binlog's image another text of the same value, and
    of a FLOAT 6 significant digits (``5.41365e16``), the binlog the whole value; the
    update and delete of that row must cancel it. And an image from before an ALTER ADD lacks
    the new column the later images carry (its default): still the same row."""
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE db.t0 (c0 DOUBLE NOT NULL, c1 DATETIME(6) NOT NULL, f FLOAT)",
        rows=[
            {"c0": -4.183886726639357e16, "c1": "1542-12-12 17:40:28.000357", "f": None},
            {
                "c0": 4.458988370540405e16,
                "c1": "6209-03-28 22:34:22.000343",
                "f": 5.41364564483113e16,
            },
        ],
    )
    where = {
        "c0": 4.458988370540405e16,
        "c1": "6209-03-28 22:34:22.000343",
        "f": 5.41364564483113e16,
    }
    with scenario.transaction() as tx:
        tx.update("db.t0", where, {"c0": 3.4028234663852886e38})
        tx.delete("db.t0", {**where, "c0": 3.4028234663852886e38})
    scenario.create_table("CREATE TABLE db.t1 (a INT NOT NULL, b VARCHAR(5))")
    scenario.insert("db.t1", {"a": 1, "b": "x"})
    scenario.insert("db.t1", {"a": 2, "b": "y"})
    scenario.alter_table("db.t1", "ADD COLUMN n INT NOT NULL DEFAULT 5 FIRST")
    scenario.delete("db.t1", {"n": 5, "a": 1, "b": "x"})
    _stream_to_oracle(spark, scenario)


def test_a_dump_ended_early_in_a_batch_read_loses_nothing(spark: Any, tmp_path: Path) -> None:
    """The first batch's read (the third dump session on 4.2+, after the availableNow pin and
    the first latestOffset scan; the second on 4.0/4.1): an EOF before its second event group
    ends that dump. The batch must not be committed short: restarted without faults, the query
    ends equal to the oracle."""
    from pyspark.errors import StreamingQueryException

    scenario = build("rotation_storm")
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    # 4.2+: the availableNow pin's scan, the first latestOffset's scan, then the read; 4.0/4.1
    # (Spark's availableNow fallback): one latestOffset scan, then the read.
    read = 2 if admission_control() else 1
    plan = [Fault(FaultKind.EOF, Point(PointKind.TRANSACTION, 1, Where.BEFORE), read)]
    with (
        BackgroundFakeMaster(ServerConfig(), to_store(scenario)) as master,
        BackgroundFaultProxy((master.host, master.port), plan) as proxy,
    ):
        try:
            _run(spark, master, out, checkpoint, max_rows=1000, port=proxy.port)
        except (AssertionError, StreamingQueryException):
            pass  # a failed query is a right answer too: the batch is read again on restart
        assert [len(engine.applied) for engine in proxy.engines][read] == 1  # the read's session
    with BackgroundFakeMaster(ServerConfig(), to_store(scenario)) as master:
        _run(spark, master, out, checkpoint, max_rows=1000)
    Oracle(scenario).assert_matches(read_tables(out))
