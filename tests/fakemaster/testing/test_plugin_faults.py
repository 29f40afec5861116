"""The pytest plugin's ``faults=`` and ``pcap=`` (issues #9 and #11): a fault proxy and a capture
proxy in front of the fixture's fake master, server faults scheduled in it, and the server-side
hooks on the handle. Real clients: pymysql for logins and raw COM_BINLOG_DUMP reads; the
expected events are what the same server sends without the proxy (read on its own port)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pymysql
import pytest
from pymysql.connections import Connection
from pymysql.constants import COMMAND

from decoder import decode_event
from fakemaster.faults import Fault, FaultKind, FaultPlan, PlanError, Point, PointKind, Where
from fakemaster.faults.server_faults import ServerFault, ServerFaultKind
from fakemaster.testing.plugin import (
    AsyncFakeMasterFactory,
    FakeMasterFactory,
    FakeMasterHandle,
    load_faults,
)
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
)
from tests.peers.mariadb import mariadb_available
from tests.peers.policy import require_peer

__all__: list[str] = []

REPLICA_ID = 100
# Bounds a wait for something that must come; only a hang reaches it.
HANG = 60.0
# Cut the first dump session before its second transaction's GTID event.
CUT_BEFORE_SECOND = Fault(FaultKind.CUT, Point(PointKind.TRANSACTION, 1, Where.BEFORE))


def start_dump(
    dsn: dict[str, Any], *, blocking: bool, file_name: str = "mysql-bin.000001"
) -> Connection:
    """A pymysql connection that sent COM_BINLOG_DUMP from (file_name, 4)."""
    connection = pymysql.connect(**dsn, read_timeout=HANG)
    with connection.cursor() as cursor:
        cursor.execute(
            "SET @master_binlog_checksum = @@global.binlog_checksum, @mariadb_slave_capability = 4"
        )
    flags = 0 if blocking else 1  # 1: BINLOG_DUMP_NON_BLOCK, EOF at the end
    request = BinlogDump(
        position=4, flags=flags, server_id=REPLICA_ID, file_name=file_name.encode()
    ).body()
    connection._execute_command(COMMAND.COM_BINLOG_DUMP, request)
    return connection


def read_events(
    connection: Connection, context: BinlogContext, count: int | None = None
) -> tuple[list[Event], bool]:
    """(events read, whether the connection was lost before an EOF): ``count`` events at most."""
    events: list[Event] = []
    try:
        while count is None or len(events) < count:
            packet = connection._read_packet()
            if packet.is_eof_packet():
                return events, False
            events.append(decode_event(packet.get_all_data()[1:], context))
    except pymysql.err.OperationalError:
        return events, True
    return events, False


def dump_all(dsn: dict[str, Any]) -> tuple[list[Event], bool]:
    connection = start_dump(dsn, blocking=False)
    try:
        return read_events(connection, BinlogContext())
    finally:
        connection.close()


def query(handle: FakeMasterHandle, sql: str) -> list[tuple[object, ...]]:
    connection = pymysql.connect(**handle.dsn)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        connection.close()


def three_transactions(handle: FakeMasterHandle) -> None:
    for number in range(3):
        handle.append_transaction([QueryEvent(query=f"CREATE DATABASE d{number}".encode())])


@pytest.mark.fake_master(faults=[CUT_BEFORE_SECOND], server_id=9)
def test_the_marker_puts_a_fault_proxy_in_front(fake_master: FakeMasterHandle) -> None:
    proxy = fake_master.fault_proxy
    assert proxy is not None
    assert (fake_master.host, fake_master.port) == (proxy.host, proxy.port)
    assert fake_master.port != fake_master.server_port
    # A login and queries go through the proxy untouched: no dump, no session.
    assert query(fake_master, "SELECT @@server_id, @@version") == [(9, "10.11.19-MariaDB-log")]
    assert proxy.sessions == 0
    assert f"MASTER_PORT={proxy.port}," in fake_master.change_master_sql()


def test_a_cut_at_the_planned_transaction(fake_master_factory: FakeMasterFactory) -> None:
    primary = fake_master_factory(faults=FaultPlan((CUT_BEFORE_SECOND,)))
    three_transactions(primary)
    # What the server sends, read on its own port: the expectation.
    direct = dict(primary.dsn, port=primary.server_port)
    everything, lost = dump_all(direct)
    assert not lost
    gtids = [index for index, event in enumerate(everything) if isinstance(event, GtidEvent)]
    assert len(gtids) == 3

    received, lost = dump_all(primary.dsn)
    assert lost  # FIN without an EOF: pymysql reports 2013
    assert received == everything[: gtids[1]]
    assert isinstance(received[-1], QueryEvent) and received[-1].query == b"CREATE DATABASE d0"
    proxy = primary.fault_proxy
    assert proxy is not None and proxy.sessions == 1
    (engine,) = proxy.engines
    assert [applied.fault for applied in engine.applied] == [CUT_BEFORE_SECOND]

    # The reconnect is session 1, which the plan leaves alone: the whole binlog.
    again, lost = dump_all(primary.dsn)
    assert (again, lost) == (everything, False)
    assert proxy.sessions == 2


def test_a_plan_file_with_wire_and_server_faults(
    fake_master_factory: FakeMasterFactory, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        "[[faults]]\n"
        'kind = "cut"\n'
        "at = { event = 3 }\n"
        "[[server_faults]]\n"
        'kind = "restart"\n'
        "server_id = 5\n"
    )
    primary = fake_master_factory(faults=plan)
    assert primary.server_fault_results(timeout=HANG) == [None]
    assert query(primary, "SELECT @@server_id") == [(5,)]
    # A restart ends the file and goes on in the next one, as MariaDB does.
    assert [row[0] for row in query(primary, "SHOW BINARY LOGS")] == [
        "mysql-bin.000001",
        "mysql-bin.000002",
    ]
    received, lost = dump_all(primary.dsn)
    assert lost
    assert [type(event) for event in received] == [
        RotateEvent,
        FormatDescriptionEvent,
        GtidListEvent,
    ]


def test_the_capture_records_what_the_client_got(
    fake_master_factory: FakeMasterFactory, tmp_path: Path
) -> None:
    from fakemaster.scapy import dissect_pcap

    pcap = tmp_path / "dump.pcap"
    primary = fake_master_factory(faults=[CUT_BEFORE_SECOND], pcap=pcap)
    capture, proxy = primary.capture, primary.fault_proxy
    assert capture is not None and proxy is not None
    assert (primary.host, primary.port) == (capture.host, capture.port)
    assert len({primary.port, proxy.port, primary.server_port}) == 3
    three_transactions(primary)
    received, lost = dump_all(primary.dsn)
    assert lost and received
    primary.stop()  # the capture's file is complete

    records = dissect_pcap(pcap, capture.port)
    captured = [record.event for record in records if record.event is not None]
    assert captured == received
    # The last packet the server side sent is the last event: the cut left no EOF or ERR.
    last = [record for record in records if record.from_server][-1]
    assert last.event == received[-1]


def test_only_a_capture(fake_master_factory: FakeMasterFactory, tmp_path: Path) -> None:
    from fakemaster.scapy import dissect_pcap

    pcap = tmp_path / "plain.pcap"
    primary = fake_master_factory(pcap=pcap)
    assert primary.fault_proxy is None and primary.capture is not None
    primary.append_transaction([QueryEvent(query=b"CREATE DATABASE shop")])
    received, lost = dump_all(primary.dsn)
    assert not lost and isinstance(received[-1], QueryEvent)
    primary.stop()
    captured = [record.event for record in dissect_pcap(pcap, primary.port) if record.event]
    assert captured == received


def test_kill_dump_through_the_fault_proxy(fake_master_factory: FakeMasterFactory) -> None:
    # A fault far beyond the stream: the proxy follows the dump but changes nothing.
    never = Fault(FaultKind.ERROR, Point(PointKind.EVENT, 1000))
    primary = fake_master_factory(faults=[never])
    connection = start_dump(primary.dsn, blocking=True)
    try:
        context = BinlogContext()
        start, lost = read_events(connection, context, 4)  # ROTATE and the file's start events
        assert not lost and len(start) == 4
        (dump,) = primary.dumps()
        assert dump[1:] == (REPLICA_ID, "mysql-bin.000001")
        assert primary.kill_dump(server_id=REPLICA_ID) == [dump[0]]
        rest, lost = read_events(connection, context)
        assert (rest, lost) == ([], True)
    finally:
        connection.close()
    proxy = primary.fault_proxy
    assert proxy is not None and proxy.sessions == 1
    assert proxy.engines[0].applied == []


def test_purge_through_the_handle(fake_master: FakeMasterHandle) -> None:
    fake_master.rotate()
    third = fake_master.rotate()
    connection = start_dump(fake_master.dsn, blocking=True)
    try:
        context = BinlogContext()
        # Files 1 and 2 (ROTATE, start events, ROTATE each), then file 3's ROTATE and start.
        events, lost = read_events(connection, context, 14)
        assert not lost and isinstance(events[-4], RotateEvent)
        ((_, replica, reading),) = fake_master.dumps()
        assert (replica, reading) == (REPLICA_ID, third)
        assert fake_master.purge_to(third) == ["mysql-bin.000001", "mysql-bin.000002"]
        # The dump goes on in the file it reads.
        group = fake_master.append_transaction([QueryEvent(query=b"CREATE DATABASE shop")])
        more, lost = read_events(connection, context, 2)
        assert not lost and isinstance(more[0], GtidEvent) and more[0].gtid == group.gtid
    finally:
        connection.close()
    assert [row[0] for row in query(fake_master, "SHOW BINARY LOGS")] == [third]


def test_restart_closes_connections_and_starts_a_file(fake_master: FakeMasterHandle) -> None:
    connection = start_dump(fake_master.dsn, blocking=True)
    try:
        context = BinlogContext()
        assert len(read_events(connection, context, 4)[0]) == 4
        assert fake_master.restart(server_id=3) == "mysql-bin.000002"
        assert read_events(connection, context) == ([], True)
    finally:
        connection.close()
    assert fake_master.config.server_id == 3
    assert query(fake_master, "SELECT @@server_id") == [(3,)]


def test_faults_values() -> None:
    cut = CUT_BEFORE_SECOND
    restart = ServerFault(ServerFaultKind.RESTART, 1.5)
    assert load_faults([cut, restart]) == (FaultPlan((cut,)), (restart,))
    assert load_faults(FaultPlan((cut,))) == (FaultPlan((cut,)), ())
    with pytest.raises(TypeError):
        load_faults(["cut"])
    with pytest.raises(TypeError):
        load_faults(3)


def test_a_bad_plan_file(fake_master_factory: FakeMasterFactory, tmp_path: Path) -> None:
    plan = tmp_path / "bad.toml"
    plan.write_text('[[server_faults]]\nkind = "explode"\n')
    with pytest.raises(PlanError, match="explode"):
        fake_master_factory(faults=plan)
    assert fake_master_factory.handles == []


def test_the_async_factory_refuses_faults() -> None:
    factory = AsyncFakeMasterFactory({})
    with pytest.raises(TypeError, match="synchronous"):
        asyncio.run(factory(faults=[CUT_BEFORE_SECOND]))
    assert factory.handles == []


INNER_FAILING_FAULT = """
import pytest

from fakemaster.faults.server_faults import ServerFault


@pytest.mark.fake_master(faults=[ServerFault("purge", params={"to": "no-such-file.000009"})])
def test_a_server_fault_that_fails(fake_master):
    (result,) = fake_master.server_fault_results(timeout=60)
    assert isinstance(result, Exception)
"""


def test_a_failed_server_fault_fails_the_test_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER_FAILING_FAULT)
    options = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    result = pytester.runpytest(*options)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*recorded 1 error(s) in its connections*"])


@pytest.mark.mariadb
def test_a_real_replica_through_a_cut_mid_transaction(
    fake_master_factory: FakeMasterFactory, tmp_path: Path
) -> None:
    """A MariaDB 10.11 replica pointed at the handle (change_master_sql: the proxy) loses its
    connection 10 bytes into the QUERY event of the second transaction, reconnects (session 1,
    no fault) and applies every transaction once."""
    require_peer("MariaDB server", mariadb_available(), "bash scripts/install-deps.sh")
    from fakemaster.scapy import dissect_pcap
    from tests.peers.mariadb import MariaDBServer

    cut = Fault(FaultKind.CUT, Point(PointKind.TRANSACTION, 1, Where.INSIDE, 1, into=10))
    pcap = tmp_path / "replica.pcap"
    primary = fake_master_factory(faults=[cut], pcap=pcap)
    server = MariaDBServer(server_id=2).start()
    try:
        replica = server.connect()
        with replica.cursor() as cursor:
            cursor.execute(primary.change_master_sql(connect_retry=1))
            cursor.execute("START SLAVE")
            groups = [
                primary.append_transaction([QueryEvent(query=f"CREATE DATABASE d{n}".encode())])
                for n in range(3)
            ]
            cursor.execute("SELECT MASTER_GTID_WAIT(%s, %s)", (str(groups[-1].gtid), HANG))
            assert cursor.fetchone() == (0,)
            cursor.execute("SHOW DATABASES LIKE 'd_'")
            assert cursor.fetchall() == (("d0",), ("d1",), ("d2",))
            cursor.execute("STOP SLAVE")
        replica.close()
    finally:
        server.close()
    proxy = primary.fault_proxy
    assert proxy is not None and proxy.sessions >= 2
    assert [done.fault for engine in proxy.engines for done in engine.applied] == [cut]
    primary.stop()
    queries = [
        record.event.query
        for record in dissect_pcap(pcap, primary.port)
        if isinstance(record.event, QueryEvent) and record.event.query.startswith(b"CREATE")
    ]
    # The cut session got d0 (and d1's GTID); the reconnect resumed after d0: d1 and d2.
    assert queries == [b"CREATE DATABASE d0", b"CREATE DATABASE d1", b"CREATE DATABASE d2"]
