"""Do big statements stall the other clients? Round trips of other clients while one client
sends statements of megabytes to ``python -m fakemaster serve`` (a separate process).

    python3 bench/bench_statement_stall.py            # the statements of issue #21, full size
    python3 bench/bench_statement_stall.py --scale 0.1

Statements (one client, one after another): ``SELECT id ... WHERE id IN (0, ..., 999999)``
(6.9 MB), 100,000 ``OR``s, an ``IN`` list of 200,000 strings on information_schema.TABLES,
400,000 nested parentheses, a 16 MiB statement (one string literal). Meanwhile, in threads of
this process:

* ping: one connection sends COM_PING after COM_PING; the round trip of each;
* login: connect, greeting, login, COM_QUIT, one after another; the time to the login's OK;
* replica: a blocking dump with heartbeats every 100 ms; how late each heartbeat arrives
  (its gap to the previous one, less 100 ms).

Reported per statement: its own time, and per probe the median and the worst of what it saw
while the statement ran, next to the same over a baseline second with no statement. The goal
(issue #21): no round trip more than 50 ms over its baseline. Each statement is built and sent
by a process of its own (told "go" once it is built), so that building it and reading its
answer in Python take nothing from the probes' process.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from encoder.packets import frame  # noqa: E402
from fakemaster.vocabulary.commands import BinlogDump  # noqa: E402
from tests.support.wire import RawClient  # noqa: E402

USER, PASSWORD = "root", "bench"
HEARTBEAT = 0.1


def statements(scale: float) -> list[tuple[str, str]]:
    n_in = int(1_000_000 * scale)
    n_or = int(100_000 * scale)
    n_strings = int(200_000 * scale)
    depth = int(400_000 * scale)
    literal = int((16 << 20) * scale) - 64
    return [
        (
            f"IN list of {n_in:,} numbers",
            "SELECT id FROM snap.accounts WHERE id IN ("
            + ", ".join(str(i) for i in range(n_in))
            + ")",
        ),
        (
            f"{n_or:,} ORs",
            "SELECT id FROM snap.accounts WHERE " + " OR ".join(f"id = {i}" for i in range(n_or)),
        ),
        (
            f"IN list of {n_strings:,} strings, information_schema",
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ("
            + ", ".join(f"'t{i}'" for i in range(n_strings))
            + ")",
        ),
        (f"{depth:,} nested parentheses", "SELECT " + "(" * depth + "1" + ")" * depth),
        (f"a {literal / (1 << 20):.1f} MiB statement", "SELECT '" + "x" * literal + "' AS big"),
    ]


class Probe(threading.Thread):
    """Measures something over and over; samples are (time taken, value in seconds)."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.samples: list[tuple[float, float]] = []
        self.stopping = threading.Event()

    def window(self, start: float, end: float) -> list[float]:
        return [value for at, value in self.samples if start <= at <= end]


class PingProbe(Probe):
    def run(self) -> None:
        client = RawClient("127.0.0.1", self.port, USER, PASSWORD)
        while not self.stopping.is_set():
            began = time.perf_counter()
            client.write(b"\x0e")
            client.read()
            now = time.perf_counter()
            self.samples.append((now, now - began))
            time.sleep(0.005)


class LoginProbe(Probe):
    def run(self) -> None:
        while not self.stopping.is_set():
            began = time.perf_counter()
            client = RawClient("127.0.0.1", self.port, USER, PASSWORD)
            now = time.perf_counter()
            assert client.login_reply[:1] == b"\x00"
            client.close()
            self.samples.append((now, now - began))
            time.sleep(0.01)


class ReplicaProbe(Probe):
    def run(self) -> None:
        client = RawClient("127.0.0.1", self.port, USER, PASSWORD)
        for sql in (
            "SET @master_binlog_checksum= @@global.binlog_checksum",
            "SET @mariadb_slave_capability=4",
            f"SET @master_heartbeat_period= {int(HEARTBEAT * 1e9)}",
        ):
            client.query(sql)
        rows = client.query("SHOW MASTER STATUS")
        name, position = _master_status(rows)
        dump = BinlogDump(position=position, flags=0, server_id=4242, file_name=name.encode())
        client.write(dump.encode())
        last = None
        while not self.stopping.is_set():
            try:
                payload = client.read()
            except (ConnectionError, OSError):
                return  # the server stopped
            now = time.perf_counter()
            if len(payload) > 5 and payload[5] == 27:  # HEARTBEAT_LOG_EVENT
                if last is not None:
                    self.samples.append((now, max(0.0, now - last - HEARTBEAT)))
                last = now


def _master_status(payloads: list[bytes]) -> tuple[str, int]:
    for payload in payloads:
        match = re.match(rb"\x10(mysql-bin\.\d{6})(.)(\d+)", payload, re.S)
        if match:
            return match.group(1).decode(), int(match.group(3))
    raise RuntimeError(f"no SHOW MASTER STATUS row in {payloads!r}")


def send_statement(port: int, sql: str) -> tuple[float, str]:
    client = RawClient("127.0.0.1", port, USER, PASSWORD, timeout=3600)
    began = time.perf_counter()
    client.sock.sendall(frame(b"\x03" + sql.encode(), 0)[0])
    first = client.read()
    if first[:1] not in (b"\x00", b"\xff"):
        while True:  # column definitions, EOF, rows, EOF
            payload = client.read()
            if payload[:1] == b"\xfe" and len(payload) < 9:
                break
        while True:
            payload = client.read()
            if payload[:1] in (b"\xfe", b"\xff") and len(payload) < 9:
                break
    took = time.perf_counter() - began
    client.close()
    answer = "ERR " + first[3:9].decode(errors="replace") if first[:1] == b"\xff" else "answered"
    return took, answer


def sender(port: int, scale: float, index: int) -> None:
    """``--send``: build statement ``index``, say "ready", wait for "go", send it, print the
    time it took and how it was answered."""
    _, sql = statements(scale)[index]
    print("ready", flush=True)
    sys.stdin.readline()
    took, answer = send_statement(port, sql)
    print(f"{took} {answer}", flush=True)


def run_sender(port: int, scale: float, index: int) -> tuple[float, float, float, str]:
    """Statement ``index`` sent by a process of its own: (start, end, its time, answer)."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--scale", str(scale), "--send", f"{port}:{index}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    start = time.perf_counter()
    child.stdin.write("go\n")
    child.stdin.flush()
    took, answer = child.stdout.readline().split(" ", 1)
    end = time.perf_counter()
    child.wait()
    return start, end, float(took), answer.strip()


def describe(values: list[float]) -> str:
    if not values:
        return "        -"
    return f"{statistics.median(values) * 1000:6.1f} / {max(values) * 1000:6.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="size of every statement")
    parser.add_argument("--baseline", type=float, default=2.0, help="seconds without statement")
    parser.add_argument("--send", help=argparse.SUPPRESS)  # PORT:INDEX, the sender process
    args = parser.parse_args()
    if args.send:
        port, index = (int(part) for part in args.send.split(":"))
        sender(port, args.scale, index)
        return
    server = subprocess.Popen(
        [sys.executable, "-m", "fakemaster", "serve", "--port", "0", "--scenario"]
        + ["snapshot_then_stream", "--user", USER, "--password", PASSWORD]
        + ["--variable", f"max_allowed_packet={64 << 20}"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert found, line
        port = int(found.group(1))
        probes = {
            "ping": PingProbe(port),
            "login": LoginProbe(port),
            "replica": ReplicaProbe(port),
        }
        for probe in probes.values():
            probe.start()
        time.sleep(1.0)
        print(
            f"{'statement':48s} {'took s':>8s}  "
            + "  ".join(f"{name + ' ms med/max':>17s}" for name in probes)
        )
        start = time.perf_counter()
        time.sleep(args.baseline)
        end = time.perf_counter()
        print(
            f"{'baseline (no statement)':48s} {'':>8s}  "
            + "  ".join(f"{describe(probe.window(start, end)):>17s}" for probe in probes.values())
        )
        for index, (name, _) in enumerate(statements(args.scale)):
            start, end, took, answer = run_sender(port, args.scale, index)
            print(
                f"{name:48s} {took:8.2f}  "
                + "  ".join(
                    f"{describe(probe.window(start, end)):>17s}" for probe in probes.values()
                )
                + f"  {answer}",
                flush=True,
            )
            time.sleep(0.5)
        for probe in probes.values():
            probe.stopping.set()
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
