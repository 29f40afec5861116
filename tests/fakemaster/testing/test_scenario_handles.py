"""A handle serving a scenario hands over what a client needs: the scenario, its oracle, where
to start (checked against what the served binlog says, and the empty start refused as the issue
found it), where the history ends, the initial rows; ``fake_master_serving`` for @given."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from fakemaster.client import BinlogUnavailable, BlockingReplica, ClientConfig, Position
from scenarios.library import build


def test_multi_domain_start_is_the_first_files_gtid_state(fake_master_factory: Any) -> None:
    master = fake_master_factory(scenario="multi_domain")
    first = master.store.first_file()
    # The served binlog's own answer (BINLOG_GTID_POS of its first event), not the handle's.
    assert master.start_gtid == master.store.binlog_gtid_pos(first, 4) != ""
    assert (master.start_file, master.start_pos) == (first, 4)
    assert master.start_position == Position.from_gtids(master.start_gtid).at(first, 4)
    assert Position.from_gtids(master.end_gtid) == Position.from_gtids(
        master.store.gtid_binlog_pos()
    )


def test_the_empty_start_is_refused_on_multi_domain(fake_master_factory: Any) -> None:
    master = fake_master_factory(scenario="multi_domain")
    config = ClientConfig(user=master.user, password=master.password, server_id=7)
    client = BlockingReplica(master.host, master.port, config, start=Position())
    with pytest.raises(BinlogUnavailable, match="1236"), client:
        for _ in client.changes():
            pass


def test_end_covers_what_is_not_released_yet(fake_master_factory: Any) -> None:
    master = fake_master_factory(scenario="snapshot_then_stream")
    assert master.store.pending > 0
    before = master.end_gtid
    master.release_all()
    assert before == master.store.gtid_binlog_pos() != master.start_gtid


def test_initial_rows_are_the_rows_before_the_binlog(fake_master_factory: Any) -> None:
    master = fake_master_factory(scenario="primary_key_updates")
    scenario = build("primary_key_updates")
    rows = master.initial_rows()
    for name, table in scenario.initial_tables.items():
        expected = [
            dict(zip(table.column_names, row, strict=True)) for row in scenario.initial.rows[name]
        ]
        assert rows[name] == expected and rows[name]
    rows[name].clear()  # a copy each call
    assert master.initial_rows()[name]
    assert master.scenario.tables.keys() == master.oracle.tables().keys() == rows.keys()


def test_initial_binary_values_are_as_the_binlog_carries_them(fake_master_factory: Any) -> None:
    from scenarios import Scenario, Settings

    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE db.t (k INT PRIMARY KEY, b BINARY(3))", rows=[{"k": 1, "b": b"a"}]
    )
    scenario.delete("db.t", {"k": 1})
    master = fake_master_factory(scenario=scenario)
    assert master.initial_rows() == {"db.t": [{"k": 1, "b": b"a"}]}
    config = ClientConfig(user=master.user, password=master.password, server_id=7)
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=master.start_position,
        until=lambda p: p.covers(master.end_position),
    )
    with client:
        befores = [dict(c.before) for c in client.changes() if c.before is not None]
    assert befores == master.initial_rows()["db.t"]


def test_a_handle_without_scenario_says_so(fake_master: Any) -> None:
    for name in ("scenario", "oracle", "start_gtid", "end_gtid", "start_position"):
        with pytest.raises(TypeError, match="serves no scenario"):
            getattr(fake_master, name)


def test_fake_master_serving_starts_and_stops_one(fake_master_serving: Any) -> None:
    with fake_master_serving(scenario="xa") as master:
        assert master.scenario.tables
        address = (master.host, master.port)
        socket.create_connection(address).close()
    with pytest.raises(ConnectionRefusedError):  # stopped when the block ends
        socket.create_connection(address).close()


def test_fake_master_serving_fails_on_server_errors(fake_master_serving: Any) -> None:
    with pytest.raises(AssertionError, match="recorded 1 error"):
        with fake_master_serving() as master:
            master.errors.append(RuntimeError("a handler failed"))
