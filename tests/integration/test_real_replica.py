"""A real MariaDB 10.11 replica follows a stream served by the fake master.

The stream (``tests/support/streams.py``) is built with the encoder into a memory store:
CREATE TABLE statements, then transactions of ROWS events with known values across many column
types plus a statement-based counter increment. The replica, started by the test, replicates it
in GTID mode and in file/pos mode with heartbeats and semi-sync on, across live appends,
rotations, a primary restart (STOP event + new file), STOP SLAVE / START SLAVE with events
appended meanwhile and a restart of the replica itself. Its tables must then hold exactly the
rows served: the ``items`` table (primary key) makes a group applied twice stop the replica with
a duplicate-key error, the counter statement makes it show in ``counter.n``, and a lost group
leaves rows missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import DumpRequest
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.store.semi_sync import semi_sync_master
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.support.streams import (
    COUNTER,
    DATABASE,
    TABLES,
    TypedStream,
    gtid_set,
    rendered_rows,
    replica_problem,
    replica_table,
    wait_caught_up,
    wait_for_replica,
)

USER, PASSWORD = "repl", "pw"
MASTER_SERVER_ID = 100
HEARTBEAT_PERIOD = 0.1


class CountingDumps:
    """The fake master's dump factory, counting the heartbeats its dumps sent."""

    def __init__(self, store: MemoryBinlogStore, config: ServerConfig) -> None:
        self.store = store
        self.config = config
        self.heartbeats = 0
        self.requests: list[DumpRequest] = []

    def __call__(self, request: DumpRequest) -> DumpStream:
        self.requests.append(request)
        counter = self

        class Dump(DumpStream):
            def heartbeat_packet(self) -> bytes:
                counter.heartbeats += 1
                return super().heartbeat_packet()

        return Dump(self.store, request, self.config)


@pytest.fixture
def served() -> Iterator[tuple[TypedStream, BackgroundFakeMaster, CountingDumps]]:
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID)
    config = ServerConfig(
        server_id=MASTER_SERVER_ID,
        user=USER,
        password=PASSWORD,
        semi_sync_enabled=True,
        semi_sync_timeout_ms=10_000,
    )
    dumps = CountingDumps(store, config)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(3)
    with BackgroundFakeMaster(config, store, dump_factory=dumps) as master:
        yield stream, master, dumps
        assert master.errors == []


def check_tables(replica: MariaDBServer, stream: TypedStream) -> None:
    for table in TABLES:
        got = replica_table(replica, DATABASE, table.name)
        assert got.column_names == table.column_names
        expected = rendered_rows(stream.expected_rows(table.name), got.columns)
        assert got.rows == expected, table.name
    counter = replica.execute(f"SELECT n, last_batch FROM {DATABASE}.{COUNTER.name}")
    assert counter == [(stream.batches, stream.batches)]


def caught_up(replica: MariaDBServer, stream: TypedStream, master: BackgroundFakeMaster) -> None:
    wait_caught_up(replica, stream.gtid_pos(), master=master)
    status = replica.slave_status()
    # The replica's idea of where it is in the primary's binlog: the end of the binlog (the
    # last group, or the BINLOG_CHECKPOINT a new file gets after its first group).
    end = stream.store.master_status()
    assert stream.last.file_name == end[0] and stream.last.end <= end[1]
    executed = (status["Relay_Master_Log_File"], status["Exec_Master_Log_Pos"])
    assert executed == end, replica_problem(replica, master)


def append_acked_groups(
    replica: MariaDBServer, stream: TypedStream, semi: Any, master: BackgroundFakeMaster
) -> list[bool]:
    """Two transaction groups, a rotation and one more group, appended live; waits until the
    semi-sync replica applied them and ACKed the last one. The ACK verdicts of the first two."""
    acks: list[bool] = []
    for group in stream.add_batches(2):
        semi.wait_for_ack(group.file_name, group.end, acks.append)
    stream.rotate()
    stream.add_batch()
    caught_up(replica, stream, master)
    last = stream.last
    wait_for_replica(
        replica,
        lambda: len(acks) == 2 and semi.is_acked(last.file_name, last.end),
        "semi-sync ACKs",
        master=master,
    )
    return acks


def resume_point(stream: TypedStream, mode: str) -> tuple[str, object]:
    """Where a caught-up replica asks to resume: its GTID position, or the end of the binlog."""
    if mode == "gtid":
        return ("gtid", ",".join(sorted(gtid_set(stream.gtid_pos()))))
    return stream.store.master_status()


def asked(request: DumpRequest) -> tuple[str, object]:
    if request.connect_state is not None:
        return ("gtid", ",".join(sorted(gtid_set(request.connect_state))))
    return (request.file_name, request.position)


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_a_real_replica_replicates_the_served_stream(
    mode: str,
    served: tuple[TypedStream, BackgroundFakeMaster, CountingDumps],
    mariadb_factory: MariaDBFactory,
) -> None:
    stream, master, dumps = served
    store = stream.store
    # A clock that never moves: the primary never gives up waiting for an ACK (which it would
    # after semi_sync_timeout_ms of a slow replica), so only the replica's ACKs settle waits.
    semi = semi_sync_master(store, dumps.config, clock=lambda: 0.0)
    replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
    position: dict[str, Any] = (
        {"use_gtid": "slave_pos"}
        if mode == "gtid"
        else {"use_gtid": "no", "log_file": "mysql-bin.000001", "log_pos": 4}
    )
    replica.change_master(
        master.host,
        master.port,
        USER,
        PASSWORD,
        heartbeat_period=HEARTBEAT_PERIOD,
        **position,
    )
    replica.execute("START SLAVE")
    caught_up(replica, stream, master)
    check_tables(replica, stream)
    assert dumps.requests[-1].gtid_mode == (mode == "gtid")
    assert replica.status_variable("Rpl_semi_sync_slave_status") == "ON"

    # Idle: the fake master sends heartbeats, the replica counts them.
    received = int(replica.status_variable("Slave_received_heartbeats") or 0)
    wait_for_replica(
        replica,
        lambda: int(replica.status_variable("Slave_received_heartbeats") or 0) >= received + 3,
        "three more heartbeats",
        master=master,
    )
    received = int(replica.status_variable("Slave_received_heartbeats") or 0)
    sent = dumps.heartbeats  # read after the replica's count: heartbeats keep coming
    assert sent >= received > 0

    # Live appends: each group is ACKed by the semi-sync replica before it is reported done.
    acked_before = semi.received_acks
    acks = append_acked_groups(replica, stream, semi, master)
    assert acks == [True, True]
    assert semi.received_acks >= acked_before + 3  # one per group: each was flagged for one

    # STOP SLAVE, events appended meanwhile (across a rotation), START SLAVE.
    resume_points = [resume_point(stream, mode)]
    replica.execute("STOP SLAVE")
    stream.add_batches(2)
    stream.rotate()
    stream.add_batch()
    replica.execute("START SLAVE")
    caught_up(replica, stream, master)
    check_tables(replica, stream)

    # The replica restarts on its datadir (its replication threads start again by themselves)
    # while the primary goes on, restarts too, and goes on.
    resume_points.append(resume_point(stream, mode))
    replica.stop()
    stream.add_batch()
    stream.restart()
    stream.add_batches(2)
    replica.start()
    caught_up(replica, stream, master)
    stream.add_batch()  # and it follows live again
    caught_up(replica, stream, master)
    check_tables(replica, stream)
    assert replica.status_variable("Rpl_semi_sync_slave_status") == "ON"
    assert stream.batches == 13 and len(store.file_names()) == 4
    status = replica.slave_status()
    assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
    assert status["Last_IO_Errno"] == 0 and status["Last_SQL_Errno"] == 0
    # One dump per connection, each asking for what the replica had: it never reconnected on
    # its own, and it resumed exactly where it stopped reading.
    start = ("gtid", "") if mode == "gtid" else ("mysql-bin.000001", 4)
    assert [asked(request) for request in dumps.requests] == [start, *resume_points]
