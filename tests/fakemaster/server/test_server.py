"""The asyncio shell with real clients: pymysql, the ``mariadb`` CLI, raw sockets; many
connections, KILL of a dump, shutdown, errors inside handlers, backpressure; and the result-set
column definitions compared with a real MariaDB 10.11 started by the test.

Dumps here use :class:`ScriptedDump`, a minimal stand-in with the interface of
``fakemaster.core.dump.stream.DumpStream`` (the binlog side is tested with the store and the dump stream).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import pytest

from decoder.packets import parse_err, parse_ok
from decoder.primitives import read_packed_int
from encoder.packets import frame
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import DumpRequest
from fakemaster.protocol.handshake import (
    NOT_ADVERTISED_CAPABILITIES,
    NOT_ADVERTISED_MARIADB_CAPABILITIES,
    Capability,
    HandshakeV10,
)
from fakemaster.protocol.resultset import ColumnDefinition
from fakemaster.server.master import BackgroundFakeMaster, FakeMaster
from fakemaster.vocabulary.commands import BinlogDump
from tests.peers.fixtures import MariaDBFactory
from tests.peers.policy import require_peer
from tests.support.wire import BASE_CAPABILITIES, RawClient

USER, PASSWORD = "repl", "secret"
CONFIG = ServerConfig(user=USER, password=PASSWORD)
# Bounds a hang (a wait for something that never comes), never decides a verdict: generous, so
# that a slow or loaded machine only makes the test slower.
HANG = 60.0


class ScriptedDump:
    """Sends the given event payloads (each prefixed with the 0x00 OK byte), then waits or ends
    (``then``: "wait" for more, "eof" to end with an EOF packet, "forever" to repeat the last
    payload without end). Records what the shell did with it."""

    def __init__(self, request: DumpRequest, events: list[bytes], then: str = "wait") -> None:
        self.request = request
        self.pending = list(events)
        self.then = then
        self.seq = 1
        self.acks: list[tuple[int, str]] = []
        self.heartbeats = 0
        self.chunks_made = 0
        self._finished = False

    @property
    def is_finished(self) -> bool:
        return self._finished

    def _packet(self, payload: bytes) -> bytes:
        data, self.seq = frame(payload, self.seq)
        return data

    def next_chunk(self) -> bytes | None:
        if self.pending:
            self.chunks_made += 1
            event = self.pending.pop(0)
            if self.then == "forever" and not self.pending:
                self.pending.append(event)
            return self._packet(b"\x00" + event)
        if self.then == "eof" and not self._finished:
            self._finished = True
            return self._packet(b"\xfe\x00\x00\x02\x00")
        return None

    def heartbeat_packet(self) -> bytes:
        self.heartbeats += 1
        return self._packet(b"\x00heartbeat")

    def on_semi_sync_ack(self, position: int, file_name: str) -> None:
        self.acks.append((position, file_name))

    def append(self, event: bytes) -> None:
        self.pending.append(event)


class DumpRecorder:
    """A dump factory that keeps the dumps it made."""

    def __init__(self, events: list[bytes] | None = None, then: str = "wait") -> None:
        self.events = events if events is not None else [b"rotate-event"]
        self.then = then
        self.dumps: list[ScriptedDump] = []

    def __call__(self, request: DumpRequest) -> ScriptedDump:
        dump = ScriptedDump(request, list(self.events), self.then)
        self.dumps.append(dump)
        return dump


def dump_command(server_id: int = 2, flags: int = 0) -> bytes:
    return BinlogDump(
        position=4, flags=flags, server_id=server_id, file_name=b"mysql-bin.000001"
    ).encode()


def wait_for(condition: Callable[[], bool], timeout: float = HANG) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Yield to the event loop (the fake master's, in the async tests) until ``condition()``."""
    deadline = time.monotonic() + HANG
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def writing_paused(master: FakeMaster, thread_id: int) -> bool:
    """Whether the connection's transport holds more than its high-water mark: the server's
    dump then awaits ``drain()`` and asks for no chunk until the client reads."""
    connection = master._connections.get(thread_id)
    if connection is None:
        return False
    transport = connection.writer.transport
    return bool(transport.get_write_buffer_size() > transport.get_write_buffer_limits()[1])


@pytest.fixture
def master() -> Iterator[BackgroundFakeMaster]:
    with BackgroundFakeMaster(CONFIG) as running:
        yield running
        assert running.errors == []


def connect(master: BackgroundFakeMaster, **kw: Any) -> pymysql.connections.Connection[Any]:
    params: dict[str, Any] = {
        "host": master.host,
        "port": master.port,
        "user": USER,
        "password": PASSWORD,
        "connect_timeout": HANG,
        "read_timeout": HANG,
    }
    params.update(kw)
    return pymysql.connect(**params)


# --- real clients ---------------------------------------------------------------------------


def test_pymysql_session(master: BackgroundFakeMaster) -> None:
    conn = connect(master)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            assert cur.fetchall() == (("10.11.19-MariaDB-log",),)
            cur.execute("SHOW VARIABLES LIKE 'server_id'")
            assert cur.fetchall() == (("server_id", "1"),)
            cur.execute("SET @master_binlog_checksum= @@global.binlog_checksum")
            cur.execute("SELECT @master_binlog_checksum")
            assert cur.fetchall() == (("CRC32",),)
            before = int(time.time())
            cur.execute("SELECT @@GLOBAL.gtid_domain_id, UNIX_TIMESTAMP()")
            [(domain, now)] = cur.fetchall()
            # The server's clock is the wall clock, read while the query ran.
            assert domain == 0 and before <= now <= int(time.time())
        assert conn.get_server_info() == "5.5.5-10.11.19-MariaDB-log"
    finally:
        conn.close()


def test_pymysql_wrong_password(master: BackgroundFakeMaster) -> None:
    with pytest.raises(pymysql.err.OperationalError) as raised:
        connect(master, password="wrong")
    assert raised.value.args == (
        1045,
        "Access denied for user 'repl'@'127.0.0.1' (using password: YES)",
    )


def test_pymysql_server_errors(master: BackgroundFakeMaster) -> None:
    conn = connect(master)
    try:
        with conn.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError) as raised:
                cur.execute("SELECT @@GLOBAL.GTID_MODE")
            assert raised.value.args == (1193, "Unknown system variable 'GTID_MODE'")
            cur.execute("SELECT 1")  # the connection survives an error
            assert cur.fetchall() == ((1,),)
    finally:
        conn.close()


def mariadb_cli() -> str:
    path = shutil.which("mariadb")
    require_peer("mariadb command-line client", path is not None, "apt-get install mariadb-client")
    assert path is not None
    return path


def test_mariadb_cli(master: BackgroundFakeMaster) -> None:
    cli = mariadb_cli()
    base = [cli, "-h127.0.0.1", f"-P{master.port}", f"-u{USER}", f"-p{PASSWORD}"]
    result = subprocess.run(
        [
            *base,
            "-N",
            "-e",
            "SELECT VERSION(); SELECT @@version_comment; SHOW VARIABLES LIKE 'server_id'",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "10.11.19-MariaDB-log",
        "mariadb.org binary distribution",
        "server_id\t1",
    ]
    denied = subprocess.run(
        [cli, "-h127.0.0.1", f"-P{master.port}", f"-u{USER}", "-pnope", "-e", "SELECT 1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert denied.returncode == 1
    assert "ERROR 1045 (28000): Access denied for user 'repl'@'127.0.0.1'" in denied.stderr
    # The interactive client's own queries (status: charsets, user, version).
    status = subprocess.run(base, input="status\n", capture_output=True, text=True, timeout=30)
    assert status.returncode == 0, status.stderr
    assert (
        "Server version:\t\t10.11.19-MariaDB-log mariadb.org binary distribution" in status.stdout
    )
    assert "Current user:\t\trepl@127.0.0.1" in status.stdout


# --- robustness -----------------------------------------------------------------------------


def raw_socket(master: BackgroundFakeMaster) -> socket.socket:
    sock = socket.create_connection((master.host, master.port), timeout=HANG)
    return sock


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff\xff\xff\x01" + b"x" * 100,  # declares a 16 MiB packet, sends 100 bytes, closes
        b"\x05\x00\x00\x07hello",  # wrong sequence number
        b"\x01\x00\x00\x01\x00",  # a one-byte handshake response
        b"\x00\x00\x00\x01",  # an empty one
    ],
)
def test_malformed_packets_do_not_disturb_others(
    master: BackgroundFakeMaster, garbage: bytes
) -> None:
    other = connect(master)
    try:
        sock = raw_socket(master)
        with sock:
            greeting = sock.recv(4096)
            assert HandshakeV10.decode(greeting[4:]).protocol_version == 10
            try:
                sock.sendall(garbage)
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                # The server answered and closed first: a reset when it left input unread, as
                # a real 10.11 does (a packet out of order: its body is never read).
                pass
            answer = read_all(sock)
        if answer:
            assert answer[4] == 0xFF  # an ERR packet, then the close
        with other.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchall() == ((1,),)
    finally:
        other.close()
    running = master.master
    assert running is not None
    wait_for(lambda: running.connection_count == 0)


def test_fifty_concurrent_connections(master: BackgroundFakeMaster) -> None:
    results: list[tuple[int, str]] = []
    failures: list[BaseException] = []
    barrier = threading.Barrier(50)

    def client(index: int) -> None:
        try:
            conn = connect(master)
            try:
                barrier.wait(timeout=HANG)
                with conn.cursor() as cur:
                    cur.execute(f"SET @n = {index}")
                    cur.execute("SELECT @n, CONNECTION_ID()")
                    [(n, thread_id)] = cur.fetchall()
                    results.append((n, str(thread_id)))
            finally:
                conn.close()
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * HANG)
    assert not any(thread.is_alive() for thread in threads), "clients still running"
    assert failures == []
    assert sorted(n for n, _ in results) == list(range(50))
    assert len({thread_id for _, thread_id in results}) == 50  # all at once, all distinct


def test_idle_handshake_times_out() -> None:
    with BackgroundFakeMaster(ServerConfig(handshake_timeout=0.2)) as running:
        sock = raw_socket(running)
        with sock:
            sock.recv(4096)
            assert read_all(sock) == b""  # closed by the server
        assert running.errors == []


# --- dumps, KILL, errors, shutdown (async) --------------------------------------------------


async def open_raw(master: FakeMaster, **kw: Any) -> RawClient:
    return await asyncio.to_thread(RawClient, master.host, master.port, USER, PASSWORD, **kw)


async def read_until_closed(client: RawClient) -> list[bytes]:
    def run() -> list[bytes]:
        out = []
        try:
            while True:
                out.append(client.read())
        except (ConnectionError, OSError):
            return out

    return await asyncio.to_thread(run)


async def test_kill_a_dump_from_another_connection() -> None:
    recorder = DumpRecorder([b"rotate-event"], then="wait")
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        replica.write(dump_command())
        first = await asyncio.to_thread(replica.read)
        assert first == b"\x00rotate-event"
        killer = await open_raw(master)
        thread_id = replica.greeting.thread_id
        assert await asyncio.to_thread(killer.query, f"KILL {thread_id}") == [
            bytes.fromhex("00000002000000")
        ]
        # A killed dump thread's socket just closes.
        assert await read_until_closed(replica) == []
        assert thread_id not in master.state.connections
        answer = await asyncio.to_thread(killer.query, f"KILL {thread_id}")
        assert parse_err(answer[0]).errno == 1094
        killer.close()
        assert master.errors == []


async def test_hung_up_replica_lingers_until_killed_or_next_send() -> None:
    """As a MariaDB dump thread: after the replica hangs up it stays in the thread list until
    it next sends, so a replica's STOP SLAVE can still KILL it (semi-sync does)."""
    recorder = DumpRecorder([b"first"])
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        killer = await open_raw(master)
        for ends_by in ("kill", "next event"):
            replica = await open_raw(master)
            replica.write(dump_command())
            assert await asyncio.to_thread(replica.read) == b"\x00first"
            thread_id = replica.greeting.thread_id
            connection = master._connections[thread_id]
            replica.sock.close()
            await until(
                lambda connection=connection: connection.peer_closed,
                "the server to see the hang-up",
            )
            assert thread_id in master.state.connections
            if ends_by == "kill":
                answer = await asyncio.to_thread(killer.query, f"KILL {thread_id}")
                assert answer == [bytes.fromhex("00000002000000")]
            else:
                recorder.dumps[-1].append(b"more")
                master.notify_binlog_changed()
            await until(
                lambda gone=thread_id: gone not in master.state.connections,
                "the dump to end",
            )
        killer.close()
        assert master.errors == []


async def test_kill_query_ends_a_dump_but_not_an_idle_connection() -> None:
    async with FakeMaster(CONFIG, dump_factory=DumpRecorder()) as master:
        idle = await open_raw(master)
        replica = await open_raw(master)
        replica.write(dump_command())
        await asyncio.to_thread(replica.read)
        killer = await open_raw(master)
        await asyncio.to_thread(killer.query, f"KILL QUERY {idle.greeting.thread_id}")
        await asyncio.to_thread(killer.query, f"KILL QUERY {replica.greeting.thread_id}")
        assert await read_until_closed(replica) == []
        assert (await asyncio.to_thread(idle.query, "SELECT 1"))[0] == b"\x01"
        for client in (idle, killer):
            client.close()


async def test_dump_streams_until_eof_then_closes() -> None:
    recorder = DumpRecorder([b"rotate", b"fde", b"gtid-list"], then="eof")
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        await asyncio.to_thread(replica.query, "SET @master_binlog_checksum='NONE'")
        replica.write(dump_command(flags=1))
        received = await read_until_closed(replica)
        assert received == [b"\x00rotate", b"\x00fde", b"\x00gtid-list", b"\xfe\x00\x00\x02\x00"]
        request = recorder.dumps[0].request
        assert request.master_binlog_checksum == "NONE" and request.non_blocking
        assert master.errors == []


async def test_new_events_wake_a_waiting_dump_and_acks_reach_it() -> None:
    recorder = DumpRecorder([b"first"])
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        await asyncio.to_thread(replica.query, "SET @rpl_semi_sync_slave= 1")
        replica.write(dump_command())
        assert await asyncio.to_thread(replica.read) == b"\x00first"
        dump = recorder.dumps[0]
        assert dump.request.semi_sync
        dump.append(b"second")
        master.notify_binlog_changed()
        assert await asyncio.to_thread(replica.read) == b"\x00second"
        replica.write(b"\xef" + struct.pack("<Q", 99) + b"mysql-bin.000001", 0)
        await until(lambda: bool(dump.acks), "the ACK")
        assert dump.acks == [(99, "mysql-bin.000001")]
        replica.close()


async def test_heartbeats_when_idle() -> None:
    recorder = DumpRecorder([b"first"])
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        await asyncio.to_thread(replica.query, "SET @master_heartbeat_period= 20000000")
        replica.write(dump_command())
        assert await asyncio.to_thread(replica.read) == b"\x00first"
        assert await asyncio.to_thread(replica.read) == b"\x00heartbeat"
        assert recorder.dumps[0].request.heartbeat_period_ns == 20_000_000
        replica.close()


async def test_error_in_a_dump_is_collected_and_others_go_on() -> None:
    class Broken(ScriptedDump):
        def next_chunk(self) -> bytes | None:
            raise RuntimeError("dump bug")

    def factory(request: DumpRequest) -> ScriptedDump:
        return Broken(request, [])

    async with FakeMaster(CONFIG, dump_factory=factory) as master:
        replica = await open_raw(master)
        bystander = await open_raw(master)
        replica.write(dump_command())
        assert await read_until_closed(replica) == []
        assert (await asyncio.to_thread(bystander.query, "SELECT 1"))[0] == b"\x01"
        assert [str(error) for error in master.errors] == ["dump bug"]
        master.errors.clear()
        bystander.close()


async def test_error_in_the_factory_is_collected() -> None:
    def factory(request: DumpRequest) -> ScriptedDump:
        raise ValueError("no binlog")

    async with FakeMaster(CONFIG, dump_factory=factory) as master:
        replica = await open_raw(master)
        replica.write(dump_command())
        assert await read_until_closed(replica) == []
        assert [repr(error) for error in master.errors] == ["ValueError('no binlog')"]
        master.errors.clear()


async def test_slow_reader_holds_back_only_its_own_dump() -> None:
    """A replica that stops reading: the dump stops being asked for chunks once the socket
    buffers are full, instead of queueing the endless binlog in memory."""
    recorder = DumpRecorder([b"x" * 65536], then="forever")
    config = ServerConfig(user=USER, password=PASSWORD, write_buffer_high_water=256 * 1024)
    async with FakeMaster(config, dump_factory=recorder) as master:
        slow = await open_raw(master)
        slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        slow.write(dump_command())
        thread_id = slow.greeting.thread_id
        await until(lambda: writing_paused(master, thread_id), "the dump to wait for the reader")
        # Kernel buffers plus the transport's high-water mark: a few MiB at most.
        assert recorder.dumps[0].chunks_made * 65536 < 32 * 1024 * 1024
        other = await open_raw(master)
        assert (await asyncio.to_thread(other.query, "SELECT 1"))[0] == b"\x01"
        other.close()
        slow.sock.close()


class EndlessDump(ScriptedDump):
    """A dump that always has its next chunk ready (a long binlog the replica keeps up with),
    until ``stop`` is set or it has made ``limit`` chunks; then it ends with EOF. The limit
    only ends a server that never yields: the test then fails instead of hanging."""

    def __init__(self, request: DumpRequest, limit: int) -> None:
        super().__init__(request, [b"e" * 200], then="forever")
        self.limit = limit
        self.stop = False

    def next_chunk(self) -> bytes | None:
        if self.stop or self.chunks_made >= self.limit:
            self.pending.clear()
            self.then = "eof"
        return super().next_chunk()


def test_a_dump_that_always_has_more_still_lets_other_clients_in() -> None:
    """While a replica keeps up with a dump that always has more to send, a new client logs in
    and is answered before the dump ends: the dump hands the event loop over between chunks
    (a MariaDB dump thread never holds back another connection either)."""
    limit = 2_000_000
    dumps: list[EndlessDump] = []

    def factory(request: DumpRequest) -> EndlessDump:
        dumps.append(EndlessDump(request, limit))
        return dumps[-1]

    with BackgroundFakeMaster(CONFIG, dump_factory=factory) as master:
        replica = RawClient(master.host, master.port, USER, PASSWORD)
        replica.write(dump_command())
        received = [0]

        def drain() -> None:  # read as fast as the socket allows, parse nothing
            while chunk := replica.sock.recv(1 << 20):
                received[0] += len(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        wait_for(lambda: bool(dumps) and received[0] > 0)
        other = RawClient(master.host, master.port, USER, PASSWORD)
        answer = other.query("SELECT 1")
        chunks_when_answered = dumps[0].chunks_made
        dumps[0].stop = True
        other.close()
        reader.join(HANG)
        assert not reader.is_alive()  # the dump ended with EOF and the server closed it
        assert answer[0] == b"\x01"  # one column: a result set, not an error
        assert chunks_when_answered < limit, "the other client was answered only after the dump"
        assert master.errors == []


async def test_stop_closes_every_connection() -> None:
    master = FakeMaster(CONFIG, dump_factory=DumpRecorder())
    await master.start()
    port = master.port
    idle = await open_raw(master)
    replica = await open_raw(master)
    replica.write(dump_command())
    await asyncio.to_thread(replica.read)
    await master.stop()
    assert await read_until_closed(idle) == []
    assert await read_until_closed(replica) == []
    assert master.connection_count == 0
    with pytest.raises(OSError):
        await asyncio.to_thread(socket.create_connection, ("127.0.0.1", port), 1)
    assert master.errors == []


# --- the real server ------------------------------------------------------------------------

# Statements whose column definitions must equal a real server's, whatever the values.
DIFFERENTIAL_STATEMENTS = [
    "SELECT UNIX_TIMESTAMP()",
    "SHOW VARIABLES LIKE 'SERVER_ID'",
    "SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'",
    "SELECT @master_binlog_checksum",
    "SET @master_binlog_checksum= @@global.binlog_checksum",
    "SELECT @master_binlog_checksum",
    "SELECT @@GLOBAL.gtid_domain_id",
    "SELECT @@GLOBAL.gtid_binlog_pos",
    "SELECT VERSION()",
    "SELECT @@version_comment LIMIT 1",
    "SELECT @@max_allowed_packet, @@sql_mode, @@read_only, @@long_query_time",
    "SELECT @@server_id as server_id",
    "SET @a=1, @b='x', @c=1.5, @d=2e0, @e=0x41",
    "SELECT @a, @b, @c, @d, @e, @nothing",
    "SELECT binlog_gtid_pos('mysql-bin.000001', 4)",
    "SHOW MASTER STATUS",
    "SHOW BINARY LOGS",
    "SHOW SLAVE HOSTS",
    "SELECT DATABASE(), USER(), CONNECTION_ID(), NOW()",
    "SELECT 1, -1, 12345678901, 1.25, 1e3, 'abc', NULL",
    "SELECT @@server_uuid",
    "SELECT @@GLOBAL.GTID_MODE",
    "KILL 99999",
    "SET NAMES utf8",
    "SELECT @@version, @b, 'abc'",
    "SET NAMES latin1",
    "SHOW VARIABLES LIKE 'character_set_c%'",
    "FOOBAR",
]


def ok_fields(payload: bytes) -> tuple[object, ...]:
    """An OK with its session-state entries as a sorted list: MariaDB stores tracked system
    variables in a hash keyed by address, so their order changes from one server process to
    the next."""
    ok = parse_ok(payload)
    info = ok.info
    entries: list[bytes] = []
    if info:
        text_length, pos = read_packed_int(info, 0)
        pos += text_length
        if pos < len(info):
            total, pos = read_packed_int(info, pos)
            end = pos + total
            while pos < end:
                kind = info[pos]
                length, data_start = read_packed_int(info, pos + 1)
                entries.append(bytes([kind]) + info[data_start : data_start + length])
                pos = data_start + length
    return (ok.affected_rows, ok.last_insert_id, ok.status_flags, ok.warnings, sorted(entries))


def column_definitions(payloads: list[bytes]) -> list[ColumnDefinition] | bytes:
    if payloads[0][:1] in (b"\x00", b"\xff"):
        return payloads[0]
    return [ColumnDefinition.decode(p) for p in payloads[1 : 1 + payloads[0][0]]]


# Lengths of values that differ between two servers (binlog file names, GTID positions): the
# column definitions are compared through everything but the length.
_VALUE_SIZED = {"@@GLOBAL.gtid_binlog_pos"}


def _column_shape(c: Any) -> tuple[Any, ...]:
    length = None if c.name in _VALUE_SIZED else c.length
    return (
        c.name,
        c.type,
        c.charset,
        c.flags,
        c.decimals,
        c.schema,
        c.table,
        c.org_table,
        c.org_name,
        length,
    )


@pytest.mark.mariadb
def test_column_definitions_match_a_real_mariadb(mariadb_factory: MariaDBFactory) -> None:
    real = mariadb_factory()
    real.create_replication_user(USER, PASSWORD, privileges="ALL PRIVILEGES")
    version, comment = real.execute("SELECT @@version, @@version_comment")[0]
    config = ServerConfig(
        accounts=(Account.admin(USER, PASSWORD),), version=version, version_comment=comment
    )
    caps = BASE_CAPABILITIES | Capability.SESSION_TRACK
    with BackgroundFakeMaster(config) as fake:
        real_client = RawClient(real.host, real.port, USER, PASSWORD, capabilities=caps)
        fake_client = RawClient(fake.host, fake.port, USER, PASSWORD, capabilities=caps)
        assert fake_client.login_reply == real_client.login_reply
        real_greeting = HandshakeV10.decode(real_client.greeting_payload)
        fake_greeting = HandshakeV10.decode(fake_client.greeting_payload)
        assert (
            fake_greeting.server_version,
            fake_greeting.capabilities,
            fake_greeting.mariadb_capabilities,
            fake_greeting.charset,
            fake_greeting.status,
            fake_greeting.auth_plugin,
        ) == (
            real_greeting.server_version,
            # Less what the fake master does not implement (fakemaster/protocol/handshake.py).
            real_greeting.capabilities & ~int(NOT_ADVERTISED_CAPABILITIES),
            real_greeting.mariadb_capabilities & ~int(NOT_ADVERTISED_MARIADB_CAPABILITIES),
            real_greeting.charset,
            real_greeting.status,
            real_greeting.auth_plugin,
        )
        differences = []
        for sql in DIFFERENTIAL_STATEMENTS:
            want = column_definitions(real_client.query(sql))
            got = column_definitions(fake_client.query(sql))
            if isinstance(want, bytes) and want[:1] == b"\xff":
                same = isinstance(got, bytes) and parse_err(got) == parse_err(want)
            elif isinstance(want, bytes) and isinstance(got, bytes):
                same = ok_fields(got) == ok_fields(want)
            elif isinstance(want, list) and isinstance(got, list):
                same = [_column_shape(c) for c in got] == [_column_shape(c) for c in want]
            else:
                same = got == want
            if not same:
                differences.append((sql, got, want))
        real_client.close()
        fake_client.close()
        assert differences == []
        assert fake.errors == []


# --- with the real binlog side (store + dump stream) ----------------------------------------


def memory_store() -> Any:
    from fakemaster.store import MemoryBinlogStore
    from fakemaster.vocabulary.events import QueryEvent

    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(query=b"CREATE DATABASE fm_test")])
    store.append_transaction([QueryEvent(database="fm_test", query=b"CREATE TABLE t (a INT)")])
    return store


def test_python_mysql_replication_reads_the_binlog() -> None:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import QueryEvent as PmrQuery

    store = memory_store()
    with BackgroundFakeMaster(CONFIG, store) as running:
        settings = {"host": running.host, "port": running.port, "user": USER, "password": PASSWORD}
        for position in ({}, {"auto_position": "0-1-1"}):
            stream = BinLogStreamReader(
                connection_settings=settings,
                server_id=100,
                blocking=False,
                is_mariadb=True,
                only_events=[PmrQuery],
                **position,
            )
            try:
                queries = [event.query for event in stream]
            finally:
                stream.close()
            expected = ["CREATE DATABASE fm_test", "CREATE TABLE t (a INT)"]
            assert queries == (expected if not position else expected[1:])
        assert running.errors == []


def test_mariadb_binlog_reads_from_the_fake_master() -> None:
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    with BackgroundFakeMaster(CONFIG, memory_store()) as running:
        result = subprocess.run(
            [
                tool,
                "--read-from-remote-server",
                "-h127.0.0.1",
                f"-P{running.port}",
                f"-u{USER}",
                f"-p{PASSWORD}",
                "mysql-bin.000001",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "CREATE DATABASE fm_test" in result.stdout
        assert "GTID 0-1-2 ddl" in result.stdout
        assert running.errors == []


@pytest.mark.mariadb
def test_a_real_replica_replicates_from_the_fake_master(mariadb_factory: MariaDBFactory) -> None:
    from fakemaster.vocabulary.events import QueryEvent

    store = memory_store()
    config = ServerConfig(user=USER, password=PASSWORD, semi_sync_enabled=True)
    with BackgroundFakeMaster(config, store) as running:
        replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
        replica.execute(
            [
                f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={running.port}, "
                f"MASTER_USER='{USER}', MASTER_PASSWORD='{PASSWORD}', MASTER_USE_GTID=slave_pos",
                "START SLAVE",
            ]
        )
        wait_for(
            lambda: (
                replica.execute("SHOW TABLES FROM fm_test") == [("t",)]
                if ("fm_test",) in replica.execute("SHOW DATABASES")
                else False
            ),
            60,
        )
        store.append_transaction([QueryEvent(database="fm_test", query=b"CREATE TABLE u (a INT)")])
        wait_for(lambda: len(replica.execute("SHOW TABLES FROM fm_test")) == 2, 60)
        conn = replica.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW SLAVE STATUS")
                status = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
        finally:
            conn.close()
        assert (status["Slave_IO_Running"], status["Last_IO_Error"]) == ("Yes", "")
        assert status["Gtid_IO_Pos"] == "0-1-3"
        replica.execute("STOP SLAVE")
        log = replica.error_log_text()
        assert "Failed to gracefully kill" not in log  # its KILL of the dump thread worked
        assert running.errors == []


# --- TLS ------------------------------------------------------------------------------------


@pytest.fixture
def tls_context(tmp_path: Any) -> ssl.SSLContext:
    openssl = shutil.which("openssl")
    require_peer("openssl command", openssl is not None, "apt-get install openssl")
    assert openssl is not None
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def test_tls_with_pymysql_and_the_cli(tls_context: ssl.SSLContext) -> None:
    config = ServerConfig(user=USER, password=PASSWORD, ssl_context=tls_context)
    with BackgroundFakeMaster(config) as running:
        secure = pymysql.connect(
            host=running.host,
            port=running.port,
            user=USER,
            password=PASSWORD,
            ssl={"check_hostname": False, "verify_mode": ssl.CERT_NONE},
            connect_timeout=HANG,
        )
        try:
            assert isinstance(secure._sock, ssl.SSLSocket)
            with secure.cursor() as cur:
                cur.execute("SELECT @@have_ssl, VERSION()")
                assert cur.fetchall() == (("YES", "10.11.19-MariaDB-log"),)
        finally:
            secure.close()
        plain = connect(running)  # TLS is offered, not required
        plain.close()
        cli = mariadb_cli()
        status = subprocess.run(
            [
                cli,
                "-h127.0.0.1",
                f"-P{running.port}",
                f"-u{USER}",
                f"-p{PASSWORD}",
                "--ssl",
                "--skip-ssl-verify-server-cert",
            ],
            input="status\n",
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert status.returncode == 0, status.stderr
        assert "SSL:\t\t\tCipher in use is" in status.stdout
        assert running.errors == []


def test_failed_tls_handshake_is_the_clients_problem(tls_context: ssl.SSLContext) -> None:
    from fakemaster.protocol.handshake import HandshakeResponse

    config = ServerConfig(user=USER, password=PASSWORD, ssl_context=tls_context)
    with BackgroundFakeMaster(config) as running:
        sock = raw_socket(running)
        with sock:
            sock.recv(4096)
            request = HandshakeResponse(
                capabilities=BASE_CAPABILITIES | Capability.SSL, ssl_request=True
            ).encode()
            sock.sendall(frame(request, 1)[0] + b"this is not a TLS ClientHello")
            sock.shutdown(socket.SHUT_WR)
            read_all(sock)
        other = connect(running)
        other.close()
        running_master = running.master
        assert running_master is not None
        wait_for(lambda: running_master.connection_count == 0)
        assert running.errors == []


BIG_CHUNK = 1 << 20


class EndlessChunks:
    """A dump that always has another 1 MiB chunk (never read by the stalled test replica)."""

    def __init__(self, request: DumpRequest) -> None:
        self.chunks_made = 0

    @property
    def is_finished(self) -> bool:
        return False

    def next_chunk(self) -> bytes:
        self.chunks_made += 1
        return b"\x00" * BIG_CHUNK  # allocated in this file: the test looks for it

    def heartbeat_packet(self) -> bytes:
        return b""

    def on_semi_sync_ack(self, position: int, file_name: str) -> None:
        pass


async def test_a_stalled_replica_keeps_no_chunk_alive_besides_the_transport_buffer() -> None:
    """Once a chunk is handed to the transport (which copies what the socket does not take),
    the server keeps no reference to it while it waits for the replica to drain: fifty stalled
    replicas cost fifty transport buffers, not twice that."""
    import tracemalloc

    dumps: list[EndlessChunks] = []

    def factory(request: DumpRequest) -> EndlessChunks:
        dumps.append(EndlessChunks(request))
        return dumps[-1]

    tracemalloc.start()
    try:
        async with FakeMaster(CONFIG, dump_factory=factory) as master:
            stalled = await open_raw(master)
            stalled.write(dump_command())
            thread_id = stalled.greeting.thread_id
            # Chunks went to the transport and the dump awaits drain(): whenever this coroutine
            # runs, the server's dump is parked at an await, where it must hold no chunk.
            await until(lambda: writing_paused(master, thread_id), "the replica to stall")
            assert dumps[0].chunks_made > 0
            snapshot = tracemalloc.take_snapshot()
            stalled.sock.close()
    finally:
        tracemalloc.stop()
    made_here = snapshot.filter_traces([tracemalloc.Filter(True, __file__)])
    assert sum(stat.size for stat in made_here.statistics("filename")) < BIG_CHUNK // 2
    assert master.errors == []
