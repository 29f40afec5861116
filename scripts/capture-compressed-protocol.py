#!/usr/bin/env python3
"""Capture what a real MariaDB server sends on compressed connections (CLIENT_COMPRESS).

Starts a private mariadbd (tests/peers/mariadb.py), connects raw-socket clients that log in
with CLIENT_COMPRESS (tests/fakemaster/compressed_wire.py) and records, for every step of
every session, the exact bytes the client sent and the exact bytes the server answered; then
a small binlog (one 40000-byte event, a rotation) and the compressed non-blocking dumps of it,
without semi-sync (non-blocking, to its EOF) and with it (blocking, to the
first heartbeat). Writes

    tests/golden/compressed_protocol/capture.json     sessions and dumps (hex)
    tests/golden/compressed_protocol/mysql-bin.NNNNNN the binlog files the dumps read
    tests/golden/compressed_protocol/mysql-bin.index  their index (relative names)

Usage: scripts/capture-compressed-protocol.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from encoder.packets import frame  # noqa: E402
from fakemaster.protocol.handshake import Capability  # noqa: E402
from tests.fakemaster.compressed_wire import (  # noqa: E402
    COMPRESSED_CAPABILITIES,
    CompressedClient,
    compressed_packet,
)
from tests.peers.mariadb import MariaDBServer  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "tests" / "golden" / "compressed_protocol"
USER, PASSWORD = "repl", "secret"
SELECT_1 = b"\x03SELECT 1"

Step = Callable[[CompressedClient], tuple[bytes, bytes]]


def query(sql: str, *, deflate: bool = False) -> tuple[str, Step]:
    return sql if len(sql) < 80 else sql[:60] + "...", lambda c: c.query(sql, deflate=deflate)


def raw(what: str, data: bytes, *, until_closed: bool = False) -> tuple[str, Step]:
    def step(client: CompressedClient) -> tuple[bytes, bytes]:
        client.send_raw(data)
        if until_closed:
            return data, client.until_closed()
        client.response()
        return data, client.take_received()

    return what, step


# name -> (capabilities, steps, whether the fake master answers every step byte for byte)
SESSIONS: dict[str, tuple[int, list[tuple[str, Step]], bool]] = {
    "basic": (
        COMPRESSED_CAPABILITIES,
        [
            query("SELECT 1"),
            query("SELECT 1", deflate=True),
            query("SELECT nosuchcol"),
            query("SELECT * FROM mysql." + "a" * 60),
        ],
        True,
    ),
    "threshold": (
        COMPRESSED_CAPABILITIES | Capability.DEPRECATE_EOF,
        [query("SELECT 0"), query("SELECT 00"), query('SELECT "aa"')],
        True,
    ),
    "multi_statements": (
        COMPRESSED_CAPABILITIES | Capability.MULTI_STATEMENTS,
        [query("SELECT 1; SELECT 2"), query("SELECT 1; SELECT nosuchcol")],
        True,
    ),
    "out_of_order": (
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a command in a compressed packet numbered 3",
                compressed_packet(frame(SELECT_1, 0)[0], 3),
                until_closed=True,
            )
        ],
        True,
    ),
    "split_command": (
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a command split over compressed packets 0 and 1",
                compressed_packet(frame(SELECT_1, 0)[0][:5], 0)
                + compressed_packet(frame(SELECT_1, 0)[0][5:], 1),
            ),
            raw(
                "an empty compressed packet before a command",
                compressed_packet(b"", 0) + compressed_packet(frame(SELECT_1, 0)[0], 1),
            ),
            raw(
                "a command whose inner packet is numbered 7",
                compressed_packet(frame(SELECT_1, 7)[0], 0),
            ),
        ],
        True,
    ),
    "large_results": (
        COMPRESSED_CAPABILITIES | Capability.MULTI_STATEMENTS,
        [
            query("SELECT REPEAT('x', 40000)"),
            query("SELECT REPEAT('a', 20000); SELECT 2"),
            query("SELECT REPEAT('x', 17000000)"),
            # A long query grows the server's buffer, and the compressed packets after it.
            query("SELECT '" + "y" * 30000 + "' IS NOT NULL", deflate=True),
            query("SELECT REPEAT('x', 40000)"),
        ],
        False,
    ),
}

BINLOG_STATEMENTS = [
    "CREATE DATABASE d",
    "CREATE TABLE d.t (id INT PRIMARY KEY, b LONGBLOB)",
    "INSERT INTO d.t VALUES (1, 'x')",
    "INSERT INTO d.t VALUES (2, REPEAT('y', 40000))",
    "INSERT INTO d.t VALUES (3, 'z')",
    "FLUSH BINARY LOGS",
    "INSERT INTO d.t VALUES (4, 'w')",
]
DUMP_SERVER_ID = 99
NON_BLOCK = 1


HEARTBEAT_PERIOD_NS = 1_000_000_000
HEARTBEAT = 27


def dump(client: CompressedClient, *, semi_sync: bool) -> dict[str, Any]:
    """A non-blocking dump read until the server closes the connection; with semi-sync a
    blocking one read until its first heartbeat (a semi-sync primary holds a non-blocking
    dump's end back until ACKs come)."""
    setup = [
        "SET @master_binlog_checksum= @@global.binlog_checksum",
        "SET @mariadb_slave_capability= 4",
    ]
    if semi_sync:
        setup += [
            "SET @rpl_semi_sync_slave= 1",
            f"SET @master_heartbeat_period= {HEARTBEAT_PERIOD_NS}",
        ]
    for sql in setup:
        client.query(sql)
    flags = 0 if semi_sync else NON_BLOCK
    body = struct.pack("<IHI", 4, flags, DUMP_SERVER_ID) + b"mysql-bin.000001"
    sent = client.command(b"\x12" + body)
    if semi_sync:
        # The type of the event after the 0x00 0xEF flag header and its 4-byte timestamp.
        while client.read()[7] != HEARTBEAT:
            pass
        received = client.take_received()
        client.sock.close()
    else:
        received = client.until_closed()
    return {
        "setup": setup,
        "request": {"file": "mysql-bin.000001", "position": 4, "flags": flags},
        "server_id": DUMP_SERVER_ID,
        "sent": sent.hex(),
        "received": received.hex(),
    }


def wait_for_checkpoint(server: MariaDBServer, name: str, timeout: float = 60.0) -> None:
    """Wait until the server wrote the BINLOG_CHECKPOINT naming ``name`` (it does so in the
    background after a rotation): then the binlog no longer changes under the dumps."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = server.execute(f"SHOW BINLOG EVENTS IN '{name}'")
        if any(row[2] == "Binlog_checkpoint" and name in str(row[5]) for row in events):
            return
        time.sleep(0.1)
    raise RuntimeError(f"no BINLOG_CHECKPOINT for {name} after {timeout} s")


def capture(out: Path) -> None:
    options = {"rpl_semi_sync_master_enabled": "ON", "rpl_semi_sync_master_timeout": 100000}
    with MariaDBServer(options) as server:
        server.create_replication_user(USER, PASSWORD, privileges="ALL PRIVILEGES")
        sessions = []
        for name, (capabilities, steps, fake_exact) in SESSIONS.items():
            client = CompressedClient(
                server.host, server.port, USER, PASSWORD, capabilities=capabilities
            )
            recorded = []
            for what, step in steps:
                sent, received = step(client)
                recorded.append({"what": what, "sent": sent.hex(), "received": received.hex()})
            client.sock.close()
            sessions.append(
                {
                    "name": name,
                    "capabilities": capabilities,
                    "fake_exact": fake_exact,
                    "steps": recorded,
                }
            )
            print(f"{name:18s} {len(recorded)} steps")
        server.execute(BINLOG_STATEMENTS)
        wait_for_checkpoint(server, "mysql-bin.000002")
        dumps = {}
        for semi_sync in (False, True):
            client = CompressedClient(server.host, server.port, USER, PASSWORD)
            dumps["semi_sync" if semi_sync else "plain"] = dump(client, semi_sync=semi_sync)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        files = server.binlog_files()
        for path in files:
            shutil.copyfile(path, out / path.name)
        (out / "mysql-bin.index").write_text("".join(f"./{path.name}\n" for path in files))
        document = {
            "format": 1,
            "description": (
                "What a real MariaDB sent on compressed connections, captured by "
                "scripts/capture-compressed-protocol.py. sessions: a client logged in with "
                "the given capabilities (CLIENT_COMPRESS included) and ran the steps; 'sent' "
                "is what it sent (compressed packets), 'received' every byte the server sent "
                "back. fake_exact: the fake master answers every step of the session byte for "
                "byte. dumps: non-blocking COM_BINLOG_DUMP of the binlog files stored next to "
                "this file, after the setup statements."
            ),
            "server": server.version(),
            "options": options,
            "binlog_statements": BINLOG_STATEMENTS,
            "binlog_files": [path.name for path in files],
            "sessions": sessions,
            "dumps": dumps,
        }
        (out / "capture.json").write_text(json.dumps(document, indent=1) + "\n")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"{total / 1024:.1f} KiB in {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    capture(parser.parse_args(argv).out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
