"""A replica client streaming from the fake master while the primary commits: the client
consumes change events in a thread (:class:`Background`) and catches up with a built-in
scenario, then ``EXTRA`` more transactions are committed, each appended while it is connected
(:func:`stream_live_commits`). Shared by the semi-sync and compressed-protocol client tests."""

from __future__ import annotations

import threading
import time
from typing import Any, Protocol

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.changes import ChangeEvent
from fakemaster.client.position import Position
from fakemaster.client.protocol import ClientConfig
from scenarios.compiler import compile_scenario
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.oracle import Oracle
from tests.support.client_apply import Tables, catalogue, initial, target

__all__ = ["EXTRA", "SCENARIO", "Background", "grown", "stream_live_commits"]

SCENARIO = "rotation_storm"
EXTRA = 3  # transactions committed while the client is connected


class _Applies(Protocol):
    def apply(self, change: ChangeEvent) -> None: ...


def grown() -> Scenario:
    scenario = build(SCENARIO)
    for n in range(EXTRA):
        scenario.insert("storm.t", {"id": 1000 + n, "n": n})
    return scenario


class Background:
    """The client consuming change events in a thread."""

    def __init__(self, client: BlockingReplica, tables: _Applies) -> None:
        self.client = client
        self.tables = tables
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            with self.client:
                for change in self.client.changes():
                    self.tables.apply(change)
        except BaseException as error:  # noqa: BLE001 - reported by join
            self.error = error

    def wait_for(self, goal: Position) -> None:
        while not self.client.position.covers(goal) and self.thread.is_alive():
            time.sleep(0.01)
        assert self.error is None, self.error

    def join(self) -> None:
        self.thread.join(60)
        assert not self.thread.is_alive(), "the client did not finish"
        assert self.error is None, self.error


def stream_live_commits(
    master: Any, config: ClientConfig, *, wait_for_acks: bool
) -> tuple[BlockingReplica, list[bool]]:
    """A client of ``config`` streams ``master`` (serving ``SCENARIO``) until it has caught up,
    then the ``EXTRA`` transactions of :func:`grown` are appended (each commit's semi-sync ACK
    waited for when ``wait_for_acks``) and the client runs to their end. Asserts that its
    tables are the oracle's and that it connected once without error; returns the client and
    what each wait for an ACK returned."""
    base, full = build(SCENARIO), grown()
    goal = target(full)
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(full),
        until=lambda p: p.covers(goal),
        catalogue=catalogue(full),
    )
    tables = Tables(full)
    consumer = Background(client, tables)
    consumer.wait_for(target(base))
    acknowledged = []
    for item in compile_scenario(full)[-EXTRA:]:
        assert item.gtid is not None
        master.append_transaction(item.events[1:], server_id=item.gtid.server_id)
        if wait_for_acks:
            acknowledged.append(master.wait_for_ack())
    consumer.join()
    Oracle(full).assert_matches(tables.rows)
    assert client.connections == 1 and client.errors == []
    return client, acknowledged
