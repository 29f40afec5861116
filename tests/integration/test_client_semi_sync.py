"""The client as a semi-sync replica: it asks for semi-sync when the primary has it on, and
acknowledges each transaction the primary commits while it is connected (the fake master's
wait_for_ack, a real MariaDB 10.11 primary's Rpl_semi_sync_master_yes_tx); with its ACKs
dropped on the way the primary gives up waiting and the client still gets everything."""

from __future__ import annotations

import time
from typing import Any

import pytest

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.position import Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind
from tests.integration.test_client_real_primary import (
    PASSWORD,
    TABLES,
    USER,
    KeyedTables,
    primary_table,
    workload,
)
from tests.peers.fixtures import MariaDBFactory
from tests.support.live_stream import EXTRA, SCENARIO, Background, stream_live_commits


@pytest.mark.parametrize("drop", [False, True])
def test_client_acknowledges_live_transactions_as_a_semi_sync_replica(
    fake_master_factory: Any, drop: bool
) -> None:
    faults = [Fault(FaultKind.DROP_ACKS, Point(PointKind.BYTE, 0), session=0)] if drop else []
    # Dropped ACKs: every wait times out, whatever its length (300 ms keeps the test short).
    # Delivered ones: each wait must end with the ACK, so the timeout is only a bound on a hang
    # (300 ms made the verdict depend on the client's thread being scheduled in time).
    master = fake_master_factory(
        scenario=SCENARIO,
        semi_sync=True,
        semi_sync_timeout_ms=300 if drop else 60_000,
        faults=FaultPlan(tuple(faults)),
    )
    config = ClientConfig(user=master.user, password=master.password, server_id=77, semi_sync=True)
    client, acknowledged = stream_live_commits(master, config, wait_for_acks=True)
    assert client.ready is not None and client.ready.semi_sync
    if drop:
        # The first commit waits out the timeout, then the primary is asynchronous.
        assert acknowledged[0] is False and client.acks_sent >= 1
    else:
        assert acknowledged == [True] * EXTRA and client.acks_sent == EXTRA


def semi_sync_status(primary: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in primary.execute("SHOW STATUS LIKE 'Rpl_semi_sync_master_%'")}


@pytest.mark.mariadb
def test_client_acknowledges_a_real_primarys_commits(mariadb_factory: MariaDBFactory) -> None:
    primary = mariadb_factory(
        {
            "binlog_format": "ROW",
            "binlog_row_metadata": "FULL",
            "rpl_semi_sync_master_enabled": "ON",
            "rpl_semi_sync_master_timeout": 200,
        },
        server_id=1,
    )
    primary.create_replication_user(USER, PASSWORD)
    from tests.integration.test_client_real_primary import SCHEMA

    primary.execute(SCHEMA)
    config = ClientConfig(user=USER, password=PASSWORD, server_id=42, semi_sync=True)
    tables = KeyedTables()
    start = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    client = BlockingReplica(primary.host, primary.port, config, catalogue=TABLES)
    consumer = Background(client, tables)
    consumer.wait_for(start)
    # Wait until the primary counts the client as a semi-sync replica and is semi-sync again
    # (the commits before the client came timed out and switched it off).
    # (Both: the count of clients and the status change separately, the status went back ON
    # here with no new commit; a commit while it is still OFF is not waited for: no_tx.)
    deadline = time.monotonic() + 60  # a bound on a hang only
    while (status := semi_sync_status(primary))["Rpl_semi_sync_master_clients"] != "1" or (
        status["Rpl_semi_sync_master_status"] != "ON"
    ):
        assert time.monotonic() < deadline, status
        time.sleep(0.01)
    primary.execute("SET GLOBAL rpl_semi_sync_master_timeout = 60000")
    before = semi_sync_status(primary)
    workload(primary, 1, 4)
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    client.until = lambda p: p.covers(goal)
    consumer.join()
    after = semi_sync_status(primary)
    # Every commit of the workload (4 transactions, 1 update, 1 delete, the final update)
    # waited for and got the client's ACK.
    assert after["Rpl_semi_sync_master_no_tx"] == before["Rpl_semi_sync_master_no_tx"]
    yes = int(after["Rpl_semi_sync_master_yes_tx"]) - int(before["Rpl_semi_sync_master_yes_tx"])
    assert yes == 7 and client.acks_sent >= 7
    for name in TABLES:
        assert tables.table(name) == primary_table(primary, name), name
