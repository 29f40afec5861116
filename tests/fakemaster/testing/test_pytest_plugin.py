"""The pytest plugin: inner test sessions run with ``pytester`` (the plugin loaded through its
entry point, as in a user's project), the fixtures used directly by these tests, and every
example of docs/pytest-plugin.md run as it is written."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from decoder import decode_event
from decoder.packets import parse_binlog_packet
from encoder.packets import encode_semi_sync_ack
from fakemaster.config.server_config import ServerConfig
from fakemaster.store import MemoryBinlogStore
from fakemaster.store.semi_sync import semi_sync_master
from fakemaster.testing.plugin import (
    AsyncFakeMasterFactory,
    AsyncFakeMasterHandle,
    FakeMasterFactory,
    FakeMasterHandle,
)
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    Event,
    GtidEvent,
    QueryEvent,
    RotateEvent,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.vocabulary.packets import SemiSyncAck
from tests.peers.mariadb import mariadb_available
from tests.peers.policy import require_peer
from tests.support.wire import RawClient

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "pytest-plugin.md"
# Bounds a wait for something that must come; only a hang reaches it.
HANG = 60.0


def query(handle: FakeMasterHandle | AsyncFakeMasterHandle, sql: str) -> tuple[object, ...]:
    connection = pymysql.connect(**handle.dsn)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            row = cursor.fetchone()
            assert row is not None
            return tuple(row)
    finally:
        connection.close()


# --- inner sessions (pytester) --------------------------------------------------------------


def run_inner(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An inner pytest run in this process (the plugin comes from its entry point)."""
    options = ("-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function")
    return pytester.runpytest(*options, *args)


READ_BINLOG = """
    import struct

    import pymysql
    from pymysql.constants import COMMAND

    from decoder import decode_event
    from fakemaster.vocabulary.context import BinlogContext


    def dump(dsn, *, blocking=False):
        connection = pymysql.connect(**dsn)
        with connection.cursor() as cursor:
            cursor.execute(
                "SET @master_binlog_checksum = @@global.binlog_checksum,"
                " @mariadb_slave_capability = 4"
            )
        flags = 0 if blocking else 1
        request = struct.pack("<IHI", 4, flags, 100) + b"mysql-bin.000001"
        connection._execute_command(COMMAND.COM_BINLOG_DUMP, request)
        return connection


    def events_until(connection, context, stop):
        events = []
        while True:
            packet = connection._read_packet()
            if packet.is_eof_packet():
                return events
            events.append(decode_event(packet.get_all_data()[1:], context))
            if stop(events[-1]):
                return events
"""


def test_inner_session_appends_and_reads_events_live(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner=READ_BINLOG
        + """
    from fakemaster.vocabulary.events import GtidEvent, QueryEvent, RotateEvent


    def test_append_then_read(fake_master):
        group = fake_master.append_transaction([QueryEvent(query=b"CREATE DATABASE shop")])
        connection = dump(fake_master.dsn)
        events = events_until(connection, BinlogContext(), lambda event: False)
        connection.close()
        names = [type(event).__name__ for event in events]
        assert names == [
            "RotateEvent", "FormatDescriptionEvent", "GtidListEvent",
            "BinlogCheckpointEvent", "GtidEvent", "QueryEvent",
        ]
        assert events[-2].gtid == group.gtid and str(group.gtid) == "0-1-1"
        assert events[-1].query == b"CREATE DATABASE shop"
        assert events[-1].log_pos == group.end


    def test_events_appended_while_a_dump_waits_arrive(fake_master):
        connection = dump(fake_master.dsn, blocking=True)
        context = BinlogContext()
        is_checkpoint = lambda event: type(event).__name__ == "BinlogCheckpointEvent"
        events_until(connection, context, is_checkpoint)
        fake_master.append_transaction([QueryEvent(query=b"CREATE DATABASE live")])
        new = events_until(connection, context, lambda event: isinstance(event, QueryEvent))
        assert [type(event) for event in new] == [GtidEvent, QueryEvent]
        assert new[-1].query == b"CREATE DATABASE live"
        new_file = fake_master.rotate()
        assert new_file == "mysql-bin.000002"
        rotate = events_until(connection, context, lambda event: True)
        assert isinstance(rotate[0], RotateEvent) and rotate[0].next_file == new_file
        connection.close()
    """
    )
    result = run_inner(pytester)
    result.assert_outcomes(passed=2)


def test_inner_server_error_fails_the_test_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner=READ_BINLOG
        + """
    import pytest

    from fakemaster.store import MemoryBinlogStore


    class BrokenStore(MemoryBinlogStore):
        def read(self, name, offset, max_bytes=1 << 20):
            raise RuntimeError("disk on fire")


    def test_broken(fake_master_factory):
        primary = fake_master_factory(store=BrokenStore())
        connection = dump(primary.dsn)
        with pytest.raises(pymysql.err.OperationalError):
            connection._read_packet()


    def test_broken_but_accepted(fake_master_factory):
        primary = fake_master_factory(store=BrokenStore(), check_errors=False)
        connection = dump(primary.dsn)
        with pytest.raises(pymysql.err.OperationalError):
            connection._read_packet()


    def test_broken_and_cleared(fake_master_factory):
        primary = fake_master_factory(store=BrokenStore())
        connection = dump(primary.dsn)
        with pytest.raises(pymysql.err.OperationalError):
            connection._read_packet()
        primary.errors.clear()
    """
    )
    result = run_inner(pytester)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_broken*",
            "*the fake master at 127.0.0.1:* recorded 1 error(s) in its connections:*",
            "*RuntimeError: disk on fire*",
        ]
    )
    assert "test_broken_but_accepted" not in "\n".join(
        line for line in result.outlines if "ERROR at teardown" in line
    )


SETTINGS_TEST = """
    import pymysql


    def test_settings(fake_master):
        assert (fake_master.user, fake_master.password) == ("repl", "pw")
        connection = pymysql.connect(**fake_master.dsn)
        with connection.cursor() as cursor:
            cursor.execute("SELECT @@server_id, VERSION(), @@rpl_semi_sync_master_timeout")
            assert cursor.fetchone() == ({server_id}, "{version}", 1500)
            cursor.execute("SELECT @@rpl_semi_sync_master_enabled, @@binlog_checksum")
            assert cursor.fetchone() == ({semi_sync}, "NONE")
        connection.close()
"""


def test_inner_ini_keys_and_flags(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        fakemaster_server_id = 42
        fakemaster_user = repl
        fakemaster_password = pw
        fakemaster_semi_sync_timeout = 1500
        fakemaster_semi_sync = off
        fakemaster_binlog_checksum = none
        """
    )
    pytester.makepyfile(
        test_inner=SETTINGS_TEST.format(server_id=42, version="10.11.19-MariaDB-log", semi_sync=0)
    )
    run_inner(pytester).assert_outcomes(passed=1)
    # The flags win over the ini keys.
    pytester.makepyfile(
        test_inner=SETTINGS_TEST.format(server_id=77, version="10.11.5-Flagged", semi_sync=1)
    )
    result = run_inner(
        pytester,
        "--fakemaster-server-id=77",
        "--fakemaster-server-version",
        "10.11.5-Flagged",
        "--fakemaster-semi-sync",
    )
    result.assert_outcomes(passed=1)


def test_inner_bad_setting_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfakemaster_server_id = one\n")
    pytester.makepyfile(test_inner="def test_nothing():\n    pass\n")
    result = run_inner(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fakemaster: ini key fakemaster_server_id: invalid literal*"])
    pytester.makeini("[pytest]\nfakemaster_server_id = 1\n")
    result = run_inner(pytester, "--fakemaster-binlog-checksum=MD5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fakemaster-binlog-checksum: expected CRC32 or NONE*"])
    # The former spellings still read the same setting.
    result = run_inner(pytester, "--fakemaster-checksum=MD5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fakemaster-binlog-checksum: expected CRC32 or NONE*"])
    pytester.makeini("[pytest]\nfakemaster_checksum = MD5\n")
    result = run_inner(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini key fakemaster_checksum: expected CRC32 or NONE*"])


def test_inner_factory_and_marker(pytester: pytest.Pytester) -> None:
    golden = REPO / "tests" / "golden" / "binlogs" / "default"
    pytester.makepyfile(
        test_inner=f"""
    import shutil

    import pymysql
    import pytest

    from fakemaster.config.server_config import ServerConfig
    from fakemaster.vocabulary.events import QueryEvent

    GOLDEN = {str(golden)!r}


    def status(handle, sql):
        connection = pymysql.connect(**handle.dsn)
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
        connection.close()
        return rows


    def test_two_at_once(fake_master_factory):
        first = fake_master_factory(server_id=11, user="a", password="x")
        second = fake_master_factory(config=ServerConfig(server_id=12, gtid_domain_id=5))
        assert first.port != second.port
        assert first.dsn["user"] == "a" and first.dsn["password"] == "x"
        assert status(first, "SELECT @@server_id") == ((11,),)
        assert status(second, "SELECT @@server_id, @@gtid_domain_id") == ((12, 5),)
        group = second.append_transaction([QueryEvent(query=b"CREATE DATABASE d")])
        assert str(group.gtid) == "5-12-1"


    def test_demo(fake_master_factory):
        primary = fake_master_factory(demo=True)
        logs = status(primary, "SHOW BINARY LOGS")
        assert [row[0] for row in logs] == ["mysql-bin.000001", "mysql-bin.000002"]
        assert status(primary, "SELECT @@gtid_binlog_pos") == (("0-1-8",),)
        assert status(primary, "SELECT @@binlog_row_metadata") == (("FULL",),)


    def test_binlog_dir(fake_master_factory, tmp_path):
        for name in ("mysql-bin.000001", "mysql-bin.000002"):
            shutil.copy(f"{{GOLDEN}}/{{name}}", tmp_path / name)
        (tmp_path / "mysql-bin.index").write_text("./mysql-bin.000001\\n./mysql-bin.000002\\n")
        primary = fake_master_factory(binlog_dir=tmp_path)
        logs = status(primary, "SHOW BINARY LOGS")
        sizes = [(tmp_path / row[0]).stat().st_size for row in logs]
        assert [row[1] for row in logs] == sizes
        with pytest.raises(TypeError, match="in-memory store"):
            primary.append_transaction([])


    @pytest.mark.fake_master(server_id=9, binlog_checksum="NONE")
    def test_marker(fake_master):
        assert status(fake_master, "SELECT @@server_id, @@binlog_checksum") == ((9, "NONE"),)
    """
    )
    result = run_inner(pytester)
    result.assert_outcomes(passed=4)


# --- the fixtures, used here directly -------------------------------------------------------


def test_fake_master_fixture(fake_master: FakeMasterHandle) -> None:
    assert fake_master.host == "127.0.0.1"
    assert fake_master.address == f"127.0.0.1:{fake_master.port}"
    assert fake_master.dsn == {
        "host": "127.0.0.1",
        "port": fake_master.port,
        "user": "root",
        "password": "",
    }
    assert fake_master.store.file_names() == ["mysql-bin.000001"]
    assert fake_master.master_status() == ("mysql-bin.000001", 328)
    assert query(fake_master, "SELECT VERSION()") == ("10.11.19-MariaDB-log",)
    assert fake_master.errors == []


def test_appends_from_many_threads_stay_whole(fake_master: FakeMasterHandle) -> None:
    groups = []
    lock = threading.Lock()

    def writer(number: int) -> None:
        for index in range(20):
            statement = f"CREATE TABLE t{number}_{index} (a INT)".encode()
            group = fake_master.append_transaction([QueryEvent(query=statement)])
            with lock:
                groups.append(group)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(group.gtid.seq_no for group in groups) == list(range(1, 81))
    ctx = BinlogContext()
    events = [
        decode_event(data, ctx) for _, data in fake_master.store.iter_events("mysql-bin.000001")
    ]
    gtids = [event.seq_no for event in events if isinstance(event, GtidEvent)]
    assert gtids == list(range(1, 81))
    ends = {group.end for group in groups}
    assert {event.log_pos for event in events if isinstance(event, QueryEvent)} == ends


def test_appending_what_is_not_an_event_is_a_type_error_at_the_call(
    fake_master: FakeMasterHandle,
) -> None:
    status = fake_master.master_status()
    with pytest.raises(TypeError, match=r"^append: item 1 is not an event but dict \{\}") as caught:
        fake_master.append([QueryEvent(query=b"CREATE TABLE t (a INT)"), {}])
    # Raised in the test's thread by the check at the call, not in the server's.
    assert "_in_server" not in {entry.name for entry in caught.traceback}
    with pytest.raises(TypeError, match=r"^append_transaction takes an iterable of events, got"):
        fake_master.append_transaction(QueryEvent(query=b"CREATE TABLE t (a INT)"))
    with pytest.raises(TypeError, match=r"^append_transaction: item 0 is not an event but str"):
        fake_master.append_transaction(["CREATE TABLE t (a INT)"])
    # A value its column cannot hold: an EncodeError for the caller, and nothing written.
    table_map = TableMapEvent(
        table_id=3, database="d", table="t", column_types=(1,), column_meta=(0,), nullable=(True,)
    )
    rows = WriteRowsEvent(table_id=3, width=1, columns_present=b"\x01", rows=((200,),))
    with pytest.raises(EncodeError, match=r"^row 0, column 0: TINY \(signed\) cannot hold 200"):
        fake_master.append_transaction([table_map, rows, XidEvent(xid=1)])
    assert fake_master.master_status() == status
    assert fake_master.errors == []


async def test_async_appending_what_is_not_an_event_is_a_type_error(
    async_fake_master: AsyncFakeMasterHandle,
) -> None:
    with pytest.raises(TypeError, match=r"^append: item 0 is not an event but int 7"):
        async_fake_master.append([7])


def test_change_master_sql(fake_master_factory: FakeMasterFactory) -> None:
    primary = fake_master_factory(user="re'pl", password="p\\w")
    address = f"MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}"
    account = "MASTER_USER='re''pl', MASTER_PASSWORD='p\\\\w'"
    assert primary.change_master_sql() == (
        f"CHANGE MASTER TO {address}, {account}, MASTER_USE_GTID=slave_pos"
    )
    assert primary.change_master_sql(
        use_gtid="current_pos", connect_retry=1, master_heartbeat_period=2.5, ssl=False
    ) == (
        f"CHANGE MASTER TO {address}, {account}, MASTER_USE_GTID=current_pos, "
        "MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=2.5, MASTER_SSL=0"
    )
    assert primary.change_master_sql(log_pos=328, host="10.0.0.5", connection_name="east") == (
        "CHANGE MASTER 'east' TO MASTER_HOST='10.0.0.5', "
        f"MASTER_PORT={primary.port}, {account}, "
        "MASTER_LOG_FILE='mysql-bin.000001', MASTER_LOG_POS=328, MASTER_USE_GTID=no"
    )
    assert primary.change_master_sql(log_file="mysql-bin.000009").endswith(
        "MASTER_LOG_FILE='mysql-bin.000009', MASTER_LOG_POS=4, MASTER_USE_GTID=no"
    )
    with pytest.raises(ValueError, match="MASTER_USE_GTID=no"):
        primary.change_master_sql(log_file="mysql-bin.000001", use_gtid="slave_pos")
    with pytest.raises(ValueError, match="slave_pos, current_pos or no"):
        primary.change_master_sql(use_gtid="yes")


class SemiSyncReplica:
    """A minimal semi-sync replica over a raw socket: dumps from the start and acknowledges
    (if ``acknowledge``) every event the primary asks an ACK for."""

    def __init__(
        self, handle: FakeMasterHandle | AsyncFakeMasterHandle, *, acknowledge: bool = True
    ) -> None:
        self.client = RawClient(handle.host, handle.port, handle.user, handle.password)
        self.acknowledge = acknowledge
        self.acked: list[tuple[str, int]] = []
        self.events: list[Event] = []
        for sql in (
            "SET @master_binlog_checksum = 'CRC32'",
            "SET @mariadb_slave_capability = 4",
            "SET @rpl_semi_sync_slave = 1",
        ):
            assert self.client.query(sql)[0][:1] == b"\x00"
        request = BinlogDump(position=4, flags=0, server_id=200, file_name=b"mysql-bin.000001")
        self.client.write(request.encode(), 0)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        ctx = BinlogContext()
        file_name = ""
        try:
            while True:
                payload = self.client.read()
                if payload[:1] != b"\x00":
                    return
                data, ack_requested = parse_binlog_packet(payload, semi_sync=True)
                event = decode_event(data, ctx)
                self.events.append(event)
                if isinstance(event, RotateEvent):
                    file_name = event.next_file
                if ack_requested and self.acknowledge:
                    ack = SemiSyncAck(position=event.log_pos, file_name=file_name)
                    self.acked.append((file_name, event.log_pos))
                    self.client.write(encode_semi_sync_ack(ack), 0)
        except (ConnectionError, OSError):
            return

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.client.sock.shutdown(socket.SHUT_RDWR)  # wakes the reading thread
        self.client.sock.close()
        self.thread.join(10)


class ManualClock:
    """The semi-sync state's clock, moved by the test: the primary gives up waiting for an ACK
    exactly when the test says so, never because the machine was slow."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def semi_sync_store(clock: ManualClock, timeout_ms: int) -> MemoryBinlogStore:
    """A store whose semi-sync state (shared with the fake master serving it) reads ``clock``."""
    store = MemoryBinlogStore()
    config = ServerConfig(semi_sync_enabled=True, semi_sync_timeout_ms=timeout_ms)
    semi_sync_master(store, config, clock=clock)
    return store


@pytest.fixture
def replica_of() -> Iterator[list[SemiSyncReplica]]:
    replicas: list[SemiSyncReplica] = []
    yield replicas
    for replica in replicas:
        replica.close()


def test_wait_for_ack_returns_true_once_a_replica_acknowledged(
    fake_master_factory: FakeMasterFactory, replica_of: list[SemiSyncReplica]
) -> None:
    store = semi_sync_store(ManualClock(), 60000)  # never moved: the primary never gives up
    primary = fake_master_factory(store=store, semi_sync=True, semi_sync_timeout_ms=60000)
    replica_of.append(SemiSyncReplica(primary))
    first = primary.append_transaction([QueryEvent(query=b"CREATE DATABASE a")])
    assert primary.wait_for_ack(timeout=HANG) is True
    second = primary.append_transaction([QueryEvent(query=b"CREATE DATABASE b")])
    assert primary.wait_for_ack(second.file_name, second.end, timeout=HANG) is True
    assert replica_of[0].acked == [(first.file_name, first.end), (second.file_name, second.end)]
    # Acknowledged already: at once.
    assert primary.wait_for_ack(first.file_name, first.end, timeout=1) is True


def test_wait_for_ack_returns_false_when_the_primary_gives_up(
    fake_master_factory: FakeMasterFactory, replica_of: list[SemiSyncReplica]
) -> None:
    clock = ManualClock()
    store = semi_sync_store(clock, 200)
    primary = fake_master_factory(store=store, semi_sync=True, semi_sync_timeout_ms=200)
    replica_of.append(SemiSyncReplica(primary, acknowledge=False))
    primary.append_transaction([QueryEvent(query=b"CREATE DATABASE a")])
    clock.now += 0.2  # the transaction has waited rpl_semi_sync_master_timeout
    assert primary.wait_for_ack(timeout=HANG) is False
    assert query(primary, "SELECT @@rpl_semi_sync_master_timeout") == (200,)


def test_wait_for_ack_times_out_and_needs_semi_sync(
    fake_master_factory: FakeMasterFactory, fake_master: FakeMasterHandle
) -> None:
    store = semi_sync_store(ManualClock(), 600000)  # nothing can settle the wait
    primary = fake_master_factory(store=store, semi_sync=True, semi_sync_timeout_ms=600000)
    group = primary.append_transaction([QueryEvent(query=b"CREATE DATABASE a")])
    message = f"no semi-sync ACK for mysql-bin.000001:{group.end} within 0.2 s"
    with pytest.raises(TimeoutError, match=re.escape(message)):
        primary.wait_for_ack(timeout=0.2)
    with pytest.raises(ValueError, match="both"):
        primary.wait_for_ack("mysql-bin.000001")
    with pytest.raises(RuntimeError, match="semi_sync=True"):
        fake_master.wait_for_ack()


async def test_async_fake_master(async_fake_master: AsyncFakeMasterHandle) -> None:
    assert asyncio.get_running_loop() is not None
    group = async_fake_master.append_transaction([QueryEvent(query=b"CREATE DATABASE a")])
    position = await asyncio.to_thread(query, async_fake_master, "SHOW MASTER STATUS")
    assert position[:2] == (group.file_name, group.end)
    assert async_fake_master.rotate() == "mysql-bin.000002"


async def test_async_wait_for_ack(async_fake_master_factory: AsyncFakeMasterFactory) -> None:
    store = semi_sync_store(ManualClock(), 60000)  # never moved: the primary never gives up
    primary = await async_fake_master_factory(
        store=store, semi_sync=True, semi_sync_timeout_ms=60000
    )
    replica = await asyncio.to_thread(SemiSyncReplica, primary)
    try:
        primary.append_transaction([QueryEvent(query=b"CREATE DATABASE a")])
        assert await primary.wait_for_ack(timeout=HANG) is True
        # Before the append: the replica must not have ACKed it before being told not to.
        replica.acknowledge = False
        primary.append_transaction([QueryEvent(query=b"CREATE DATABASE b")])
        with pytest.raises(TimeoutError):
            await primary.wait_for_ack(timeout=0.2)
    finally:
        await asyncio.to_thread(replica.close)


# --- the documentation's examples -----------------------------------------------------------

FILE_HEADER = re.compile(r"^# (\S+\.(?:py|ini))$")


def doc_examples() -> dict[str, str]:
    """file name -> content of every code block of the doc that names its file."""
    text = DOC.read_text()
    examples: dict[str, str] = {}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S):
        first = body.split("\n", 1)[0]
        match = FILE_HEADER.match(first)
        if language == "python":
            assert match, f"a python example without a '# test_x.py' first line:\n{body}"
        if match:
            assert match[1] not in examples, f"two examples named {match[1]}"
            examples[match[1]] = body
    return examples


REPLICA_CONFTEST = """
import sys

import pytest

sys.path.insert(0, {repo!r})

from tests.peers.mariadb import MariaDBServer


@pytest.fixture
def replica():
    server = MariaDBServer({{"rpl_semi_sync_slave_enabled": "ON"}}, server_id=2).start()
    connection = server.connect()
    try:
        yield connection
    finally:
        connection.close()
        server.close()
"""


@pytest.mark.mariadb
def test_documentation_examples_run(pytester: pytest.Pytester) -> None:
    require_peer("MariaDB server", mariadb_available(), "bash scripts/install-deps.sh")
    examples = doc_examples()
    for name, content in examples.items():
        (pytester.path / name).write_text(content)
    (pytester.path / "conftest.py").write_text(REPLICA_CONFTEST.format(repo=str(REPO)))
    expected = sum(
        len(re.findall(r"^(?:async )?def test_", content, flags=re.M))
        for name, content in examples.items()
        if name.endswith(".py")
    )
    assert expected >= 9
    result = run_inner(pytester, "-W", "ignore::DeprecationWarning")
    result.assert_outcomes(passed=expected)


def test_every_setting_is_a_server_config_field() -> None:
    from dataclasses import fields

    from fakemaster.testing.plugin import SETTINGS, RunSettings

    config_fields = {field.name for field in fields(ServerConfig)}
    assert {setting.field for setting in SETTINGS} <= config_fields
    settings = RunSettings(server_id=7, binlog_checksum="NONE")
    assert settings.config_fields() == {"server_id": 7, "binlog_checksum": "NONE"}
    assert ServerConfig(**settings.config_fields()).server_id == 7


def test_documentation_names_every_setting() -> None:
    from fakemaster.testing.plugin import SETTINGS

    text = DOC.read_text()
    for setting in SETTINGS:
        assert f"`{setting.option}`" in text and f"`{setting.ini}`" in text, setting.option


ACCOUNTS_TEST = """
import pymysql


def grants(master, user, password):
    connection = pymysql.connect(host=master.host, port=master.port, user=user, password=password)
    with connection.cursor() as cursor:
        cursor.execute("SHOW GRANTS")
        lines = [row[0] for row in cursor.fetchall()]
    connection.close()
    return lines


def test_accounts(fake_master):
    assert grants(fake_master, "cdc", "pw")[0].startswith(
        "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `cdc`@`%`"
    )
    assert grants(fake_master, "dump", "d:pw")[1] == "GRANT SELECT ON `shop`.* TO `dump`@`%`"


def test_a_scenarios_accounts_and_the_runs(fake_master_factory, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        '[[accounts]]\\nuser = "cdc"\\npassword = "file"\\n'
        '[[accounts]]\\nuser = "reader"\\npassword = "r"\\ngrants = "SELECT"\\n'
        '[[tables]]\\ncreate = "CREATE TABLE shop.t (id INT PRIMARY KEY)"\\n'
    )
    master = fake_master_factory(scenario=str(path))
    assert grants(master, "reader", "r")[0].startswith("GRANT SELECT ON *.* TO `reader`@`%`")
    assert grants(master, "cdc", "pw")  # the run's account wins over the file's
"""


def test_inner_accounts_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        fakemaster_account =
            cdc:pw:SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT
            dump:d:pw:RELOAD; SELECT ON shop.*
        """
    )
    pytester.makepyfile(test_inner=ACCOUNTS_TEST)
    run_inner(pytester).assert_outcomes(passed=2)
    result = run_inner(pytester, "--fakemaster-account=cdc:pw:FLY")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--fakemaster-account: account cdc: unknown privilege 'FLY'*"])
