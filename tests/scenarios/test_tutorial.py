"""The README's tutorial, run: a toy CDC client (python-mysql-replication) reads a scenario
served by fakemaster (the pytest plugin's factory) and ends with the tables the oracle says."""

from __future__ import annotations

from typing import Any

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from scenarios import Oracle, Scenario, Settings, to_store


# --- the client under test: copies every table it sees into dicts --------------------------
def toy_client(host: str, port: int, user: str, password: str) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {}
    stream = BinLogStreamReader(
        connection_settings={"host": host, "port": port, "user": user, "passwd": password},
        server_id=99,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
    )
    try:
        for event in stream:
            rows = tables.setdefault(f"{event.schema}.{event.table}", [])
            for row in event.rows:
                if isinstance(event, WriteRowsEvent):
                    rows.append(row["values"])
                elif isinstance(event, UpdateRowsEvent):
                    rows[rows.index(row["before_values"])] = row["after_values"]
                else:
                    rows.remove(row["values"])
    finally:
        stream.close()
    return tables


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
        "  - id='1', status='paid', note='first'",
        "  + id='1', status='new', note='first'",
    ]
