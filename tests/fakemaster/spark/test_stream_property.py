"""Must-show 1 of the Spark pipeline as one property: a generated history (scenarios'
strategies), served by fakemaster through a fault proxy under a generated fault plan
(fakemaster.faults.strategies, drawn separately so that each shrinks on its own), consumed by a
Spark streaming query (availableNow, drawn ``maxRowsPerBatch``) into the materialiser up to a
drawn split point of the history; then the last committed batch loses its commit record (as
after a crash between the sink's write and Spark's commit: it is replayed), the rest of the
history is released on the same server, and the query restarted on its checkpoint runs to the
end. The materialised tables equal the oracle: nothing lost, nothing applied twice.

Fault kinds drawn: the ones a streaming source must survive by reconnecting and resuming from
the last whole event group it handed over:

* ``cut``: the connection closed with FIN or RST (a disconnect, a reset) at a drawn event,
  transaction (at, inside or after an event group, or bytes into one of its events) or byte;
* ``error`` with the ``shutdown`` preset (ER_SERVER_SHUTDOWN, then FIN or RST): what a proxy or
  a server that announces its shutdown sends before closing;
* ``eof``: the dump ends early (in a non-blocking dump an EOF packet is the end of the binlog):
  a batch read must go on to the batch's end; a planning scan takes it as the end (a shorter
  batch, or an ``availableNow`` run that ends early: not a loss), so a last run, straight to
  the server without faults, catches up: what it cannot restore (a batch committed short,
  a batch applied twice) fails the comparison.

Left out: ``time`` points (what they hit depends on the machine's speed: a failing example
would not replay), ``error`` with an ERR 1236 preset (fatal for a replica, as for MariaDB's: the
query stops), stalls, black holes and slow links (no reconnect: a timing
matter, not one of resuming), and the faults that change bytes (``corrupt_crc``, ``truncate``,
``duplicate``: a checksum matter for the client's own tests, undetectable without checksums).
The dump sessions counted by the proxy are every connection of the source: the planning scans
(latestOffset, the availableNow pin) and the batch reads, before and after the restart.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from fakemaster.config.server_config import ServerConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, PointKind
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.faults.strategies import faults
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Oracle
from scenarios.history import Ddl, Scenario, Transaction, XaEnd
from scenarios.live import ScenarioStore
from tests.budget import examples
from tests.fakemaster.spark.test_stream import HISTORIES, catalogue_with_create, served_variables
from tests.support.spark_tables import read_tables

__all__: list[str] = []

KINDS = (FaultKind.CUT, FaultKind.ERROR, FaultKind.EOF)


def _reconnectable(fault: Fault) -> Fault:
    """An ``error`` fault as ER_SERVER_SHUTDOWN closed with FIN or RST (not ERR 1236, fatal)."""
    if fault.kind is not FaultKind.ERROR:
        return fault
    close = fault.params.get("close")
    return Fault(
        fault.kind,
        fault.at,
        fault.session,
        {"preset": "shutdown", "close": close if close in ("fin", "rst") else "rst"},
    )


# Up to 3 faults on the first 6 connections (scans and reads), at points inside the short
# histories drawn (a point past the end of a session's stream never happens: a first deep
# run with 8 sessions and points up to event 30 / byte 3000 applied a fault in 1 example of 6).
PLANS = st.lists(
    faults(kinds=KINDS, sessions=6, max_event=16, max_transaction=4, max_byte=1200)
    .filter(lambda fault: fault.at.kind is not PointKind.TIME)
    .map(_reconnectable),
    max_size=3,
).map(lambda items: FaultPlan(tuple(items)))


def _points(scenario: Scenario) -> int:
    """The points ScenarioStore releases one by one (transactions, DDL, XA ends)."""
    return sum(1 for step in scenario.steps if isinstance(step, Transaction | Ddl | XaEnd))


def _run(
    spark: Any, materialiser: Any, port: int, options: dict[str, str], checkpoint: Path
) -> int:
    from fakemaster.spark import FORMAT_NAME

    batches: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        batches.append(batch_id)
        materialiser.apply(frame, batch_id)

    reader = spark.readStream.format(FORMAT_NAME).option("host", "127.0.0.1")
    for key, value in {**options, "port": str(port)}.items():
        reader = reader.option(key, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    error = query.exception()
    assert error is None, f"the query failed: {error}"
    return len(batches)


def _replay_last_batch(checkpoint: Path) -> int | None:
    """Remove the commit record of the last committed batch (it is run again on restart);
    its id, None when no batch was committed."""
    commits = checkpoint / "commits"
    done = sorted(
        (p for p in commits.iterdir() if p.name.isdigit()) if commits.exists() else [],
        key=lambda p: int(p.name),
    )
    if not done:
        return None
    done[-1].unlink()
    crc = done[-1].with_name(f".{done[-1].name}.crc")
    if crc.exists():
        crc.unlink()
    return int(done[-1].name)


@settings(
    max_examples=examples(0.05),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    scenario=HISTORIES,
    plan=PLANS,
    max_rows=st.integers(1, 6),
    data=st.data(),
)
def test_streamed_history_under_faults_and_a_restart_equals_the_oracle(
    spark: Any, scenario: Scenario, plan: FaultPlan, max_rows: int, data: st.DataObject
) -> None:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    split = data.draw(st.integers(0, _points(scenario)), label="points released before")
    note(f"fault plan: {plan.to_json()}")
    catalogue = catalogue_with_create(scenario)
    options = {"catalog": json.dumps(catalogue), "maxRowsPerBatch": str(max_rows)}
    with tempfile.TemporaryDirectory() as tmp:
        out, checkpoint = Path(tmp) / "out", Path(tmp) / "checkpoint"
        materialiser = Materialiser(spark, str(out), catalogue)
        if any(scenario.initial.rows.values()):
            Oracle(scenario).export(Path(tmp) / "snapshot", after=0)
            snapshot = (
                spark.read.format(FORMAT_NAME)
                .option("snapshot", str(Path(tmp) / "snapshot"))
                .option("catalog", options["catalog"])
                .load()
            )
            materialiser.apply(snapshot, -1)
        config = ServerConfig(variables=served_variables(scenario))
        store = ScenarioStore(scenario, released=split)
        with (
            BackgroundFakeMaster(config, store) as master,
            BackgroundFaultProxy((master.host, master.port), plan) as proxy,
        ):
            first = _run(spark, materialiser, proxy.port, options, checkpoint)
            replayed = _replay_last_batch(checkpoint)
            master.release_all()
            second = _run(spark, materialiser, proxy.port, options, checkpoint)
            third = _run(spark, materialiser, master.port, options, checkpoint)
            applied = [item for engine in proxy.engines for item in engine.applied]
            note(
                f"batches: {first}, then {second}, then {third} (no faults);"
                f" replayed: {replayed}, faults applied: {applied}"
            )
            event(f"faults applied: {min(len(applied), 2)}{'+' if len(applied) > 2 else ''}")
            event(f"replayed a batch: {replayed is not None}")
            assert proxy.errors == []
        assert master.errors == []
        Oracle(scenario).assert_matches(read_tables(out))
