"""The sans-IO core replays a recorded session with a real MariaDB 10.11 primary: fed the
primary's bytes alone (no socket), in any chunking, it sends exactly the bytes it sent live and
hands over the same groups. With FAKEMASTER_WRITE_GOLDEN=1 the recording is written to
tests/golden/client_session/real_primary.json (tests/fakemaster/client/test_recorded.py
replays it without a server)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from tests.fakemaster.client.recording import rechunked, record_session, replay_session
from tests.integration.test_client_real_primary import (
    PASSWORD,
    TABLES,
    USER,
    KeyedTables,
    primary_table,
    started_primary,
    workload,
)
from tests.peers.fixtures import MariaDBFactory

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "client_session" / "real_primary.json"


@pytest.mark.mariadb
def test_client_core_replays_a_recorded_session_with_a_real_primary(
    mariadb_factory: MariaDBFactory,
) -> None:
    primary = started_primary(mariadb_factory, "FULL")
    workload(primary, 1, 12)
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    config = ClientConfig(user=USER, password=PASSWORD, server_id=42, heartbeat_period=30.0)
    recording = record_session(
        primary.host, primary.port, config, Position(), lambda p: p.covers(goal)
    )
    server = recording.server_bytes()
    for sizes in ([len(server)], [1], [7, 3, 250]):
        replayed = replay_session(recording, rechunked(server, sizes))
        assert replayed.sent == recording.client_bytes()
        assert replayed.position.covers(goal)
    tables = KeyedTables()
    from fakemaster.client.changes import group_changes

    groups = [item for item in replayed.items if isinstance(item, CommittedGroup)]
    for group in groups:
        for change in group_changes(group):
            tables.apply(change)
    expected = {name: primary_table(primary, name) for name in TABLES}
    for name in TABLES:
        assert tables.table(name) == expected[name], name
    if os.environ.get("FAKEMASTER_WRITE_GOLDEN") == "1":
        document = {
            "format": 1,
            "description": (
                "One replica session of fakemaster.client with a real MariaDB "
                f"{primary.version()} primary (binlog_row_metadata=FULL), recorded by "
                "tests/integration/test_client_recording.py: both directions' bytes in order, "
                "the primary's tables and GTID position at the end."
            ),
            **recording.to_json(),
            "gtid_binlog_pos": goal.gtid_text,
            "master_status": list(primary.master_status()),
            "tables": {name: [list(row) for row in rows] for name, rows in expected.items()},
        }
        GOLDEN.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
