"""A real MariaDB 10.11 replica under the fault kinds the other real-replica tests do not reach
(docs/faults.md, "Where each kind is shown"): one replica for the whole module, reset between
cases (STOP SLAVE, RESET SLAVE ALL, its copy of the schema dropped, gtid_slave_pos emptied),
each case a fresh fake master (the schema and four batches of tests/support/streams.py)
behind a fault proxy.

* cuts FIN/RST before, inside and after an event, after a whole transaction and after exactly
  N bytes: the replica reconnects and ends with the served tables (the ``items`` primary key
  and the statement-based counter catch a group applied twice, missing rows a lost one);
* re-slicing at every offset, a bandwidth limit, latency: the same connection, the served
  tables;
* ERR 1236 with each of MariaDB's texts the engine has: the IO thread stops with "Got fatal
  error 1236 from master when reading data from binary log: '<text>'", everything before the
  ERR applied;
* purge of the file the replica's dump reads (its dump held in the first file by a hold, a
  stall the test releases): the purge stops at that file and the replica goes on; forced, the
  dump ends with ERR 1236 "could not find next log" and the replica stops with it;
* a second replica with the same server id (the project's client): the fake master ends the
  real replica's dump with ERR 4052, the replica reconnects, which ends the client's dump (the
  client stops with its typed error), and it goes on replicating.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.protocol import ClientConfig, ServerRefused
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import CHUNK_SIZE
from fakemaster.faults import Fault, FaultKind, Point, PointKind, Where
from fakemaster.faults.plan import ERROR_PRESETS
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent
from tests.peers.mariadb import MariaDBServer
from tests.support.socket_buffers import kernel_socket_buffers
from tests.support.streams import (
    COUNTER,
    DATABASE,
    TABLES,
    TypedStream,
    rendered_rows,
    replica_problem,
    replica_table,
    wait_caught_up,
    wait_for_replica,
)

__all__: list[str] = []

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "repl", "pw"
MASTER_SERVER_ID = 100
# The schema is groups 0-4 (CREATE DATABASE, three CREATE TABLE, the counter's first row);
# batches follow, each GTID, TABLE_MAP/ROWS pairs, a statement, XID.
FIRST_BATCH = 5
TX = PointKind.TRANSACTION
FATAL_1236 = "Got fatal error 1236 from master when reading data from binary log: '{}'"
ER_SLAVE_SAME_ID = 4052


@pytest.fixture(scope="module")
def replica(mariadb_server: MariaDBServer) -> MariaDBServer:
    """The module's one real replica (the existing module-scoped server)."""
    return mariadb_server


def fresh(replica: MariaDBServer) -> None:
    """Forget the previous case: no primary, no schema, no GTID position, no binlog."""
    if replica.slave_status():
        replica.execute(["STOP SLAVE", "RESET SLAVE ALL"])
    replica.execute(
        [
            f"DROP DATABASE IF EXISTS {DATABASE}",
            "RESET MASTER",
            "SET GLOBAL gtid_slave_pos = ''",
        ]
    )


def served_stream() -> TypedStream:
    stream = TypedStream(MemoryBinlogStore(server_id=MASTER_SERVER_ID))
    stream.create_schema()
    stream.add_batches(4)
    return stream


def master_for(stream: TypedStream) -> BackgroundFakeMaster:
    config = ServerConfig(server_id=MASTER_SERVER_ID, user=USER, password=PASSWORD)
    return BackgroundFakeMaster(config, stream.store)


def start(replica: MariaDBServer, host: str, port: int, mode: str) -> None:
    fresh(replica)
    position: dict[str, Any] = (
        {"use_gtid": "slave_pos"}
        if mode == "gtid"
        else {"use_gtid": "no", "log_file": "mysql-bin.000001", "log_pos": 4}
    )
    replica.change_master(host, port, USER, PASSWORD, **position)
    replica.execute("START SLAVE")


def check_tables(replica: MariaDBServer, stream: TypedStream) -> None:
    for table in TABLES:
        got = replica_table(replica, DATABASE, table.name)
        expected = rendered_rows(stream.expected_rows(table.name), got.columns)
        assert got.rows == expected, table.name
    counter = replica.execute(f"SELECT n, last_batch FROM {DATABASE}.{COUNTER.name}")
    assert counter == [(stream.batches, stream.batches)]


def io_stopped(replica: MariaDBServer) -> bool:
    return replica.slave_status().get("Slave_IO_Running") == "No"


def cut(point: Point, close: str = "fin") -> Fault:
    return Fault(FaultKind.CUT, point, session=0, params={"close": close})


def err(preset: str) -> Fault:
    return Fault(FaultKind.ERROR, Point(TX, FIRST_BATCH + 1), session=0, params={"preset": preset})


# name -> (the fault on the first dump session, what the replica does): "reconnects" (a second
# dump session, then the served tables), "same connection" (one session, the served tables),
# or the (Last_IO_Errno, Last_IO_Error) it stops with.
CASES: dict[str, tuple[Fault, object]] = {
    "cut_fin_before_event": (cut(Point(PointKind.EVENT, 9)), "reconnects"),
    "cut_rst_inside_event": (
        cut(Point(PointKind.EVENT, 14, Where.INSIDE, 30), "rst"),
        "reconnects",
    ),
    "cut_fin_after_event": (cut(Point(PointKind.EVENT, 20, Where.AFTER)), "reconnects"),
    "cut_rst_after_transaction": (cut(Point(TX, FIRST_BATCH, Where.AFTER), "rst"), "reconnects"),
    "cut_rst_before_transaction": (cut(Point(TX, FIRST_BATCH + 1), "rst"), "reconnects"),
    "cut_after_exact_bytes": (cut(Point(PointKind.BYTE, 1234)), "reconnects"),
    "trickle_every_offset": (
        Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), session=0, params={"size": 1}),
        "same connection",
    ),
    "bandwidth": (
        Fault(FaultKind.BANDWIDTH, Point(TX, 2), session=0, params={"rate": 50_000}),
        "same connection",
    ),
    "latency": (
        Fault(FaultKind.LATENCY, Point(TX, 2), session=0, params={"delay": 0.05}),
        "same connection",
    ),
    **{
        f"err_1236_{preset}": (
            err(preset),
            (1236, FATAL_1236.format(ERROR_PRESETS[preset].message)),
        )
        for preset in ("bogus", "too_large", "crc", "purged")
    },
}


# The position mode matters where the replica reconnects: the cuts run in both.
RUNS = [(name, "gtid") for name in sorted(CASES)] + [
    (name, "file_pos") for name in sorted(CASES) if name.startswith("cut")
]


@pytest.mark.parametrize(("name", "mode"), RUNS)
def test_what_a_real_replica_does_under_each_wire_fault(
    name: str, mode: str, replica: MariaDBServer
) -> None:
    fault, expected = CASES[name]
    stream = served_stream()
    with (
        master_for(stream) as master,
        BackgroundFaultProxy((master.host, master.port), [fault]) as proxy,
    ):
        start(replica, proxy.host, proxy.port, mode)
        wanted = stream.gtid_pos()

        def settled() -> bool:
            if io_stopped(replica):
                return True
            return str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos")) == wanted

        wait_for_replica(replica, settled, "caught up or stopped", master=master)
        status = replica.slave_status()
        applied = [a.fault for engine in proxy.engines for a in engine.applied]
        assert applied == [fault], "the fault did not happen"
        if isinstance(expected, tuple):
            assert (status["Last_IO_Errno"], status["Last_IO_Error"]) == expected
            # Everything before the ERR applied, nothing from it on.
            wait_caught_up(replica, str(stream.groups[FIRST_BATCH].gtid), master=master)
            assert proxy.sessions == 1
        else:
            assert status["Slave_IO_Running"] == "Yes", replica_problem(replica, master)
            check_tables(replica, stream)
            if expected == "reconnects":
                assert proxy.sessions >= 2
            else:
                assert proxy.sessions == 1, replica_problem(replica, master)
            # Live appends after the fault arrive too.
            stream.add_batches(2)
            wait_caught_up(replica, stream.gtid_pos(), master=master)
            check_tables(replica, stream)
        assert master.errors == []


# The first file of the purge test: standalone groups (SELECT statements), more bytes after the
# hold's point than the fake master can have written past it while the proxy reads nothing.
STATEMENT_SIZE = 64 << 10
HOLD_AT = 20  # the transaction the hold starts at


def written_past_a_hold() -> int:
    """The most the fake master can have taken from the first file beyond what the held proxy
    read: the kernel's buffers of the connection (the proxy's receive buffer and the server's
    send buffer, each at most its autotuning maximum, ``net.ipv4.tcp_rmem``/``tcp_wmem``), the
    bytes of the proxy's last read (64 KiB) and what the dump read before sending it (one
    batch, ``CHUNK_SIZE`` or one larger event, and the transport's copy of it)."""
    return kernel_socket_buffers() + (64 << 10) + 2 * (CHUNK_SIZE + STATEMENT_SIZE)


@pytest.mark.parametrize("force", [False, True])
def test_purge_of_the_file_a_real_replicas_dump_reads(force: bool, replica: MariaDBServer) -> None:
    stream = TypedStream(MemoryBinlogStore(server_id=MASTER_SERVER_ID))
    stream.create_schema()
    stream.add_batch()
    store = stream.store
    # Every statement after the hold's point counts (the schema and a batch are before it).
    for number in range(HOLD_AT + written_past_a_hold() // STATEMENT_SIZE + 1):
        statement = b"SELECT '%d " % number + b"x" * STATEMENT_SIZE + b"'"
        store.append_transaction([QueryEvent(query=statement, database="")])
    stream.rotate()
    stream.add_batch()
    stream.rotate()
    stream.add_batch()
    files = store.file_names()
    # A stall without a duration: held until the test releases it, whatever the scheduling.
    hold = Fault(FaultKind.STALL, Point(TX, HOLD_AT), session=0)
    with (
        master_for(stream) as master,
        BackgroundFaultProxy((master.host, master.port), [hold]) as proxy,
    ):
        start(replica, proxy.host, proxy.port, "gtid")
        wait_for_replica(
            replica,
            lambda: any(engine.holding for engine in proxy.engines),
            "the hold",
            master=master,
        )
        assert [file for _, _, file in master.dumps()] == [files[0]]
        purged = master.purge_to(files[-1], force=force)
        assert [file for _, _, file in master.dumps()] == [files[0]]
        assert proxy.release() == 1
        if not force:
            # A real primary's log_in_use: nothing before the file the dump reads to purge.
            assert purged == []
            wait_caught_up(replica, stream.gtid_pos(), master=master)
            check_tables(replica, stream)
            assert proxy.sessions == 1
            assert replica.slave_status()["Slave_IO_Running"] == "Yes"
        else:
            assert purged == files[:-1]
            wait_for_replica(replica, lambda: io_stopped(replica), "the IO thread stopped")
            status = replica.slave_status()
            assert status["Last_IO_Errno"] == 1236, replica_problem(replica, master)
            # (A GTID dump names no first file; the last event read is in the purged file.)
            assert status["Last_IO_Error"].startswith(
                "Got fatal error 1236 from master when reading data from binary log: "
                "'could not find next log; the first event '' at 4, the last event read from "
                f"'{files[0]}' at "
            ), replica_problem(replica, master)
            # The batch before the big statements applied; the ones after them not.
            applied = str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos"))
            assert applied != stream.gtid_pos()
            counter = replica.execute(f"SELECT n FROM {DATABASE}.{COUNTER.name}")
            assert counter == [(1,)]
        assert master.errors == []


def test_a_second_replica_with_the_same_server_id(replica: MariaDBServer) -> None:
    """The real replica (server id 1) streams; the project's client connects with server id 1
    too: the fake master ends the replica's dump with ERR 4052, as a real primary does; the
    replica reconnects (4052 is not fatal to it), which ends the client's dump in turn: the
    client stops with ServerRefused 4052 (not retried). The replica goes on."""
    stream = served_stream()
    replica_id = int(replica.query_one("SELECT @@server_id"))
    with master_for(stream) as master:
        start(replica, master.host, master.port, "gtid")
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        config = ClientConfig(user=USER, password=PASSWORD, server_id=replica_id, net_timeout=5.0)
        client = BlockingReplica(master.host, master.port, config, until=lambda p: False)
        failure: list[BaseException] = []
        groups: list[str] = []

        def run() -> None:
            try:
                with client:
                    for group in client.groups():
                        groups.append(str(group.gtid_text))
            except BaseException as error:  # noqa: BLE001 - the test reads it
                failure.append(error)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(60)
        assert not thread.is_alive(), "the client was not ended"
        assert len(failure) == 1 and isinstance(failure[0], ServerRefused), failure
        assert failure[0].errno == ER_SLAVE_SAME_ID and not failure[0].retryable
        assert client.connections == 1
        # What the client had before it was ended: served groups, once, in order.
        served = [str(group.gtid) for group in stream.groups]
        assert groups == served[: len(groups)]
        # The replica was ended, reconnected, and goes on.
        log = replica.error_log_text()
        # "[ERROR] Error reading packet from server: A slave with the same server_uuid/
        # server_id is already connected; the first event ... (server_errno=4052)", then
        # "Slave I/O thread: Failed reading log event, reconnecting to retry".
        ended = [line for line in log.splitlines() if "(server_errno=4052)" in line]
        assert len(ended) == 1, ended
        assert (
            "Error reading packet from server: A slave with the same server_uuid/server_id "
            "is already connected" in ended[0]
        )
        stream.add_batches(2)
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        check_tables(replica, stream)
        assert replica.slave_status()["Slave_IO_Running"] == "Yes"
        assert master.errors == []
