"""Faults at the wire with real peers: the fault proxy in front of the fake master.

* A real MariaDB 10.11 replica, cut mid-event (FIN) and mid-transaction (RST) on its first two
  dump sessions, reconnects by itself and ends with the served tables (the ``items`` primary
  key and the statement-based counter catch a group applied twice; missing rows a lost one).
* The same replica stops with the checksum error when an event's CRC32 is corrupted.
* python-mysql-replication gets the ERR 1236 injected mid-stream as the error it raises.
* ``mariadb-binlog --raw`` writes byte-identical files through a proxy that re-slices the
  stream one byte at a time, and in 7-byte pieces.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader

from fakemaster.config.server_config import ServerConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind, Where
from fakemaster.faults.plan import ERROR_PRESETS
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.support.rawdump import packet_starts, raw_dump
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

USER, PASSWORD = "repl", "pw"
MASTER_SERVER_ID = 100
# The first groups are the schema (CREATE DATABASE, three CREATE TABLE) and the counter's
# first row; batches follow, each a transaction of TABLE_MAP/ROWS pairs, a statement and XID.
FIRST_BATCH = 5


@pytest.fixture
def served() -> Iterator[tuple[TypedStream, BackgroundFakeMaster]]:
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID)
    config = ServerConfig(server_id=MASTER_SERVER_ID, user=USER, password=PASSWORD)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(4)
    with BackgroundFakeMaster(config, store) as master:
        yield stream, master
        assert master.errors == []


def check_tables(replica: MariaDBServer, stream: TypedStream) -> None:
    for table in TABLES:
        got = replica_table(replica, DATABASE, table.name)
        expected = rendered_rows(stream.expected_rows(table.name), got.columns)
        assert got.rows == expected, table.name
    counter = replica.execute(f"SELECT n, last_batch FROM {DATABASE}.{COUNTER.name}")
    assert counter == [(stream.batches, stream.batches)]


def start_replica(factory: MariaDBFactory, proxy: BackgroundFaultProxy, mode: str) -> MariaDBServer:
    replica = factory(server_id=2)
    position: dict[str, object] = (
        {"use_gtid": "slave_pos"}
        if mode == "gtid"
        else {"use_gtid": "no", "log_file": "mysql-bin.000001", "log_pos": 4}
    )
    replica.change_master(proxy.host, proxy.port, USER, PASSWORD, **position)  # type: ignore[arg-type]
    replica.execute("START SLAVE")
    return replica


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_faults_a_real_replica_reconnects_after_cuts_mid_event_and_mid_transaction(
    mode: str, served: tuple[TypedStream, BackgroundFakeMaster], mariadb_factory: MariaDBFactory
) -> None:
    stream, master = served
    plan = FaultPlan(
        (
            # Session 0: FIN 25 bytes into the second batch's third event (its first ROWS
            # event): mid-event and mid-transaction.
            Fault(
                FaultKind.CUT,
                Point(PointKind.TRANSACTION, FIRST_BATCH + 1, Where.INSIDE, 2, into=25),
                session=0,
            ),
            # Session 1 (the replica's reconnect): RST between the events of its second group
            # (before its fourth event): mid-transaction.
            Fault(
                FaultKind.CUT,
                Point(PointKind.TRANSACTION, 1, Where.INSIDE, 3),
                session=1,
                params={"close": "rst"},
            ),
        )
    )
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        replica = start_replica(mariadb_factory, proxy, mode)
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        check_tables(replica, stream)
        # Live appends after the faults: they arrive too.
        stream.add_batches(2)
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        check_tables(replica, stream)
        engines = proxy.engines
        assert proxy.sessions >= 3, replica_problem(replica, master)
        applied = [a.fault for engine in engines for a in engine.applied]
        assert applied == list(plan.faults)


def test_faults_a_cut_mid_event_falls_inside_the_event(
    served: tuple[TypedStream, BackgroundFakeMaster],
) -> None:
    """Where the first cut of the replica test falls, read with pymysqlreplication-free bytes:
    the proxy delivers a prefix of the direct stream that ends inside an event packet."""
    stream, master = served
    plan = [Fault(FaultKind.CUT, Point(PointKind.EVENT, 12, Where.INSIDE, 25))]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        direct, _ = raw_dump(master.host, master.port, USER, PASSWORD)
        through, _ = raw_dump(proxy.host, proxy.port, USER, PASSWORD)
    assert direct.startswith(through) and len(through) < len(direct)
    # The cut is 25 bytes into the 13th event packet.
    starts = packet_starts(direct)
    assert len(through) == starts[12] + 25


@pytest.mark.mariadb
@pytest.mark.parametrize("target", ["crc", "body"])
def test_faults_a_real_replica_stops_on_a_corrupted_crc(
    target: str,
    served: tuple[TypedStream, BackgroundFakeMaster],
    mariadb_factory: MariaDBFactory,
) -> None:
    stream, master = served
    plan = [
        Fault(
            FaultKind.CORRUPT_CRC,
            Point(PointKind.TRANSACTION, FIRST_BATCH, Where.INSIDE, 1),
            params={"target": target},
        )
    ]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        replica = start_replica(mariadb_factory, proxy, "gtid")
        wait_for_replica(
            replica,
            lambda: replica.slave_status().get("Slave_IO_Running") == "No",
            "the IO thread stopped",
            master=master,
        )
        status = replica.slave_status()
        # MariaDB 10.11's IO thread reports the checksum failure in its error log and stops
        # with "could not queue event" (it does not retry: the master would send the same).
        assert status["Last_IO_Errno"] == 1595, replica_problem(replica, master)
        assert (
            status["Last_IO_Error"] == "Relay log write failure: could not queue event from master"
        )
        log = replica.error_log_text()
        assert "Replication event checksum verification failed while reading from network" in log
        # The groups before the corrupted event were applied, none from it on.
        before = str(stream.groups[FIRST_BATCH - 1].gtid)
        wait_caught_up(replica, before, master=master)
        assert replica.slave_status()["Slave_SQL_Running"] == "Yes"
        assert proxy.sessions == 1


def test_faults_python_mysql_replication_raises_the_injected_err(
    served: tuple[TypedStream, BackgroundFakeMaster],
) -> None:
    stream, master = served
    preset = ERROR_PRESETS["truncated"]
    plan = [Fault(FaultKind.ERROR, Point(PointKind.TRANSACTION, FIRST_BATCH, Where.INSIDE, 2))]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        reader = BinLogStreamReader(
            connection_settings={
                "host": proxy.host,
                "port": proxy.port,
                "user": USER,
                "password": PASSWORD,
            },
            server_id=7,
            blocking=False,
            log_file="mysql-bin.000001",
            log_pos=4,
            resume_stream=True,
        )
        seen = []
        try:
            with pytest.raises(pymysql.err.OperationalError) as raised:
                for event in reader:
                    seen.append(type(event).__name__)
        finally:
            reader.close()
    assert raised.value.args == (preset.errno, preset.message)
    assert seen  # events came before the ERR


def mariadb_binlog() -> str:
    found = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", found is not None, "apt-get install mariadb-client")
    assert found is not None
    return found


def fetch_raw(tool: str, host: str, port: int, directory: Path) -> dict[str, bytes]:
    directory.mkdir()
    command = [
        tool,
        "--read-from-remote-server",
        f"--host={host}",
        f"--port={port}",
        f"--user={USER}",
        f"--password={PASSWORD}",
        "--raw",
        f"--result-file={directory}/",
        "--to-last-log",
        "mysql-bin.000001",
    ]
    result = subprocess.run(command, capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.parametrize("size", [1, 7])
def test_faults_mariadb_binlog_raw_is_byte_identical_through_a_reslicing_proxy(
    size: int, tmp_path: Path
) -> None:
    tool = mariadb_binlog()
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(2)
    stream.rotate()
    stream.add_batch()
    config = ServerConfig(server_id=MASTER_SERVER_ID, user=USER, password=PASSWORD)
    # From the first byte of the dump on, pieces of ``size`` bytes.
    plan = [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), params={"size": size})]
    with BackgroundFakeMaster(config, store) as master:
        direct = fetch_raw(tool, master.host, master.port, tmp_path / "direct")
        with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
            through = fetch_raw(tool, proxy.host, proxy.port, tmp_path / "through")
            engines = proxy.engines
            pieces = proxy.call(lambda: proxy.proxy.pieces if proxy.proxy else 0)
        assert master.errors == []
    assert list(direct) == ["mysql-bin.000001", "mysql-bin.000002"]
    assert through == direct
    # The stream really went out in pieces of at most ``size`` bytes.
    assert [a.fault.kind for e in engines for a in e.applied] == [FaultKind.TRICKLE]
    assert pieces >= sum(len(data) - 4 for data in direct.values()) // size


# What a real MariaDB 10.11 replica does under each kind of fault, on its first dump session,
# in the first batch's transaction (GTID {gtid}: GTID, TABLE_MAP, ROWS, TABLE_MAP, ROWS, QUERY,
# XID; "inside 2" is before or at its first ROWS event): "resumes" (reconnects if it must, and
# ends with the served tables) or stops its IO thread with (Last_IO_Errno, Last_IO_Error), and
# the line its error log has about why.
NET_TIMEOUT = 3  # slave_net_timeout: how long a replica waits on a silent connection
RELAY_LOG_WRITE_FAILURE = (1595, "Relay log write failure: could not queue event from master")
MID = Point(PointKind.TRANSACTION, FIRST_BATCH, Where.INSIDE, 2)
OUTCOMES: dict[str, tuple[Fault, object, str | None]] = {
    # The replica reads EOF as "apparent master shutdown" and reconnects.
    "eof": (Fault(FaultKind.EOF, MID), "resumes", None),
    "err_1236": (
        Fault(FaultKind.ERROR, MID),
        (
            1236,
            "Got fatal error 1236 from master when reading data from binary log: "
            "'binlog truncated in the middle of event; consider out of disk space on master'",
        ),
        None,
    ),
    # Any other ERR than 1236 (and 1041): the replica reconnects.
    "err_shutdown": (Fault(FaultKind.ERROR, MID, params={"preset": "shutdown"}), "resumes", None),
    "truncate": (
        Fault(FaultKind.TRUNCATE, MID),
        RELAY_LOG_WRITE_FAILURE,
        "Event from master declares a length that does not match the packet the event arrived in",
    ),
    # A copy of a ROWS event that ends its statement: its table map is gone, and the replica
    # skips a ROWS event of an unmapped table (as for a filtered table): nothing applied twice.
    "duplicate_rows": (Fault(FaultKind.DUPLICATE, MID), "resumes", None),
    "duplicate_gtid": (
        Fault(FaultKind.DUPLICATE, Point(PointKind.TRANSACTION, FIRST_BATCH, Where.BEFORE)),
        RELAY_LOG_WRITE_FAILURE,
        "Unexpected break of being relay-logged GTID {gtid} event group by the current GTID "
        "event {gtid}",
    ),
    "duplicate_xid": (
        Fault(FaultKind.DUPLICATE, Point(PointKind.TRANSACTION, FIRST_BATCH, Where.AFTER)),
        RELAY_LOG_WRITE_FAILURE,
        "The current group of events starts with a non-GTID Xid event; the last seen GTID is "
        "{gtid}",
    ),
    # Nothing flows: after slave_net_timeout the replica reconnects.
    "blackhole": (Fault(FaultKind.BLACKHOLE, MID), "resumes", None),
    "stall": (Fault(FaultKind.STALL, MID, params={"duration": 1.0}), "resumes", None),
    # A heartbeat behind the replica's position: fatal.
    "wrong_heartbeat_position": (
        Fault(FaultKind.WRONG_HEARTBEAT, Point(PointKind.EVENT, 0), params={"position": 4}),
        RELAY_LOG_WRITE_FAILURE,
        "Unexpected master's heartbeat data: heartbeat is not compatible with local info;"
        "the event's data: log_file_name mysql-bin.000001 log_pos 4",
    ),
    # A heartbeat naming another file (at the right position): counted, no error.
    "wrong_heartbeat_file": (
        Fault(
            FaultKind.WRONG_HEARTBEAT,
            Point(PointKind.EVENT, 0),
            params={"file": "mysql-bin.000999"},
        ),
        "resumes",
        None,
    ),
    # Heartbeats withheld on an idle stream: the replica reconnects after slave_net_timeout.
    "withhold_heartbeat": (
        Fault(FaultKind.WITHHOLD_HEARTBEAT, Point(PointKind.EVENT, 0)),
        "resumes",
        None,
    ),
}
# Kinds after which the replica must have opened a second dump session.
RECONNECTS = {"eof", "err_shutdown", "blackhole"}


@pytest.mark.mariadb
@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_faults_what_a_real_replica_does(
    name: str, served: tuple[TypedStream, BackgroundFakeMaster], mariadb_factory: MariaDBFactory
) -> None:
    stream, master = served
    fault, expected, log_line = OUTCOMES[name]
    gtid = str(stream.groups[FIRST_BATCH].gtid)
    with BackgroundFaultProxy((master.host, master.port), [fault]) as proxy:
        replica = mariadb_factory({"slave_net_timeout": NET_TIMEOUT}, server_id=2)
        replica.change_master(proxy.host, proxy.port, USER, PASSWORD, heartbeat_period=1.0)
        replica.execute("START SLAVE")
        wanted = stream.gtid_pos()

        def settled() -> bool:
            if replica.slave_status().get("Slave_IO_Running") == "No":
                return True
            if str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos")) != wanted:
                return False
            # Heartbeat faults act on an idle stream: two heartbeats counted, or a stop.
            heartbeats = int(replica.status_variable("Slave_received_heartbeats") or 0)
            return not name.startswith("wrong_heartbeat") or heartbeats >= 2

        wait_for_replica(replica, settled, "caught up or stopped", master=master, timeout=60)
        status = replica.slave_status()
        if status.get("Slave_IO_Running") == "No":
            outcome: object = (status["Last_IO_Errno"], status["Last_IO_Error"])
        else:
            check_tables(replica, stream)
            outcome = "resumes"
        assert outcome == expected, replica_problem(replica, master)
        assert [a.fault for e in proxy.engines for a in e.applied] == [fault]
        if name in RECONNECTS:
            assert proxy.sessions >= 2
        if name == "withhold_heartbeat":
            # Caught up and idle, without heartbeats: the replica gives the connection up
            # after slave_net_timeout and reconnects (its next session has no fault).
            wait_for_replica(replica, lambda: proxy.sessions >= 2, "a reconnect", master=master)
            wait_for_replica(
                replica,
                lambda: int(replica.status_variable("Slave_received_heartbeats") or 0) > 0,
                "heartbeats on the new connection",
                master=master,
            )
            assert "Failed reading log event, reconnecting to retry" in replica.error_log_text()
        if log_line is not None:
            assert log_line.format(gtid=gtid) in replica.error_log_text()
        if outcome != "resumes":
            # Everything before the faulted group was applied (with the XID duplicated, the
            # group itself was whole before the copy; a heartbeat comes after all groups).
            last = {"duplicate_xid": FIRST_BATCH, "wrong_heartbeat_position": -1}.get(
                name, FIRST_BATCH - 1
            )
            wait_caught_up(replica, str(stream.groups[last].gtid), master=master)


@pytest.mark.mariadb
def test_faults_a_semi_sync_replica_through_cuts_and_a_duplicate(
    mariadb_factory: MariaDBFactory,
) -> None:
    """With semi-sync, every event packet carries 0xEF and a flag, and after an event that asks
    for an ACK both sides restart the packet count: the engine's copies and cuts keep the
    sequence the replica checks. Session 0 is cut mid-event; session 1 gets a copy of a ROWS
    event that ends its statement (skipped by the replica, see OUTCOMES) mid-transaction, then
    more groups each ending with an ACK request."""
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID)
    config = ServerConfig(
        server_id=MASTER_SERVER_ID,
        user=USER,
        password=PASSWORD,
        semi_sync_enabled=True,
        semi_sync_timeout_ms=10_000,
    )
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(4)
    plan = FaultPlan(
        (
            Fault(
                FaultKind.CUT,
                Point(PointKind.TRANSACTION, FIRST_BATCH + 1, Where.INSIDE, 2, into=30),
                session=0,
            ),
            Fault(FaultKind.DUPLICATE, Point(PointKind.TRANSACTION, 0, Where.INSIDE, 2), session=1),
        )
    )
    with (
        BackgroundFakeMaster(config, store) as master,
        BackgroundFaultProxy((master.host, master.port), plan) as proxy,
    ):
        replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
        replica.change_master(proxy.host, proxy.port, USER, PASSWORD)
        replica.execute("START SLAVE")
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        stream.add_batches(2)
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        check_tables(replica, stream)
        assert replica.status_variable("Rpl_semi_sync_slave_status") == "ON"
        assert [a.fault for e in proxy.engines for a in e.applied] == list(plan.faults)
        assert master.errors == []


@pytest.mark.mariadb
def test_faults_mariadb_binlog_raw_reads_a_20_mib_event_through_a_reslicing_proxy(
    tmp_path: Path,
) -> None:
    """A 20 MiB event (two packets: 0xFFFFFF bytes and the rest) among small ones, re-sliced in
    pieces of 65521 bytes (a prime: the pieces end at every kind of place), arrives whole."""
    from fakemaster.vocabulary.events import QueryEvent, XidEvent

    tool = mariadb_binlog()
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID, clock=lambda: 1_700_000_000)
    for number in range(20):
        value = b"z" * (20 << 20) if number == 10 else b"%d" % number
        query = b"INSERT INTO t VALUES ('" + value + b"')"
        store.append_transaction([QueryEvent(query=query, database="d"), XidEvent(xid=number)])
    config = ServerConfig(server_id=MASTER_SERVER_ID, user=USER, password=PASSWORD)
    plan = [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), params={"size": 65521})]
    with BackgroundFakeMaster(config, store) as master:
        direct = fetch_raw(tool, master.host, master.port, tmp_path / "direct")
        with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
            through = fetch_raw(tool, proxy.host, proxy.port, tmp_path / "through")
        assert master.errors == []
    assert len(direct["mysql-bin.000001"]) > 20 << 20
    assert through == direct
