"""The pytest plugin serves a scenario: ``fake_master_factory(scenario=...)`` and the
``fake_master`` marker, with the server variables its settings describe."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from scenarios import Oracle, Scenario, Settings
from scenarios.library import build
from tests.fakemaster.cli.test_serve_scenario import stream_into


def select(master: Any, *names: str) -> tuple[Any, ...]:
    connection = pymysql.connect(
        host=master.host, port=master.port, user=master.user, password=master.password
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(f"@@{name}" for name in names))
            row = cursor.fetchone()
    finally:
        connection.close()
    assert row is not None
    return tuple(row)


def small() -> Scenario:
    scenario = Scenario(Settings(binlog_row_metadata="FULL", binlog_row_image="NOBLOB"))
    scenario.create_table("CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10), n INT)")
    scenario.insert("s.t", {"id": 1, "v": "one", "n": 1}, {"id": 2, "v": "two", "n": 2})
    with scenario.transaction(domain_id=4, server_id=8) as tx:
        tx.update("s.t", {"id": 1}, {"v": "uno"})
        tx.delete("s.t", {"id": 2})
    return scenario


def test_the_factory_serves_a_scenario_object(fake_master_factory: Any) -> None:
    scenario = small()
    master = fake_master_factory(scenario=scenario, user="repl", password="pw")
    tables: dict[str, list[dict[str, Any]]] = {}
    stream_into(tables, master.host, master.port)
    Oracle(scenario).assert_matches(tables)
    assert select(master, "binlog_row_image", "binlog_row_metadata", "gtid_binlog_pos") == (
        "NOBLOB",
        "FULL",
        "0-1-1,4-8-1",
    )


@pytest.mark.fake_master(scenario="multi_domain", user="repl", password="pw")
def test_the_marker_serves_a_built_in_scenario(fake_master: Any) -> None:
    # gtid_state 0-1-100 and 2-9-7; twelve transactions in domains 0, 1, 2 (servers 1, 5, 9)
    # in turn, then one in domain 1 from server 6.
    assert select(fake_master, "gtid_binlog_pos") == ("0-1-104,1-6-5,2-9-11",)
    tables: dict[str, list[dict[str, Any]]] = {}
    stream_into(tables, fake_master.host, fake_master.port)
    Oracle(build("multi_domain")).assert_matches(tables)


def test_variables_that_contradict_the_scenario_are_refused(fake_master_factory: Any) -> None:
    with pytest.raises(ValueError, match="binlog_row_image"):
        fake_master_factory(scenario=small(), variables={"binlog_row_image": "FULL"})
    agreeing = fake_master_factory(scenario=small(), variables={"binlog_row_image": "noblob"})
    assert select(agreeing, "binlog_row_image") == ("NOBLOB",)


def test_a_scenario_and_a_store_are_one_too_many(fake_master_factory: Any) -> None:
    with pytest.raises(ValueError, match="at most one"):
        fake_master_factory(scenario=small(), demo=True)
