"""Non-transactional (MyISAM) tables: each statement that changes one is its own event group
(GTID flagged ALLOW_PARALLEL only, ending with a COMMIT query), written before the group of the
transaction it is in, which loses its TRANSACTIONAL flag; as a real MariaDB 10.11 writes it."""

from __future__ import annotations

import pytest

from fakemaster.vocabulary.constants import EventFlag, GtidFlag, QueryStatus
from fakemaster.vocabulary.events import GtidEvent, QueryEvent, XidEvent
from scenarios.compiler import compile_scenario
from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_properties import assert_replay_agrees
from tests.support.mariadb_run import compare_with_server


def mixed(settings: Settings | None = None) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE n.m (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
        rows=[{"id": 1, "v": "a"}],
    )
    scenario.create_table("CREATE TABLE n.nokey (v INT) ENGINE=MyISAM")
    scenario.create_table("CREATE TABLE n.t (id INT PRIMARY KEY, v INT)")
    scenario.insert("n.m", {"id": 2, "v": "b"})
    with scenario.transaction() as tx:  # two statements: two groups
        tx.insert("n.m", {"id": 3, "v": "c"})
        tx.update("n.m", {"id": 1}, {"v": "z"})
    with scenario.transaction(domain_id=2, server_id=4) as tx:  # InnoDB first, MyISAM after
        tx.insert("n.t", {"id": 1, "v": 1})
        tx.insert("n.nokey", {"v": 5}, {"v": 5})
        tx.delete("n.m", {"id": 2})
        tx.insert("n.t", {"id": 2, "v": 2})
    with scenario.transaction() as tx:
        tx.update("n.m", {"id": 3}, {"v": "c"})  # changes nothing
        tx.insert("n.t", {"id": 3, "v": 3})
    scenario.delete("n.nokey", {"v": 5})
    scenario.ddl("CREATE TABLE n.later (id INT PRIMARY KEY) ENGINE=MyISAM")
    scenario.insert("n.later", {"id": 1})
    return scenario


def test_each_statement_of_a_non_transactional_table_is_a_group() -> None:
    compiled = compile_scenario(mixed())
    groups = [item.events for item in compiled if item.events]
    kinds = []
    for events in groups:
        gtid, last = events[0], events[-1]
        assert isinstance(gtid, GtidEvent)
        if isinstance(last, QueryEvent) and last.query == b"COMMIT":
            assert gtid.flags2 == GtidFlag.ALLOW_PARALLEL
            assert last.flags == EventFlag.SUPPRESS_USE
            kinds.append("commit")
        elif isinstance(last, XidEvent):
            kinds.append("xid" if gtid.flags2 & GtidFlag.TRANSACTIONAL else "xid-mixed")
        else:
            kinds.append("ddl")
    assert kinds == [
        "commit",  # insert n.m
        "commit",  # insert n.m (3)
        "commit",  # update n.m (1)
        "commit",  # insert n.nokey, written before the transaction's own group
        "commit",  # delete n.m (2)
        "xid-mixed",  # the two inserts of n.t
        "xid",  # an update of n.m that changes nothing modifies no non-transactional table
        "commit",  # delete n.nokey
        "ddl",
        "commit",
    ]
    domains = [events[0].domain_id for events in groups]  # type: ignore[attr-defined]
    assert domains[3:6] == [2, 2, 2]


def test_the_replayed_stream_agrees() -> None:
    scenario = mixed(Settings(binlog_row_image="MINIMAL"))
    assert_replay_agrees(scenario)


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_non_transactional_tables_on_a_real_server(server: MariaDBServer, image: str) -> None:
    assert compare_with_server(server, mixed(Settings(binlog_row_image=image))) == []


def timestamps() -> Scenario:
    """Statements of a MyISAM table with TIMESTAMP literals (their COMMIT logs the session's
    time zone) and without (NULL, a default taken, a key-only WHERE)."""
    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE n.m (k INT PRIMARY KEY, t TIMESTAMP NULL, u INT) ENGINE=MyISAM"
    )
    scenario.create_table(
        "CREATE TABLE n.nk (k INT, t TIMESTAMP NULL DEFAULT '2000-01-01 00:00:00') ENGINE=MyISAM"
    )
    scenario.insert("n.m", {"k": 1, "t": "2000-01-01 00:00:00"})  # zone
    scenario.insert("n.m", {"k": 2, "t": None})
    scenario.insert("n.m", {"k": 3})
    scenario.update("n.m", {"k": 1}, {"u": 1})
    scenario.update("n.m", {"k": 2}, {"t": "2001-01-01 00:00:00"})  # zone
    scenario.delete("n.m", {"k": 3})
    scenario.insert("n.nk", {"k": 1})  # the default: no literal
    scenario.delete("n.nk", {"k": 1, "t": "2000-01-01 00:00:00"})  # zone (the whole row)
    scenario.insert("n.nk", {"k": 2, "t": None})
    scenario.delete("n.nk", {"k": 2, "t": None})
    return scenario


def test_a_commit_logs_the_time_zone_a_statement_used() -> None:
    commits = [item.events[-1] for item in compile_scenario(timestamps())]
    zoned = [any(v.code == QueryStatus.TIME_ZONE for v in c.status_vars) for c in commits]  # type: ignore[attr-defined]
    assert zoned == [True, False, False, False, True, False, False, True, False, False]


@pytest.mark.mariadb
def test_time_zones_of_non_transactional_statements_on_a_real_server(
    server: MariaDBServer,
) -> None:
    assert compare_with_server(server, timestamps()) == []
