"""The project's replica client against the fake master serving every built-in scenario: the
change events it hands over, applied to the scenario's initial tables, give the oracle's
tables, by GTID and by file/position, and the decoded events come in the served order."""

from __future__ import annotations

from typing import Any

import pytest

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from scenarios.compiler import compile_scenario
from scenarios.library import LIBRARY, build
from scenarios.oracle import Oracle
from tests.support.client_apply import Tables, catalogue, initial, target


def replicate(master: Any, scenario: Any, **settings: Any) -> tuple[Tables, BlockingReplica]:
    config = ClientConfig(user=master.user, password=master.password, server_id=77, **settings)
    goal = target(scenario)
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        until=lambda p: p.covers(goal),
        catalogue=catalogue(scenario),
    )
    with client:
        tables = Tables(scenario).apply_all(client.changes())
    return tables, client


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_client_ends_with_the_oracles_tables(
    fake_master_factory: Any, name: str, mode: str
) -> None:
    scenario = build(name)
    # All released (snapshot_then_stream, live_stream and long_idle start with fewer).
    master = fake_master_factory(scenario=name, released=Oracle(scenario).points)
    tables, client = replicate(master, scenario, gtid_mode=mode == "gtid")
    Oracle(scenario).assert_matches(tables.rows)
    assert client.connections == 1 and client.errors == []
    assert client.position.covers(target(scenario))
    assert client.ready is not None and client.ready.checksum == scenario.settings.binlog_checksum


def test_client_groups_are_the_served_transactions_in_order(fake_master_factory: Any) -> None:
    scenario = build("multi_domain")
    master = fake_master_factory(scenario="multi_domain")
    goal = target(scenario)
    config = ClientConfig(user=master.user, password=master.password, server_id=77)
    with BlockingReplica(
        master.host, master.port, config, start=initial(scenario), until=lambda p: p.covers(goal)
    ) as client:
        groups = list(client.groups())
    served = [
        (item.gtid.domain_id, item.gtid.server_id, item.gtid.seq_no)
        for item in compile_scenario(scenario)
        if item.gtid is not None
    ]
    assert [g.gtid for g in groups] == served
    assert all(isinstance(g, CommittedGroup) for g in groups)
    # Each group's position is the resume position after it: its GTID is in it.
    for group in groups:
        assert group.gtid is not None and group.position.has(group.gtid[0], group.gtid[2])
    assert isinstance(groups[-1].position, Position)


@pytest.mark.parametrize("name", ["every_type", "rotation_storm"])
def test_client_that_asks_for_no_checksums_gets_events_without_them(
    fake_master_factory: Any, name: str
) -> None:
    scenario = build(name)
    assert scenario.settings.binlog_checksum  # the binlog has them; the client asks for NONE
    master = fake_master_factory(scenario=name)
    tables, client = replicate(master, scenario, checksum=False)
    Oracle(scenario).assert_matches(tables.rows)
    assert client.ready is not None and client.ready.checksum is False
    assert client.errors == []


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_prepared_xa_is_handed_over_once_at_its_commit_across_a_reconnect(
    fake_master_factory: Any, mode: str
) -> None:
    scenario = build("xa")
    master = fake_master_factory(scenario="xa")
    served = [item for item in compile_scenario(scenario) if item.gtid is not None]
    kinds = [(item.gtid, [type(e).__name__ for e in item.events]) for item in served]
    # The first prepared group, and the XA COMMIT group of its xid (standalone, a QUERY).
    prepare = next(g for g, names in kinds if names[-1] == "XaPrepareEvent")
    commit = next(
        item.gtid
        for item in served
        if item.gtid.seq_no > prepare.seq_no
        and any(getattr(e, "query", b"").startswith(b"XA COMMIT") for e in item.events)
    )
    goal = target(scenario)
    config = ClientConfig(
        user=master.user, password=master.password, server_id=77, gtid_mode=mode == "gtid"
    )
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        until=lambda p: p.has(prepare.domain_id, prepare.seq_no),
    )
    tables = Tables(scenario)
    with client:
        tables.apply_all(client.changes())
    # Stopped just after the XA PREPARE group: its changes are held, not handed over.
    assert len(client.change_stream.prepared) == 1
    before_commit = list(tables.applied)
    assert all(c.gtid is not None and c.gtid[2] < prepare.seq_no for c in before_commit)
    client.until = lambda p: p.covers(goal)
    with client:  # a new connection from the position after the XA PREPARE group
        tables.apply_all(client.changes())
    assert client.connections == 2 and client.errors == []
    Oracle(scenario).assert_matches(tables.rows)  # each change once (Tables checks it)
    committed = [c for c in tables.applied if c.qualified == "xa.acct" and c.operation == "update"]
    # The transfer's two updates come with its XA COMMIT group's GTID, after the group
    # committed while it was prepared; the one still prepared at the end is held.
    assert [c.row_index for c in committed] == [0, 1]
    assert {c.gtid for c in committed} == {(commit.domain_id, commit.server_id, commit.seq_no)}
    assert commit.seq_no > prepare.seq_no + 1  # another group committed in between
    assert len(client.change_stream.prepared) == 1
