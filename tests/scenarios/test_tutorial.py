"""The README's tutorial, run: a toy CDC client (python-mysql-replication) reads a scenario
served by fakemaster (the pytest plugin's factory) and ends with the tables the oracle says."""

from __future__ import annotations

from typing import Any

from scenarios import Oracle, Scenario, Settings, to_store
from tests.support.toy_client import apply_row_events


# --- the client under test: copies every table it sees into dicts --------------------------
def toy_client(host: str, port: int, user: str, password: str) -> dict[str, list[dict[str, Any]]]:
    return apply_row_events({}, host, port, user, password)


# --- the README example --------------------------------------------------------------------
def shop_scenario() -> Scenario:
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))  # the library needs column names
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, status ENUM('new','paid') NOT NULL,"
        " note VARCHAR(40))"
    )
    scenario.insert("shop.orders", {"id": 1, "status": "new", "note": "first"})
    with scenario.transaction() as tx:
        tx.update("shop.orders", {"id": 1}, {"status": "paid"})
        tx.insert("shop.orders", {"id": 2, "status": "new", "note": None})
    scenario.delete("shop.orders", {"id": 2})
    return scenario


def test_a_toy_client_ends_with_the_oracles_tables(fake_master_factory: Any) -> None:
    scenario = shop_scenario()
    master = fake_master_factory(
        store=to_store(scenario), variables={"binlog_row_metadata": "FULL"}
    )
    tables = toy_client(master.host, master.port, master.user, master.password)
    Oracle(scenario).assert_matches(tables)  # raises with a readable diff when they differ


def test_the_oracle_diff_says_what_a_client_got_wrong() -> None:
    scenario = shop_scenario()
    wrong = {"shop.orders": [{"id": 1, "status": "new", "note": "first"}]}
    diffs = Oracle(scenario).diff(wrong)
    assert [line for d in diffs for line in d.lines()] == [
        "shop.orders: 1 row(s) missing, 1 unexpected",
        "  - id=1, status='paid', note='first'",
        "  + id=1, status='new', note='first'",
    ]
