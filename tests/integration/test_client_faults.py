"""The project's replica client under every fault kind of fakemaster.faults (through the fault
proxy in front of the fake master) and the server's own faults (KILL of the dump, restart,
failover, purge): it resumes from its last committed position and ends with the oracle's
tables, nothing lost, nothing applied twice (the consumer refuses a change it saw); what a real
replica cannot get past (ERR 1236) stops it with a typed error after the groups before it.

Wire faults apply to the first dump session (0) only, so the reconnect gets a clean stream.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from fakemaster.client.blocking import BlockingReplica, ReconnectPolicy
from fakemaster.client.position import Position
from fakemaster.client.protocol import (
    BinlogUnavailable,
    ClientConfig,
    ConnectionLost,
    ProtocolError,
    ServerRefused,
)
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind, Where
from fakemaster.vocabulary.errors import ChecksumError
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.oracle import Oracle
from tests.support.client_apply import Tables, catalogue, initial, target

SCENARIO = "rotation_storm"  # 40 transactions over many files
NET_TIMEOUT = 1.0  # where the verdict is that the client's read timeout fires
# Where no verdict depends on a timeout: a bound on a hang only, so that a loaded machine that
# delays the proxy or the server for a second does not make the client reconnect.
PATIENT_TIMEOUT = 60.0


def config_for(master: Any, **settings: Any) -> ClientConfig:
    values: dict[str, Any] = {
        "user": master.user,
        "password": master.password,
        "server_id": 77,
        "net_timeout": PATIENT_TIMEOUT,
        "heartbeat_period": 0.25,
        **settings,
    }
    return ClientConfig(**values)


def replicate(
    master: Any,
    config: ClientConfig,
    *,
    also: Callable[[BlockingReplica], bool] = lambda client: True,
    on_group: Callable[[BlockingReplica, int], None] | None = None,
) -> tuple[Tables, BlockingReplica]:
    scenario = build(SCENARIO)
    goal = target(scenario)
    tables = Tables(scenario)
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        catalogue=catalogue(scenario),
        reconnect=ReconnectPolicy(max_retries=5, delay=0.01),
    )
    client.until = lambda p: p.covers(goal) and also(client)
    with client:
        from fakemaster.client.changes import group_changes

        for count, group in enumerate(client.groups(), 1):
            for change in group_changes(group, client.catalogue):
                tables.apply(change)
            if on_group is not None:
                on_group(client, count)
    return tables, client


def cut(point: Point, close: str = "fin") -> Fault:
    return Fault(FaultKind.CUT, point, session=0, params={"close": close})


TX = PointKind.TRANSACTION
# (plan, whether the client needs a new connection to get past it)
WIRE_CASES: dict[str, tuple[list[Fault], bool]] = {
    "cut_fin_before_event": ([cut(Point(PointKind.EVENT, 9))], True),
    "cut_rst_inside_event": ([cut(Point(PointKind.EVENT, 14, Where.INSIDE, 30), "rst")], True),
    "cut_fin_after_event": ([cut(Point(PointKind.EVENT, 20, Where.AFTER))], True),
    "cut_mid_transaction": ([cut(Point(TX, 5, Where.INSIDE, 2))], True),
    "cut_mid_event_mid_transaction": ([cut(Point(TX, 7, Where.INSIDE, 2, into=25), "rst")], True),
    "cut_after_exact_bytes": ([cut(Point(PointKind.BYTE, 1234))], True),
    "blackhole": ([Fault(FaultKind.BLACKHOLE, Point(TX, 6, Where.INSIDE, 1), session=0)], True),
    "stall_short": (
        [Fault(FaultKind.STALL, Point(TX, 3), session=0, params={"duration": 0.2})],
        False,
    ),
    # A hold (a stall without a duration) the test releases once the client has given up on
    # the connection and reconnected: longer than the timeout by construction.
    "stall_longer_than_the_timeout": ([Fault(FaultKind.STALL, Point(TX, 3), session=0)], True),
    "trickle_every_offset": (
        [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), session=0, params={"size": 1})],
        False,
    ),
    "trickle_7": (
        [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 100), session=0, params={"size": 7})],
        False,
    ),
    "bandwidth": (
        [Fault(FaultKind.BANDWIDTH, Point(TX, 2), session=0, params={"rate": 200_000})],
        False,
    ),
    "latency": (
        [Fault(FaultKind.LATENCY, Point(TX, 2), session=0, params={"delay": 0.05})],
        False,
    ),
    "corrupt_crc": ([Fault(FaultKind.CORRUPT_CRC, Point(TX, 4, Where.INSIDE, 2), session=0)], True),
    "corrupt_body": (
        [
            Fault(
                FaultKind.CORRUPT_CRC,
                Point(PointKind.EVENT, 12),
                session=0,
                params={"target": "body", "offset": 25},
            )
        ],
        True,
    ),
    "truncate": ([Fault(FaultKind.TRUNCATE, Point(TX, 5, Where.INSIDE, 2), session=0)], True),
    "duplicate_rows_event": (
        [Fault(FaultKind.DUPLICATE, Point(TX, 4, Where.INSIDE, 2), session=0)],
        False,
    ),
    "duplicate_gtid_event": ([Fault(FaultKind.DUPLICATE, Point(TX, 6), session=0)], False),
    "duplicate_xid": (
        [Fault(FaultKind.DUPLICATE, Point(TX, 8, Where.AFTER), session=0, params={"count": 3})],
        False,
    ),
    "error_shutdown": (
        [Fault(FaultKind.ERROR, Point(TX, 5), session=0, params={"preset": "shutdown"})],
        True,
    ),
    "eof": ([Fault(FaultKind.EOF, Point(TX, 9), session=0)], True),
    "wrong_heartbeat": (
        [
            Fault(
                FaultKind.WRONG_HEARTBEAT,
                Point(PointKind.BYTE, 0),
                session=0,
                params={"position": 4, "file": "mysql-bin.000001"},
            )
        ],
        False,
    ),
}


# The cases whose verdict is that the client's read timeout fires (nothing comes, for ever or
# until the client has reconnected); the others get a timeout no verdict depends on.
TIMEOUT_CASES = frozenset({"blackhole", "stall_longer_than_the_timeout"})


def release_after_a_reconnect(master: Any) -> threading.Thread:
    """A thread that ends the proxy's hold once a second dump session started (the client
    gave up on the held connection after its timeout)."""
    proxy = master.fault_proxy

    def run() -> None:
        deadline = time.monotonic() + 60  # a bound on a hang only
        while proxy.sessions < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        proxy.release()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@pytest.mark.parametrize("case", sorted(WIRE_CASES))
def test_client_resumes_after_a_wire_fault_and_ends_with_the_oracles_tables(
    fake_master_factory: Any, case: str, mode: str
) -> None:
    faults, reconnects = WIRE_CASES[case]
    master = fake_master_factory(scenario=SCENARIO, faults=FaultPlan(tuple(faults)))
    timeout = NET_TIMEOUT if case in TIMEOUT_CASES else PATIENT_TIMEOUT
    config = config_for(master, gtid_mode=mode == "gtid", net_timeout=timeout)
    releaser = None
    if case == "stall_longer_than_the_timeout":
        releaser = release_after_a_reconnect(master)
    tables, client = replicate(master, config)
    if releaser is not None:
        releaser.join(60)
        assert not releaser.is_alive()
    Oracle(build(SCENARIO)).assert_matches(tables.rows)
    applied = [a.fault for engine in master.fault_proxy.engines for a in engine.applied]
    assert applied == faults, "the fault did not happen"
    if reconnects:
        assert client.connections >= 2 and client.errors, client.errors
    else:
        assert client.connections == 1 and client.errors == [], client.errors
    if case.startswith("corrupt"):
        assert isinstance(client.errors[0], ProtocolError)
        assert isinstance(client.errors[0].cause, ChecksumError)
    if case.startswith("duplicate"):
        assert client.assembler.copies_dropped >= 1
    if case in ("blackhole", "stall_longer_than_the_timeout", "eof"):
        assert isinstance(client.errors[0], ConnectionLost)
    if case == "error_shutdown":
        assert isinstance(client.errors[0], ServerRefused) and client.errors[0].errno == 1053


@pytest.mark.parametrize("preset", ["truncated", "bogus", "too_large", "crc", "purged"])
def test_client_stops_with_a_typed_error_at_err_1236_after_the_groups_before_it(
    fake_master_factory: Any, preset: str
) -> None:
    fault = Fault(FaultKind.ERROR, Point(TX, 6), session=0, params={"preset": preset})
    master = fake_master_factory(scenario=SCENARIO, faults=FaultPlan((fault,)))
    scenario = build(SCENARIO)
    tables = Tables(scenario)
    config = config_for(master)
    goal = target(scenario)
    client = BlockingReplica(
        master.host, master.port, config, start=initial(scenario), until=lambda p: p.covers(goal)
    )
    with pytest.raises(BinlogUnavailable) as raised:
        for change in client.changes():
            tables.apply(change)
    assert raised.value.errno == 1236 and not raised.value.retryable
    assert client.connections == 1
    # Exactly the six transactions before the error, whole.
    Oracle(scenario).assert_matches(tables.rows, after=6)
    assert client.position.covers(Position.from_gtids("0-1-6"))
    assert not client.position.covers(Position.from_gtids("0-1-7"))


def test_client_withheld_heartbeats_make_it_reconnect_when_idle(fake_master_factory: Any) -> None:
    fault = Fault(FaultKind.WITHHOLD_HEARTBEAT, Point(PointKind.BYTE, 0), session=0)
    master = fake_master_factory(scenario=SCENARIO, faults=FaultPlan((fault,)))
    # Caught up, the client waits for more: without heartbeats its read times out.
    tables, client = replicate(
        master,
        config_for(master, net_timeout=NET_TIMEOUT),
        also=lambda client: client.connections >= 2,
    )
    Oracle(build(SCENARIO)).assert_matches(tables.rows)
    assert isinstance(client.errors[0], ConnectionLost)
    assert client.heartbeats == 0 or client.connections >= 2


def test_client_with_heartbeats_stays_connected_when_idle(fake_master_factory: Any) -> None:
    """Idle for longer than its timeout (more heartbeats than fit in it), the client stays on
    its connection. A timing property: the margin is wide (a heartbeat every 0.05 s against a
    2 s timeout: a gap of 40 periods, not 4, would be needed for a false verdict)."""
    master = fake_master_factory(scenario=SCENARIO)
    timeout, period = 2.0, 0.05
    tables, client = replicate(
        master,
        config_for(master, net_timeout=timeout, heartbeat_period=period),
        also=lambda client: client.heartbeats >= 1.5 * timeout / period,
    )
    Oracle(build(SCENARIO)).assert_matches(tables.rows)
    assert client.connections == 1 and client.errors == []


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@pytest.mark.parametrize("what", ["kill_dump", "restart", "failover"])
def test_client_resumes_after_the_server_kills_its_dump_or_restarts(
    fake_master_factory: Any, what: str, mode: str
) -> None:
    # A slow first session, so that the rest of the stream is still on its way at the hit.
    slow = Fault(FaultKind.BANDWIDTH, Point(PointKind.BYTE, 0), session=0, params={"rate": 20_000})
    master = fake_master_factory(scenario=SCENARIO, faults=FaultPlan((slow,)))
    done: list[str] = []

    def hit(client: BlockingReplica, count: int) -> None:
        if count == 11 and not done:
            if what == "kill_dump":
                assert master.kill_dump(server_id=77)
            elif what == "restart":
                master.restart()
            else:
                master.restart(server_id=5)
            done.append(what)

    tables, client = replicate(
        master,
        config_for(master, gtid_mode=mode == "gtid"),
        also=lambda client: client.connections >= 2,
        on_group=hit,
    )
    Oracle(build(SCENARIO)).assert_matches(tables.rows)
    assert done == [what] and client.connections >= 2
    assert isinstance(client.errors[0], ConnectionLost)


def read_to(
    master: Any, scenario: Scenario, config: ClientConfig, tables: Tables, goal: str
) -> BlockingReplica:
    """A client from the scenario's initial position that applies its changes to ``tables``
    until its position covers ``goal`` (GTIDs), then stops."""
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        until=lambda p: p.covers(Position.from_gtids(goal)),
    )
    with client:
        for change in client.changes():
            tables.apply(change)
    return client


def test_client_stops_with_a_typed_error_when_its_files_were_purged_while_away(
    fake_master_factory: Any,
) -> None:
    master = fake_master_factory(scenario=SCENARIO)
    scenario = build(SCENARIO)
    tables = Tables(scenario)
    config = config_for(master, gtid_mode=False)
    first = read_to(master, scenario, config, tables, "0-1-5")
    assert first.position.file != master.master_status()[0]
    master.purge_to(master.master_status()[0])
    again = BlockingReplica(master.host, master.port, config, start=first.position)
    with pytest.raises(BinlogUnavailable) as raised:
        for change in again.changes():
            tables.apply(change)
    # MariaDB 10.11's text for a start file that is not in the index.
    assert raised.value.errno == 1236
    assert "Could not find first log file name in binary log index file" in str(raised.value)
    Oracle(scenario).assert_matches(tables.rows, after=5)
