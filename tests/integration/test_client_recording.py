"""The sans-IO core replays a recorded session with a real MariaDB 10.11 primary: fed the
primary's bytes alone (no socket), in any chunking, it sends exactly the bytes it sent live and
hands over the same groups. With FAKEMASTER_WRITE_GOLDEN=1 the recording is written to
tests/golden/client_session/real_primary.json (tests/fakemaster/client/test_recorded.py
replays it without a server)."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pytest

from decoder.core import decode_event
from decoder.packets import PacketReader
from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.constants import EventType
from fakemaster.errors import ChecksumError
from tests.fakemaster.client.recording import rechunked, record_session, replay_session
from tests.integration.test_client_real_primary import (
    PASSWORD,
    SCHEMA,
    TABLES,
    USER,
    KeyedTables,
    primary_table,
    started_primary,
    workload,
)
from tests.peers.fixtures import MariaDBFactory

# The FORMAT_DESCRIPTION's "created" timestamp: after the header, the binlog version (2) and
# the server version (50).
FDE_CREATED = 19 + 2 + 50
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


@pytest.mark.mariadb
def test_client_a_real_primary_without_checksums_sends_the_resumed_dumps_fde_with_a_stale_crc(
    mariadb_factory: MariaDBFactory,
) -> None:
    """binlog_checksum=NONE: the FORMAT_DESCRIPTION still carries a CRC32 (a checksum-aware
    server's always does), and a dump that starts inside a file gets it with log_pos set to 0
    and its CRC not recomputed; the client, like a replica, checks no CRC when checksums are
    off, and ends with the primary's tables."""
    primary = mariadb_factory(
        {"binlog_format": "ROW", "binlog_row_metadata": "FULL", "binlog_checksum": "NONE"},
        server_id=1,
    )
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(SCHEMA)
    workload(primary, 1, 3)
    middle = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    middle = middle.at(*primary.master_status())
    workload(primary, 4, 3)
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    config = ClientConfig(user=USER, password=PASSWORD, server_id=42, gtid_mode=False)
    recording = record_session(primary.host, primary.port, config, middle, lambda p: p.covers(goal))
    last_sent = max(i for i, (side, _) in enumerate(recording.exchanges) if side == "client")
    dump = b"".join(data for side, data in recording.exchanges[last_sent + 1 :] if side == "server")
    reader = PacketReader(check_sequence=False)
    reader.feed(dump)
    events = [payload[1:] for payload in reader]
    fde = events[1]
    assert fde[4] == EventType.FORMAT_DESCRIPTION
    assert struct.unpack_from("<I", fde, 13)[0] == 0  # log_pos 0: an artificial event
    stored = struct.unpack_from("<I", fde, len(fde) - 4)[0]
    assert struct.unpack_from("<I", fde, FDE_CREATED)[0] == 0  # "created" zeroed too
    assert stored != zlib.crc32(fde[:-4])
    # Stale: the CRC of the event as written (log_pos its end at offset 4, "created" its
    # timestamp, the in-use flag clear), not recomputed after the dump zeroed those fields.
    written = bytearray(fde[:-4])
    struct.pack_into("<I", written, 13, 4 + len(fde))
    written[17] &= ~1
    struct.pack_into("<I", written, FDE_CREATED, struct.unpack_from("<I", fde, 0)[0])
    assert stored == zlib.crc32(written)
    with pytest.raises(ChecksumError):
        decode_event(fde)
    replayed = replay_session(recording, [recording.server_bytes()])
    assert replayed.position.covers(goal)
