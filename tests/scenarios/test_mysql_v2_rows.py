"""MySQL-flavoured v2 rows events (compiled only: no MariaDB writes them): the decoded stream
replayed agrees with the oracle, python-mysql-replication reading them from fakemaster ends
with the oracle's tables (a MariaDB replica applying them: test_served_to_replica)."""

from __future__ import annotations

from typing import Any

import pytest

from fakemaster.vocabulary.events import RowsEvent
from scenarios.compiler import compile_scenario, to_store
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, Settings
from scenarios.oracle import Oracle
from tests.peers.policy import require_module
from tests.scenarios.test_differential import big_rows, shop
from tests.scenarios.test_properties import assert_replay_agrees

V2 = Settings(rows_event_version=2, binlog_row_metadata="FULL")


def test_every_rows_event_is_v2_and_the_stream_replays() -> None:
    for scenario in (shop(V2), big_rows(Settings(rows_event_version=2))):
        rows = [e for item in compile_scenario(scenario) for e in item.events]
        rows = [e for e in rows if isinstance(e, RowsEvent)]
        assert rows and {e.version for e in rows} == {2}
        assert_replay_agrees(scenario)


def test_v2_rows_split_counting_their_longer_header() -> None:
    sizes = []
    for version in (1, 2):
        scenario = big_rows(Settings(rows_event_version=version))
        events = [e for item in compile_scenario(scenario)[-2:] for e in item.events]
        sizes.append([len(e.rows) for e in events if isinstance(e, RowsEvent)])
    # The edge insert whose second row fits exactly under v1 (8 bytes of post-header) does not
    # under v2 (10 bytes and 2 of extra data): that row starts the next event.
    assert sizes == [[2, 1, 1, 2], [1, 2, 1, 2]]


def test_v2_rows_are_not_compressed() -> None:
    with pytest.raises(ScenarioError, match="not compressed"):
        Settings(rows_event_version=2, log_bin_compress=True)
    with pytest.raises(ScenarioError, match="1 .MariaDB. or 2"):
        Settings(rows_event_version=3)


def test_python_mysql_replication_reads_v2_rows(fake_master_factory: Any) -> None:
    require_module("pymysqlreplication", "pip install mysql-replication")
    from tests.support.toy_client import apply_row_events

    scenario = Scenario(V2)
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, status ENUM('new','paid') NOT NULL,"
        " note VARCHAR(40), amount DECIMAL(8,2))"
    )
    scenario.insert("shop.orders", *({"id": n, "status": "new", "note": "x" * n} for n in range(9)))
    with scenario.transaction() as tx:
        tx.update("shop.orders", {"id": 1}, {"status": "paid", "amount": "2.50"})
        tx.delete("shop.orders", {"id": 2})
    master = fake_master_factory(
        store=to_store(scenario), variables={"binlog_row_metadata": "FULL"}
    )
    # python-mysql-replication gives ENUM members as names, VARCHAR as str: the oracle's diff
    # converts them per column.
    tables = apply_row_events({}, master.host, master.port, master.user, master.password)
    Oracle(scenario).assert_matches(tables)
