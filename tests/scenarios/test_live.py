"""A scenario served live: its transactions released on demand (ScenarioStore.release, the
plugin handle's release()/release_all(), FakeMaster/BackgroundFakeMaster.release) or at a rate
(``serve --scenario X --live RATE``), the SQL snapshot following what the binlog holds."""

from __future__ import annotations

import time
from typing import Any

import pymysql
import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Oracle, Scenario, Settings
from scenarios.compiler import binlog_files, to_store
from scenarios.library import LIBRARY, build
from scenarios.live import ScenarioStore
from scenarios.oracle import canonical_rows
from tests.fakemaster.cli.test_serve_cli import run_cli, serve


def small() -> Scenario:
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table("CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10))")
    scenario.insert("s.t", {"id": 1, "v": "one"})
    scenario.rotate()
    scenario.insert("s.t", {"id": 2, "v": "two"})
    scenario.update("s.t", {"id": 1}, {"v": "uno"})
    scenario.rotate()
    return scenario


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_released_one_by_one_the_binlog_ends_as_the_whole_compiled_scenario(name: str) -> None:
    scenario = build(name)
    store = ScenarioStore(scenario, released=0)
    oracle = Oracle(scenario)
    total = oracle.points  # transactions, DDL statements, XA COMMIT/ROLLBACK
    assert store.total == total
    # The oracle replays a point from the start (quadratic over a long scenario: live_stream's
    # 2,000 points took 85 s of CI): the snapshot is compared at the first 40 points and then
    # at about 60 spread over the rest; every release is one point all the same.
    stride = max(1, (total - 40) // 60)
    for released in range(total):
        if released < 40 or released % stride == 0 or released == total - 1:
            snapshot, _, _ = store.snapshot_point()
            assert snapshot.contents.rows == oracle.state(released).rows
        assert store.release(1) == 1
    assert store.release(5) == 0
    assert store.pending == 0
    assert binlog_files(store) == binlog_files(to_store(scenario))


def test_release_writes_the_rotations_before_each_transaction_and_at_the_end() -> None:
    store = ScenarioStore(small(), released=0)
    assert store.file_names() == ["mysql-bin.000001"]
    assert store.gtid_binlog_pos() == ""
    store.release(1)
    assert store.file_names() == ["mysql-bin.000001"]
    assert store.gtid_binlog_pos() == "0-1-1"
    store.release_all()
    assert store.file_names() == ["mysql-bin.000001", "mysql-bin.000002", "mysql-bin.000003"]
    assert store.gtid_binlog_pos() == "0-1-3"
    with pytest.raises(ValueError):
        store.release(-1)


def _select(master: Any, sql: str) -> list[tuple[Any, ...]]:
    connection = pymysql.connect(host=master.host, port=master.port, user="root", password="")
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [
                tuple(None if cell is None else str(cell) for cell in row)
                for row in cursor.fetchall()
            ]
    finally:
        connection.close()


def _table(master: Any, scenario: Scenario, after: int) -> None:
    table = scenario.tables["s.t"]
    want = canonical_rows(table, Oracle(scenario).rows("s.t", after))
    assert _select(master, "SELECT id, v FROM s.t ORDER BY id") == want


def test_the_plugin_handle_releases_and_the_snapshot_follows(fake_master_factory: Any) -> None:
    scenario = small()
    master = fake_master_factory(scenario=scenario, released=0)
    _table(master, scenario, 0)
    assert master.release(1) == 1
    _table(master, scenario, 1)
    status = _select(master, "SHOW MASTER STATUS")[0]
    assert (status[0], int(status[1])) == master.store.master_status()
    assert master.release_all() == 2
    _table(master, scenario, 3)
    assert _select(master, "SELECT @@gtid_binlog_pos") == [("0-1-3",)]


def test_released_only_goes_with_a_scenario(fake_master_factory: Any) -> None:
    with pytest.raises(ValueError, match="released= goes with scenario="):
        fake_master_factory(released=0)


def test_a_background_fake_master_releases_in_its_thread() -> None:
    scenario = small()
    store = ScenarioStore(scenario, released=1)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        assert master.release(1) == 1
        assert store.released == 2
        assert master.release_all() == 1
        _table(master, scenario, 3)


def test_serve_live_releases_a_scenario_at_a_rate() -> None:
    scenario = build("primary_key_updates")
    table = scenario.tables["pk.t"]
    want = canonical_rows(table, Oracle(scenario).final.rows["pk.t"])
    with serve("--scenario", "primary_key_updates", "--live", "200") as served:
        seen: list[list[tuple[Any, ...]]] = []
        deadline = time.monotonic() + 60  # a bound on a hang only
        while time.monotonic() < deadline:
            rows = _select(served, "SELECT * FROM pk.t ORDER BY id")
            if not seen or seen[-1] != rows:
                seen.append(rows)
            if rows == want:
                break
            time.sleep(0.01)
        assert seen[-1] == want


def test_serve_live_needs_a_scenario() -> None:
    done = run_cli("serve", "--port", "0", "--live", "5")
    assert done.returncode != 0
    assert "--live releases a scenario's transactions: give --scenario" in done.stderr


def test_a_read_lock_holds_releases_back_until_unlock(fake_master_factory: Any) -> None:
    scenario = small()
    master = fake_master_factory(scenario=scenario, released=1)
    locker = pymysql.connect(host=master.host, port=master.port, user="root", password="")
    try:
        with locker.cursor() as cursor:
            cursor.execute("FLUSH TABLES WITH READ LOCK")
            cursor.execute("SHOW MASTER STATUS")
            locked_at = cursor.fetchone()
            assert master.release(1) == 0  # waits for the lock, as a commit on MariaDB
            assert _select(master, "SHOW MASTER STATUS")[0][:2] == tuple(map(str, locked_at[:2]))
            _table(master, scenario, 1)
            cursor.execute("UNLOCK TABLES")
        _table(master, scenario, 2)
        with locker.cursor() as cursor:
            cursor.execute("FLUSH TABLES WITH READ LOCK")
        assert master.release_all() == 0
        _table(master, scenario, 2)
    finally:
        locker.close()  # the lock ends with the connection: what waited is released
    deadline = time.monotonic() + 30  # the server sees the close when it reads it
    while master.store.pending and time.monotonic() < deadline:
        time.sleep(0.01)
    _table(master, scenario, 3)


def test_the_catalogue_follows_ddl_as_points_are_released() -> None:
    """ddl_mid_stream released point by point (DDL statements count): the catalogue's tables
    are the oracle's at that point (created, altered, truncated, renamed, dropped), their
    columns in that point's order, as many rows as the oracle's, in that schema."""
    scenario = build("ddl_mid_stream")
    oracle = Oracle(scenario)
    store = ScenarioStore(scenario, released=0)
    catalogue = store.table_catalogue
    seen = set()
    for released in range(oracle.points + 1):
        assert store.released == released
        tables = oracle.tables(released)
        described = {f"{t.database}.{t.name}": t for t in catalogue.tables("ddl")}
        assert sorted(described) == sorted(tables)
        snapshot, _, _ = store.snapshot_point()
        for name, table in tables.items():
            columns = tuple(column.name for column in described[name].columns)
            assert columns == table.column_names, (released, name)
            seen.add((name, columns))
            # that point's rows, each with that point's columns (their values: over SQL below)
            rows = snapshot.rows(described[name])
            assert [len(row) for row in rows] == [table.width] * len(oracle.rows(name, released))
        store.release(1)
    assert catalogue.databases() == ["ddl"]
    # Every schema ddl.t goes through, and the tables created, renamed and dropped.
    assert {columns for name, columns in seen if name == "ddl.t"} == {
        ("id", "a", "n"),
        ("id", "b", "a"),
        ("a", "id", "b"),
        ("a", "b", "id"),
    }
    assert {name for name, _ in seen} == {"ddl.t", "ddl.tmp", "ddl.kept", "ddl.gone"}


def test_show_create_table_and_select_after_partial_releases_of_ddl() -> None:
    """Over SQL, after each release of ddl_mid_stream: SHOW TABLES, the columns SHOW CREATE
    TABLE names (in order) and SELECT * (column names and rows) are the oracle's at that point;
    a table not created yet or dropped is error 1146."""
    scenario = build("ddl_mid_stream")
    oracle = Oracle(scenario)
    store = ScenarioStore(scenario, released=0)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        connection = pymysql.connect(host=master.host, port=master.port, user="root", password="")
        try:
            for released in range(oracle.points + 1):
                tables = oracle.tables(released)
                with connection.cursor() as cursor:
                    cursor.execute("SHOW TABLES FROM ddl")
                    shown = sorted(row[0] for row in cursor.fetchall())
                    assert shown == sorted(name.split(".")[1] for name in tables), released
                    for name in ("ddl.t", "ddl.tmp", "ddl.kept", "ddl.gone"):
                        table = tables.get(name)
                        if table is None:
                            with pytest.raises(pymysql.err.ProgrammingError) as error:
                                cursor.execute(f"SHOW CREATE TABLE {name}")
                            assert error.value.args[0] == 1146
                            continue
                        cursor.execute(f"SHOW CREATE TABLE {name}")
                        text = cursor.fetchone()[1]
                        lines = text.splitlines()[1:]
                        named = [line.split("`")[1] for line in lines if line.startswith("  `")]
                        assert tuple(named) == table.column_names, (released, name, text)
                        cursor.execute(f"SELECT * FROM {name}")
                        assert tuple(d[0] for d in cursor.description) == table.column_names
                        got = sorted(
                            tuple(None if cell is None else str(cell) for cell in row)
                            for row in cursor.fetchall()
                        )
                        want = sorted(
                            canonical_rows(table, oracle.rows(name, released)),
                            key=lambda row: tuple(str(cell) for cell in row),
                        )
                        assert got == sorted(want), (released, name)
                assert master.release(1) == (1 if released < oracle.points else 0)
        finally:
            connection.close()
