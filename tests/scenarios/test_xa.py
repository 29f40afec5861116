"""XA transactions: prepared (XA_PREPARE groups), committed or rolled back later (possibly
from another session, with other transactions in between), committed in one phase; the model
locks what a prepared XA holds, the oracle counts its changes from XA COMMIT, the replay
applies them at XA COMMIT, and a real MariaDB 10.11 writes the same events."""

from __future__ import annotations

import pytest

from fakemaster.vocabulary.constants import GtidExtraFlag, GtidFlag
from fakemaster.vocabulary.events import GtidEvent, QueryEvent, XaPrepareEvent, XaXid, XidEvent
from scenarios.compiler import compile_scenario
from scenarios.errors import HistoryError
from scenarios.history import Scenario, Settings
from scenarios.oracle import Oracle
from scenarios.script import step_sql
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_properties import assert_replay_agrees
from tests.support.mariadb_run import compare_with_server


def xa(settings: Settings | None = None) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table("CREATE TABLE x.a (id INT PRIMARY KEY, v INT)", rows=[{"id": 1, "v": 1}])
    scenario.create_table("CREATE TABLE x.b (id INT PRIMARY KEY, v VARCHAR(10))")
    with scenario.xa_transaction(("zg", "bq", 7), domain_id=1, server_id=3) as tx:
        tx.insert("x.a", {"id": 2, "v": 2})
        tx.update("x.a", {"id": 1}, {"v": 10})
    scenario.insert("x.b", {"id": 1, "v": "between"})  # another table: not locked
    with scenario.xa_transaction("second") as tx:
        tx.insert("x.b", {"id": 2, "v": "r"})
    scenario.xa_rollback("second")
    scenario.xa_commit(("zg", "bq", 7), domain_id=2, server_id=4)
    with scenario.xa_transaction(XaXid(0, b"one", b"")) as tx:
        tx.update("x.a", {"id": 1}, {"v": 10})
        tx.insert("x.a", {"id": 4, "v": 4})
        tx.delete("x.a", {"id": 4})
    scenario.xa_commit(XaXid(0, b"one", b""))
    with scenario.xa_transaction("onephase", one_phase=True) as tx:
        tx.delete("x.b", {"id": 1})
    with scenario.xa_transaction("pending") as tx:  # still prepared at the end
        tx.insert("x.b", {"id": 3, "v": "p"})
    scenario.insert("x.a", {"id": 3, "v": 3})
    return scenario


def test_prepared_changes_count_from_xa_commit() -> None:
    scenario = xa()
    oracle = Oracle(scenario)
    assert oracle.rows("x.a", 1) == [(1, 1)]  # after the XA PREPARE: not yet
    assert oracle.rows("x.a", 5) == [(1, 10), (2, 2)]  # after its XA COMMIT
    with pytest.raises(HistoryError, match="changes no row"):
        with scenario.xa_transaction("empty") as tx:
            tx.update("x.a", {"id": 1}, {"v": 10})
    assert XaXid(1, b"empty", b"") not in scenario.prepared
    assert Oracle(scenario).final.rows["x.a"] == [(1, 10), (2, 2), (3, 3)]
    assert oracle.rows("x.b", 4) == [(1, b"between")]  # XA ROLLBACK: never
    assert oracle.final.rows == {"x.a": [(1, 10), (2, 2), (3, 3)], "x.b": []}
    assert list(scenario.prepared) == [XaXid(1, b"pending", b"")]


def test_a_prepared_xa_locks_its_tables() -> None:
    scenario = xa()
    with pytest.raises(HistoryError, match="locked by the prepared XA transaction X'70"):
        scenario.insert("x.b", {"id": 9, "v": "no"})
    with pytest.raises(HistoryError, match="locked"):
        scenario.drop_table("x.b")
    with pytest.raises(HistoryError, match="no prepared XA transaction"):
        scenario.xa_commit("second")
    with pytest.raises(HistoryError, match="prepared already"):
        with scenario.xa_transaction("pending"):
            pass
    scenario.xa_commit("pending")
    scenario.insert("x.b", {"id": 9, "v": "yes"})
    assert Oracle(scenario).final.rows["x.b"] == [(3, b"p"), (9, b"yes")]


def test_xa_groups_are_what_the_server_writes() -> None:
    scenario = xa()
    groups = [item.events for item in compile_scenario(scenario) if item.events]
    prepare = groups[0]
    gtid = prepare[0]
    assert isinstance(gtid, GtidEvent)
    assert gtid.flags2 == GtidFlag.PREPARED_XA | GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
    assert gtid.xid == XaXid(7, b"zg", b"bq")
    assert (gtid.flags_extra, gtid.extra_engines) == (GtidExtraFlag.MULTI_ENGINE, 255)
    end, last = prepare[-2], prepare[-1]
    assert isinstance(end, QueryEvent) and end.query == b"XA END X'7a67',X'6271',7"
    assert isinstance(last, XaPrepareEvent) and last.xid == gtid.xid and not last.one_phase
    commit = groups[4]
    assert isinstance(commit[0], GtidEvent) and commit[0].domain_id == 2
    assert commit[0].flags2 & (GtidFlag.COMPLETED_XA | GtidFlag.STANDALONE)
    assert [e.query for e in commit[1:]] == [b"XA COMMIT X'7a67',X'6271',7"]  # type: ignore[attr-defined]
    rollback = groups[3]
    assert [e.query for e in rollback[1:]] == [b"XA ROLLBACK X'7365636f6e64',X'',1"]  # type: ignore[attr-defined]
    one_phase = groups[7]
    assert isinstance(one_phase[-1], XidEvent)
    assert step_sql(scenario.steps[-3])[-1] == "XA COMMIT X'6f6e657068617365',X'',1 ONE PHASE"
    assert len(groups) == 10


def test_the_replayed_stream_applies_at_xa_commit() -> None:
    scenario = xa(Settings(binlog_row_image="MINIMAL"))
    assert_replay_agrees(scenario)


@pytest.mark.mariadb
@pytest.mark.parametrize("metadata", ["NO_LOG", "FULL"])
def test_xa_on_a_real_server(server: MariaDBServer, metadata: str) -> None:
    scenario = xa(Settings(binlog_row_metadata=metadata, binlog_row_image="NOBLOB"))
    assert compare_with_server(server, scenario) == []
    assert compare_with_server(server, xa()) == []  # the pending XA was rolled back after it
