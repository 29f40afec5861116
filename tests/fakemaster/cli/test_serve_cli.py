"""``python -m fakemaster serve`` as a user runs it: a subprocess that prints its address, answers
SQL, streams the demo binlog (or a directory of binlog files) to ``mariadb-binlog`` and to a real
replica, appends live demo transactions, and exits 0 on SIGTERM and SIGINT; and the demo stream
compared with what a real MariaDB 10.11 writes for the same statements."""

from __future__ import annotations

import dataclasses
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pymysql
import pytest
from pymysql.constants import COMMAND

from decoder import decode_event
from decoder.binlog_file import read_binlog
from fakemaster.store import MemoryBinlogStore, demo
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import BINLOG_MAGIC
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    QueryEvent,
    StopEvent,
    XidEvent,
)
from fakemaster.vocabulary.values import Timestamp
from tests.peers.fixtures import MariaDBFactory
from tests.peers.policy import require_peer

REPO = Path(__file__).resolve().parents[3]
GOLDEN_DEFAULT = REPO / "tests" / "golden" / "binlogs" / "default"
LISTENING = re.compile(r"^fakemaster listening on (?P<host>[\d.]+):(?P<port>\d+) \(server_id (\d+)")
# Bounds on waiting for a process, not assertions about speed: generous, so that a loaded
# machine only makes the tests slower.
START_WAIT = 60.0
EXIT_WAIT = 60.0


@dataclasses.dataclass
class Served:
    process: subprocess.Popen[str]
    host: str
    port: int
    first_line: str

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str, str]:
        """Send ``signum``; (exit status, rest of stdout, stderr) once it exited."""
        self.process.send_signal(signum)
        stdout, stderr = self.process.communicate(timeout=EXIT_WAIT)
        return self.process.returncode, stdout, stderr


def _read_first_line(process: subprocess.Popen[str]) -> str:
    lines: list[str] = []
    assert process.stdout is not None
    stdout = process.stdout
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_WAIT)
    if not lines or not lines[0]:
        process.kill()
        _, stderr = process.communicate(timeout=EXIT_WAIT)
        pytest.fail(f"serve printed no address; stderr:\n{stderr}")
    return lines[0].rstrip("\n")


@contextmanager
def serve(*options: str) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "fakemaster", "serve", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        line = _read_first_line(process)
        match = LISTENING.match(line)
        assert match, line
        yield Served(process, match["host"], int(match["port"]), line)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=EXIT_WAIT)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *args],
        capture_output=True,
        text=True,
        timeout=START_WAIT,
        cwd=REPO,
    )


def mariadb_binlog(served: Served, *args: str, user: str = "root", password: str = "") -> str:
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    result = subprocess.run(
        [
            tool,
            "--read-from-remote-server",
            f"--host={served.host}",
            f"--port={served.port}",
            f"--user={user}",
            f"--password={password}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def wait_until(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_serve_prints_its_address_answers_sql_and_stops_on_sigterm() -> None:
    with serve(
        "--server-id",
        "7",
        "--user",
        "repl",
        "--password",
        "s3cret",
        "--server-version",
        "10.11.99-MariaDB-fake",
        "--gtid-domain-id",
        "3",
        "--semi-sync",
        "--semi-sync-timeout",
        "2500",
    ) as served:
        assert served.host == "127.0.0.1"
        assert "server_id 7" in served.first_line and "10.11.99-MariaDB-fake" in served.first_line
        conn = pymysql.connect(host=served.host, port=served.port, user="repl", password="s3cret")
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), @@server_id, @@gtid_domain_id, @@binlog_checksum")
            assert cur.fetchone() == ("10.11.99-MariaDB-fake", 7, 3, "CRC32")
            cur.execute("SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync_master_%'")
            variables = dict(cur.fetchall())
            assert variables["rpl_semi_sync_master_enabled"] == "ON"
            assert variables["rpl_semi_sync_master_timeout"] == "2500"
            cur.execute("SHOW BINARY LOGS")
            assert [row[0] for row in cur.fetchall()] == ["mysql-bin.000001", "mysql-bin.000002"]
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(host=served.host, port=served.port, user="repl", password="wrong")
        status, _stdout, stderr = served.stop(signal.SIGTERM)
        assert status == 0, stderr
        assert "fakemaster stopped" in stderr
        assert "internal error" not in stderr
        # The open session was closed by the shutdown.
        with pytest.raises(pymysql.err.OperationalError), conn.cursor() as cur:
            cur.execute("SELECT 1")


def test_sigint_stops_it_with_a_dump_running_and_heartbeats_flow() -> None:
    with serve("--binlog-checksum", "NONE", "--heartbeat", "0.2") as served:
        conn = pymysql.connect(
            host=served.host, port=served.port, user="root", password="", read_timeout=START_WAIT
        )
        with conn.cursor() as cur:
            cur.execute("SELECT @@binlog_checksum")
            assert cur.fetchone() == ("NONE",)
            cur.execute("SET @master_binlog_checksum = 'NONE', @mariadb_slave_capability = 4")
        # A blocking dump (flags 0): after the last event it waits for more.
        dump = BinlogDump(position=4, flags=0, server_id=1234, file_name=b"mysql-bin.000001").body()
        conn._execute_command(COMMAND.COM_BINLOG_DUMP, dump)
        ctx = BinlogContext(checksum=False)
        last: Event | None = None
        while not (isinstance(last, QueryEvent) and last.query.startswith(b"ALTER TABLE")):
            last = decode_event(conn._read_packet().get_all_data()[1:], ctx)
        # Caught up: the --heartbeat period applies (the session set none).
        heartbeat = decode_event(conn._read_packet().get_all_data()[1:], ctx)
        assert isinstance(heartbeat, HeartbeatEvent)
        assert heartbeat.file_name == "mysql-bin.000002"
        status, _stdout, stderr = served.stop(signal.SIGINT)
        assert status == 0, stderr
        assert "internal error" not in stderr
        # The waiting dump's connection was closed, not left hanging.
        with pytest.raises(pymysql.err.OperationalError):
            conn._read_packet()


def test_mariadb_binlog_reads_the_demo_stream() -> None:
    with serve() as served:
        first = mariadb_binlog(served, "-v", "mysql-bin.000001")
        assert "GTID 0-1-1 ddl" in first and "CREATE DATABASE demo" in first
        assert "CREATE TABLE demo.customers" in first
        assert "### INSERT INTO `demo`.`customers`" in first
        assert "###   @2='Zoë Ünicode'" in first
        assert "###   @4=80.51" in first  # the UPDATE's after image
        assert "Rotate to mysql-bin.000002" in first
        assert "ALTER TABLE" not in first  # in the second file
        everything = mariadb_binlog(served, "-v", "--to-last-log", "mysql-bin.000001")
        assert "### DELETE FROM `demo`.`customers`" in everything
        assert "ALTER TABLE demo.orders ADD INDEX by_customer (customer_id)" in everything
        assert "GTID 0-1-8 ddl" in everything
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr


def test_demo_live_appends_transactions() -> None:
    with serve("--demo-live", "0.2") as served:
        conn = pymysql.connect(host=served.host, port=served.port, user="root", password="")

        def master_status() -> tuple[str, int]:
            with conn.cursor() as cur:
                cur.execute("SHOW MASTER STATUS")
                row = cur.fetchone()
            assert row is not None
            return str(row[0]), int(row[1])

        start = master_status()
        wait_until(lambda: master_status()[1] > start[1], "a live transaction")
        listing = mariadb_binlog(served, "-v", "mysql-bin.000002")
        assert "INSERT INTO demo.orders VALUES (3,3," in listing
        assert "###   @5='live order 3'" in listing
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr


def test_binlog_dir_is_served_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "binlogs"
    source.mkdir()
    names = ["mysql-bin.000001", "mysql-bin.000002"]
    for name in names:
        shutil.copy(GOLDEN_DEFAULT / name, source / name)
    (source / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in names))
    copies = tmp_path / "copies"
    copies.mkdir()
    with serve("--binlog-dir", str(source)) as served:
        assert "2 binlog file(s)" in served.first_line
        mariadb_binlog(
            served,
            "--raw",
            "--to-last-log",
            f"--result-file={copies}/",
            "mysql-bin.000001",
        )
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr
    for name in names:
        assert (copies / name).read_bytes() == (GOLDEN_DEFAULT / name).read_bytes(), name


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--binlog-dir", "does/not/exist"], "does/not/exist"),
        (["--binlog-dir", "tests/golden/binlogs/default", "--demo-live", "1"], "--demo-live"),
        (["--server-version", "x" * 60], "demo binlog: server version longer than 50 bytes"),
    ],
)
def test_bad_setup_is_one_error_line(options: list[str], message: str) -> None:
    result = run_cli("serve", "--port", "0", *options)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_busy_port_is_one_error_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("serve", "--port", str(port))
    assert result.returncode == 1
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.stderr, result.stderr


def test_bad_option_values_are_usage_errors() -> None:
    for options in (["--port", "70000"], ["--server-id", "0"], ["--demo-live", "-1"]):
        result = run_cli("serve", *options)
        assert result.returncode == 2, options
        assert "usage:" in result.stderr


def test_live_orders_continue_the_demo() -> None:
    store, writer = demo.demo_store()
    before = store.master_status()
    group = writer.append_live_order(now=1_700_000_000.25)
    assert group.file_name == before[0] and group.start == before[1]
    assert group.gtid.seq_no == 9
    events = store_events(store, group.file_name)
    rows_event = events[-2]
    assert rows_event.rows == (  # type: ignore[attr-defined]
        (3, 3, 24.25, 1, b"live order 3", Timestamp(1_700_000_000, 250000), None),
    )
    annotate = events[-4]
    assert annotate.query == (  # type: ignore[attr-defined]
        b"INSERT INTO demo.orders VALUES (3,3,24.25,'new','live order 3',"
        b"'2023-11-14 22:13:20.250',NULL)"
    )
    assert writer.append_live_order().gtid.seq_no == 10


def file_bytes(store: MemoryBinlogStore, name: str) -> bytes:
    return BINLOG_MAGIC + b"".join(data for _, data in store.iter_events(name))


def store_events(store: MemoryBinlogStore, name: str) -> list[Event]:
    ctx = BinlogContext()
    return [decode_event(data, ctx) for _, data in store.iter_events(name)]


# --- against a real MariaDB ----------------------------------------------------------------

# The demo store's clock in the comparison: its events' timestamps are this, not the moment the
# test happens to run.
DEMO_CLOCK = 1_717_171_717


@dataclasses.dataclass(frozen=True)
class Window:
    """The whole seconds of the wall clock during which a statement ran: read by the test just
    before sending it and just after its answer, so its start and the moment its events were
    logged (the server reads the same clock) lie in between."""

    first: int
    last: int

    def __contains__(self, second: int) -> bool:
        return self.first <= second <= self.last


def run_demo_statements(server: Any) -> dict[bytes, Window]:
    """Run DEMO_STATEMENTS on a real server; each statement's text -> its window."""
    windows: dict[bytes, Window] = {}
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            for step in demo.DEMO_STATEMENTS:
                # One statement, or one transaction.
                statements = [step] if isinstance(step, str) else ["BEGIN", *step, "COMMIT"]
                for statement in statements:
                    before = time.time()
                    cur.execute(statement)
                    windows[statement.encode()] = Window(int(before), int(time.time()))
    finally:
        conn.close()
    return windows


def check_query_clocks(
    real: list[Event], demo_events: list[Event], windows: dict[bytes, Window]
) -> None:
    """A QUERY event's timestamp is when its statement started and its exec_time the whole
    seconds until it was logged (``Query_log_event``: time() - thd->start_time): on a real
    server both come from the clock, within the statement's window. The demo writes exec_time
    0, what a real server writes for a DDL logged within the second it started."""
    real_queries = [event for event in real if isinstance(event, QueryEvent)]
    assert real_queries
    for event in real_queries:
        window = windows[event.query]
        assert event.timestamp in window, (event.query, event.timestamp, window)
        assert 0 <= event.exec_time <= window.last - window.first, (event.query, window)
    for event in demo_events:
        if isinstance(event, QueryEvent):
            assert event.exec_time == 0, event.query


def _comparable(event: Event) -> tuple[str, dict[str, Any]]:
    """The fields that must match a real server's: not its clocks (checked against the
    statements' windows by check_query_clocks), XIDs, thread ids or positions."""
    fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    for name in ("timestamp", "log_pos", "thread_id", "xid", "create_timestamp", "exec_time"):
        fields.pop(name, None)
    if isinstance(event, QueryEvent):
        fields["status_vars"] = tuple(var for var in event.status_vars if var.code != 129)
    return type(event).__name__, fields


def _content_events(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    # The FDE and the start events belong to the store; where a BINLOG_CHECKPOINT lands
    # depends on the real server's timing; STOP comes from the real server's shutdown.
    skipped = (FormatDescriptionEvent, BinlogCheckpointEvent, StopEvent)
    return [_comparable(event) for event in events if not isinstance(event, skipped)]


def test_the_demo_stream_takes_its_clock() -> None:
    """With a fixed clock the demo stream is the same bytes every time, stamped with it."""
    first, _ = demo.demo_store(clock=lambda: DEMO_CLOCK + 0.75)
    again, _ = demo.demo_store(clock=lambda: DEMO_CLOCK + 0.75)
    assert first.file_names() == again.file_names() == ["mysql-bin.000001", "mysql-bin.000002"]
    for name in first.file_names():
        assert file_bytes(first, name) == file_bytes(again, name)
        assert {event.timestamp for event in store_events(first, name)} == {DEMO_CLOCK}


@pytest.mark.mariadb
def test_demo_stream_is_what_a_real_mariadb_writes(
    mariadb_factory: MariaDBFactory, tmp_path: Path
) -> None:
    server = mariadb_factory({"binlog_row_metadata": "FULL"})
    windows = run_demo_statements(server)
    real_files = server.binlog_files()
    store, _writer = demo.demo_store(clock=lambda: DEMO_CLOCK)
    assert [path.name for path in real_files] == store.file_names()
    for path in real_files:
        mine = tmp_path / path.name
        mine.write_bytes(file_bytes(store, path.name))
        real_events = [event for _, event in read_binlog(path)]
        demo_events = [event for _, event in read_binlog(mine)]
        check_query_clocks(real_events, demo_events, windows)
        assert _content_events(demo_events) == _content_events(real_events), path.name
        xids = [e for e in demo_events if isinstance(e, XidEvent)]
        assert len(xids) == len([e for e in real_events if isinstance(e, XidEvent)])


@pytest.mark.mariadb
def test_a_real_replica_applies_the_demo_stream(mariadb_factory: MariaDBFactory) -> None:
    replica = mariadb_factory(server_id=2)
    with serve("--user", "repl", "--password", "pw") as served:
        replica.execute(
            [
                f"CHANGE MASTER TO MASTER_HOST='{served.host}', MASTER_PORT={served.port}, "
                "MASTER_USER='repl', MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos, "
                "MASTER_CONNECT_RETRY=1",
                "START SLAVE",
            ]
        )

        def applied() -> bool:
            rows = replica.execute("SELECT @@gtid_slave_pos")
            return bool(rows) and rows[0][0] == "0-1-8"

        wait_until(applied, "the replica to apply the demo stream")
        customers = replica.execute("SELECT * FROM demo.customers ORDER BY id", charset="utf8mb4")
        assert [row[:4] for row in customers] == [
            (1, "Ada Lovelace", "ada@example.com", Decimal("80.51")),
            (3, "Zoë Ünicode", "zoe@example.com", Decimal("-12.34")),
        ]
        orders = replica.execute("SELECT id, customer_id, amount, status, note FROM demo.orders")
        assert sorted(orders) == [
            (1, 1, 19.99, "shipped", "first order"),
            (2, 3, 5.5, "paid", None),
        ]
        status = replica.execute("SHOW SLAVE STATUS")
        assert status, "no replication configured"
        replica.execute("STOP SLAVE")
        code, _stdout, stderr = served.stop()
        assert code == 0 and "internal error" not in stderr, stderr


@pytest.mark.parametrize("basename", ["aes_cbc-bin", "aes_ctr-bin"])
def test_encrypted_binlog_dir_is_served_decrypted_with_the_key_file(
    tmp_path: Path, basename: str
) -> None:
    encrypted = REPO / "tests" / "golden" / "binlogs" / "encrypted"
    source = tmp_path / "binlogs"
    source.mkdir()
    names = [f"{basename}.000001", f"{basename}.000002"]
    for name in names:
        shutil.copy(encrypted / f"{name}.encrypted", source / name)
    (source / f"{basename}.index").write_text("".join(f"./{name}\n" for name in names))
    key_file = encrypted / f"{basename.split('-')[0]}.keys"
    copies = tmp_path / "copies"
    copies.mkdir()
    with serve("--binlog-dir", str(source), "--key-file", str(key_file)) as served:
        mariadb_binlog(served, "--raw", "--to-last-log", f"--result-file={copies}/", names[0])
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr
    for name in names:
        fetched = copies / name
        # What mariadb-binlog saved from the real server with the key.
        assert fetched.read_bytes() == (encrypted / f"{name}.dump").read_bytes(), name
        events = [event for _offset, event in read_binlog(fetched)]  # no keys: all in clear
        assert isinstance(events[0], FormatDescriptionEvent)
        assert any(isinstance(event, XidEvent) for event in events)
    assert isinstance(events[-1], StopEvent)
