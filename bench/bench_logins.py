"""What one replica connection costs the server: log in, the statements a replica sends, a
dump of a small binlog to its end, quit; one connection after another, the fake master next to
a real MariaDB 10.11 serving the same files, in one run.

    python3 bench/bench_logins.py                      # 5 rounds of 100 connections
    python3 bench/bench_logins.py --connections 200 --rounds 7 --cache ~/.cache/fm-bench
    python3 bench/bench_logins.py --statements replica # as a MariaDB 10.11 replica logs in

``--statements``: ``binlog`` (default), the two SETs the serving benchmark's drain clients send
(as ``mariadb-binlog`` does, which asks for ``@master_binlog_checksum='NONE'``); ``replica``,
the statements a MariaDB 10.11 replica's IO thread sends before a dump by file and position,
as its primary's general query log recorded them (``tests.support.peer_statements``: ``SELECT
UNIX_TIMESTAMP()``, ``SHOW VARIABLES LIKE 'SERVER_ID'``, three SETs, two SELECTs).

``--binlog-dir DIR``: the fake alone serves DIR (a user's copy of a server's binlogs: its last
file may hold many transactions, where a real primary always starts a file of its own), and
each connection dumps from the end of its last file (nothing to send: the login and the
statements are what is timed).

A test suite connects replicas thousands of times, and with many replicas at once every login
goes through the fake's one event-loop thread (bench_serving.py's 20- and 300-replica cases
start with 20 or 300 of them), where MariaDB gives each connection a thread of its own. Per
round and server: the server's CPU time per connection (user + system of every thread,
/proc/PID/stat, around the round) and the wall time per connection as the client saw it; the
two servers' rounds alternate. The corpus is the serving benchmark's ``small`` shape at 1 MB
(about 9,000 single-row transactions), written once by a real MariaDB (bench/corpus.py) and
cached; the dump is whole each time, so a connection's cost is its login and SETs plus a dump
of 1 MB of small events.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
from bench_serving import (  # noqa: E402
    ServeProcess,
    _serving_mariadb,
    dump_command,
    is_eof_tail,
    tree_cpu_seconds,
)

from tests.support.peer_statements import REPLICA_BY_POSITION  # noqa: E402
from tests.support.wire import RawClient  # noqa: E402

__all__ = ["main"]

_SERVER_ID = 7000
STATEMENTS = {
    "binlog": (
        "SET @master_binlog_checksum= @@global.binlog_checksum",
        "SET @mariadb_slave_capability=4",
    ),
    "replica": REPLICA_BY_POSITION,
}


def connect_and_dump(
    port: int, first_file: str, statements: tuple[str, ...], position: int = 4
) -> None:
    """One replica's connection: login, ``statements``, a dump from ``position`` of
    ``first_file`` to the end (NON_BLOCK: its EOF packet)."""
    with RawClient("127.0.0.1", port, "root", "") as client:
        if client.login_reply[:1] != b"\x00":
            raise RuntimeError(f"port {port} refused the login: {client.login_reply[:60]!r}")
        for sql in statements:
            reply = client.query(sql)
            if reply[0][:1] == b"\xff":
                raise RuntimeError(f"{sql}: {reply[0][9:].decode(errors='replace')}")
        client.write(dump_command(first_file, _SERVER_ID, position))
        buffer = bytearray(1 << 16)
        tail = b""
        while not is_eof_tail(tail):
            received = client.sock.recv_into(buffer)
            if received == 0:
                raise ConnectionError(f"port {port} closed the dump before its EOF packet")
            tail = (tail + bytes(buffer[:received]))[-9:]


def one_round(
    port: int,
    pid: int,
    first_file: str,
    connections: int,
    statements: tuple[str, ...],
    position: int = 4,
) -> tuple[float, float]:
    """(server CPU ms, client wall ms) per connection over ``connections`` in a row."""
    cpu = tree_cpu_seconds(pid)
    wall = time.monotonic()
    for _ in range(connections):
        connect_and_dump(port, first_file, statements, position)
    wall = time.monotonic() - wall
    return (tree_cpu_seconds(pid) - cpu) * 1e3 / connections, wall * 1e3 / connections


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=100, help="per round (100)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", type=Path, help="keep the corpus there")
    parser.add_argument("--statements", choices=sorted(STATEMENTS), default="binlog")
    parser.add_argument("--binlog-dir", type=Path, help="the fake alone, serving DIR")
    args = parser.parse_args(argv)
    statements = STATEMENTS[args.statements]
    if args.binlog_dir is not None:
        return _fake_alone(args, statements)
    results: dict[str, list[tuple[float, float]]] = {"MariaDB": [], "fake": []}
    with tempfile.TemporaryDirectory(prefix="fm-bench-logins-") as scratch_name:
        scratch = Path(scratch_name)
        directory = corpus.build("small", 1, args.cache or scratch / "cache")
        with _serving_mariadb(directory) as primary:
            fake = ServeProcess(primary.binlog_dir, scratch)
            try:
                first_file = primary.binlog_files()[0].name
                servers = {
                    "MariaDB": (primary.port, primary.pid),
                    "fake": (fake.port, fake.pid),
                }
                for port, _ in servers.values():  # warm: imports, the framed files
                    for _ in range(10):
                        connect_and_dump(port, first_file, statements)
                for index in range(args.rounds):
                    for name, (port, pid) in servers.items():
                        cpu, wall = one_round(port, pid, first_file, args.connections, statements)
                        results[name].append((cpu, wall))
                        print(f"round {index + 1} {name:8s} CPU {cpu:.2f} ms  wall {wall:.2f} ms")
            finally:
                fake.stop()
    medians = {
        name: (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
        for name, runs in results.items()
    }
    print(
        f"\nper connection ({args.statements} statements), medians of {args.rounds} rounds"
        f" of {args.connections}:"
    )
    for name, (cpu, wall) in medians.items():
        print(f"  {name:8s} server CPU {cpu:.2f} ms  wall {wall:.2f} ms")
    fake_cpu, fake_wall = medians["fake"]
    maria_cpu, maria_wall = medians["MariaDB"]
    print(f"  fake / MariaDB: CPU {fake_cpu / maria_cpu:.2f}x  wall {fake_wall / maria_wall:.2f}x")
    return 0


def _fake_alone(args: argparse.Namespace, statements: tuple[str, ...]) -> int:
    index = args.binlog_dir / "mysql-bin.index"
    names = [Path(line).name for line in index.read_text().split() if line]
    if not names:
        print(f"no binlog files listed in {index}", file=sys.stderr)
        return 2
    last = names[-1]
    end = (args.binlog_dir / last).stat().st_size
    runs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="fm-bench-logins-") as scratch_name:
        fake = ServeProcess(args.binlog_dir, Path(scratch_name))
        try:
            for _ in range(10):
                connect_and_dump(fake.port, last, statements, end)
            for number in range(args.rounds):
                cpu, wall = one_round(fake.port, fake.pid, last, args.connections, statements, end)
                runs.append((cpu, wall))
                print(f"round {number + 1} fake CPU {cpu:.2f} ms  wall {wall:.2f} ms")
        finally:
            fake.stop()
    cpu = statistics.median(c for c, _ in runs)
    wall = statistics.median(w for _, w in runs)
    print(
        f"\nper connection ({args.statements} statements, the fake serving {args.binlog_dir},"
        f" last file {last} of {end:,} bytes), medians of {args.rounds} rounds of"
        f" {args.connections}: server CPU {cpu:.2f} ms  wall {wall:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
