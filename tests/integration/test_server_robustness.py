"""The fake master under abuse: malformed and truncated client packets at every stage, replicas
that hang up mid-dump (also in the middle of a 20 MB event) or stop reading, and 50 replicas
dumping one growing binlog at once.

What must hold throughout: a bad packet gets an ERR packet or the end of that one connection;
nothing inside the server raises (:attr:`FakeMaster.errors` stays empty: an exception in a
handler is a bug); other connections carry on; every replica that reads to the end has received
exactly the bytes of the served files; the server's memory does not grow with the bytes served.

Clients here are raw sockets speaking through the project's own packet codec
(``decoder.packets``), plus python-mysql-replication readers in the concurrency test.
Everything runs on loopback, with timeouts on every wait.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder.binlog_file import read_binlog
from decoder.packets import PacketReader, parse_err
from decoder.stream import StreamDecoder
from encoder.packets import frame
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    Capability,
    HandshakeResponse,
    HandshakeV10,
    native_password_response,
)
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave
from fakemaster.vocabulary.constants import (
    HEADER_LEN,
    MAX_PACKET_PAYLOAD,
    Command,
    EventFlag,
    EventType,
)
from fakemaster.vocabulary.events import Event, QueryEvent, XidEvent
from tests.budget import examples
from tests.support.serve_process import ServeProcess
from tests.support.wire import BASE_CAPABILITIES, RawClient

USER, PASSWORD = "repl", "secret"
HOST = "127.0.0.1"
# Bounds every wait (a socket read, a condition): only a hang reaches it, a slow machine waits.
IO_TIMEOUT = 60.0
CONFIG = ServerConfig(user=USER, password=PASSWORD, semi_sync_enabled=True)

_U32 = struct.Struct("<I")
_LENGTH_OFFSET = 9
_LOG_POS_OFFSET = 13
_FLAGS_OFFSET = 17
ERR, OK, EOF = 0xFF, 0x00, 0xFE

# Property tests open one connection per example: half the profile's budget.
FUZZ = settings(
    max_examples=examples(0.5),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# --- served binlogs -----------------------------------------------------------------------------


def transaction(number: int, text: bytes) -> list[Event]:
    return [
        QueryEvent(database="fm", query=b"BEGIN"),
        QueryEvent(database="fm", query=b"INSERT INTO t VALUES (" + text + b")"),
        XidEvent(xid=number),
    ]


def small_store() -> MemoryBinlogStore:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(query=b"CREATE DATABASE fm")])
    for number in range(4):
        store.append_transaction(transaction(number, b"%d" % number))
    store.rotate()
    store.append_transaction(transaction(9, b"'after rotate'"))
    return store


def wait_for(condition: Callable[[], bool], timeout: float = IO_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


# --- a raw client -------------------------------------------------------------------------------


def handshake_response(greeting: HandshakeV10, capabilities: int = BASE_CAPABILITIES) -> bytes:
    return HandshakeResponse(
        capabilities=capabilities,
        user=USER.encode(),
        auth_response=native_password_response(PASSWORD, greeting.scramble),
        auth_plugin=NATIVE_PASSWORD,
    ).encode()


class Wire:
    """One socket to the server; payloads are read with the project's PacketReader."""

    def __init__(self, port: int, *, timeout: float = IO_TIMEOUT) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=timeout)
        self.reader = PacketReader(check_sequence=False)
        self.greeting = HandshakeV10.decode(self.read())
        self.reset = False

    @property
    def thread_id(self) -> int:
        return self.greeting.thread_id

    def send(self, payload: bytes, seq: int = 0) -> None:
        self.sock.sendall(frame(payload, seq)[0])

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self) -> bytes:
        while True:
            payload = self.reader.next_payload()
            if payload is not None:
                return payload
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.reader.feed(data)

    def login(self) -> None:
        self.send(handshake_response(self.greeting), 1)
        reply = self.read()
        assert reply[:1] == b"\x00", reply

    def answer(self) -> bytes:
        """Read one command's answer (OK, ERR, or a whole text result set); its last packet."""
        first = self.read()
        if first[0] in (OK, ERR):
            return first
        for _ in range(first[0] + 1):  # column definitions, EOF
            self.read()
        while True:
            row = self.read()
            if row[0] == ERR or (row[0] == EOF and len(row) < 9):
                return row

    def command(self, sql: str) -> bytes:
        """A statement whose answer is a single OK or ERR packet."""
        self.send(b"\x03" + sql.encode(), 0)
        return self.read()

    def prepare_dump(self, *, semi_sync: bool = False) -> None:
        """The session variables a MariaDB replica sets before asking for the binlog."""
        statements = [
            "SET @master_binlog_checksum= @@global.binlog_checksum",
            "SET @mariadb_slave_capability=4",
        ]
        if semi_sync:
            statements.append("SET @rpl_semi_sync_slave= 1")
        for sql in statements:
            answer = self.command(sql)
            assert answer[:1] == b"\x00", answer

    def hang_up_and_collect(self) -> list[bytes]:
        """Half-close, then the payloads of everything the server still sends until it closes.
        A partial packet at the end fails the test (unless the server reset the connection,
        which may cut what was in flight)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except ConnectionResetError:
                self.reset = True
                break
            except TimeoutError:
                raise AssertionError("the server neither answered nor closed") from None
            if not data:
                break
            self.reader.feed(data)
        payloads = list(self.reader)
        if not self.reset:
            self.reader.finish()
        self.sock.close()
        return payloads

    def close(self) -> None:
        self.sock.close()


def is_ok(payload: bytes) -> bool:
    return payload[:1] == b"\x00"


def check_err(payload: bytes) -> int:
    """The errno of an ERR packet; fails on the server's internal-error ERR (a bug)."""
    error = parse_err(payload)
    assert not error.message.startswith("internal error"), error
    return error.errno


# --- fixtures -----------------------------------------------------------------------------------


@dataclass
class Served:
    master: BackgroundFakeMaster
    store: MemoryBinlogStore
    bystander: RawClient

    @property
    def port(self) -> int:
        return self.master.port

    def append(self, events: list[Event]) -> None:
        self.master.call(lambda: self.store.append_transaction(events))


@pytest.fixture(scope="module")
def served_module() -> Iterator[Served]:
    store = small_store()
    with BackgroundFakeMaster(CONFIG, store) as master:
        bystander = RawClient(HOST, master.port, USER, PASSWORD, timeout=IO_TIMEOUT)
        try:
            yield Served(master, store, bystander)
        finally:
            bystander.close()


@pytest.fixture
def served(served_module: Served) -> Iterator[Served]:
    """The shared server; after each test no handler has raised and the bystander connection
    opened before everything else still gets answers."""
    yield served_module
    assert served_module.master.errors == []
    answer = served_module.bystander.query("SELECT 1")
    assert answer[0] == b"\x01" and answer[-2] == b"\x011", answer  # one column, one row: 1
    assert served_module.master.errors == []


def connections(served: Served) -> int:
    running = served.master.master
    assert running is not None
    return running.connection_count


# --- strategies ---------------------------------------------------------------------------------


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few bytes changed, cut, inserted or deleted."""
    out = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        where = draw(st.integers(0, len(out)))
        operation = draw(st.sampled_from(["cut", "set", "insert", "delete"]))
        if operation == "cut":
            del out[where:]
        elif operation == "set" and where < len(out):
            out[where] = draw(st.integers(0, 255))
        elif operation == "insert":
            out[where:where] = draw(st.binary(min_size=1, max_size=8))
        else:
            del out[where : where + draw(st.integers(1, 8))]
    return bytes(out)


@dataclass(frozen=True)
class Framing:
    """How a payload goes on the wire: ``exact`` (one well-formed packet), ``cut`` (the packet
    header promises more than is sent), ``raw`` (no header at all), ``wrong_seq``."""

    how: str
    seq: int
    cut: int

    def wire(self, payload: bytes, expected_seq: int) -> bytes:
        if self.how == "raw":
            return payload
        seq = expected_seq if self.how != "wrong_seq" else self.seq
        if self.how == "wrong_seq" and seq == expected_seq:
            seq = (seq + 1) & 0xFF
        data = frame(payload, seq)[0]
        if self.how == "cut":
            return data[: min(self.cut, len(data) - 1)] if data else data
        return data

    @property
    def complete(self) -> bool:
        """Whether the server can see the end of the packet (and so answer it)."""
        return self.how in ("exact", "wrong_seq")


framings = st.builds(
    Framing,
    how=st.sampled_from(["exact", "exact", "cut", "raw", "wrong_seq"]),
    seq=st.integers(0, 255),
    cut=st.integers(0, 40),
)


# --- malformed packets, stage by stage ----------------------------------------------------------


@st.composite
def handshake_payloads(draw: st.DrawFn) -> bytes:
    capabilities = draw(st.integers(0, 0xFFFFFFFF)) & ~Capability.SSL
    kind = draw(st.sampled_from(["random", "mutated", "truncated"]))
    if kind == "random":
        return draw(st.binary(max_size=120))
    valid = HandshakeResponse(
        capabilities=capabilities | Capability.PROTOCOL_41,
        user=draw(st.sampled_from([USER.encode(), b"", b"root", b"\xff\xfe"])),
        auth_response=draw(st.binary(max_size=40)),
        database=draw(st.one_of(st.none(), st.binary(max_size=12))),
        auth_plugin=draw(st.sampled_from([None, NATIVE_PASSWORD, "caching_sha2_password", ""])),
        attributes=tuple(draw(st.lists(st.tuples(st.binary(max_size=4), st.binary(max_size=4)))))[
            :3
        ],
    ).encode()
    if kind == "truncated":
        return valid[: draw(st.integers(0, len(valid)))]
    return draw(mutations(valid))


def check_handshake_answer(packets: list[bytes]) -> None:
    """Before login the server answers OK (a lucky mutation), an auth switch request, or an
    ERR that ends the connection."""
    for index, payload in enumerate(packets):
        assert payload, "empty packet"
        if payload[0] == ERR:
            check_err(payload)
            assert index == len(packets) - 1, "packets after an ERR before login"
        else:
            assert payload[0] in (OK, EOF), payload[:16]


@FUZZ
@given(payload=handshake_payloads(), framing=framings, extra=st.binary(max_size=30))
def test_malformed_handshake_responses(
    served: Served, payload: bytes, framing: Framing, extra: bytes
) -> None:
    wire = Wire(served.port)
    wire.send_raw(framing.wire(payload, 1) + extra)
    check_handshake_answer(wire.hang_up_and_collect())
    assert served.master.errors == []


RESPONSE_LENGTH = len(
    handshake_response(HandshakeV10(server_version="", thread_id=1, scramble=b"s" * 20))
)


@pytest.mark.parametrize("length", range(RESPONSE_LENGTH))
def test_every_truncation_of_a_handshake_response(served: Served, length: int) -> None:
    wire = Wire(served.port)
    valid = handshake_response(wire.greeting)
    assert len(valid) == RESPONSE_LENGTH
    wire.send(valid[:length], 1)
    packets = wire.hang_up_and_collect()
    assert len(packets) == 1
    if packets[0][0] == EOF:  # a cut plugin name: switch to mysql_native_password
        assert packets[0].startswith(b"\xfemysql_native_password\x00")
    elif packets[0][0] == OK:  # cut where the rest is optional (no plugin, no final NUL)
        assert length in (RESPONSE_LENGTH - 22, RESPONSE_LENGTH - 1)
    else:
        assert check_err(packets[0]) in (1043, 1045)


def test_a_handshake_packet_that_never_ends(served: Served) -> None:
    """A header promising 60,000 bytes (under max_login_packet), a little data, then silence:
    the server waits for the rest, and closes when the client gives up."""
    wire = Wire(served.port)
    wire.send_raw((60_000).to_bytes(3, "little") + b"\x01" + b"\x00" * 1000)
    assert wire.hang_up_and_collect() == []


def test_a_handshake_packet_over_the_login_limit(served: Served) -> None:
    """A header promising 8 MiB: MariaDB would wait for it (up to max_allowed_packet); the fake
    refuses it from its header, with the ERR MariaDB sends a packet over max_allowed_packet."""
    wire = Wire(served.port)
    wire.send_raw(b"\xff\xff\x7f\x01" + b"\x00" * 1000)
    assert [check_err(payload) for payload in wire.hang_up_and_collect()] == [1153]


# --- after login: COM_QUERY, other commands ------------------------------------------------------


QUERY_SEEDS = [
    "SELECT 1",
    "SELECT @@GLOBAL.gtid_domain_id",
    "SELECT binlog_gtid_pos('mysql-bin.000001', 4)",
    "SELECT UNIX_TIMESTAMP()",
    "SET @master_binlog_checksum= @@global.binlog_checksum",
    "SET @slave_connect_state='0-1-3'",
    "SET @master_heartbeat_period= 1000000000",
    "SET NAMES utf8mb4",
    "SHOW VARIABLES LIKE 'server_id'",
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('binlog_format', 'binlog_row_image')",
    "SHOW MASTER STATUS",
    "SHOW BINARY LOGS",
    "SHOW SLAVE HOSTS",
    "SELECT @a, @@server_id, VERSION()",
]


@st.composite
def query_texts(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["mutated", "random", "text"]))
    if kind == "random":
        return draw(st.binary(max_size=80))
    if kind == "text":
        return draw(st.text(max_size=60)).encode("utf-8", "surrogatepass")
    seed = draw(st.sampled_from(QUERY_SEEDS)).encode()
    return draw(mutations(seed))


def check_command_answers(packets: list[bytes]) -> None:
    """After login every answer ends with OK, EOF or ERR (a result set in between); the last
    ERR is never the server's own internal error."""
    if not packets:
        return
    for payload in packets:
        assert payload, "empty packet"
        if payload[0] == ERR:
            check_err(payload)
    assert packets[-1][0] in (OK, EOF, ERR), packets[-1][:16]


@FUZZ
@given(text=query_texts(), framing=framings, follow_with_ping=st.booleans())
def test_malformed_queries(
    served: Served, text: bytes, framing: Framing, follow_with_ping: bool
) -> None:
    wire = Wire(served.port)
    wire.login()
    data = framing.wire(b"\x03" + text, 0)
    if follow_with_ping and framing.complete:
        data += frame(b"\x0e", 0)[0]
    wire.send_raw(data)
    check_command_answers(wire.hang_up_and_collect())
    assert served.master.errors == []


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"\x00",
        b"SELECT '\xff\xfe'",
        b"SELECT 'unterminated",
        b"SET @slave_connect_state='not a gtid'",
        b"SET @slave_connect_state='0-1-99999999999999999999999'",
        b"SELECT binlog_gtid_pos('mysql-bin.000001', 99999999999999999999)",
        b"SELECT binlog_gtid_pos('no-such-file', -1)",
        b"SHOW VARIABLES LIKE '\\'",
        b"SELECT 1; SELECT 2",
        b"/*",
        b"SET @a = 1, @b =",
    ],
)
def test_odd_queries_get_an_answer_and_the_connection_stays(served: Served, text: bytes) -> None:
    wire = Wire(served.port)
    wire.login()
    wire.send(b"\x03" + text, 0)
    final = wire.answer()
    if final[0] == ERR:
        check_err(final)
    wire.send(b"\x0e", 0)  # COM_PING: the connection still works
    assert is_ok(wire.answer())
    assert wire.hang_up_and_collect() == []


COMMANDS = [
    Command.QUERY,
    Command.INIT_DB,
    Command.FIELD_LIST,
    Command.PING,
    Command.REGISTER_SLAVE,
    Command.BINLOG_DUMP,
    Command.BINLOG_DUMP_GTID,
    0x1B,  # COM_SET_OPTION
    0x1F,  # COM_RESET_CONNECTION
    0x16,  # COM_STMT_PREPARE: not supported
    0x00,  # COM_SLEEP
    0x20,  # past the last command
    0xFF,
]


@FUZZ
@given(
    command=st.sampled_from(COMMANDS),
    body=st.binary(max_size=60),
    framing=framings,
)
def test_any_command_with_a_malformed_body(
    served: Served, command: int, body: bytes, framing: Framing
) -> None:
    if command == Command.BINLOG_DUMP:
        body = non_blocking(body)
    wire = Wire(served.port)
    wire.login()
    wire.prepare_dump()
    wire.send_raw(framing.wire(bytes((command,)) + body, 0))
    packets = wire.hang_up_and_collect()
    if command == Command.BINLOG_DUMP and framing.how == "exact":
        check_dump_answer(packets)
    else:
        check_command_answers(packets)
    assert served.master.errors == []


# --- COM_REGISTER_SLAVE -------------------------------------------------------------------------

REGISTER = RegisterSlave(
    server_id=7,
    host=b"replica-host",
    user=b"ruser",
    password=b"rpass",
    port=3307,
    rank=0,
    master_id=0,
).encode()


@pytest.mark.parametrize("length", range(1, len(REGISTER) + 1))
def test_every_truncation_of_register_slave(served: Served, length: int) -> None:
    wire = Wire(served.port)
    wire.login()
    wire.send(REGISTER[:length], 0)
    answer = wire.read()
    if length == len(REGISTER):
        assert is_ok(answer), answer
    else:
        assert check_err(answer) == 1105  # MariaDB's "Failed to register slave..." texts
    assert wire.command("SELECT 1")[:1] == b"\x01"  # one column: the connection goes on
    check_command_answers(wire.hang_up_and_collect())


@FUZZ
@given(body=mutations(REGISTER[1:]), framing=framings)
def test_malformed_register_slave(served: Served, body: bytes, framing: Framing) -> None:
    wire = Wire(served.port)
    wire.login()
    wire.send_raw(framing.wire(bytes((Command.REGISTER_SLAVE,)) + body, 0))
    packets = wire.hang_up_and_collect()
    if framing.how == "exact":
        assert len(packets) == 1
        if not is_ok(packets[0]):
            assert check_err(packets[0]) == 1105
    else:
        check_command_answers(packets)
    assert served.master.errors == []


# --- COM_BINLOG_DUMP ----------------------------------------------------------------------------


def non_blocking(body: bytes) -> bytes:
    """The body with BINLOG_DUMP_NON_BLOCK set where the flags are (a body too short to hold
    flags reads as server_id 0, which is non-blocking too), so every dump here ends with EOF
    or ERR and the connection closes."""
    out = bytearray(body)
    if len(out) > 4:
        out[4] |= 0x01
    return bytes(out)


def check_dump_answer(packets: list[bytes]) -> None:
    """A dump's packets: events (each packet holds exactly one event), then EOF or ERR."""
    assert packets, "a non-blocking dump ends with EOF or ERR"
    for payload in packets[:-1]:
        assert payload[0] == OK, payload[:16]
        length = _U32.unpack_from(payload, 1 + _LENGTH_OFFSET)[0]
        assert length == len(payload) - 1
    last = packets[-1]
    if last[0] == ERR:
        assert check_err(last) == 1236
    else:
        assert last[0] == EOF and len(last) == 5, last


NAMES = [b"mysql-bin.000001", b"mysql-bin.000002", b"", b"mysql-bin.000009", b"./mysql-bin.000001"]


@st.composite
def dump_bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["structured", "truncated", "random"]))
    if kind == "random":
        return non_blocking(draw(st.binary(max_size=40)))
    name = draw(st.one_of(st.sampled_from(NAMES), st.binary(max_size=30)))
    position = draw(st.one_of(st.integers(0, 1300), st.integers(0, 0xFFFFFFFF)))
    body = BinlogDump(
        position=position,
        flags=draw(st.integers(0, 0xFFFF)) | 1,
        server_id=draw(st.integers(0, 2**32 - 1)),
        file_name=name,
    ).body()
    if kind == "truncated":
        body = body[: draw(st.integers(0, len(body)))]
    return non_blocking(body)


@FUZZ
@given(
    body=dump_bodies(),
    checksum=st.sampled_from(["@@global.binlog_checksum", "'NONE'", "'CRC32'", "'bogus'", None]),
    capability=st.sampled_from([0, 1, 2, 3, 4, 5, 999]),
)
def test_malformed_binlog_dump_requests(
    served: Served, body: bytes, checksum: str | None, capability: int
) -> None:
    wire = Wire(served.port)
    wire.login()
    if checksum is not None:
        assert is_ok(wire.command(f"SET @master_binlog_checksum= {checksum}"))
    assert is_ok(wire.command(f"SET @mariadb_slave_capability= {capability}"))
    wire.send(bytes((Command.BINLOG_DUMP,)) + body, 0)
    check_dump_answer(wire.hang_up_and_collect())
    assert served.master.errors == []


@pytest.mark.parametrize("length", range(0, 27))
def test_every_truncation_of_a_binlog_dump(served: Served, length: int) -> None:
    wire = Wire(served.port)
    wire.login()
    wire.prepare_dump()
    dump = BinlogDump(flags=1, server_id=5, file_name=b"mysql-bin.000001").encode()
    wire.send(dump[: 1 + length], 0)
    packets = wire.hang_up_and_collect()
    check_dump_answer(packets)
    # As on MariaDB 10.11.19: missing fields are read from the packet buffer, where the last
    # query ("SET @mariadb_slave_capability=4") left "db_slave_capability=4" as the name, an
    # unknown file (ERR); with exactly the fixed fields the name is empty and the dump starts
    # at the first file; a cut name is an unknown file (ERR).
    streamed = length in (10, 26)
    assert (packets[-1][0] == EOF) == streamed


# --- semi-sync ACKs during a dump ---------------------------------------------------------------


@st.composite
def ack_streams(draw: st.DrawFn) -> bytes:
    """What a broken semi-sync replica might send while it is being streamed to."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["ack", "short", "garbage", "bad_name", "raw"]))
        if kind == "ack":
            payload = b"\xef" + struct.pack("<Q", draw(st.integers(0, 2**64 - 1)))
            payload += draw(st.sampled_from([b"mysql-bin.000002", b"", b"x" * 300]))
        elif kind == "short":
            payload = b"\xef" + draw(st.binary(max_size=8))
        elif kind == "bad_name":
            payload = b"\xef" + struct.pack("<Q", 4) + draw(st.binary(max_size=30))
        elif kind == "garbage":
            payload = draw(st.binary(max_size=30))
        else:
            parts.append(draw(st.binary(max_size=12)))
            continue
        parts.append(frame(payload, draw(st.integers(0, 255)))[0])
    return b"".join(parts)


def start_semi_sync_dump(served: Served) -> tuple[Wire, StreamDecoder]:
    """A semi-sync replica dumping from the current end of the binlog, having read the fake
    ROTATE and the FDE."""
    wire = Wire(served.port)
    wire.login()
    wire.prepare_dump(semi_sync=True)
    name, position = served.master.call(served.store.master_status)
    wire.send(BinlogDump(position=position, server_id=77, file_name=name.encode()).encode(), 0)
    decoder = StreamDecoder(network=True, semi_sync=True)
    events = read_events(wire, decoder, 2)
    assert [e.type_code for e in events] == [EventType.ROTATE, EventType.FORMAT_DESCRIPTION]
    return wire, decoder


def read_events(wire: Wire, decoder: StreamDecoder, count: int) -> list[Event]:
    """``count`` events, or fewer if the server closes the connection first."""
    events: list[Event] = []
    while len(events) < count:
        for event in decoder.events():
            events.append(event)
        if len(events) >= count:
            break
        try:
            data = wire.sock.recv(1 << 16)
        except ConnectionResetError:
            break
        if not data:
            break
        decoder.feed(data)
    return events


@FUZZ
@given(sent=ack_streams())
def test_malformed_semi_sync_acks_during_a_dump(served: Served, sent: bytes) -> None:
    wire, decoder = start_semi_sync_dump(served)
    before = connections(served)
    wire.send_raw(sent)
    served.append(transaction(100, b"'after the acks'"))
    # A dumping primary reads nothing but ACKs and ignores what it cannot use: the dump goes
    # on and streams the new transaction.
    events = read_events(wire, decoder, 4)
    assert [e.type_code for e in events] == [
        EventType.GTID,
        EventType.QUERY,
        EventType.QUERY,
        EventType.XID,
    ]
    # Like STOP SLAVE: the replica's dump thread is killed from another connection.
    assert is_ok(served.bystander.query(f"KILL {wire.thread_id}")[-1])
    wire.close()
    wait_for(lambda: connections(served) < before)
    assert served.master.errors == []


# --- replicas that hang up mid-dump ------------------------------------------------------------

BIG_EVENT = 20 << 20


@pytest.fixture(scope="module")
def big_store() -> MemoryBinlogStore:
    """A binlog holding one 20 MB event (sent as two packets) between small transactions."""
    store = small_store()
    store.append_transaction(transaction(20, b"'" + b"x" * BIG_EVENT + b"'"))
    store.append_transaction(transaction(21, b"'after the big one'"))
    return store


def served_stream(store: MemoryBinlogStore) -> bytes:
    """The bytes of a whole non-blocking dump (CRC32, capability 4), as the dump stream makes
    them."""
    from fakemaster.core.dump.stream import DumpStream
    from fakemaster.core.session import DumpRequest

    request = DumpRequest(
        command=Command.BINLOG_DUMP,
        thread_id=1,
        server_id=3,
        position=4,
        flags=1,
        file_name=store.file_names()[0],
        master_binlog_checksum="CRC32",
        slave_capability=4,
    )
    dump = DumpStream(store, request, CONFIG)
    chunks = []
    while (chunk := dump.next_chunk()) is not None:
        chunks.append(chunk)
    return b"".join(chunks)


class DumpedFiles:
    """Checks a replica's received events against the served files: the events of each file
    (everything but the artificial ROTATE that names it) hashed per file, the FDE with IN_USE
    cleared as the primary sends it."""

    def __init__(self) -> None:
        self.file_name = ""
        self.digests: dict[str, Any] = {}
        self.position = 0
        self.events = 0

    def event(self, event: memoryview) -> None:
        type_code = event[4]
        flags = event[_FLAGS_OFFSET]
        if type_code == EventType.ROTATE and flags & EventFlag.ARTIFICIAL:
            # pos(8) + name, then the CRC.
            self.file_name = bytes(event[HEADER_LEN + 8 : -4]).decode()
            self.digests.setdefault(self.file_name, hashlib.sha1())
            return
        digest = self.digests[self.file_name]
        if type_code == EventType.FORMAT_DESCRIPTION:
            fde = bytearray(event)
            fde[_FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
            digest.update(fde)
        else:
            digest.update(event)
        self.position = _U32.unpack_from(event, _LOG_POS_OFFSET)[0]
        self.events += 1

    def hexdigests(self) -> dict[str, str]:
        return {name: digest.hexdigest() for name, digest in self.digests.items()}


def file_digests(files: dict[str, bytes]) -> dict[str, str]:
    """What :class:`DumpedFiles` computes for replicas that read ``files`` to their end."""
    out = {}
    for name, data in files.items():
        events = bytearray(data[4:])
        events[_FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
        out[name] = hashlib.sha1(events).hexdigest()
    return out


def store_files(store: MemoryBinlogStore) -> dict[str, bytes]:
    return {
        name: b"\xfebin" + b"".join(event for _, event in store.iter_events(name))
        for name in store.file_names()
    }


def start_dump(
    port: int, *, server_id: int, flags: int = 0, name: bytes = b"mysql-bin.000001"
) -> Wire:
    wire = Wire(port)
    wire.login()
    wire.prepare_dump()
    wire.send(BinlogDump(flags=flags, server_id=server_id, file_name=name).encode(), 0)
    return wire


def read_exactly(sock: socket.socket, count: int) -> int:
    """Read and drop ``count`` bytes (fewer if the server closes first); how many came."""
    got = 0
    while got < count:
        data = sock.recv(min(1 << 16, count - got))
        if not data:
            break
        got += len(data)
    return got


def full_dump(port: int, server_id: int) -> DumpedFiles:
    """A non-blocking replica reading everything, through the project's packet reader."""
    wire = start_dump(port, server_id=server_id, flags=1)
    reader = PacketReader(expected_seq=1)
    seen = DumpedFiles()
    while True:
        payload = reader.next_payload()
        if payload is None:
            data = wire.sock.recv(1 << 20)
            assert data, "closed before the EOF"
            reader.feed(data)
            continue
        if payload[0] == EOF:
            break
        assert payload[0] == OK, payload[:64]
        seen.event(memoryview(payload)[1:])
    wire.close()
    return seen


@pytest.mark.parametrize(
    "read_before_hanging_up",
    [
        0,  # right after asking for the binlog
        3,  # inside the first packet header
        8 << 20,  # half-way through the first 16 MiB packet of the big event
        MAX_PACKET_PAYLOAD + 6,  # just past the big event's first packet header
        (16 << 20) + (2 << 20),  # in the big event's second packet
    ],
)
@pytest.mark.parametrize("how", ["close", "reset"])
def test_replica_hangs_up_mid_dump(
    big_store: MemoryBinlogStore, read_before_hanging_up: int, how: str
) -> None:
    expected = file_digests(store_files(big_store))
    with BackgroundFakeMaster(CONFIG, big_store) as running:
        master = running.master
        assert master is not None
        wire = start_dump(running.port, server_id=11)
        got = read_exactly(wire.sock, read_before_hanging_up)
        assert got == read_before_hanging_up
        if how == "reset":
            wire.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        wire.close()
        # The dump still had most of the 20 MB event to send: its next write fails and the
        # connection goes.
        wait_for(lambda: master.connection_count == 0)
        assert running.errors == []
        # The server goes on serving: another replica gets the whole binlog, byte for byte.
        assert full_dump(running.port, server_id=12).hexdigests() == expected
        assert running.errors == []


def test_replica_hangs_up_while_caught_up() -> None:
    """Hung up while the dump waits for new events: like a MariaDB dump thread, the connection
    lives on until the next send, which fails quietly."""
    store = small_store()
    with BackgroundFakeMaster(CONFIG, store) as running:
        master = running.master
        assert master is not None
        wire = start_dump(running.port, server_id=13)
        stream_length = len(served_stream(store)) - 9  # all but the EOF of a non-blocking dump
        assert read_exactly(wire.sock, stream_length) == stream_length
        connection = running.call(lambda: master._connections[wire.thread_id])
        wire.close()
        wait_for(lambda: running.call(lambda: connection.peer_closed))  # it saw the hang-up
        assert master.connection_count == 1
        running.call(lambda: store.append_transaction(transaction(30, b"30")))
        wait_for(lambda: master.connection_count == 0)
        assert running.errors == []


# --- a replica that stops reading ---------------------------------------------------------------

MAX_INSERT = 64 << 10


def many_events_store(
    total: int, *, seed: int = 7, max_event: int = MAX_INSERT
) -> MemoryBinlogStore:
    """``total`` bytes of transactions with ASCII INSERTs of varied sizes, rotated every ~8 MB."""
    rng = random.Random(seed)
    store = MemoryBinlogStore(server_id=1)
    written = 0
    number = 0
    while written < total:
        size = rng.choice([40, 400, 4000, max_event // 2, max_event])
        text = b"'" + (b"%08x" % rng.getrandbits(32)) * (size // 8) + b"'"
        group = store.append_transaction(transaction(number, text))
        written += group.end - group.start
        number += 1
        if store.position > 8 << 20:
            store.rotate()
    return store


@pytest.mark.parametrize("frame_cache", [False, True])
def test_a_stalled_replica_holds_back_only_itself(frame_cache: bool) -> None:
    """A dump thread writes the dump to the socket (from the frame cache with sendfile, or
    without it the framed blocks with sendmsg): while the replica does not read, the thread
    waits and the transport holds nothing. (Dumps through the transport, on TLS and compressed
    connections, are bounded by its high-water mark: test_server.py.)"""
    store = many_events_store(40 << 20)
    expected = file_digests(store_files(store))
    config = replace(CONFIG, frame_cache_bytes=CONFIG.frame_cache_bytes if frame_cache else 0)
    with BackgroundFakeMaster(config, store) as running:
        master = running.master
        assert master is not None
        stalled = start_dump(running.port, server_id=21)

        def buffered() -> int:
            connection = master._connections[stalled.thread_id]
            return int(connection.writer.transport.get_write_buffer_size())

        def in_dump_thread() -> bool:
            return bool(master._connections[stalled.thread_id].pumping)

        # Its socket buffers fill up while the dump thread writes.
        wait_for(lambda: running.call(in_dump_thread))
        results: list[DumpedFiles] = []
        failures: list[BaseException] = []

        def reader(server_id: int) -> None:
            try:
                results.append(full_dump(running.port, server_id))
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=reader, args=(30 + i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=2 * IO_TIMEOUT)
        assert not any(thread.is_alive() for thread in threads), "readers still reading"
        assert failures == []
        assert [r.hexdigests() for r in results] == [expected] * 4

        # What the server holds for the stalled replica: at most one chunk (which may end with
        # one more event) past the transport's high-water mark, not the 40 MB it has not read.
        assert running.call(buffered) == 0
        assert running.call(in_dump_thread)
        # Once it reads again it gets everything, nothing lost while it stalled.
        reader_state = PacketReader(expected_seq=1)
        seen = DumpedFiles()
        last_name = store.file_names()[-1]
        end = store.file_size(last_name)
        while not (seen.file_name == last_name and seen.position == end):
            payload = reader_state.next_payload()
            if payload is None:
                data = stalled.sock.recv(1 << 20)
                assert data
                reader_state.feed(data)
                continue
            assert payload[0] == OK
            seen.event(memoryview(payload)[1:])
        assert seen.hexdigests() == expected
        stalled.close()
        assert running.errors == []


# --- fifty replicas, one growing binlog, bounded server memory ----------------------------------

REPLICAS = 50
PMR_READERS = 3
STALLED = 2
SERVED_BYTES = 30 << 20
RSS_BOUND = 150 << 20


class LiveFiles:
    """The final binlog files, on disk from the start up to a point, and the rest appended in
    pieces (cut anywhere, not at event boundaries), with a rotation, while replicas read."""

    def __init__(self, directory: Path, files: dict[str, bytes], *, seed: int = 3) -> None:
        self.directory = directory
        self.files = files
        self.rng = random.Random(seed)
        names = list(files)
        # Everything but the last two files; the second-last half written.
        self.pending = names[-2:]
        for name in names[:-2]:
            (directory / name).write_bytes(files[name])
        growing = names[-2]
        self.written = len(files[growing]) // 2
        (directory / growing).write_bytes(files[growing][: self.written])
        self._index(names[:-1])

    def _index(self, names: list[str]) -> None:
        text = "".join(f"./{name}\n" for name in names)
        path = self.directory / "mysql-bin.index"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(text)
        temporary.replace(path)

    def append_rest(self, *, pause: float = 0.005) -> None:
        growing, last = self.pending
        self._grow(growing, self.written, pause)
        # A new file enters the index once its header events are on disk, as a primary does.
        data = self.files[last]
        start = 1024
        (self.directory / last).write_bytes(data[:start])
        self._index(list(self.files))
        self._grow(last, start, pause)

    def _grow(self, name: str, written: int, pause: float) -> None:
        data = self.files[name]
        with open(self.directory / name, "ab") as handle:
            while written < len(data):
                piece = self.rng.randint(1, 256 << 10)
                handle.write(data[written : written + piece])
                handle.flush()
                written += piece
                time.sleep(pause)


def raw_replica(
    port: int, server_id: int, last_name: str, end: int, started: list[float]
) -> tuple[dict[str, str], int]:
    """A blocking replica (the project's packet reader) reading until the final event;
    (per-file digests, bytes received). ``started`` gets the time it asked for the binlog."""
    wire = start_dump(port, server_id=server_id)
    started.append(time.monotonic())
    reader = PacketReader(expected_seq=1)
    seen = DumpedFiles()
    received = 0
    try:
        while not (seen.file_name == last_name and seen.position == end):
            payload = reader.next_payload()
            if payload is None:
                data = wire.sock.recv(1 << 18)
                assert data, "the server closed the connection"
                received += len(data)
                reader.feed(data)
                continue
            assert payload[0] == OK, payload[:200]
            seen.event(memoryview(payload)[1:])
    finally:
        wire.close()
    return seen.hexdigests(), received


def pmr_replica(port: int, server_id: int, last_name: str, end: int) -> list[tuple[Any, ...]]:
    """python-mysql-replication, blocking, until the final event: (file, log_pos, query or
    xid) of every QUERY and XID event."""
    from pymysqlreplication import BinLogStreamReader  # type: ignore[import-untyped]
    from pymysqlreplication.event import (  # type: ignore[import-untyped]
        QueryEvent as PmrQuery,
    )
    from pymysqlreplication.event import XidEvent as PmrXid

    stream = BinLogStreamReader(
        connection_settings={
            "host": HOST,
            "port": port,
            "user": USER,
            "password": PASSWORD,
            "read_timeout": 60,
        },
        server_id=server_id,
        blocking=True,
        is_mariadb=True,
        only_events=[PmrQuery, PmrXid],
    )
    out: list[tuple[Any, ...]] = []
    try:
        for event in stream:
            position = event.packet.log_pos
            value = event.query if isinstance(event, PmrQuery) else event.xid
            out.append((stream.log_file, position, value))
            if stream.log_file == last_name and position == end:
                break
    finally:
        stream.close()
    return out


def expected_pmr_view(directory: Path, names: list[str]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for name in names:
        for _, event in read_binlog(directory / name):
            if isinstance(event, QueryEvent):
                out.append((name, event.log_pos, event.query.decode()))
            elif isinstance(event, XidEvent):
                out.append((name, event.log_pos, event.xid))
    return out


def test_fifty_replicas_dump_one_growing_binlog(tmp_path: Path) -> None:
    store = many_events_store(SERVED_BYTES, seed=11, max_event=256 << 10)
    files = store_files(store)
    names = list(files)
    last_name, end = names[-1], len(files[names[-1]])
    binlogs = tmp_path / "binlogs"
    binlogs.mkdir()
    live = LiveFiles(binlogs, files)
    server = ServeProcess(binlogs, tmp_path / "serve.stderr", USER, PASSWORD)
    stderr = ""
    try:
        idle_rss = server.rss()
        stalled = [start_dump(server.port, server_id=900 + i) for i in range(STALLED)]
        raw_results: list[tuple[dict[str, str], int]] = []
        pmr_results: list[list[tuple[Any, ...]]] = []
        failures: list[BaseException] = []
        dumps_started: list[float] = []
        started = threading.Barrier(REPLICAS + 1, timeout=60)

        def run(work: Callable[[], Any], into: list[Any]) -> None:
            try:
                started.wait()
                into.append(work())
            except BaseException as error:
                failures.append(error)

        threads = [
            threading.Thread(
                target=run,
                args=(
                    lambda i=i: raw_replica(server.port, 100 + i, last_name, end, dumps_started),
                    raw_results,
                ),
                daemon=True,
            )
            for i in range(REPLICAS - PMR_READERS)
        ] + [
            threading.Thread(
                target=run,
                args=(lambda i=i: pmr_replica(server.port, 500 + i, last_name, end), pmr_results),
                daemon=True,
            )
            for i in range(PMR_READERS)
        ]
        for thread in threads:
            thread.start()
        started.wait()
        # The binlog grows and rotates while every raw replica is dumping.
        wait_for(lambda: len(dumps_started) == REPLICAS - PMR_READERS, timeout=60)
        live.append_rest()
        deadline = time.monotonic() + 150
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        assert not any(thread.is_alive() for thread in threads), "replicas still reading"
        assert failures == []
        # Every replica got exactly the served files.
        expected = file_digests(files)
        assert len(raw_results) == REPLICAS - PMR_READERS
        for digests, _ in raw_results:
            assert digests == expected
        expected_view = expected_pmr_view(binlogs, names)
        assert len(pmr_results) == PMR_READERS
        for view in pmr_results:
            assert view == expected_view
        served = sum(received for _, received in raw_results)
        assert served >= (REPLICAS - PMR_READERS) * sum(len(data) for data in files.values())
        # The server's memory did not follow the bytes it served (about 1.4 GB here) nor the
        # stalled replicas' backlog.
        assert server.peak_rss < RSS_BOUND, (idle_rss, server.peak_rss)
        for wire in stalled:
            wire.close()
    finally:
        stderr = server.stop()
    assert "internal error" not in stderr, stderr
    assert server.proc.returncode == 0, stderr
