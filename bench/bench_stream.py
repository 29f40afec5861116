"""Binlog streaming throughput of the fake master next to a real MariaDB 10.11 primary serving
the same files, measured with ``mariadb-binlog --read-from-remote-server --raw --to-last-log``,
in one run; reported in MB/s and as a ratio.

    python3 bench/bench_stream.py                     # ~200 MB of binlog, 3 rounds
    python3 bench/bench_stream.py --size-mb 50 --rounds 5

1. A real MariaDB 10.11 primary (``tests.peers.mariadb.MariaDBServer``, ``max_binlog_size``
   64M) writes about ``--size-mb`` of binlog: InnoDB transactions of 16 rows of 64 KiB each
   (``INSERT ... SELECT REPEAT(MD5(seq), 2048) FROM seq_1_to_16``), so mostly WRITE_ROWS events
   of one large row each, over several files.
2. ``python -m fakemaster serve --binlog-dir`` serves that primary's binlog directory (the
   same files, read in place).
3. Each round, ``mariadb-binlog`` fetches every file from the real primary and from the fake
   master (in alternating order), into fresh directories; the wall time of the
   ``mariadb-binlog`` process is the measure. Without ``--stop-never`` it asks for a
   non-blocking dump, so both servers end the stream with EOF at the end of the last file.
4. The fetched files must be identical byte for byte between the two servers, and equal to the
   primary's files (the active file's FORMAT_DESCRIPTION differs only in the IN_USE flag, which
   both servers clear on the wire).

Needs MariaDB 10.11 (``mariadbd``, ``mariadb-install-db``, ``mariadb-binlog``; see
scripts/install-deps.sh). No timing is asserted anywhere; the figures are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.peers.mariadb import MariaDBServer, mariadb_available  # noqa: E402

HOST = "127.0.0.1"
ROW_BYTES = 64 << 10
ROWS_PER_TRANSACTION = 16
FDE_FLAGS_OFFSET = 4 + 17
BINLOG_IN_USE = 0x01


def write_binlog(server: MariaDBServer, size: int) -> None:
    """Transactions of large rows until the binlog holds about ``size`` bytes."""
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE bench")
            cur.execute("CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, v LONGBLOB)")
            cur.execute("USE bench")  # where the sequence engine's seq_1_to_N tables appear
            written = 0
            batch = 0
            while written < size:
                cur.execute(
                    "INSERT INTO t (v) SELECT REPEAT(MD5(seq + %s), %s) FROM seq_1_to_%s",
                    (batch * ROWS_PER_TRANSACTION, ROW_BYTES // 32, ROWS_PER_TRANSACTION),
                )
                batch += 1
                if batch % 16 == 0:
                    written = binlog_size(server)
            # After a rotation the server writes a BINLOG_CHECKPOINT event into the new file
            # once InnoDB has made the old file's transactions durable, in the background:
            # have InnoDB flush now, then wait until the binlog stops changing.
            cur.execute("FLUSH ENGINE LOGS")
    finally:
        conn.close()
    sizes = [-1, binlog_size(server)]
    while sizes[-1] != sizes[-2] or len(sizes) < 6:
        time.sleep(0.25)
        sizes.append(binlog_size(server))


def binlog_size(server: MariaDBServer) -> int:
    return sum(path.stat().st_size for path in server.binlog_files())


class ServeProcess:
    def __init__(self, binlog_dir: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fakemaster", "serve", "--port", "0"]
            + ["--binlog-dir", str(binlog_dir)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        found = re.search(r"listening on \S+:(\d+)", line)
        if found is None:
            self.stop()
            raise RuntimeError(f"fakemaster serve said {line!r}")
        self.port = int(found.group(1))

    def stop(self) -> str:
        """Stop it; what it reported on stderr."""
        self.proc.terminate()
        return self.proc.communicate(timeout=30)[1]


def fetch(tool: str, port: int, first_file: str, target: Path) -> float:
    """Seconds ``mariadb-binlog`` takes to fetch every file from ``first_file`` on."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    command = [
        tool,
        "--read-from-remote-server",
        f"--host={HOST}",
        f"--port={port}",
        "--user=root",
        "--raw",
        "--to-last-log",
        f"--result-file={target}/",
        first_file,
    ]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr}")
    return elapsed


def digests(directory: Path) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.iterdir())
    }


def served_digests(files: list[Path]) -> dict[str, str]:
    """The primary's files as a replica receives them: the FDE without IN_USE."""
    out = {}
    for path in files:
        data = bytearray(path.read_bytes())
        data[FDE_FLAGS_OFFSET] &= ~BINLOG_IN_USE & 0xFF
        out[path.name] = hashlib.sha256(data).hexdigest()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=200, help="binlog to write (%(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="fetches per server (%(default)s)")
    args = parser.parse_args(argv)
    tool = shutil.which("mariadb-binlog")
    if not mariadb_available() or tool is None:
        print("MariaDB 10.11 is not installed: run scripts/install-deps.sh", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="fm-bench-stream-") as temporary,
        MariaDBServer({"max_binlog_size": "64M"}) as primary,
    ):
        root = Path(temporary)
        start = time.perf_counter()
        write_binlog(primary, args.size_mb << 20)
        files = primary.binlog_files()
        total = sum(path.stat().st_size for path in files)
        print(
            f"real primary {primary.version()} wrote {len(files)} binlog files, "
            f"{total / 1e6:.1f} MB, in {time.perf_counter() - start:.1f} s"
        )
        fake = ServeProcess(primary.binlog_dir)
        try:
            servers = {"MariaDB": primary.port, "fakemaster": fake.port}
            times: dict[str, list[float]] = {name: [] for name in servers}
            fetched: dict[str, dict[str, str]] = {}
            for round_number in range(args.rounds):
                order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
                for name in order:
                    target = root / name
                    times[name].append(fetch(tool, servers[name], files[0].name, target))
                    fetched[name] = digests(target)
                    if round_number == 0:
                        size = sum(path.stat().st_size for path in target.iterdir())
                        assert size == total, (name, size, total)
        finally:
            fake_errors = fake.stop()
        if "internal error" in fake_errors:
            print(fake_errors, file=sys.stderr)
        same = fetched["MariaDB"] == fetched["fakemaster"]
        as_served = fetched["fakemaster"] == served_digests(files)
    print(f"mariadb-binlog --raw, {args.rounds} fetch(es) of {total / 1e6:.1f} MB per server:")
    speeds = {}
    for name, measured in times.items():
        median = statistics.median(measured)
        speeds[name] = total / median / 1e6
        rounds = ", ".join(f"{value:.2f}" for value in measured)
        print(f"  {name:10s} median {median:6.2f} s = {speeds[name]:7.1f} MB/s   ({rounds} s)")
    print(f"ratio fakemaster / MariaDB: {speeds['fakemaster'] / speeds['MariaDB']:.2f}x")
    yes = {True: "yes", False: "NO"}
    print(f"fetched files identical from both servers: {yes[same]}")
    print(f"fetched files equal to the primary's files (IN_USE cleared): {yes[as_served]}")
    return 0 if same and as_served and "internal error" not in fake_errors else 1


if __name__ == "__main__":
    sys.exit(main())
