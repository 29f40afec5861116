"""Server restarts (same or new server id, settings configured anew, what SET changed gone)
and idle periods: STOP ends the file, the next starts with the new server id and a creation
time, GTIDs go on in every domain, table ids are handed out again; as a real MariaDB 10.11
restarted between the same statements writes them."""

from __future__ import annotations

import io

import pytest

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.constants import ChecksumAlg
from fakemaster.vocabulary.events import (
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    StopEvent,
    TableMapEvent,
    WriteRowsEvent,
)
from scenarios.compiler import binlog_files, compile_scenario, to_store
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_properties import assert_replay_agrees
from tests.support.mariadb_run import compare_with_server


def restarted() -> Scenario:
    scenario = Scenario(Settings(binlog_row_metadata="MINIMAL"))
    scenario.create_table("CREATE TABLE r.a (id INT PRIMARY KEY, v VARCHAR(2000))")
    scenario.create_table("CREATE TABLE r.b (id INT PRIMARY KEY)")
    scenario.insert("r.a", {"id": 1, "v": "x"})
    with scenario.transaction(domain_id=2, server_id=5) as tx:
        tx.insert("r.b", {"id": 1})
    scenario.set(binlog_row_image="MINIMAL", binlog_row_metadata="FULL")
    scenario.restart()  # the same server id; the SETs are gone
    scenario.insert("r.b", {"id": 2})  # r.b is opened first now
    scenario.insert("r.a", {"id": 2, "v": "y"})
    scenario.idle(3600)
    scenario.restart(server_id=9, binlog_checksum=False, binlog_row_event_max_size=1024)
    scenario.insert("r.a", *({"id": 10 + n, "v": "z" * 600} for n in range(3)))
    with scenario.transaction(domain_id=2, server_id=5) as tx:
        tx.update("r.b", {"id": 1}, {"id": 3})
    scenario.ddl("ALTER TABLE r.a ADD COLUMN w INT NULL FIRST")
    scenario.insert("r.a", {"id": 20, "w": 1})
    return scenario


def test_what_a_restart_writes() -> None:
    scenario = restarted()
    assert scenario.settings.server_id == 9
    assert scenario.settings.binlog_row_image == "FULL"  # the SET before the first restart
    assert scenario.settings.binlog_row_metadata == "MINIMAL"
    files = [
        [event for _, event in read_binlog(io.BytesIO(data))]
        for data in binlog_files(to_store(scenario)).values()
    ]
    assert len(files) == 3
    assert isinstance(files[0][-1], StopEvent) and files[0][-1].server_id == 1
    assert isinstance(files[1][-1], StopEvent) and files[1][-1].server_id == 1
    second, third = files[1][0], files[2][0]
    assert isinstance(second, FormatDescriptionEvent) and isinstance(third, FormatDescriptionEvent)
    assert second.create_timestamp and second.server_id == 1
    assert third.server_id == 9 and third.checksum_alg == ChecksumAlg.OFF
    gtid_list = files[2][1]
    assert isinstance(gtid_list, GtidListEvent)
    # GTIDs go on: domain 0 had 3 transactions, domain 2 one.
    assert {(g.domain_id, g.seq_no) for g in gtid_list.gtids} >= {(0, 3), (2, 1)}
    gtids = [e for e in files[2] if isinstance(e, GtidEvent)]
    assert [(g.domain_id, g.seq_no, g.server_id) for g in gtids] == [
        (0, 4, 9),
        (2, 2, 5),
        (0, 5, 9),
        (0, 6, 9),
    ]
    # The idle hour: the events after it are an hour later.
    assert gtids[0].timestamp - files[1][3].timestamp == 3600
    # binlog_row_event_max_size 1024 after the second restart: 3 rows of 600 bytes, 3 events.
    writes = [e for e in files[2] if isinstance(e, WriteRowsEvent)]
    assert [len(e.rows) for e in writes[:3]] == [1, 1, 1]


def test_table_ids_are_handed_out_again_after_a_restart() -> None:
    compiled = [e for item in compile_scenario(restarted()) for e in item.events]
    maps = [(e.table, e.table_id) for e in compiled if isinstance(e, TableMapEvent)]
    assert maps[:2] == [("a", 18), ("b", 19)]
    assert maps[2:4] == [("b", 18), ("a", 19)]  # the order they are opened in after it
    assert maps[4:6] == [("a", 18), ("b", 19)]
    assert maps[6] == ("a", 20)  # ALTER: a new share


def test_the_replayed_stream_agrees() -> None:
    scenario = restarted()
    assert_replay_agrees(scenario)


def test_a_restart_or_an_idle_period_is_checked() -> None:
    scenario = restarted()
    with pytest.raises(ScenarioError, match="whole number of seconds"):
        scenario.idle(0)
    with pytest.raises(ScenarioError, match="keeps the server version"):
        scenario.restart(server_version="11.0.0-MariaDB")
    with pytest.raises(ScenarioError, match="binlog_row_image is one of"):
        scenario.restart(binlog_row_image="SOME")


@pytest.mark.mariadb
def test_restarts_on_a_real_server(server: MariaDBServer) -> None:
    assert compare_with_server(server, restarted()) == []
    # The next run restarts the server with the scenario's server id and sizes again.
    plain = Scenario()
    plain.create_table("CREATE TABLE r.c (id INT PRIMARY KEY)")
    plain.insert("r.c", {"id": 1})
    assert compare_with_server(server, plain) == []
