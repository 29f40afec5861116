"""The built-in scenarios served live: snapshot_then_stream (a SQL snapshot, then the stream
from its coordinates), live_stream (read while releases happen, equal to the oracle at every
stop point) and long_idle (heartbeats only while idle; an idle period pauses --live releases).
Releases are driven by the test: no timing decides a verdict."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pymysql

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from scenarios.library import SERVING, Serving, build, serving
from scenarios.live import ScenarioStore, release_at_rate
from scenarios.oracle import Oracle, canonical_rows
from tests.fakemaster.cli.test_serve_cli import serve
from tests.support.client_apply import Tables, catalogue, target


def _client(master: Any, scenario: Any, start: Position, until: Any, **settings: Any) -> Any:
    config = ClientConfig(user=master.user, password=master.password, server_id=78, **settings)
    return BlockingReplica(
        master.host, master.port, config, start=start, until=until, catalogue=catalogue(scenario)
    )


def test_the_library_says_which_scenarios_start_with_nothing_released() -> None:
    assert serving("snapshot_then_stream").released == 0
    assert serving("live_stream").released == 0 and serving("live_stream").rate
    assert serving("every_type").released is None and serving(build("xa")).released is None
    assert serving("long_idle") == Serving(released=1, rate=1.0)
    assert set(SERVING) == {"snapshot_then_stream", "live_stream", "long_idle"}


def test_snapshot_then_stream_from_the_snapshots_coordinates(fake_master_factory: Any) -> None:
    scenario = build("snapshot_then_stream")
    oracle = Oracle(scenario)
    master = fake_master_factory(scenario="snapshot_then_stream")  # nothing released
    assert master.store.released == 0
    assert master.release(10) == 10  # a few before the snapshot: it is not the initial rows
    connection = pymysql.connect(host=master.host, port=master.port, user="root", password="")
    snapshot: dict[str, list[tuple[Any, ...]]] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("FLUSH TABLES WITH READ LOCK")
            cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            cursor.execute("SELECT @@gtid_binlog_pos")
            (gtid_pos,) = cursor.fetchone()
            cursor.execute("SHOW TABLES FROM snap")
            names = sorted(row[0] for row in cursor.fetchall())
            assert names == ["accounts", "log"]
            for name in names:
                key = "id" if name == "accounts" else "seq"
                cursor.execute(f"SELECT * FROM snap.{name} ORDER BY {key}")
                snapshot[f"snap.{name}"] = [
                    tuple(None if c is None else str(c) for c in row) for row in cursor.fetchall()
                ]
            cursor.execute("UNLOCK TABLES")
            cursor.execute("COMMIT")
    finally:
        connection.close()
    at = oracle.state(10)
    for name, rows in snapshot.items():
        assert rows == canonical_rows(scenario.tables[name], at.rows[name])
    assert gtid_pos == "0-1-10"
    # The rest is released while the client streams from the snapshot's coordinates.
    assert master.release(25) == 25
    tables = Tables(scenario)
    tables.rows = {name: list(rows) for name, rows in at.rows.items()}
    goal = target(scenario)
    with _client(master, scenario, Position.from_gtids(gtid_pos), lambda p: p.covers(goal)) as c:
        changes = c.changes()
        first = next(changes)
        assert first.gtid == (0, 1, 11)  # the first transaction after the snapshot
        tables.apply(first)
        assert master.release_all() == oracle.points - 35
        tables.apply_all(changes)
        assert c.errors == []
    oracle.assert_matches(tables.rows)


def test_live_stream_equals_the_oracle_at_every_stop_point(fake_master_factory: Any) -> None:
    scenario = build("live_stream")
    oracle = Oracle(scenario)
    master = fake_master_factory(scenario="live_stream")
    assert master.store.released == 0 and oracle.points > 1000
    tables = Tables(scenario)
    goal = [Position()]
    with _client(master, scenario, Position(), lambda p: p.covers(goal[0])) as client:
        released = 0
        for step in (1, 7, 50, 300, 123):  # stop points, released on demand
            assert master.release(step) == step
            released += step
            goal[0] = Position.from_gtids(master.store.gtid_binlog_pos())
            tables.apply_all(client.changes())
            oracle.assert_matches(tables.rows, released)
        assert client.errors == []
    assert master.store.pending == oracle.points - released


def test_long_idle_sends_only_heartbeats_between_two_releases(fake_master_factory: Any) -> None:
    scenario = build("long_idle")
    oracle = Oracle(scenario)
    master = fake_master_factory(scenario="long_idle")  # the first insert, then idle
    assert master.store.released == 1 and master.store.idle_ahead() == 3600
    first = Position.from_gtids(master.store.gtid_binlog_pos())
    holder: list[BlockingReplica] = []
    client = _client(
        master,
        scenario,
        Position(),
        lambda p: p.covers(first) and holder[0].heartbeats >= 3,
        heartbeat_period=0.05,
    )
    holder.append(client)
    with client:
        items = list(client.items())
    groups = [i for i, item in enumerate(items) if isinstance(item, CommittedGroup)]
    assert len(groups) == 1 and groups[0] == len(items) - 1  # nothing after the group...
    assert client.heartbeats >= 3  # ...but heartbeats
    assert master.store.released == 1
    tables = Tables(scenario)
    tables.apply_all(c for g in items if isinstance(g, CommittedGroup) for c in _changes(g))
    oracle.assert_matches(tables.rows, 1)
    assert master.release(1) == 1  # the idle period ends: the second insert
    goal = target(scenario)
    with _client(master, scenario, client.position, lambda p: p.covers(goal)) as again:
        tables.apply_all(again.changes())
    oracle.assert_matches(tables.rows)


def _changes(group: CommittedGroup) -> Any:
    from fakemaster.client.changes import group_changes

    return group_changes(group, None)


def _released_with(idle_scale: float) -> tuple[list[float], int]:
    store = ScenarioStore(build("long_idle"), released=0)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    asyncio.run(release_at_rate(store, 4.0, idle_scale=idle_scale, sleep=sleep))
    return waits, store.released


def test_an_idle_period_pauses_releases_at_a_rate_for_its_scaled_duration() -> None:
    assert _released_with(1.0) == ([0.25, 0.25, 3600.0], 2)
    assert _released_with(0.001) == ([0.25, 0.25, 3.6], 2)
    assert _released_with(0.0) == ([0.25, 0.25], 2)


def _select(host: str, port: int, sql: str) -> list[tuple[Any, ...]]:
    connection = pymysql.connect(host=host, port=port, user="root", password="")
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        connection.close()


def test_serve_starts_snapshot_then_stream_with_nothing_released() -> None:
    with serve("--scenario", "snapshot_then_stream") as served:
        assert _select(served.host, served.port, "SELECT @@gtid_binlog_pos") == [("",)]
        rows = _select(served.host, served.port, "SELECT COUNT(*) FROM snap.log")
        assert rows == [(len(build("snapshot_then_stream").initial.rows["snap.log"]),)]


def test_serve_releases_live_stream_at_its_default_rate() -> None:
    with serve("--scenario", "live_stream") as served:
        seen = ""
        deadline = time.monotonic() + 60  # a bound on a hang only
        while time.monotonic() < deadline and seen in ("", "0-1-1"):
            seen = _select(served.host, served.port, "SELECT @@gtid_binlog_pos")[0][0]
            time.sleep(0.05)
        assert seen.startswith("0-1-") and int(seen.split("-")[2]) >= 2  # it keeps releasing


def test_serve_long_idle_holds_the_second_insert_for_the_idle_hour() -> None:
    with serve("--scenario", "long_idle") as served:
        # The first insert is there at once; the second waits an hour (--idle-scale 1).
        assert _select(served.host, served.port, "SELECT @@gtid_binlog_pos") == [("0-1-1",)]
        assert _select(served.host, served.port, "SELECT id FROM idle.t") == [(1,)]
