"""Serving the binlog under load: the fake master (``python -m fakemaster serve --binlog-dir``, a
separate process) next to a real MariaDB 10.11 primary serving the SAME binlog files, in one
run: wall time of full dumps by 1 and by 20 concurrent replicas, peak server RSS, and the
handshake latency of new connections while 20 dumps stream; medians and ratios.

    python3 bench/bench_serving.py --quick              # smoke run, small corpora (~2 min)
    python3 bench/bench_serving.py                      # 250 / 100 / 256 MB corpora, 3 rounds
    python3 bench/bench_serving.py --shapes small --replicas 20 --rounds 5 --cache ~/.cache/fm
    python3 bench/bench_serving.py --quick --replicas 1,20,300 --background-load 4

1. Corpora (bench/corpus.py), written through a real MariaDB primary and cached under
   ``--cache`` (default: a temporary directory) by shape and size: ``large`` (64 KiB rows),
   ``mixed`` (small DML of several column types, DDL, medium rows and ONE 20 MiB row, whose
   event the dump splits into several packets), ``small`` (single-row transactions).
2. Per shape, a real MariaDB primary (``tests.peers.mariadb.MariaDBServer``) starts on a copy of
   the corpus files (it adds one new file of its own when it starts), and ``fakemaster serve
   --binlog-dir`` serves that primary's binlog directory: both serve the same files, read from
   the same page cache.
3. A replica is a client that only drains a full non-blocking dump of every file from the
   first one on, of one of two kinds (``--clients``):

   * ``drain``: a small Python client in its own process (this script, ``--drain-worker``):
     handshake and login as root, ``SET @master_binlog_checksum= @@global.binlog_checksum``,
     ``SET @mariadb_slave_capability=4``, COM_BINLOG_DUMP (non-blocking, a server id of its
     own), then ``recv_into`` one reused 1 MiB buffer until the stream ends with the EOF packet
     (recognised at the tail of the received bytes; after it the client sends COM_QUIT and
     checks that nothing but the close follows). Its own ceiling is measured in the same run:
     the same clients fed the same byte stream (MariaDB's, saved in the verification round)
     by a server that only ``sendall``s it from memory; each client also reports its CPU time;
   * ``mariadb-binlog``: ``mariadb-binlog --read-from-remote-server --raw --to-last-log``,
     writing the files under a memory file system (``--scratch``, default /dev/shm).

   The replicas are started first and wait for a "go"; the time of a case is the wall time
   from "go" until the last replica has the whole stream (drain: its EOF packet arrived;
   mariadb-binlog: the process exited). Per case (shape, client, replica count): one untimed
   verification round per server, then ``--rounds`` timed rounds alternating which server
   goes first. Reported: medians, MB/s (aggregate: replicas x corpus bytes / time) and the
   ratio fake time / MariaDB time (at most 1.0 means the fake is at least as fast). With more
   than one drain replica, the log also gives when the replicas asked for their dumps (login
   and SETs answered) and got the first byte, from "go" (median / maximum over every replica
   of every round): the start of many dumps at once.
4. Verification (untimed round): replica 0 of each server hashes the whole stream (drain) or
   its fetched files (mariadb-binlog) while the other replicas stream; the results must be
   identical between the servers (and, for mariadb-binlog, equal to the primary's files with
   the active file's IN_USE flag cleared). In every round every replica must receive as many
   bytes as in the verification round.
5. Server RSS and CPU: a thread samples VmRSS of the server's process tree every 2 ms during
   each round, and VmHWM (a single process) is reset before and read after each round; the
   peak over a case's rounds is reported next to the idle RSS before the case. The server's
   CPU time (user + system, /proc/PID/stat of its process tree) is taken around each round.
6. Handshake latency: in every timed round with more than one replica, a thread opens new
   connections one after another (10 ms apart), timing connect to the first handshake byte,
   then logs in and quits; only probes that finished while every dump was still streaming
   count.
7. ``--first-dumps STARTS`` (after the cases above, per shape): STARTS times, the MariaDB
   primary is restarted and one drain client (started before the server, the port handed to
   it with "go") dumps every file at once; then a new ``fakemaster serve`` starts on the
   primary's binlog directory and is dumped from the same way. Reported: medians of the dump's
   wall time, of each server's start (MariaDB: the harness's start, which polls its error log
   and logs in, an upper bound; the fake: spawn to its "listening" line) and of both, the
   server CPU time of the start and of the dump, and whether both streams had the same length.
   The first dump is the one that finds nothing prepared: the fake frames every file then.
   ``--first-dump-wait SECONDS``: the client is told to go SECONDS after its server is ready
   (0: at once), as a test harness that sets its replica up after the server listens; the
   server's CPU while it waited is logged per start (the fake imports what its first client
   needs then, ``fakemaster.server.warm_up``) and counted in neither figure.

8. ``--background-load N``: N CPU hogs (processes of this script, ``--hog-worker``: a busy
   loop at the default priority, each ending by itself when this script is gone) run through
   every shape's cases, both servers' rounds alike, as other jobs on a shared CI runner do;
   they start after the corpus is built and are stopped when the shape's cases end, whatever
   happens. The report names N and the load average before and after the cases.

Needs MariaDB 10.11 (``mariadbd``, ``mariadb-install-db``, ``mariadb-binlog``; see
scripts/install-deps.sh). It uses only the ``fakemaster serve`` command line and the wire, so
it works with any version of the fake. No timing is asserted anywhere; the figures are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
SERVERS = ("MariaDB", "fake")
FULL_SIZES = {"large": 250, "mixed": 100, "small": 256}
QUICK_SIZES = {"large": 16, "mixed": 24, "small": 8}
FDE_FLAGS_OFFSET = 4 + 17
BINLOG_IN_USE = 0x01
RECV_BUFFER = 1 << 20
IO_TIMEOUT = 300.0
PROBE_PAUSE = 0.010
FIRST_REPLICA_SERVER_ID = 1000

# --- the client side of the wire -------------------------------------------------------------

CLIENT_LONG_PASSWORD = 0x1
CLIENT_LONG_FLAG = 0x4
CLIENT_PROTOCOL_41 = 0x200
CLIENT_TRANSACTIONS = 0x2000
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
CAPABILITIES = (
    CLIENT_LONG_PASSWORD
    | CLIENT_LONG_FLAG
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_PLUGIN_AUTH
)
COM_QUIT = 0x01
COM_QUERY = 0x03
COM_BINLOG_DUMP = 0x12
BINLOG_DUMP_NON_BLOCK = 0x01
QUIT_PACKET = b"\x01\x00\x00\x00" + bytes([COM_QUIT])


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
    return bytes(data)


def read_packet(sock: socket.socket) -> tuple[int, bytes]:
    """One packet (smaller than 16 MiB): its sequence number and payload."""
    header = _recv_exactly(sock, 4)
    length = header[0] | header[1] << 8 | header[2] << 16
    return header[3], _recv_exactly(sock, length)


def send_packet(sock: socket.socket, sequence: int, payload: bytes) -> None:
    sock.sendall(struct.pack("<I", len(payload))[:3] + bytes([sequence]) + payload)


def _check_ok(payload: bytes, what: str) -> None:
    if payload[:1] == b"\xff":
        code = struct.unpack_from("<H", payload, 1)[0]
        raise RuntimeError(f"{what}: error {code} {payload[9:].decode(errors='replace')}")
    if payload[:1] != b"\x00":
        raise RuntimeError(f"{what}: unexpected reply {payload[:40]!r}")


def login(sock: socket.socket, user: str = "root", first_byte: bytes = b"") -> None:
    """Read the handshake (its first byte may already be read) and log in without password."""
    header = first_byte + _recv_exactly(sock, 4 - len(first_byte))
    length = header[0] | header[1] << 8 | header[2] << 16
    handshake = _recv_exactly(sock, length)
    if handshake[:1] == b"\xff":
        _check_ok(handshake, "handshake")
    response = struct.pack("<IIB", CAPABILITIES, 1 << 24, 45) + bytes(23)
    response += user.encode() + b"\x00" + b"\x00" + b"mysql_native_password\x00"
    send_packet(sock, header[3] + 1, response)
    sequence, reply = read_packet(sock)
    if reply[:1] == b"\xfe":  # auth switch: an empty password has an empty scramble
        send_packet(sock, sequence + 1, b"")
        sequence, reply = read_packet(sock)
    _check_ok(reply, "login")


def query(sock: socket.socket, sql: str) -> None:
    send_packet(sock, 0, bytes([COM_QUERY]) + sql.encode())
    _check_ok(read_packet(sock)[1], sql)


def dump_command(first_file: str, server_id: int, position: int = 4) -> bytes:
    return (
        bytes([COM_BINLOG_DUMP])
        + struct.pack("<IHI", position, BINLOG_DUMP_NON_BLOCK, server_id)
        + first_file.encode()
    )


def is_eof_tail(tail: bytes) -> bool:
    """The last 9 bytes received are an EOF packet (length 5, 0xFE): the end of the dump."""
    return len(tail) == 9 and tail[:3] == b"\x05\x00\x00" and tail[4] == 0xFE


# --- the drain worker (a process per replica) -------------------------------------------------


def drain_worker(argv: list[str]) -> int:
    """``--drain-worker PORT FIRST_FILE SERVER_ID MODE [SAVE]``: wait for "go" on stdin, drain,
    print one JSON line. MODE: ``dump`` (log in, dump), ``dump-hash`` (also hash the stream and,
    with SAVE, write it there), ``raw`` (no protocol: read what the peer sends). PORT ``-``:
    the port comes with the "go" line (``go PORT``: a worker started before its server)."""
    first_file, server_id, mode = argv[1], int(argv[2]), argv[3]
    save: IO[bytes] | None = open(argv[4], "wb") if len(argv) > 4 else None  # noqa: SIM115
    hasher = hashlib.sha256() if mode == "dump-hash" else None
    buffer = bytearray(RECV_BUFFER)
    view = memoryview(buffer)
    print("ready", flush=True)
    go = sys.stdin.readline().split()
    port = int(go[1]) if argv[0] == "-" else int(argv[0])
    result: dict[str, Any] = {"start": time.monotonic()}
    cpu = os.times()
    total = 0
    try:
        sock = socket.create_connection((HOST, port), timeout=IO_TIMEOUT)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        if mode != "raw":
            login(sock)
            query(sock, "SET @master_binlog_checksum= @@global.binlog_checksum")
            query(sock, "SET @mariadb_slave_capability=4")
            result["asked"] = time.monotonic()
            send_packet(sock, 0, dump_command(first_file, server_id))
        tail = b""
        first = True
        while True:
            received = sock.recv_into(view)
            if received == 0:
                raise ConnectionError(f"closed after {total} bytes, before the EOF packet")
            if first and mode != "raw" and received >= 5 and buffer[4] == 0xFF:
                _check_ok(bytes(view[4:received]), "COM_BINLOG_DUMP")
            if first:
                result["first_byte"] = time.monotonic()
            first = False
            total += received
            if hasher is not None:
                hasher.update(view[:received])
            if save is not None:
                save.write(view[:received])
            if received >= 9:
                tail = bytes(view[received - 9 : received])
            else:
                tail = (tail + bytes(view[:received]))[-9:]
            if is_eof_tail(tail):
                break
        result["eof"] = time.monotonic()
        now = os.times()
        result["cpu"] = now.user - cpu.user + now.system - cpu.system
        sock.sendall(QUIT_PACKET)
        extra = 0
        try:
            while received := sock.recv_into(view):
                extra += received
        except ConnectionResetError:  # a close with the COM_QUIT unread, as MariaDB may do
            pass
        sock.close()
        if extra:
            raise RuntimeError(f"{extra} bytes after what looked like the EOF packet")
    except Exception as error:  # reported to the parent, which stops the benchmark
        result["error"] = f"{type(error).__name__}: {error}"
        result["last_bytes"] = bytes(view[:64]).hex()
    result["bytes"] = total
    if hasher is not None:
        result["sha256"] = hasher.hexdigest()
    if save is not None:
        save.close()
    print(json.dumps(result), flush=True)
    return 0


# --- background load --------------------------------------------------------------------------

HOG_CHECK_EVERY = 200_000  # loop turns between looks at the parent (well under a second)


def hog_worker(argv: list[str]) -> int:
    """``--hog-worker PARENT_PID``: burn CPU until the parent process is gone (a benchmark
    killed before it could stop its hogs leaves none behind)."""
    parent = int(argv[0])
    print("ready", flush=True)
    while os.getppid() == parent:
        for _ in range(HOG_CHECK_EVERY):
            pass
    return 0


@contextmanager
def background_load(count: int) -> Iterator[None]:
    """``count`` CPU hogs running for the block (none when 0), always stopped at its end."""
    hogs: list[subprocess.Popen[str]] = []
    try:
        for _ in range(count):
            command = [sys.executable, str(Path(__file__).resolve()), "--hog-worker"]
            hogs.append(
                subprocess.Popen(
                    command + [str(os.getpid())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        for hog in hogs:
            assert hog.stdout is not None
            if hog.stdout.readline().strip() != "ready":
                raise RuntimeError("a CPU hog did not start")
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
            if hog.stdout is not None:
                hog.stdout.close()


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min)"


# --- servers ----------------------------------------------------------------------------------


def _serving_mariadb(corpus_dir: Path, max_connections: int = 200) -> Any:
    from bench.corpus import corpus_files
    from tests.peers.mariadb import MariaDBServer

    class ServingMariaDB(MariaDBServer):
        """A primary whose binlog directory starts as a copy of the corpus files."""

        def _spawn_and_wait(self) -> None:
            if not self.binlog_index.exists():
                lines = []
                for path in corpus_files(corpus_dir):
                    shutil.copyfile(path, self.binlog_dir / path.name)
                    lines.append(f"{self.binlog_dir / path.name}\n")
                self.binlog_index.write_text("".join(lines))
            super()._spawn_and_wait()

    return ServingMariaDB({"max_binlog_size": "64M", "max_connections": max_connections})


class ServeProcess:
    """``python -m fakemaster serve --port 0 --binlog-dir DIR``, output into files (a pipe
    nobody reads could block it)."""

    # More ``serve`` options for every fake started (``--serve-args``).
    extra_args: list[str] = []

    def __init__(self, binlog_dir: Path, logs: Path) -> None:
        self.stdout_path, self.stderr_path = logs / "fake.out", logs / "fake.err"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "fakemaster", "serve", "--port", "0"]
                + ["--binlog-dir", str(binlog_dir)]
                + self.extra_args,
                cwd=REPO_ROOT,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
        spawned = time.monotonic()
        deadline = spawned + 60
        while True:
            found = re.search(r"listening on \S+:(\d+)", self.stdout_path.read_text())
            if found is not None:
                self.port = int(found.group(1))
                self._ready = time.monotonic() - spawned
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fakemaster serve did not start: {self.stderr()}")
            time.sleep(0.01)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def ready_seconds(self) -> float:
        """From spawning the process until its "listening" line was seen (polled every 10 ms)."""
        return self._ready

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- server memory ----------------------------------------------------------------------------


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _process_tree(pid: int) -> list[int]:
    pids, pending = [], [pid]
    while pending:
        current = pending.pop()
        pids.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            pass
    return pids


def tree_rss_kb(pid: int, field: str = "VmRSS:") -> int:
    return sum(_status_kb(each, field) for each in _process_tree(pid))


def tree_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process tree (every thread of each process)."""
    ticks = 0
    for each in _process_tree(pid):
        try:
            with open(f"/proc/{each}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (FileNotFoundError, ProcessLookupError, IndexError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


class RssSampler:
    """Peak RSS (KiB) of a process tree while running: VmRSS sampled every 2 ms, and the peak
    resident size the kernel recorded (VmHWM, reset at the start when allowed)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        # Private memory (RssAnon): RSS without the files the server maps (the fake maps its
        # frame cache once and shares it between replicas).
        self.peak_anon = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        for each in _process_tree(self.pid):
            try:
                with open(f"/proc/{each}/clear_refs", "w") as clear:
                    clear.write("5")  # reset VmHWM to the current RSS
            except OSError:
                pass
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_kb(self.pid))
            self.peak_anon = max(self.peak_anon, tree_rss_kb(self.pid, "RssAnon:"))
            self._stop.wait(0.002)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        tree = _process_tree(self.pid)
        if len(tree) == 1:
            self.peak = max(self.peak, _status_kb(self.pid, "VmHWM:"))


# --- handshake probes -------------------------------------------------------------------------


class HandshakeProbe:
    """New connections one after another while dumps stream: (finish time, seconds from
    connect to the first handshake byte) for each."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.samples: list[tuple[float, float]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HandshakeProbe:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                start = time.perf_counter()
                with socket.create_connection((HOST, self.port), timeout=IO_TIMEOUT) as sock:
                    first = sock.recv(1)
                    latency = time.perf_counter() - start
                    self.samples.append((time.monotonic(), latency))
                    login(sock, first_byte=first)
                    sock.sendall(QUIT_PACKET)
            except Exception as error:
                self.errors.append(f"{type(error).__name__}: {error}")
            self._stop.wait(PROBE_PAUSE)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# --- one round: N replicas draining one server ------------------------------------------------


@dataclass
class Round:
    seconds: float
    bytes_per_replica: list[int]
    digest: str | None = None
    peak_rss_kb: int = 0
    peak_anon_kb: int = 0
    server_cpu: float = 0.0
    client_cpu: float | None = None
    probes: list[float] = field(default_factory=list)
    probe_errors: list[str] = field(default_factory=list)
    # Per replica (drain clients that log in): seconds from "go" until it sent COM_BINLOG_DUMP
    # (its login and SETs answered), and until the dump's first byte came.
    asked: list[float] = field(default_factory=list)
    first_bytes: list[float] = field(default_factory=list)


def _spawn_drains(
    port: int | str, first_file: str, replicas: int, mode: str, save: Path | None
) -> list[subprocess.Popen[str]]:
    procs = []
    for index in range(replicas):
        command = [sys.executable, str(Path(__file__).resolve()), "--drain-worker", str(port)]
        command += [first_file, str(FIRST_REPLICA_SERVER_ID + index)]
        if index == 0 and mode == "dump-hash":
            command += ["dump-hash"] + ([str(save)] if save is not None else [])
        else:
            command.append("raw" if mode == "raw" else "dump")
        procs.append(
            subprocess.Popen(
                command, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        )
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("a drain worker did not start")
    return procs


def run_drains(
    port: int,
    first_file: str,
    replicas: int,
    *,
    mode: str = "dump",
    save: Path | None = None,
    server_pid: int | None = None,
    probe: bool = False,
) -> Round:
    procs = _spawn_drains(port, first_file, replicas, mode, save)
    with _watch(server_pid, port if probe else None) as watch:
        go = time.monotonic()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            out, _ = proc.communicate(timeout=3600)
            results.append(json.loads(out.strip().splitlines()[-1]))
    failed = [r for r in results if "error" in r]
    if failed:
        raise RuntimeError(f"drain on port {port} failed: {failed[0]}")
    ends = [r["eof"] for r in results]
    return watch.finish(
        Round(
            seconds=max(ends) - go,
            bytes_per_replica=[r["bytes"] for r in results],
            digest=results[0].get("sha256"),
            client_cpu=sum(r["cpu"] for r in results),
            asked=[r["asked"] - go for r in results if "asked" in r],
            first_bytes=[r["first_byte"] - go for r in results if "first_byte" in r],
        ),
        first_end=min(ends),
    )


def run_mariadb_binlogs(
    tool: str,
    port: int,
    first_file: str,
    replicas: int,
    out_root: Path,
    *,
    verify: bool = False,
    server_pid: int | None = None,
    probe: bool = False,
) -> Round:
    targets = [out_root / str(index) for index in range(replicas)]
    procs = []
    for target in targets:
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
        # Started now, exec'ed at "go": process start-up is not timed.
        procs.append(
            subprocess.Popen(
                ["sh", "-c", 'read go && exec "$0" "$@"', *command],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    time.sleep(0.05)
    ends: list[float] = [0.0] * replicas
    errors: list[str] = []

    def wait(index: int, proc: subprocess.Popen[bytes]) -> None:
        _, err = proc.communicate(timeout=3600)
        ends[index] = time.monotonic()
        if proc.returncode != 0:
            errors.append(err.decode(errors="replace"))

    waiters = [threading.Thread(target=wait, args=pair) for pair in enumerate(procs)]
    with _watch(server_pid, port if probe else None) as watch:
        go = time.monotonic()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        for waiter in waiters:
            waiter.start()
        for waiter in waiters:
            waiter.join()
    if errors:
        raise RuntimeError(f"mariadb-binlog on port {port} failed: {errors[0]}")
    sizes = [sum(p.stat().st_size for p in target.iterdir()) for target in targets]
    digest = None
    if verify:
        digest = hashlib.sha256(json.dumps(file_digests(targets[0])).encode()).hexdigest()
    for target in targets:
        shutil.rmtree(target)
    return watch.finish(
        Round(seconds=max(ends) - go, bytes_per_replica=sizes, digest=digest),
        first_end=min(ends),
    )


class _Watch:
    def __init__(self, sampler: RssSampler | None, probe: HandshakeProbe | None) -> None:
        self.sampler, self.probe = sampler, probe
        self.server_cpu = 0.0

    def finish(self, result: Round, first_end: float) -> Round:
        result.server_cpu = self.server_cpu
        if self.sampler is not None:
            result.peak_rss_kb = self.sampler.peak
            result.peak_anon_kb = self.sampler.peak_anon
        if self.probe is not None:
            result.probes = [latency for end, latency in self.probe.samples if end <= first_end]
            result.probe_errors = self.probe.errors
        return result


@contextmanager
def _watch(server_pid: int | None, probe_port: int | None) -> Iterator[_Watch]:
    sampler = RssSampler(server_pid) if server_pid is not None else None
    probe = HandshakeProbe(probe_port) if probe_port is not None else None
    if sampler is not None:
        sampler.__enter__()
    if probe is not None:
        probe.__enter__()
    watch = _Watch(sampler, probe)
    cpu = tree_cpu_seconds(server_pid) if server_pid is not None else 0.0
    try:
        yield watch
    finally:
        if server_pid is not None:
            watch.server_cpu = tree_cpu_seconds(server_pid) - cpu
        if probe is not None:
            probe.__exit__()
        if sampler is not None:
            sampler.__exit__()


@dataclass
class FirstDumps:
    """The first full dump after each server start (``--first-dumps``): per server, the time
    to start and the dump's wall time, per start."""

    shape: str
    ready: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    seconds: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    start_cpu: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    same_bytes: bool = True


def _first_dump(
    start: Any, first_file: str, wait: float = 0.0
) -> tuple[float, float, int, float, float, float]:
    """Start a server with ``start()`` (returning its port, pid and the seconds it took),
    then, ``wait`` seconds later, one full dump by one drain client started beforehand: (start
    seconds, dump seconds, bytes, server CPU during the dump, server CPU of its start, server
    CPU while it waited)."""
    (proc,) = _spawn_drains("-", first_file, 1, "dump", None)
    port, pid, started = start()
    start_cpu = tree_cpu_seconds(pid)
    if wait > 0:
        time.sleep(wait)
    cpu = tree_cpu_seconds(pid)
    go = time.monotonic()
    assert proc.stdin is not None
    proc.stdin.write(f"go {port}\n")
    proc.stdin.flush()
    out, _ = proc.communicate(timeout=3600)
    result = json.loads(out.strip().splitlines()[-1])
    if "error" in result:
        raise RuntimeError(f"first dump on port {port} failed: {result['error']}")
    dump_cpu = tree_cpu_seconds(pid) - cpu
    return started, result["eof"] - go, result["bytes"], dump_cpu, start_cpu, cpu - start_cpu


def run_first_dumps(
    shape: str, primary: Any, scratch: Path, first_file: str, starts: int, wait: float = 0.0
) -> FirstDumps:
    """``starts`` times: restart the MariaDB primary and dump from it at once, then start a
    new ``fakemaster serve`` on the primary's binlog directory and dump from it at once (each
    server's dump follows its own start: nothing of the other one's start or dump is spent
    idle by it). The drain client is started before its server, so its own start-up is not
    between the server's readiness and the dump."""
    result = FirstDumps(shape)
    for _ in range(starts):

        def start_mariadb() -> tuple[int, int, float]:
            primary.restart()
            return primary.port, primary.pid, primary.startup_seconds

        fake: ServeProcess | None = None

        def start_fake() -> tuple[int, int, float]:
            nonlocal fake
            fake = ServeProcess(primary.binlog_dir, scratch)
            return fake.port, fake.pid, fake.ready_seconds

        sizes = {}
        waited = {}
        for server, start in (("MariaDB", start_mariadb), ("fake", start_fake)):
            try:
                ready, seconds, size, cpu, start_cpu, waited[server] = _first_dump(
                    start, first_file, wait
                )
            finally:
                if fake is not None:
                    fake.stop()
            result.ready[server].append(ready)
            result.seconds[server].append(seconds)
            result.cpu[server].append(cpu)
            result.start_cpu[server].append(start_cpu)
            sizes[server] = size
        result.same_bytes = result.same_bytes and sizes["MariaDB"] == sizes["fake"]
        log(
            f"  {shape:5s} first dump after start: MariaDB {result.seconds['MariaDB'][-1]:.3f} s"
            f" (CPU {result.cpu['MariaDB'][-1]:.2f} s)"
            f" (start {result.ready['MariaDB'][-1]:.3f} s)   fake {result.seconds['fake'][-1]:.3f}"
            f" s (CPU {result.cpu['fake'][-1]:.2f} s, start {result.ready['fake'][-1]:.3f} s, CPU"
            f" {result.start_cpu['fake'][-1]:.2f} s)   bytes {sizes}"
            + (
                f"   CPU while waiting {wait} s: MariaDB {waited['MariaDB']:.2f} s,"
                f" fake {waited['fake']:.2f} s"
                if wait > 0
                else ""
            )
        )
    return result


def file_digests(directory: Path) -> dict[str, str]:
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


# --- the drain client's own ceiling -----------------------------------------------------------


class BlastServer:
    """Sends the same bytes to every connection (``sendall`` of one buffer in memory: faster
    here than ``os.sendfile`` from a file), then closes it."""

    def __init__(self, path: Path) -> None:
        self.data = memoryview(path.read_bytes())
        self.listener = socket.create_server((HOST, 0))
        self.port = int(self.listener.getsockname()[1])
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._send, args=(conn,), daemon=True).start()

    def _send(self, conn: socket.socket) -> None:
        with conn:
            conn.sendall(self.data)
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(65536):  # the COM_QUIT, then the client's close
                pass

    def close(self) -> None:
        self.listener.close()


# --- the benchmark ----------------------------------------------------------------------------


@dataclass
class Case:
    shape: str
    client: str
    replicas: int
    rounds: dict[str, list[Round]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    verify: dict[str, Round] = field(default_factory=dict)
    idle_rss_kb: dict[str, int] = field(default_factory=dict)
    identical: bool = False
    ceiling: list[float] = field(default_factory=list)

    def median(self, server: str) -> float:
        return statistics.median(r.seconds for r in self.rounds[server])

    def peak_anon(self, server: str) -> int:
        every = self.rounds[server] + ([self.verify[server]] if server in self.verify else [])
        return max(r.peak_anon_kb for r in every)

    def peak_rss(self, server: str) -> int:
        every = self.rounds[server] + ([self.verify[server]] if server in self.verify else [])
        return max(r.peak_rss_kb for r in every)

    def probes(self, server: str) -> list[float]:
        return [p for r in self.rounds[server] for p in r.probes]


@dataclass
class CorpusInfo:
    shape: str
    files: int
    total: int
    events: int
    largest_event: int


def corpus_info(shape: str, files: list[Path]) -> CorpusInfo:
    from tests.peers.binlog_scan import iter_event_headers

    events = largest = 0
    for path in files:
        for header in iter_event_headers(path):
            events += 1
            largest = max(largest, header.event_length)
    return CorpusInfo(shape, len(files), sum(p.stat().st_size for p in files), events, largest)


def log(message: str) -> None:
    print(message, flush=True)


def run_case(
    case: Case,
    ports: dict[str, int],
    pids: dict[str, int],
    first_file: str,
    rounds: int,
    tool: str,
    scratch: Path,
    served: dict[str, str],
) -> None:
    probe = case.replicas > 1

    def one(server: str, verify: bool, save: Path | None = None) -> Round:
        if case.client == "drain":
            return run_drains(
                ports[server],
                first_file,
                case.replicas,
                mode="dump-hash" if verify else "dump",
                save=save,
                server_pid=pids[server],
                probe=probe and not verify,
            )
        return run_mariadb_binlogs(
            tool,
            ports[server],
            first_file,
            case.replicas,
            scratch / "out" / server,
            verify=verify,
            server_pid=pids[server],
            probe=probe and not verify,
        )

    for server in SERVERS:
        case.idle_rss_kb[server] = tree_rss_kb(pids[server])
        save = scratch / f"stream-{server}" if case.client == "drain" else None
        case.verify[server] = one(server, True, save)
    sizes = {s: set(case.verify[s].bytes_per_replica) for s in SERVERS}
    expected = case.verify["MariaDB"].bytes_per_replica[0]
    case.identical = case.verify["MariaDB"].digest == case.verify["fake"].digest and sizes[
        "MariaDB"
    ] == sizes["fake"] == {expected}
    if case.client == "mariadb-binlog" and served:
        as_served = hashlib.sha256(json.dumps(served).encode()).hexdigest()
        case.identical = case.identical and case.verify["fake"].digest == as_served
    if not case.identical:
        log(f"  !! {case.shape}/{case.client}/{case.replicas}: outputs differ: {sizes}")
        if case.client == "drain":
            log("     first difference at byte " + _first_difference(scratch))
    for index in range(rounds):
        order = SERVERS if index % 2 == 0 else tuple(reversed(SERVERS))
        for server in order:
            result = one(server, False)
            if set(result.bytes_per_replica) != {expected}:
                raise RuntimeError(
                    f"{server}: a replica got {result.bytes_per_replica} bytes, not {expected}"
                )
            case.rounds[server].append(result)
    if case.client == "drain":  # the client's own ceiling on the same stream
        blast = BlastServer(scratch / "stream-MariaDB")
        try:
            for _ in range(rounds):
                result = run_drains(blast.port, first_file, case.replicas, mode="raw")
                if set(result.bytes_per_replica) != {expected}:
                    raise RuntimeError(f"blast: {result.bytes_per_replica} bytes, not {expected}")
                case.ceiling.append(result.seconds)
        finally:
            blast.close()
    mariadb, fake = case.median("MariaDB"), case.median("fake")
    log(
        f"  {case.shape:5s} {case.client:14s} x{case.replicas:<3d} MariaDB {mariadb:7.3f} s   "
        f"fake {fake:7.3f} s   fake/MariaDB {fake / mariadb:5.2f}x   "
        f"identical: {'yes' if case.identical else 'NO'}"
        + (f"   client ceiling {statistics.median(case.ceiling):.3f} s" if case.ceiling else "")
    )
    if case.client == "drain" and case.replicas > 1:
        log("        " + "   ".join(_start_phases(case, server) for server in SERVERS))


def _start_phases(case: Case, server: str) -> str:
    """When a round's replicas asked for their dumps and got its first byte (ms from "go",
    median and maximum over every replica of every round): where the logins of many replicas
    at once go through the fake's one event-loop thread."""
    rounds = case.rounds[server]
    asked = sorted(t for r in rounds for t in r.asked)
    first = sorted(t for r in rounds for t in r.first_bytes)
    if not asked or not first:
        return f"{server}: -"
    return (
        f"{server}: dump asked {statistics.median(asked) * 1e3:.0f} / {asked[-1] * 1e3:.0f} ms,"
        f" first byte {statistics.median(first) * 1e3:.0f} / {first[-1] * 1e3:.0f} ms"
    )


def _first_difference(scratch: Path) -> str:
    a = (scratch / "stream-MariaDB").read_bytes()
    b = (scratch / "stream-fake").read_bytes()
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"{index} of {len(a)} / {len(b)}: {a[index : index + 16].hex()} / {b[index : index + 16].hex()}"
    return f"{min(len(a), len(b))} (lengths {len(a)} / {len(b)})"


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f}"


def report_first_dumps(
    firsts: list[FirstDumps], stream_sizes: dict[str, int], wait: float = 0.0
) -> None:
    when = "at once" if wait <= 0 else f"{wait} s after its server is ready"
    log(
        f"\n### The first full dump after a server start (1 drain client, going {when}; "
        "medians over the starts)\n"
    )
    log(
        "| shape | starts | MariaDB dump s | fake dump s | fake / MariaDB | MariaDB start s "
        "| fake start s | MariaDB start + dump | fake start + dump | fake / MariaDB "
        "| server CPU in the dump, MariaDB / fake s | server CPU to start, MariaDB / fake s "
        "| same bytes |"
    )
    log("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for first in firsts:
        med = {s: statistics.median(first.seconds[s]) for s in SERVERS}
        ready = {s: statistics.median(first.ready[s]) for s in SERVERS}
        both = {
            s: statistics.median(
                a + b for a, b in zip(first.ready[s], first.seconds[s], strict=True)
            )
            for s in SERVERS
        }
        cpu = {s: statistics.median(first.cpu[s]) for s in SERVERS}
        start_cpu = {s: statistics.median(first.start_cpu[s]) for s in SERVERS}
        log(
            f"| {first.shape} | {len(first.seconds['fake'])} | {med['MariaDB']:.3f} "
            f"| {med['fake']:.3f} | **{med['fake'] / med['MariaDB']:.2f}x** "
            f"| {ready['MariaDB']:.3f} | {ready['fake']:.3f} | {both['MariaDB']:.3f} "
            f"| {both['fake']:.3f} | **{both['fake'] / both['MariaDB']:.2f}x** "
            f"| {cpu['MariaDB']:.2f} / {cpu['fake']:.2f} "
            f"| {start_cpu['MariaDB']:.2f} / {start_cpu['fake']:.2f} "
            f"| {'yes' if first.same_bytes else 'NO'} |"
        )
    log(
        "\nStart: MariaDB's is the harness's (spawn until a login succeeds, the error log polled "
        "every 20-200 ms: an upper bound), the fake's from spawning `serve` until its "
        '"listening" line (polled every 10 ms).'
    )


def report(infos: list[CorpusInfo], cases: list[Case], stream_sizes: dict[str, int]) -> None:
    log("\n### Corpora\n")
    log("| shape | files | MB | events | largest event |")
    log("|---|---|---|---|---|")
    for info in infos:
        log(
            f"| {info.shape} | {info.files} | {_mb(info.total)} | {info.events:,} | "
            f"{info.largest_event / (1 << 20):.2f} MiB |"
        )
    log("\n### Full dumps: wall time until every replica has the whole stream (medians)\n")
    log(
        "| shape | client | replicas | MariaDB s | fake s | fake / MariaDB | MariaDB MB/s "
        "| fake MB/s | identical |"
    )
    log("|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        size = stream_sizes[case.shape] * case.replicas
        mariadb, fake = case.median("MariaDB"), case.median("fake")
        log(
            f"| {case.shape} | {case.client} | {case.replicas} | {mariadb:.3f} | {fake:.3f} | "
            f"**{fake / mariadb:.2f}x** | {size / mariadb / 1e6:,.0f} | {size / fake / 1e6:,.0f} "
            f"| {'yes' if case.identical else 'NO'} |"
        )
    log(
        "\n### Server resources: peak RSS during the case (idle before it), MB, and peak "
        "private memory (RssAnon, without mapped files), MB; CPU time (user + system) per "
        "round, median, s\n"
    )
    log(
        "| shape | client | replicas | MariaDB RSS | fake RSS | fake / MariaDB "
        "| MariaDB anon | fake anon | MariaDB CPU | fake CPU | fake / MariaDB |"
    )
    log("|---|---|---|---|---|---|---|---|---|---|---|")
    for case in cases:
        mariadb, fake = case.peak_rss("MariaDB"), case.peak_rss("fake")
        cpu = {s: statistics.median(r.server_cpu for r in case.rounds[s]) for s in SERVERS}
        log(
            f"| {case.shape} | {case.client} | {case.replicas} | {mariadb / 1024:.0f} "
            f"({case.idle_rss_kb['MariaDB'] / 1024:.0f}) | {fake / 1024:.0f} "
            f"({case.idle_rss_kb['fake'] / 1024:.0f}) | {fake / max(mariadb, 1):.2f}x "
            f"| {case.peak_anon('MariaDB') / 1024:.0f} | {case.peak_anon('fake') / 1024:.0f} "
            f"| {cpu['MariaDB']:.2f} | {cpu['fake']:.2f} "
            f"| {cpu['fake'] / max(cpu['MariaDB'], 0.01):.1f}x |"
        )
    drains = [case for case in cases if case.ceiling]
    if drains:
        log(
            "\n### The drain client's own ceiling: the same clients fed the same stream from "
            "memory; their CPU time (sum over replicas, median round), s\n"
        )
        log(
            "| shape | replicas | ceiling s | ceiling MB/s | MariaDB s | client CPU, MariaDB "
            "rounds | client CPU, fake rounds |"
        )
        log("|---|---|---|---|---|---|---|")
        for case in drains:
            size = stream_sizes[case.shape] * case.replicas
            ceiling = statistics.median(case.ceiling)
            cpu = {
                s: statistics.median(r.client_cpu or 0.0 for r in case.rounds[s]) for s in SERVERS
            }
            log(
                f"| {case.shape} | {case.replicas} | {ceiling:.3f} | {size / ceiling / 1e6:,.0f} "
                f"| {case.median('MariaDB'):.3f} | {cpu['MariaDB']:.2f} | {cpu['fake']:.2f} |"
            )
    probed = [case for case in cases if case.replicas > 1]
    if probed:
        log("\n### Handshake latency while N dumps stream: connect to first byte, ms\n")
        log("| shape | client | dumps | MariaDB median | MariaDB max | fake median | fake max |")
        log("|---|---|---|---|---|---|---|")
        for case in probed:
            cells = []
            for server in SERVERS:
                probes = case.probes(server)
                if probes:
                    cells += [
                        f"{statistics.median(probes) * 1000:.2f} (n={len(probes)})",
                        f"{max(probes) * 1000:.2f}",
                    ]
                else:
                    cells += ["none finished", "-"]
            log(f"| {case.shape} | {case.client} | {case.replicas} | " + " | ".join(cells) + " |")
        errors = [e for c in probed for s in SERVERS for r in c.rounds[s] for e in r.probe_errors]
        if errors:
            log(f"\nprobe errors: {len(errors)}, first: {errors[0]}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    workers = {"--drain-worker": drain_worker, "--hog-worker": hog_worker}
    if argv[:1] and argv[0] in workers:
        return workers[argv[0]](argv[1:])
    sys.path.insert(0, str(REPO_ROOT))
    from bench import corpus
    from tests.peers.mariadb import mariadb_available

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--shapes", default="large,mixed,small", help="(%(default)s)")
    parser.add_argument("--replicas", default="1,20", help="replica counts (%(default)s)")
    parser.add_argument("--clients", default="drain,mariadb-binlog", help="(%(default)s)")
    parser.add_argument("--rounds", type=int, help="timed rounds (3; 1 with --quick)")
    parser.add_argument(
        "--quick", action="store_true", help="small corpora (16 / 24 / 8 MB), 1 round"
    )
    parser.add_argument(
        "--first-dumps",
        type=int,
        default=0,
        metavar="STARTS",
        help="also time the first full dump after each of STARTS server starts (0)",
    )
    parser.add_argument(
        "--first-dump-wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --first-dumps: the client goes SECONDS after its server is ready (0)",
    )
    parser.add_argument(
        "--background-load",
        type=int,
        default=0,
        metavar="N",
        help="N CPU hog processes running through both servers' rounds (0)",
    )
    parser.add_argument("--cache", type=Path, help="corpus cache (default: a temp directory)")
    parser.add_argument("--scratch", type=Path, help="fetched files (default: /dev/shm)")
    parser.add_argument(
        "--serve-args",
        default="",
        help="more options for `fakemaster serve`, e.g. '--dump-thread-niceness 0'",
    )
    for shape in corpus.SHAPES:
        parser.add_argument(
            f"--{shape}-mb", type=int, help=f"{shape} corpus size (default {FULL_SIZES[shape]})"
        )
    args = parser.parse_args(argv)
    if args.background_load < 0:
        parser.error("--background-load must be at least 0")
    shapes = [s for s in args.shapes.split(",") if s]
    replica_counts = [int(n) for n in args.replicas.split(",") if n]
    clients = [c for c in args.clients.split(",") if c]
    for shape in shapes:
        if shape not in corpus.SHAPES:
            parser.error(f"unknown shape {shape}")
    for client in clients:
        if client not in ("drain", "mariadb-binlog"):
            parser.error(f"unknown client {client}")
    sizes = dict(QUICK_SIZES if args.quick else FULL_SIZES)
    for shape in corpus.SHAPES:
        if getattr(args, f"{shape}_mb") is not None:
            sizes[shape] = getattr(args, f"{shape}_mb")
    rounds = args.rounds if args.rounds is not None else 1 if args.quick else 3
    # Room for every replica and the handshake probe, on both servers.
    connections = max([*replica_counts, 1]) + 50
    ServeProcess.extra_args = [
        "--variable",
        f"max_connections={max(connections, 151)}",
        *args.serve_args.split(),
    ]
    tool = shutil.which("mariadb-binlog")
    if not mariadb_available() or tool is None:
        print("MariaDB 10.11 is not installed: run scripts/install-deps.sh", file=sys.stderr)
        return 2
    scratch_parent = args.scratch or (Path("/dev/shm") if Path("/dev/shm").is_dir() else None)
    with (
        tempfile.TemporaryDirectory(prefix="fm-bench-serving-", dir=scratch_parent) as scratch_name,
        tempfile.TemporaryDirectory(prefix="fm-bench-cache-") as default_cache,
    ):
        scratch = Path(scratch_name)
        cache = args.cache or Path(default_cache)
        infos, cases, stream_sizes = [], [], {}
        firsts: list[FirstDumps] = []
        loads: list[tuple[str, str, str]] = []  # shape, load average before and after
        started = time.perf_counter()
        for shape in shapes:
            log(f"{shape}: corpus of ~{sizes[shape]} MB")
            directory = corpus.build(shape, sizes[shape], cache, log=log)
            infos.append(corpus_info(shape, corpus.corpus_files(directory)))
            with (
                _serving_mariadb(directory, max(connections, 200)) as primary,
                background_load(args.background_load),
            ):
                loads.append((shape, load_average(), ""))
                fake = ServeProcess(primary.binlog_dir, scratch)
                try:
                    files = primary.binlog_files()
                    stream_sizes[shape] = sum(p.stat().st_size for p in files)
                    served = served_digests(files) if "mariadb-binlog" in clients else {}
                    ports = {"MariaDB": primary.port, "fake": fake.port}
                    pids = {"MariaDB": primary.pid, "fake": fake.pid}
                    for client in clients:
                        for replicas in replica_counts:
                            case = Case(shape, client, replicas)
                            run_case(
                                case, ports, pids, files[0].name, rounds, tool, scratch, served
                            )
                            cases.append(case)
                finally:
                    fake.stop()
                    loads[-1] = (shape, loads[-1][1], load_average())
                    errors = fake.stderr()
                    if "Traceback" in errors or "internal error" in errors:
                        log(f"fakemaster serve reported:\n{errors[-3000:]}")
                if args.first_dumps > 0:
                    files = primary.binlog_files()
                    firsts.append(
                        run_first_dumps(
                            shape,
                            primary,
                            scratch,
                            files[0].name,
                            args.first_dumps,
                            args.first_dump_wait,
                        )
                    )
                for leftover in scratch.glob("stream-*"):
                    leftover.unlink()
        log(f"\n(total {time.perf_counter() - started:.0f} s)")
    log(f"\nBackground load: {args.background_load} CPU hog(s) during the cases.")
    for shape, before, after in loads:
        log(f"- {shape}: load average {before} before its cases, {after} after")
    if cases:
        report(infos, cases, stream_sizes)
    if firsts:
        report_first_dumps(firsts, stream_sizes, args.first_dump_wait)
    log(
        f"\n{rounds} timed round(s) per server and case after one untimed verification round; "
        "fake / MariaDB is the ratio of median wall times (lower is better for the fake). "
        "MB/s: replicas x bytes of binlog served / time."
    )
    same = all(case.identical for case in cases) and all(f.same_bytes for f in firsts)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
