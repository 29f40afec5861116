"""The replay file (fakemaster/record/replay.py) without a recording: its JSON form read back,
the files it may name, and the settings ``serve`` takes from it (docs/record.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakemaster.record.replay import Replay, ReplayError, replay_settings
from scenarios.compiler import to_store
from scenarios.history import Scenario, Settings

REPLAY = Replay(
    upstream="db.example:3306",
    recorded_at="2026-01-02T03:04:05Z",
    handshake_version="10.11.6-MariaDB-log",
    variables={"server_id": "7", "binlog_format": "ROW"},
    gtid={"gtid_binlog_pos": "0-1-5"},
    binary_logs=[("m.000001", 400)],
    basename="m",
    files=[("m.000001", 400), ("m.000002", (1 << 64) - 1)],
    end={"file": "m.000002", "pos": 4},
)


def test_a_replay_reads_back_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "fakemaster-replay.json"
    REPLAY.save(path)
    assert Replay.load(path) == REPLAY
    document = json.loads(path.read_text())
    assert document["fakemaster_replay"] == 1
    assert document["handshake"] == {"server_version": "10.11.6-MariaDB-log"}
    assert document["binlog"]["index"] == "m.index"
    assert list(document["variables"]) == ["binlog_format", "server_id"]  # sorted
    assert not (tmp_path / "fakemaster-replay.json.partial").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "f.json: not a JSON object"),
        ('{"fakemaster_replay": 2}', "f.json: fakemaster_replay is 2, this fakemaster reads 1"),
        (
            '{"fakemaster_replay": 1, "binlog": {"files": [{"name": "../x", "size": 1}]}}',
            "f.json, binlog.files[0].name: '../x' is not a binlog file name",
        ),
        (
            '{"fakemaster_replay": 1, "binlog": {"files": [{"name": "m.1", "size": -1}]}}',
            "f.json, binlog.files[0].size: -1 is not a file size",
        ),
        (
            '{"fakemaster_replay": 1, "binary_logs_at_start": [{"name": "m.1", "size": '
            + str(1 << 64)
            + "}]}",
            f"f.json, binary_logs_at_start[0].size: {1 << 64} is not a file size",
        ),
        (
            '{"fakemaster_replay": 1, "binary_logs_at_start": [{"name": "m.1"}]}',
            "f.json: not a replay file: 'size'",
        ),
        (
            '{"fakemaster_replay": 1, "binlog": {"basename": "a/b"}}',
            "f.json, binlog.basename: 'a/b' is not a binlog file name",
        ),
    ],
)
def test_a_file_that_is_no_replay_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(ReplayError) as refused:
        Replay.from_json(text, "f.json")
    assert str(refused.value) == message


def test_an_empty_size_and_an_absent_file(tmp_path: Path) -> None:
    replay = Replay.from_json(
        '{"fakemaster_replay": 1, "binlog": {"files": [{"name": "m.1", "size": 0}]}}'
    )
    assert replay.files == [("m.1", 0)]
    absent = tmp_path / "absent.json"
    with pytest.raises(ReplayError) as refused:
        Replay.load(absent)
    assert str(refused.value) == f"{absent}: No such file or directory"


def test_the_settings_serve_takes() -> None:
    replay = Replay(
        variables={
            "server_id": "7",
            "sql_mode": "ANSI",
            "gtid_domain_id": "x",
            "rpl_semi_sync_master_enabled": "ON",
            "rpl_semi_sync_master_timeout": "500",
            "datadir": "/var/lib/mysql",  # a path of the recorded machine: never replayed
        }
    )
    settings = replay_settings(replay, None, given={"SQL_MODE": "TRADITIONAL"})
    assert settings.variables == {"server_id": 7}
    assert settings.fields == {
        "rpl_semi_sync_master_enabled": True,
        "rpl_semi_sync_master_timeout": 500,
    }
    assert settings.notes == [
        "gtid_domain_id: the recorded 'x' is not served (gtid_domain_id takes an integer, not 'x')"
    ]


def test_a_recorded_value_the_configuration_refuses_is_dropped_with_a_note() -> None:
    replay = Replay(
        variables={"character_set_server": "latin1", "collation_server": "utf8mb4_general_ci"}
    )
    settings = replay_settings(replay, None)
    assert settings.variables == {"character_set_server": "latin1"}
    assert settings.notes == [
        "collation_server: not served (COLLATION 'utf8mb4_general_ci' is not valid for"
        " CHARACTER SET 'latin1')"
    ]


def test_the_served_binlog_wins_over_the_replay() -> None:
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY)")
    scenario.insert("db.t", {"id": 1})
    store = to_store(scenario)  # CRC32 checksums, server id 1
    replay = Replay(variables={"binlog_checksum": "NONE", "server_id": "9", "gtid_domain_id": "3"})
    settings = replay_settings(replay, store)
    assert settings.variables == {"gtid_domain_id": 3}  # the files cannot tell it
    agreeing = replay_settings(Replay(variables={"server_id": "1"}), store)
    assert (agreeing.variables, agreeing.notes) == ({"server_id": 1}, [])
    assert settings.notes == [
        "binlog_checksum: the replay file says NONE, the served binlog says CRC32: the binlog's"
        " value is served",
        "server_id: the replay file says 9, the served binlog says 1: the binlog's value is served",
    ]
