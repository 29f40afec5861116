"""The sans-IO core driven without sockets: a recorded session with a real MariaDB 10.11
primary (tests/golden/client_session/real_primary.json, recorded by
tests/integration/test_client_recording.py) fed back in any chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.packets import PacketReader
from fakemaster.client.changes import DDL, group_changes
from fakemaster.client.position import CommittedGroup, Position, ReceivedEvent
from fakemaster.client.protocol import EventReceived, Ready, ReplicaConnection
from fakemaster.vocabulary.constants import Command
from tests.support.recording import Recording, rechunked, replay_session

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "client_session" / "real_primary.json"
DOCUMENT: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
RECORDING = Recording.from_json(DOCUMENT)
SERVER = RECORDING.server_bytes()

# What a real MariaDB 10.11.19 replica in GTID mode sent to a real primary (its general query
# log, ../shared/reference/peer-sessions/replica-gtid.log), with the recording's heartbeat
# period; COM_REGISTER_SLAVE, not in the log, between the domain query and the GTID state.
REPLICA_GTID_STATEMENTS = [
    "SELECT UNIX_TIMESTAMP()",
    "SHOW VARIABLES LIKE 'SERVER_ID'",
    "SET @master_heartbeat_period= 30000000000",
    "SET @master_binlog_checksum= @@global.binlog_checksum",
    "SELECT @master_binlog_checksum",
    "SET @mariadb_slave_capability=4",
    "SELECT @@GLOBAL.gtid_domain_id",
    "register",
    "SET @slave_connect_state=''",
    "SET @slave_gtid_strict_mode=0",
    "SET @slave_gtid_ignore_duplicates=0",
    "dump",
]


def commands(client_bytes: bytes) -> list[str]:
    reader = PacketReader(check_sequence=False)
    reader.feed(client_bytes)
    out = []
    for payload in reader:
        if payload[0] == Command.QUERY:
            out.append(payload[1:].decode())
        elif payload[0] == Command.REGISTER_SLAVE:
            out.append("register")
        elif payload[0] == Command.BINLOG_DUMP:
            out.append("dump")
    return out


def test_client_sends_a_real_replicas_statements_in_its_order() -> None:
    assert commands(RECORDING.client_bytes()) == REPLICA_GTID_STATEMENTS


@pytest.mark.parametrize("sizes", [[len(SERVER)], [1], [3, 1000, 17]])
def test_client_core_replays_the_recorded_session(sizes: list[int]) -> None:
    replayed = replay_session(RECORDING, rechunked(SERVER, sizes))
    assert replayed.sent == RECORDING.client_bytes()
    ready = [h for h in replayed.happenings if isinstance(h, Ready)]
    assert len(ready) == 1 and ready[0].checksum and ready[0].server_version.startswith("5.5.5-")
    expected = Position.from_gtids(DOCUMENT["gtid_binlog_pos"])
    file_name, offset = DOCUMENT["master_status"]
    assert replayed.position == expected.at(file_name, offset)
    groups = [item for item in replayed.items if isinstance(item, CommittedGroup)]
    rows: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in DOCUMENT["tables"]}
    ddl: list[list[str]] = []
    for group in groups:
        for change in group_changes(group):
            if change.operation == DDL:
                # The recorded session's setup statements (CREATE DATABASE/TABLE, CREATE USER,
                # GRANT), each logged as a group of its own.
                assert change.statement and change.before is None and change.after is None
                ddl.append(change.statement.split(" ", 2)[:2])
                continue
            table = rows[change.qualified]
            if change.before is not None:
                del table[change.before["id"]]
            if change.after is not None:
                table[change.after["id"]] = {**(change.before or {}), **change.after}
    for name, expected_rows in DOCUMENT["tables"].items():
        columns = list(next(iter(rows[name].values())))
        got = [
            [_json(row[column]) for column in columns] for _key, row in sorted(rows[name].items())
        ]
        assert got == expected_rows, name
    assert ["CREATE", "TABLE"] in ddl and ["CREATE", "DATABASE"] in ddl


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if not isinstance(value, (int, str)) and value is not None:
        return str(value)
    return value


@given(st.lists(st.integers(1, 300), min_size=1, max_size=8))
def test_client_core_gives_the_same_events_however_the_bytes_are_cut(sizes: list[int]) -> None:
    whole = replay_session(RECORDING, [SERVER])
    cut = replay_session(RECORDING, rechunked(SERVER, sizes))
    assert cut.sent == whole.sent
    assert [h.decoded.event for h in cut.happenings if isinstance(h, EventReceived)] == [
        h.decoded.event for h in whole.happenings if isinstance(h, EventReceived)
    ]


def test_client_core_without_the_rest_of_the_stream_has_handed_over_only_whole_groups() -> None:
    for cut_at in range(0, len(SERVER), max(1, len(SERVER) // 97)):
        replayed = replay_session(RECORDING, [SERVER[:cut_at]])
        groups = [item for item in replayed.items if isinstance(item, CommittedGroup)]
        if groups:
            # The position is after the last whole group, or after an event outside groups
            # that came after it (a ROTATE to the next file, its FORMAT_DESCRIPTION...): never
            # inside the group the cut interrupted.
            assert replayed.position.gtids == groups[-1].position.gtids
            outside = {
                (item.file, item.end_position)
                for item in replayed.items
                if isinstance(item, ReceivedEvent)
            }
            assert replayed.position == groups[-1].position or (
                (replayed.position.file, replayed.position.position)
                > (groups[-1].position.file, groups[-1].position.position)
                and (
                    replayed.position.position == 4
                    or (replayed.position.file, replayed.position.position) in outside
                )
            )
        core = ReplicaConnection(RECORDING.config, RECORDING.start)
        core.feed(SERVER[:cut_at])
        assert core.connection_lost().retryable
