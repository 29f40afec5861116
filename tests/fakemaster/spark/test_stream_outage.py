"""The streaming source through a primary's outage (issue #22, must-show 4, in process): the
primary goes away after the first batch for longer than the old retry window (3 quick
retries), refusing and dropping connections, then comes back on the same port: the stream
continues and the tables equal the scenario's oracle. A primary that comes back with the
stream's position purged ends the query with the replica's error (ERR 1236), in one line.

No clock in the verdicts: the outage lasts a counted number of connection attempts (the dead
primary's listener counts them), not a time."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli.pipeline_stop import error_line
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Oracle
from scenarios.compiler import to_store
from scenarios.library import build
from tests.support.spark_tables import read_tables
from tests.support.spark_versions import admission_control

_OLD_WINDOW = 3  # ReconnectPolicy(max_retries=3): the attempts the source made before #22
_ATTEMPTS_AWAY = 2 * _OLD_WINDOW + 2


class _DeadPrimary:
    """Listens on the primary's port and drops every connection (a primary half up, or a
    load balancer with no backend), counting them; when ``attempts`` were dropped it closes
    and ``then`` brings a primary back on the port."""

    def __init__(self, port: int, attempts: int, then: Any) -> None:
        self.sock = socket.create_server(("127.0.0.1", port), reuse_port=False)
        self.attempts = attempts
        self.dropped = 0
        self.then = then
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with self.sock:
            while self.dropped < self.attempts:
                connection, _ = self.sock.accept()
                connection.close()
                self.dropped += 1
        self.then()


def _query(spark: Any, port: int, out: Path, checkpoint: Path, sink: Any) -> Any:
    from fakemaster.spark import FORMAT_NAME

    return (
        spark.readStream.format(FORMAT_NAME)
        .option("host", "127.0.0.1")
        .option("port", str(port))
        .option("maxRowsPerBatch", "20")
        .option("connectRetry", "0.05")
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )


def _outage(spark: Any, tmp_path: Path, comeback: Any) -> tuple[Any, list[int], _DeadPrimary]:
    """Streams ``multi_domain`` with the primary away after batch 0 until ``comeback(port,
    store)`` brings one back; returns the ended query, the batches and the dead primary."""
    from fakemaster.spark import Materialiser

    scenario = build("multi_domain")
    store = to_store(scenario)
    first = BackgroundFakeMaster(ServerConfig(), store).start()
    port = first.port
    materialiser = Materialiser(spark, str(tmp_path / "out"))
    batches: list[int] = []
    masters = [first]
    dead: list[_DeadPrimary] = []

    def sink(frame: Any, batch_id: int) -> None:
        materialiser.apply(frame, batch_id)
        batches.append(batch_id)
        if batch_id == 0:
            first.stop()
            dead.append(
                _DeadPrimary(port, _ATTEMPTS_AWAY, lambda: masters.append(comeback(port, store)))
            )

    try:
        query = _query(spark, port, tmp_path / "out", tmp_path / "checkpoint", sink)
        try:
            query.awaitTermination(300)
        except Exception:  # the query's failure: the test reads query.exception()
            pass
    finally:
        for master in masters:
            master.stop()
    return query, batches, dead[0]


def test_stream_rides_out_a_primary_outage(spark: Any, tmp_path: Path) -> None:
    if not admission_control():
        pytest.skip("needs admission control (Spark 4.2+): one batch otherwise, no outage")

    def comeback(port: int, store: Any) -> BackgroundFakeMaster:
        return BackgroundFakeMaster(ServerConfig(port=port), store).start()

    query, batches, dead = _outage(spark, tmp_path, comeback)
    assert query.exception() is None
    assert dead.dropped == _ATTEMPTS_AWAY > _OLD_WINDOW + 1
    assert len(batches) > 1, batches
    Oracle(build("multi_domain")).assert_matches(read_tables(tmp_path / "out"))


def test_primary_back_with_the_position_purged_ends_with_1236(spark: Any, tmp_path: Path) -> None:
    if not admission_control():
        pytest.skip("needs admission control (Spark 4.2+): one batch otherwise, no outage")

    def comeback(port: int, store: Any) -> BackgroundFakeMaster:
        store.rotate()  # a restarted primary starts a new file; the old one is then purged
        master = BackgroundFakeMaster(ServerConfig(port=port), store).start()
        master.purge_to(store.file_names()[-1])
        return master

    query, batches, _ = _outage(spark, tmp_path, comeback)
    assert batches == [0]
    failure = query.exception()
    assert failure is not None
    line = error_line(failure)
    assert "\n" not in line
    assert "server error 1236" in line, line


@pytest.mark.parametrize("option", [{"connectretry": "0"}, {"retrycount": "-3"}])
def test_retry_options_below_one_are_refused(option: dict[str, str]) -> None:
    from fakemaster.spark.stream import BinlogStreamReader

    with pytest.raises(ValueError, match="must be above 0"):
        BinlogStreamReader({"host": "127.0.0.1", "port": "1", **option})
