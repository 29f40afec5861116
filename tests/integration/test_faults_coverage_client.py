"""The project's replica client under the fault kinds tests/integration/test_client_faults.py
does not reach (docs/faults.md, "Where each kind is shown"):

* **a second replica with the same server id**: the fake master ends the older dump with ERR
  4052 (ER_SLAVE_SAME_ID, the text a real 10.11 primary sends, tests/integration/
  test_same_server_id.py); the older client stops with a typed, non-retryable
  :class:`ServerRefused` after every group it had (equal to the oracle), the newer one ends
  equal to the oracle.
* **purge of the file the client's dump reads**: a purge stops at that file (a real primary's
  ``log_in_use``) and the client goes on, every served group exactly once, in order; a forced
  purge ends the dump with ERR 1236 "could not find next log" and the client stops with
  :class:`BinlogUnavailable` after a prefix of the served groups, whole and in order.
* **purge while the client is away, in GTID mode**: ERR 1236 with the GTID text a real
  primary sends; the client stops typed, with the groups it had.
* **cuts** FIN/RST before, inside and after an event or a transaction that
  test_client_faults.py does not have: the client reconnects and ends equal to the oracle.
* **failover to new file names and positions** (a promoted replica's binlog): in GTID mode the
  client goes on; in file/pos mode it stops with ERR 1236, as a real replica does.

The big first file (small standalone groups, far more than socket and proxy buffers hold)
keeps the dump in that file while the consumer does not read.
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
    ServerRefused,
)
from fakemaster.core.dump.stream import CHUNK_SIZE
from fakemaster.faults import Fault, FaultPlan, Point, PointKind, Where
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent
from scenarios.library import build
from scenarios.oracle import Oracle
from tests.integration.test_client_faults import config_for as wire_config
from tests.integration.test_client_faults import cut, read_to, replicate
from tests.support.client_apply import Tables, catalogue, initial, target
from tests.support.live_stream import Background
from tests.support.socket_buffers import kernel_socket_buffers

__all__: list[str] = []

SCENARIO = "rotation_storm"
ER_SLAVE_SAME_ID = 4052
SAME_ID_TEXT = "A slave with the same server_uuid/server_id is already connected"
PATIENCE = 60.0
# The first file: STATEMENTS standalone groups of STATEMENT_SIZE bytes, more than a client
# that stopped reading after its first group can leave unread: the kernel's buffers of the
# connection, the client's last read (64 KiB) and what the dump read before sending it (one
# batch, CHUNK_SIZE, and its copy).
STATEMENT_SIZE = 64 << 10
STATEMENTS = 2 + (kernel_socket_buffers() + (64 << 10) + 2 * (CHUNK_SIZE + STATEMENT_SIZE)) // (
    STATEMENT_SIZE
)


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {PATIENCE}s: {what}")
        time.sleep(0.02)


def config_for(master: Any, **settings: Any) -> ClientConfig:
    values: dict[str, Any] = {
        "user": master.user,
        "password": master.password,
        "server_id": 77,
        "net_timeout": 5.0,
        "heartbeat_period": 0.25,
        **settings,
    }
    return ClientConfig(**values)


class Consumer(Background):
    """A client applying change events to a scenario's tables in a thread, until it stops."""

    tables: Tables

    def __init__(self, client: BlockingReplica) -> None:
        super().__init__(client, Tables(build(SCENARIO)))

    def join(self) -> None:
        self.thread.join(PATIENCE)
        assert not self.thread.is_alive(), "the client did not stop"


def test_same_server_id_stops_the_older_client_with_4052_and_the_newer_ends_equal(
    fake_master_factory: Any,
) -> None:
    master = fake_master_factory(scenario=SCENARIO)
    scenario = build(SCENARIO)
    goal = target(scenario)
    config = config_for(master)
    older = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        catalogue=catalogue(scenario),
        until=lambda p: False,  # a replica that keeps streaming
        reconnect=ReconnectPolicy(max_retries=3, delay=0.01),
    )
    first = Consumer(older)
    wait_until(lambda: older.position.covers(goal), "the first client caught up")
    assert [server_id for _, server_id, _ in master.dumps()] == [77]
    newer = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        catalogue=catalogue(scenario),
        until=lambda p: p.covers(goal),
    )
    second = Consumer(newer)
    first.join()
    second.join()
    # The older client: stopped by the newer one's dump, typed, not retried.
    assert isinstance(first.error, ServerRefused), first.error
    assert first.error.errno == ER_SLAVE_SAME_ID and not first.error.retryable
    assert SAME_ID_TEXT in str(first.error)
    assert older.connections == 1
    Oracle(scenario).assert_matches(first.tables.rows)
    # The newer one read everything.
    assert second.error is None, second.error
    Oracle(scenario).assert_matches(second.tables.rows)
    assert newer.connections == 1 and newer.errors == []


def big_store() -> tuple[MemoryBinlogStore, list[str]]:
    """A first file far bigger than what buffers hold, two more files; the served GTIDs."""
    store = MemoryBinlogStore(server_id=1)
    gtids = []
    for number in range(STATEMENTS):
        statement = b"SELECT '%d " % number + b"x" * STATEMENT_SIZE + b"'"
        gtids.append(store.append_transaction([QueryEvent(query=statement, database="")]).gtid)
    store.rotate()
    for number in range(3):
        query = b"SELECT %d" % number
        gtids.append(store.append_transaction([QueryEvent(query=query, database="")]).gtid)
    store.rotate()
    gtids.append(store.append_transaction([QueryEvent(query=b"SELECT 1", database="")]).gtid)
    return store, [str(gtid) for gtid in gtids]


@pytest.mark.parametrize("force", [False, True])
def test_purge_of_the_file_the_clients_dump_reads(fake_master_factory: Any, force: bool) -> None:
    store, served = big_store()
    master = fake_master_factory(store=store)
    files = store.file_names()
    client = BlockingReplica(
        master.host,
        master.port,
        config_for(master),
        until=lambda p: p.covers(Position.from_gtids(served[-1])),
        reconnect=ReconnectPolicy(max_retries=3, delay=0.01),
    )
    seen: list[str] = []
    error: BaseException | None = None
    with client:
        groups = client.groups()
        # One group, then the consumer stops reading: the dump stays in the first file.
        seen.append(str(next(groups).gtid_text))
        wait_until(lambda: master.dumps() != [], "the dump running")
        assert [file for _, _, file in master.dumps()] == [files[0]]
        purged = master.purge_to(files[-1], force=force)
        try:
            for group in groups:
                seen.append(str(group.gtid_text))
        except BinlogUnavailable as raised:
            error = raised
    if not force:
        # The purge stopped at the file the dump reads (nothing before it to purge).
        assert purged == []
        assert error is None
        assert seen == served  # every group exactly once, in order
        assert client.connections == 1 and client.errors == []
        # Once the dump is gone, the same purge removes the files before the last.
        wait_until(lambda: master.dumps() == [], "the dump gone")
        assert master.purge_to(files[-1]) == files[:-1]
    else:
        assert purged == files[:-1]
        assert isinstance(error, BinlogUnavailable), error
        assert error.errno == 1236 and not error.retryable
        assert "could not find next log" in str(error)
        # A prefix of the served groups, each once, in order, and not all of them.
        assert seen == served[: len(seen)] and len(seen) < STATEMENTS
        assert client.connections == 1


GTID_PURGED = (
    "Could not find GTID state requested by slave in any binlog files. Probably the slave "
    "state is too old and required binlog files have been purged."
)


def test_purge_while_the_client_is_away_in_gtid_mode(fake_master_factory: Any) -> None:
    master = fake_master_factory(scenario=SCENARIO)
    scenario = build(SCENARIO)
    tables = Tables(scenario)
    config = config_for(master, gtid_mode=True)
    first = read_to(master, scenario, config, tables, "0-1-5")
    wait_until(lambda: master.dumps() == [], "the first client's dump gone")
    last = master.master_status()[0]
    assert master.purge_to(last)
    again = BlockingReplica(master.host, master.port, config, start=first.position)
    with pytest.raises(BinlogUnavailable) as raised:
        for change in again.changes():
            tables.apply(change)
    assert raised.value.errno == 1236 and not raised.value.retryable
    assert GTID_PURGED in str(raised.value)
    assert again.connections == 1
    Oracle(scenario).assert_matches(tables.rows, after=5)


NEW_PRIMARY_ID = 3
NO_LOG_FILE = "Could not find first log file name in binary log index file"


def statement(number: int) -> list[QueryEvent]:
    return [QueryEvent(query=b"SELECT %d" % number, database="")]


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_failover_to_new_file_names_and_positions(fake_master_factory: Any, mode: str) -> None:
    """A failover on the same port to a promoted replica's binlog: same domain and history,
    its own server id and file names (so other positions). In GTID mode the client goes on
    from its GTID position and gets the new primary's groups, each once; in file/pos mode it
    asks for a file the new primary does not have and stops with ERR 1236 and the text a real
    primary sends for an unknown file (what a real 10.11 replica does,
    tests/integration/test_faults_server_restart.py)."""
    old = MemoryBinlogStore(server_id=1)
    served = [str(old.append_transaction(statement(n)).gtid) for n in range(10)]
    master = fake_master_factory(store=old)
    client = BlockingReplica(
        master.host,
        master.port,
        config_for(master, gtid_mode=mode == "gtid"),
        reconnect=ReconnectPolicy(max_retries=3, delay=0.01),
    )
    seen: list[str] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            with client:
                for group in client.groups():
                    seen.append(str(group.gtid_text))
        except BaseException as raised:  # noqa: BLE001 - the test reads it
            error.append(raised)

    new = MemoryBinlogStore(
        server_id=NEW_PRIMARY_ID,
        basename="failover-bin",
        initial_state=old.end_state().gtid_list(),
    )
    promoted = [str(new.append_transaction(statement(n)).gtid) for n in range(10, 13)]
    client.until = lambda p: p.covers(Position.from_gtids(promoted[-1]))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(lambda: len(seen) == len(served), "the client caught up with the old primary")
    master.restart(server_id=NEW_PRIMARY_ID, store=new)
    thread.join(PATIENCE)
    assert not thread.is_alive(), "the client did not stop"
    assert promoted[0].startswith(f"0-{NEW_PRIMARY_ID}-")
    assert client.connections >= 2
    if mode == "gtid":
        assert error == []
        assert seen == served + promoted
    else:
        assert len(error) == 1 and isinstance(error[0], BinlogUnavailable), error
        assert error[0].errno == 1236 and NO_LOG_FILE in str(error[0])
        assert seen == served


TX = PointKind.TRANSACTION
# The FIN/RST combinations tests/integration/test_client_faults.py does not have.
MORE_CUTS: dict[str, Fault] = {
    "cut_rst_before_event": cut(Point(PointKind.EVENT, 9), "rst"),
    "cut_fin_inside_event": cut(Point(PointKind.EVENT, 14, Where.INSIDE, 30)),
    "cut_fin_before_transaction": cut(Point(TX, 5)),
    "cut_rst_after_transaction": cut(Point(TX, 7, Where.AFTER), "rst"),
    "cut_rst_after_event": cut(Point(PointKind.EVENT, 20, Where.AFTER), "rst"),
}


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@pytest.mark.parametrize("case", sorted(MORE_CUTS))
def test_client_resumes_after_more_cuts(fake_master_factory: Any, case: str, mode: str) -> None:
    fault = MORE_CUTS[case]
    master = fake_master_factory(scenario=SCENARIO, faults=FaultPlan((fault,)))
    tables, client = replicate(master, wire_config(master, gtid_mode=mode == "gtid"))
    Oracle(build(SCENARIO)).assert_matches(tables.rows)
    applied = [a.fault for engine in master.fault_proxy.engines for a in engine.applied]
    assert applied == [fault], "the fault did not happen"
    assert client.connections >= 2 and client.errors, client.errors
    assert all(isinstance(error, ConnectionLost) for error in client.errors), client.errors
