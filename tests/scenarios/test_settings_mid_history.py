"""Settings changed mid-history, as SET SESSION/GLOBAL would: later steps are compiled under
the new settings, a checksum change rotates the binlog, and a real MariaDB 10.11 running the
same statements writes the same events and files."""

from __future__ import annotations

import pytest

from fakemaster.vocabulary.events import AnnotateRowsEvent, TableMapEvent, UpdateRowsEvent
from scenarios.apply import apply_events
from scenarios.compiler import binlog_files, compile_scenario, to_store
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, SetSettings, Settings
from scenarios.oracle import Oracle, canonical_rows
from scenarios.script import step_sql
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_properties import decoded_events
from tests.support.mariadb_run import compare_with_server


def changing() -> Scenario:
    scenario = Scenario(Settings(binlog_row_metadata="NO_LOG"))
    scenario.create_table(
        "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(400) CHARACTER SET latin1, b BLOB,"
        " u INT UNSIGNED)",
        rows=[{"id": n, "v": "x", "u": 4294967295} for n in range(1, 5)],
    )
    scenario.update("s.t", {"id": 1}, {"v": "y"})
    scenario.set(binlog_row_image="MINIMAL", binlog_row_metadata="FULL")
    scenario.update("s.t", {"id": 2}, {"v": "y"})
    scenario.set(binlog_annotate_row_events=False, binlog_row_image="NOBLOB")
    scenario.update("s.t", {"id": 3}, {"v": "z" * 300})
    scenario.set(log_bin_compress=True, log_bin_compress_min_len=10, binlog_checksum=False)
    scenario.insert("s.t", {"id": 5, "v": "w" * 300, "b": b"\x00" * 50})
    scenario.set(binlog_checksum=False)  # the same value: a rotation all the same
    scenario.set(binlog_row_metadata="MINIMAL", binlog_annotate_row_events=True)
    scenario.delete("s.t", {"id": 4})
    scenario.set(binlog_checksum=True, log_bin_compress=False, binlog_row_image="FULL")
    scenario.update("s.t", {"id": 5}, {"u": 1})
    return scenario


def test_each_step_is_compiled_under_the_settings_of_its_point() -> None:
    scenario = changing()
    assert scenario.initial_settings.binlog_row_metadata == "NO_LOG"
    assert scenario.settings.binlog_row_metadata == "MINIMAL"
    compiled = [item.events for item in compile_scenario(scenario)]
    maps = [next(e for e in events if isinstance(e, TableMapEvent)) for events in compiled]
    # NO_LOG, FULL (names), FULL, FULL, MINIMAL (signedness and charsets, no names), MINIMAL
    assert [len(m.optional_metadata) for m in maps] == [0, 4, 4, 4, 2, 2]
    annotated = [any(isinstance(e, AnnotateRowsEvent) for e in events) for events in compiled]
    assert annotated == [True, True, False, False, True, True]
    second = next(e for e in compiled[1] if isinstance(e, UpdateRowsEvent))
    assert second.columns_present == b"\x01"  # MINIMAL: the key only
    files = binlog_files(to_store(scenario))
    # Three SETs of binlog_checksum: three rotations (setting the same value too).
    assert len(files) == 4
    assert [type(s).__name__ for s in scenario.steps].count("SetSettings") == 6
    assert [s.rotates for s in scenario.steps if isinstance(s, SetSettings)] == [
        False,
        False,
        True,
        True,
        False,
        True,
    ]


def test_the_replayed_stream_agrees_across_checksum_changes() -> None:
    scenario = changing()
    replayed = apply_events(scenario.initial_tables, scenario.initial, decoded_events(scenario))  # type: ignore[arg-type]
    table = scenario.tables["s.t"]
    assert canonical_rows(table, replayed.rows["s.t"]) == canonical_rows(
        table, Oracle(scenario).final.rows["s.t"]
    )


def test_settings_are_changed_as_the_server_variables() -> None:
    scenario = changing()
    sets = [step_sql(s) for s in scenario.steps if isinstance(s, SetSettings)]
    assert sets[0] == [
        "SET SESSION binlog_row_image = MINIMAL",
        "SET GLOBAL binlog_row_metadata = FULL",
    ]
    assert sets[2] == [
        "SET GLOBAL log_bin_compress = ON",
        "SET GLOBAL log_bin_compress_min_len = 10",
        "SET GLOBAL binlog_checksum = NONE",
    ]
    with pytest.raises(ScenarioError, match="only at a restart"):
        scenario.set(binlog_row_event_max_size=1024)
    with pytest.raises(ScenarioError, match="not a setting"):
        scenario.set(server_version="x")
    with pytest.raises(ScenarioError, match="binlog_row_image is one of"):
        scenario.set(binlog_row_image="HALF")
    assert scenario.settings.binlog_row_image == "FULL"


@pytest.mark.mariadb
def test_settings_changed_mid_history_on_a_real_server(server: MariaDBServer) -> None:
    assert compare_with_server(server, changing()) == []
