#!/usr/bin/env python3
"""Capture what a real MariaDB server sends on compressed connections (CLIENT_COMPRESS).

Starts a private mariadbd (tests/peers/mariadb.py), connects raw-socket clients that log in
with CLIENT_COMPRESS (tests/support/compressed_wire.py) and records, for every step of
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
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from encoder.packets import frame  # noqa: E402
from fakemaster.protocol.handshake import Capability  # noqa: E402
from fakemaster.vocabulary.commands import BinlogDump  # noqa: E402
from tests.peers.mariadb import MariaDBServer  # noqa: E402
from tests.support.compressed_wire import (  # noqa: E402
    COMPRESSED_CAPABILITIES,
    CompressedClient,
    compressed_packet,
)

DEFAULT_OUT = REPO_ROOT / "tests" / "golden" / "compressed_protocol"
USER, PASSWORD = "repl", "secret"
SELECT_1 = b"\x03SELECT 1"

# A step: what the client sends, and (bytes sent, bytes received, whether the server closed).
Step = Callable[[CompressedClient], tuple[bytes, bytes, bool]]


def query(sql: str, *, deflate: bool = False) -> tuple[str, Step]:
    def step(client: CompressedClient) -> tuple[bytes, bytes, bool]:
        return (*client.query(sql, deflate=deflate), False)

    return sql if len(sql) < 80 else sql[:60] + "...", step


def raw(what: str, data: bytes, *, until_closed: bool = False) -> tuple[str, Step]:
    def step(client: CompressedClient) -> tuple[bytes, bytes, bool]:
        client.send_raw(data)
        if until_closed:
            return data, client.until_closed(), True
        client.response()
        return data, client.take_received(), False

    return what, step


@dataclass
class Session:
    capabilities: int
    steps: list[tuple[str, Step]]
    fake_exact: bool = True  # the fake master answers every step byte for byte
    max_allowed_packet: int | None = None  # SET GLOBAL before the session (then put back)


def deflated_packet(body: bytes, seq: int, stated: int) -> bytes:
    packed = zlib.compress(body)
    return struct.pack("<I", len(packed) | seq << 24) + stated.to_bytes(3, "little") + packed


SMALL_MAX_PACKET = 1 << 20
# A command of 1.6 MB in two compressed packets of 800000 bytes (deflated: small on the wire).
_LONG_COMMAND = frame(b"\x03SELECT '" + b"x" * 1_600_000 + b"'", 0)[0]

SESSIONS: dict[str, Session] = {
    "basic": Session(
        COMPRESSED_CAPABILITIES,
        [
            query("SELECT 1"),
            query("SELECT 1", deflate=True),
            query("SELECT nosuchcol"),
            query("SELECT * FROM mysql." + "a" * 60),
        ],
    ),
    "threshold": Session(
        COMPRESSED_CAPABILITIES | Capability.DEPRECATE_EOF,
        [query("SELECT 0"), query("SELECT 00"), query('SELECT "aa"')],
    ),
    "multi_statements": Session(
        COMPRESSED_CAPABILITIES | Capability.MULTI_STATEMENTS,
        [query("SELECT 1; SELECT 2"), query("SELECT 1; SELECT nosuchcol")],
    ),
    "out_of_order": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a command in a compressed packet numbered 3",
                compressed_packet(frame(SELECT_1, 0)[0], 3),
                until_closed=True,
            )
        ],
    ),
    "out_of_order_within": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a command split over compressed packets 0 and 5",
                compressed_packet(frame(SELECT_1, 0)[0][:5], 0)
                + compressed_packet(frame(SELECT_1, 0)[0][5:], 5),
                until_closed=True,
            )
        ],
    ),
    "split_command": Session(
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
            raw(
                "a body that inflates to fewer bytes than stated",
                deflated_packet(frame(SELECT_1, 0)[0], 0, len(frame(SELECT_1, 0)[0]) + 10),
            ),
        ],
    ),
    "bad_zlib": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a body that does not inflate",
                b"\x08\x00\x00\x00\x20\x00\x00\x78\x9c\xffjunk\0",
                until_closed=True,
            )
        ],
    ),
    "short_inflated_length": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a body that inflates to more bytes than stated",
                deflated_packet(frame(SELECT_1, 0)[0], 0, len(frame(SELECT_1, 0)[0]) - 1),
                until_closed=True,
            )
        ],
    ),
    "too_large_header": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "a compressed packet header of 2 MiB (max_allowed_packet 1 MiB)",
                struct.pack("<I", 2 << 20) + b"\0\0\0" + bytes(100),
                until_closed=True,
            )
        ],
        max_allowed_packet=SMALL_MAX_PACKET,
    ),
    "too_large_total": Session(
        COMPRESSED_CAPABILITIES,
        [
            raw(
                "two compressed packets of 800000 bytes (max_allowed_packet 1 MiB)",
                deflated_packet(_LONG_COMMAND[:800_000], 0, 800_000)
                + deflated_packet(_LONG_COMMAND[800_000:1_600_000], 1, 800_000),
                until_closed=True,
            )
        ],
        max_allowed_packet=SMALL_MAX_PACKET,
    ),
    "large_results": Session(
        COMPRESSED_CAPABILITIES | Capability.MULTI_STATEMENTS,
        [
            query("SELECT REPEAT('x', 40000)"),
            query("SELECT REPEAT('a', 20000); SELECT 2"),
            query("SELECT REPEAT('x', 17000000)"),
            # A long query grows the server's buffer, and the compressed packets after it.
            query("SELECT '" + "y" * 30000 + "' IS NOT NULL", deflate=True),
            query("SELECT REPEAT('x', 40000)"),
        ],
        fake_exact=False,
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


# name -> options of dump(): to the end, semi-sync, and two that end in an ERR packet (sent
# uncompressed, with the packets still buffered before it).
DUMPS: dict[str, dict[str, Any]] = {
    "plain": {},
    "semi_sync": {"semi_sync": True},
    "bad_position": {"position": 5},
    "unknown_file": {"file": "mysql-bin.999999"},
}
HEARTBEAT_PERIOD_NS = 1_000_000_000
HEARTBEAT = 27


def dump(
    client: CompressedClient,
    *,
    semi_sync: bool = False,
    file: str = "mysql-bin.000001",
    position: int = 4,
) -> dict[str, Any]:
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
    dump = BinlogDump(
        position=position, flags=flags, server_id=DUMP_SERVER_ID, file_name=file.encode()
    )
    sent = client.command(dump.encode())
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
        "request": {"file": file, "position": position, "flags": flags},
        "server_id": DUMP_SERVER_ID,
        "sent": sent.hex(),
        "received": received.hex(),
    }


def capture(out: Path) -> None:
    options = {"rpl_semi_sync_master_enabled": "ON", "rpl_semi_sync_master_timeout": 100000}
    with MariaDBServer(options) as server:
        server.create_replication_user(USER, PASSWORD, privileges="ALL PRIVILEGES")
        sessions = []
        default_max_packet = int(server.query_one("SELECT @@GLOBAL.max_allowed_packet"))
        for name, session in SESSIONS.items():
            if session.max_allowed_packet is not None:
                server.execute(f"SET GLOBAL max_allowed_packet= {session.max_allowed_packet}")
            client = CompressedClient(
                server.host, server.port, USER, PASSWORD, capabilities=session.capabilities
            )
            recorded = []
            for what, step in session.steps:
                sent, received, closed = step(client)
                recorded.append(
                    {"what": what, "sent": sent.hex(), "received": received.hex(), "closed": closed}
                )
            client.sock.close()
            server.execute(f"SET GLOBAL max_allowed_packet= {default_max_packet}")
            sessions.append(
                {
                    "name": name,
                    "capabilities": session.capabilities,
                    "max_allowed_packet": session.max_allowed_packet or default_max_packet,
                    "fake_exact": session.fake_exact,
                    "login_reply": client.login_reply.hex(),
                    "steps": recorded,
                }
            )
            print(f"{name:22s} {len(recorded)} steps")
        server.execute(BINLOG_STATEMENTS)
        server.wait_for_binlog_checkpoint()
        dumps = {}
        for name, dump_options in DUMPS.items():
            client = CompressedClient(server.host, server.port, USER, PASSWORD)
            dumps[name] = dump(client, **dump_options)
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
                "back, 'closed' whether it closed the connection then; login_reply is the payload of the login's OK (a plain packet). "
                "max_allowed_packet: the server's during the session. fake_exact: the fake "
                "master answers every step of the session byte for byte. dumps: COM_BINLOG_DUMP "
                "of the binlog files stored next to this file, after the setup statements "
                "(semi_sync: blocking, to the first heartbeat; the others non-blocking, to "
                "the end: the binlog's or an error's)."
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
