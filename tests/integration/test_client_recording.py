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
from typing import Any

import pytest

from decoder.core import decode_event
from decoder.packets import PacketReader
from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.vocabulary.constants import EventType
from fakemaster.vocabulary.errors import ChecksumError
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
from tests.peers.mariadb import MariaDBServer
from tests.support.recording import rechunked, record_session, replay_session

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


def checksumless_primary(mariadb_factory: MariaDBFactory) -> tuple[MariaDBServer, Position]:
    """A primary with binlog_checksum=NONE after three transactions of the workload, and the
    position there (GTIDs, file and offset: inside its first file)."""
    primary = mariadb_factory(
        {"binlog_format": "ROW", "binlog_row_metadata": "FULL", "binlog_checksum": "NONE"},
        server_id=1,
    )
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(SCHEMA)
    workload(primary, 1, 3)
    middle = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    return primary, middle.at(*primary.master_status())


def recorded_dump(primary: MariaDBServer, middle: Position) -> tuple[Any, Position, list[bytes]]:
    """A client session recorded from ``middle`` (file/pos) up to the primary's GTID position
    now: the recording, that position, and the packets of the dump (after the client's last
    command)."""
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    config = ClientConfig(user=USER, password=PASSWORD, server_id=42, gtid_mode=False)
    recording = record_session(primary.host, primary.port, config, middle, lambda p: p.covers(goal))
    last_sent = max(i for i, (side, _) in enumerate(recording.exchanges) if side == "client")
    dump = b"".join(data for side, data in recording.exchanges[last_sent + 1 :] if side == "server")
    reader = PacketReader(check_sequence=False)
    reader.feed(dump)
    return recording, goal, list(reader)


@pytest.mark.mariadb
def test_client_a_real_primary_without_checksums_sends_the_resumed_dumps_fde_with_a_stale_crc(
    mariadb_factory: MariaDBFactory,
) -> None:
    """binlog_checksum=NONE: the FORMAT_DESCRIPTION still carries a CRC32 (a checksum-aware
    server's always does), and a dump that starts inside a file gets it with log_pos set to 0
    and its CRC not recomputed; the client, like a replica, checks no CRC when checksums are
    off, and ends with the primary's tables."""
    primary, middle = checksumless_primary(mariadb_factory)
    workload(primary, 4, 3)
    recording, goal, payloads = recorded_dump(primary, middle)
    events = [payload[1:] for payload in payloads]
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
    assert fde[-5] == 0  # its checksum algorithm: OFF, so its CRC is not checked
    assert decode_event(fde).checksum_alg == 0
    corrupted = bytearray(fde)
    corrupted[-5] = 1  # CRC32: then the stale CRC is an error
    with pytest.raises(ChecksumError):
        decode_event(bytes(corrupted))
    replayed = replay_session(recording, [recording.server_bytes()])
    assert replayed.position.covers(goal)


@pytest.mark.mariadb
def test_client_resumes_in_a_file_without_checksums_after_the_primary_turned_them_on(
    mariadb_factory: MariaDBFactory,
) -> None:
    """A file written with binlog_checksum=NONE, then CRC32 (SET GLOBAL rotates): a client
    negotiates CRC32 (the primary's current setting) and resumes by file/position inside the
    first file. The primary sends that file's FORMAT_DESCRIPTION with its checksum algorithm
    OFF, log_pos 0 and a stale CRC, and the file's events without CRCs, then the next file's
    with: the FORMAT_DESCRIPTION's own algorithm byte says whether its CRC counts, as for a
    replica, and the client ends with the primary's tables."""
    primary, middle = checksumless_primary(mariadb_factory)
    workload(primary, 4, 2)
    primary.execute("SET GLOBAL binlog_checksum = CRC32")
    workload(primary, 6, 3)
    recording, goal, payloads = recorded_dump(primary, middle)
    events = [payload[1:] for payload in payloads if payload[:1] == b"\x00"]
    fdes = [event for event in events if event[4] == EventType.FORMAT_DESCRIPTION]
    # The resumed file's (algorithm OFF, stale CRC), then the new file's (CRC32, valid).
    assert [fde[-5] for fde in fdes] == [0, 1]
    resumed = fdes[0]
    assert struct.unpack_from("<I", resumed, 13)[0] == 0
    assert struct.unpack_from("<I", resumed, len(resumed) - 4)[0] != zlib.crc32(resumed[:-4])
    assert struct.unpack_from("<I", fdes[1], len(fdes[1]) - 4)[0] == zlib.crc32(fdes[1][:-4])
    for sizes in ([len(recording.server_bytes())], [7, 3, 250]):
        replayed = replay_session(recording, rechunked(recording.server_bytes(), sizes))
        assert replayed.position.covers(goal)
    from fakemaster.client.changes import group_changes

    groups = [item for item in replayed.items if isinstance(item, CommittedGroup)]
    first = max(seq for _, _, seq in middle.gtids)
    last = max(seq for _, _, seq in goal.gtids)
    assert [group.gtid[2] for group in groups if group.gtid is not None] == list(
        range(first + 1, last + 1)
    )
    inserted = [
        change.after["id"]
        for group in groups
        for change in group_changes(group)
        if change.operation == "insert" and change.table == "items"
    ]
    # workload(4, 2) and workload(6, 3) insert items 4 to 8, in both files.
    assert inserted == [4, 5, 6, 7, 8]
