"""LOCK TABLES holds a served scenario's releases back, as FLUSH TABLES WITH READ LOCK does, until
UNLOCK TABLES, a new transaction (which releases table locks, not the global read lock) or the
connection's end; what waited is written then, and the reads under the lock agree with SHOW
MASTER STATUS. (The answers themselves are compared with a real server in
``test_snapshot_mysql_schema.py``.)"""

from __future__ import annotations

from collections.abc import Callable

import pymysql
import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.history import Scenario
from scenarios.live import ScenarioStore
from tests.fakemaster.server.test_server import wait_for


def shop() -> Scenario:
    scenario = Scenario()
    scenario.create_table("CREATE TABLE shop.orders (id INT PRIMARY KEY, n INT NOT NULL)")
    scenario.create_table("CREATE TABLE shop.other (id INT PRIMARY KEY)")
    for number in range(1, 4):
        scenario.insert("shop.orders", {"id": number, "n": number})
    return scenario


def _status(cursor: pymysql.cursors.Cursor) -> tuple[str, int]:
    cursor.execute("SHOW MASTER STATUS")
    row = cursor.fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def _count(cursor: pymysql.cursors.Cursor) -> int:
    cursor.execute("SELECT COUNT(*) FROM shop.orders")
    row = cursor.fetchone()
    assert row is not None
    return int(row[0])


def _failing_lock(connection: pymysql.connections.Connection) -> None:
    """A LOCK TABLES that fails (1146) still lets the earlier table locks go."""
    with pytest.raises(pymysql.err.ProgrammingError):
        connection.cursor().execute("LOCK TABLES shop.nosuch READ")


ENDS: dict[str, Callable[[pymysql.connections.Connection], None]] = {
    "unlock": lambda c: c.cursor().execute("UNLOCK TABLES"),
    "begin": lambda c: c.cursor().execute("BEGIN"),
    "consistent_snapshot": lambda c: c.cursor().execute(
        "START TRANSACTION WITH CONSISTENT SNAPSHOT"
    ),
    "new_lock_failing": lambda c: _failing_lock(c),
    "disconnect": lambda c: c.close(),
}


@pytest.mark.parametrize("end", sorted(ENDS))
def test_lock_tables_holds_releases_until_it_ends(end: str) -> None:
    store = ScenarioStore(shop(), released=1)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        holder = pymysql.connect(host=master.host, port=master.port, user="root", password="")
        watcher = pymysql.connect(
            host=master.host, port=master.port, user="root", password="", autocommit=True
        )
        with holder.cursor() as cursor, watcher.cursor() as watch:
            cursor.execute("LOCK TABLES shop.orders READ, shop.other READ")
            before = _status(cursor)
            assert _count(cursor) == 1
            assert master.release_all() == 0  # waits for the lock
            assert store.released == 1
            assert _status(watch) == before and _count(watch) == 1
            ENDS[end](holder)
            # The waiting transactions are written when the lock goes (a closed connection's
            # end reaches the server on its own time: waited for, bounded only against a hang).
            wait_for(lambda: store.released == 3)
            assert _status(watch) != before
            assert _count(watch) == 3
        watcher.close()
        if end != "disconnect":
            holder.close()
        assert master.errors == []


def test_the_global_read_lock_outlives_a_new_transaction() -> None:
    """BEGIN releases LOCK TABLES, not FLUSH TABLES WITH READ LOCK (MariaDB's rule)."""
    store = ScenarioStore(shop(), released=1)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        holder = pymysql.connect(host=master.host, port=master.port, user="root", password="")
        with holder.cursor() as cursor:
            cursor.execute("FLUSH TABLES WITH READ LOCK")
            assert master.release_all() == 0
            cursor.execute("BEGIN")
            assert store.released == 1
            cursor.execute("UNLOCK TABLES")
            assert store.released == 3
        holder.close()
        assert master.errors == []
