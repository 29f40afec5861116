"""The streaming source against the fake master (must-show 1 and 4, streaming half, first
steps): a scenario served by fakemaster, consumed by a Spark streaming query (availableNow,
small batches through admission control) into the materialiser, ends equal to the oracle; the
query restarted on its checkpoint after more transactions picks up exactly the rest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakemaster.config import ServerConfig
from fakemaster.server import BackgroundFakeMaster
from scenarios import Oracle
from scenarios.compiler import to_store
from scenarios.library import build
from tests.spark.tables import read_tables


def _run(spark: Any, master: Any, out: Path, checkpoint: Path, max_rows: int) -> int:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    materialiser = Materialiser(spark, str(out))
    batches: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        batches.append(batch_id)
        materialiser.apply(frame, batch_id)

    stream = (
        spark.readStream.format(FORMAT_NAME)
        .option("host", master.host)
        .option("port", str(master.port))
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
        assert batches > 1, batches  # admission control cut the stream into several batches
        # Restarted on its checkpoint with nothing new: no batch, same tables.
        assert _run(spark, master, tmp_path / "out", tmp_path / "checkpoint", max_rows=7) == 0
        Oracle(scenario).assert_matches(read_tables(tmp_path / "out"))
