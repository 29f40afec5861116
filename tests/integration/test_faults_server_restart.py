"""Restart of the primary and failover on the same port: :meth:`FakeMaster.restart
<fakemaster.server.master.FakeMaster.restart>` closes every connection with FIN and serves the new
identity; a real MariaDB 10.11 replica reconnects by itself.

* The same binlog, going on in a new file after STOP, with the same or a new server id: the
  replica goes on, in GTID and in file/pos mode.
* Failover to a new server id whose binlog has the same domain and history but other file
  names and positions: in GTID mode the replica goes on from its GTID position (and records
  the new primary's server id); in file/pos mode it asks for a file the new primary does not
  have and stops with ERR 1236 "Could not find first log file name in binary log index file",
  the text a real primary sends for an unknown file (asserted against a real primary in
  test_faults_server_purge.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.integration.test_faults_server_purge import (
    NO_LOG_FILE,
    PASSWORD,
    PRIMARY_ID,
    USER,
    FakePrimary,
    poll,
    start_replica,
    wait_applied,
)
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.support.streams import (
    COUNTER,
    DATABASE,
    TABLES,
    TypedStream,
    rendered_rows,
    replica_problem,
    replica_table,
)

__all__: list[str] = []

NEW_PRIMARY_ID = 3


@pytest.fixture
def fake() -> Iterator[FakePrimary]:
    store = MemoryBinlogStore(server_id=PRIMARY_ID)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(3)
    config = ServerConfig(server_id=PRIMARY_ID, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        yield FakePrimary(master, stream)
        assert master.errors == []


def check_tables(replica: MariaDBServer, stream: TypedStream) -> None:
    for table in TABLES:
        got = replica_table(replica, DATABASE, table.name)
        assert got.rows == rendered_rows(stream.expected_rows(table.name), got.columns)
    counter = replica.execute(f"SELECT n, last_batch FROM {DATABASE}.{COUNTER.name}")
    assert counter == [(stream.batches, stream.batches)]


@pytest.mark.mariadb
@pytest.mark.parametrize("server_id", [None, NEW_PRIMARY_ID])
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_restart_keeping_the_binlog(
    mode: str, server_id: int | None, fake: FakePrimary, mariadb_factory: MariaDBFactory
) -> None:
    replica = start_replica(mariadb_factory, fake, mode)
    wait_applied(replica, fake)
    assert len(fake.dump_threads()) == 1
    fake.master.restart(server_id=server_id)
    # Thread ids start again at 1 after a restart, as on a real server: the dump is back
    # when the replica reads what is written after the restart, in the new file.
    assert fake.stream.store.file_names() == ["mysql-bin.000001", "mysql-bin.000002"]
    fake.stream.add_batches(2)
    wait_applied(replica, fake)
    check_tables(replica, fake.stream)
    status = replica.slave_status()
    assert status["Slave_IO_Running"] == "Yes", replica_problem(replica)
    assert status["Master_Log_File"] == "mysql-bin.000002"
    assert int(status["Master_Server_Id"]) == (server_id or PRIMARY_ID)


def failover_store(old: MemoryBinlogStore) -> MemoryBinlogStore:
    """The binlog of a promoted replica: same domain, the old primary's history before its
    first file, its own server id and file names (so other positions)."""
    return MemoryBinlogStore(
        server_id=NEW_PRIMARY_ID,
        basename="failover-bin",
        initial_state=old.end_state().gtid_list(),
    )


@pytest.mark.mariadb
def test_failover_in_gtid_mode_goes_on(fake: FakePrimary, mariadb_factory: MariaDBFactory) -> None:
    replica = start_replica(mariadb_factory, fake, "gtid")
    wait_applied(replica, fake)
    store = failover_store(fake.stream.store)
    fake.master.restart(server_id=NEW_PRIMARY_ID, store=store)
    fake.stream.store = store
    fake.stream.add_batches(2)
    wait_applied(replica, fake)
    check_tables(replica, fake.stream)
    status = replica.slave_status()
    assert status["Slave_IO_Running"] == "Yes", replica_problem(replica)
    assert int(status["Master_Server_Id"]) == NEW_PRIMARY_ID
    assert status["Master_Log_File"] == "failover-bin.000001"
    # The new primary's transactions carry its server id.
    assert f"0-{NEW_PRIMARY_ID}-" in str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos"))


@pytest.mark.mariadb
def test_failover_in_file_pos_mode_stops_with_1236(
    fake: FakePrimary, mariadb_factory: MariaDBFactory
) -> None:
    replica = start_replica(mariadb_factory, fake, "file_pos")
    wait_applied(replica, fake)
    store = failover_store(fake.stream.store)
    fake.master.restart(server_id=NEW_PRIMARY_ID, store=store)

    def stopped() -> bool:
        status = replica.slave_status()
        return status["Slave_IO_Running"] == "No" and status["Last_IO_Errno"] == 1236

    poll(stopped, "the replica's IO thread stopped with 1236")
    assert replica.slave_status()["Last_IO_Error"] == NO_LOG_FILE
