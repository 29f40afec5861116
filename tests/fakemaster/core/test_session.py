"""ServerSession with raw bytes: the connection phase, commands, replication requests, and
malformed input. Expected packets are what a real MariaDB 10.11.19 answered to the same bytes
(captured with a raw socket; noted per test)."""

from __future__ import annotations

import re
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import parse_err, parse_ok
from encoder.packets import frame
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import (
    Ack,
    Close,
    KillConnection,
    SendBytes,
    ServerSession,
    StartDump,
    StartTls,
    State,
)
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    SERVER_CAPABILITIES,
    AuthSwitchRequest,
    Capability,
    HandshakeResponse,
    native_password_response,
)
from fakemaster.protocol.resultset import ClientProtocol, read_result_set
from fakemaster.sql.state import ServerState
from fakemaster.vocabulary.commands import (
    GTID_DUMP_THROUGH_GTID,
    BinlogDump,
    BinlogDumpGtid,
    RegisterSlave,
)
from fakemaster.vocabulary.constants import Command
from tests.budget import examples
from tests.support.wire import BASE_CAPABILITIES, SessionDriver

OK_AFTER_LOGIN = bytes.fromhex("00000002000000")


def new_driver(**config: object) -> SessionDriver:
    # The captures came from an account with all privileges (1049, not 1044, for 'nodb').
    settings_ = {
        "user": "repl",
        "password": "secret",
        "accounts": (Account.admin("repl", "secret"),),
        **config,
    }
    return SessionDriver(ServerSession(ServerState(ServerConfig(**settings_))))  # type: ignore[arg-type]


def logged_in(**config: object) -> SessionDriver:
    driver = new_driver(**config)
    assert driver.login().payloads == [OK_AFTER_LOGIN]
    return driver


def response(driver: SessionDriver, **fields: object) -> bytes:
    values: dict[str, object] = {
        "capabilities": BASE_CAPABILITIES,
        "user": b"repl",
        "auth_response": native_password_response("secret", driver.greeting.scramble),
        "auth_plugin": NATIVE_PASSWORD,
        "charset": 45,
    }
    values.update(fields)
    return HandshakeResponse(**values).encode()  # type: ignore[arg-type]


# --- connection phase -----------------------------------------------------------------------


def test_login_ok_is_sequence_2() -> None:
    driver = new_driver()
    reply = driver.login()
    assert reply.packets == [(2, OK_AFTER_LOGIN)]
    assert driver.session.state is State.COMMAND


@pytest.mark.parametrize(
    ("user", "password", "expected"),
    [
        ("repl", "bad", "Access denied for user 'repl'@'127.0.0.1' (using password: YES)"),
        ("nobody", "bad", "Access denied for user 'nobody'@'127.0.0.1' (using password: YES)"),
        ("repl", "", "Access denied for user 'repl'@'127.0.0.1' (using password: NO)"),
    ],
)
def test_access_denied_like_mariadb(user: str, password: str, expected: str) -> None:
    driver = new_driver()
    reply = driver.login(user, password)
    [(seq, payload)] = reply.packets
    assert seq == 2
    assert payload == b"\xff\x15\x04#28000" + expected.encode()
    assert reply.of_type(Close)
    assert driver.session.state is State.CLOSED


def test_account_without_password_and_extra_users() -> None:
    driver = new_driver(user="root", password="", extra_users={"repl": "secret"})
    assert driver.login("root", "").payloads == [OK_AFTER_LOGIN]
    other = SessionDriver(ServerSession(driver.session.server))
    assert other.login("repl", "secret").payloads == [OK_AFTER_LOGIN]


@pytest.mark.parametrize("plugin", ["client_ed25519", "caching_sha2_password", "sha256_password"])
def test_other_plugins_are_switched_to_native_password(plugin: str) -> None:
    driver = new_driver()
    first_scramble = driver.greeting.scramble
    reply = driver.send(response(driver, auth_plugin=plugin, auth_response=b"x" * 32), 1)
    [(seq, payload)] = reply.packets
    assert seq == 2
    switch = AuthSwitchRequest.decode(payload)
    assert switch.plugin == NATIVE_PASSWORD
    assert len(switch.data) == 20 and switch.data != first_scramble  # a fresh one, as MariaDB
    reply = driver.send(native_password_response("secret", switch.data), 3)
    assert reply.packets == [(4, OK_AFTER_LOGIN)]
    assert driver.session.state is State.COMMAND


def test_switch_answered_with_the_old_scramble_is_denied() -> None:
    driver = new_driver()
    driver.send(response(driver, auth_plugin="client_ed25519"), 1)
    reply = driver.send(native_password_response("secret", driver.greeting.scramble), 3)
    [(seq, payload)] = reply.packets
    assert seq == 4 and parse_err(payload).errno == 1045


def test_client_without_plugin_auth_uses_native_password() -> None:
    driver = new_driver()
    caps = BASE_CAPABILITIES & ~Capability.PLUGIN_AUTH
    assert driver.send(response(driver, capabilities=caps, auth_plugin=None), 1).payloads == [
        OK_AFTER_LOGIN
    ]


def test_pre_secure_connection_client_cannot_switch() -> None:
    driver = new_driver()
    caps = BASE_CAPABILITIES & ~(
        Capability.PLUGIN_AUTH
        | Capability.SECURE_CONNECTION
        | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
    )
    reply = driver.send(
        response(driver, capabilities=caps, auth_plugin=None, auth_response=b"old"), 1
    )
    assert parse_err(reply.payloads[0]).errno == 1251
    assert reply.of_type(Close)


def test_connect_with_database() -> None:
    driver = new_driver()
    reply = driver.login(database="information_schema")
    assert reply.payloads == [OK_AFTER_LOGIN]
    assert driver.session.sql is not None and driver.session.sql.database == "information_schema"
    # With session tracking the schema change is reported (captured from 10.11.19).
    tracked = new_driver()
    reply = tracked.login(
        database="information_schema", capabilities=BASE_CAPABILITIES | Capability.SESSION_TRACK
    )
    assert reply.payloads == [
        bytes.fromhex("000000024000000015011312696e666f726d6174696f6e5f736368656d61")
    ]


def test_connect_with_unknown_database() -> None:
    driver = new_driver()
    reply = driver.login(database="nodb")
    assert reply.packets == [(2, b"\xff\x19\x04#42000Unknown database 'nodb'")]
    assert reply.of_type(Close)


BAD_HANDSHAKE = b"\xff\x13\x04#08S01Bad handshake"


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x01",
        struct.pack("<IIB", BASE_CAPABILITIES, 1 << 24, 45) + bytes(23),  # no user at all
        struct.pack("<IIB", BASE_CAPABILITIES, 1 << 24, 45) + bytes(23) + b"repl",  # no NUL
        struct.pack("<IIB", BASE_CAPABILITIES, 1 << 24, 45) + bytes(23) + b"repl\0",  # no auth
        struct.pack("<IIB", BASE_CAPABILITIES | Capability.SSL, 1 << 24, 45) + bytes(23),  # TLS
    ],
)
def test_bad_handshake(payload: bytes) -> None:
    driver = new_driver()
    reply = driver.send(payload, 1)
    assert reply.packets == [(2, BAD_HANDSHAKE)]
    assert reply.of_type(Close)


def test_bad_handshake_of_a_pre_41_client_has_no_sqlstate() -> None:
    driver = new_driver()
    reply = driver.send(struct.pack("<HI", 0x8005, 1 << 24)[:5] + b"repl\0xx", 1)
    assert reply.packets == [(2, b"\xff\x13\x04Bad handshake")]


def test_handshake_response_out_of_order() -> None:
    driver = new_driver()
    reply = driver.send(response(driver), 5)
    assert reply.packets == [(1, b"\xff\x84\x04#08S01Got packets out of order")]
    assert reply.of_type(Close)


def tls_driver() -> SessionDriver:
    import ssl

    return new_driver(ssl_context=ssl.create_default_context(ssl.Purpose.CLIENT_AUTH))


def ssl_request() -> bytes:
    return HandshakeResponse(
        capabilities=BASE_CAPABILITIES | Capability.SSL, ssl_request=True
    ).encode()


def test_tls_is_advertised_only_with_a_context() -> None:
    assert not new_driver().greeting.capabilities & Capability.SSL
    driver = tls_driver()
    assert driver.greeting.capabilities == SERVER_CAPABILITIES | Capability.SSL


def test_ssl_request_then_login_over_tls() -> None:
    # The client's TLS ClientHello may arrive with the SSL request: whatever follows the
    # request is handed to the TLS layer (after StartTls the shell feeds TLS itself).
    request = frame(ssl_request(), 1)[0]
    data = request + b"\x16\x03\x01client hello"
    for split in range(1, len(data) + 1):
        driver = tls_driver()
        first = driver.send_raw(data[:split])
        if first.actions:
            [action] = first.actions
            assert isinstance(action, StartTls)
            to_tls = action.early_data + data[split:]
        else:
            [action] = driver.send_raw(data[split:]).actions
            assert isinstance(action, StartTls)
            to_tls = action.early_data
        assert to_tls == data[len(request) :]
    reply = driver.send(response(driver, capabilities=BASE_CAPABILITIES | Capability.SSL), 2)
    assert reply.packets == [(3, OK_AFTER_LOGIN)]


def test_auth_switch_over_tls_counts_from_the_ssl_request() -> None:
    driver = tls_driver()
    driver.send(ssl_request(), 1)
    reply = driver.send(response(driver, auth_plugin="client_ed25519"), 2)
    [(seq, payload)] = reply.packets
    assert seq == 3
    switch = AuthSwitchRequest.decode(payload)
    assert driver.send(native_password_response("secret", switch.data), 4).packets == [
        (5, OK_AFTER_LOGIN)
    ]


def test_second_ssl_request_is_a_bad_handshake() -> None:
    driver = tls_driver()
    driver.send(ssl_request(), 1)
    reply = driver.send(ssl_request(), 2)
    assert reply.packets == [(3, BAD_HANDSHAKE)]


def test_attributes_running_past_the_packet_are_a_bad_handshake() -> None:
    driver = new_driver()
    caps = BASE_CAPABILITIES | Capability.CONNECT_ATTRS
    good = response(driver, capabilities=caps, attributes=((b"k", b"v"),))
    assert driver.send(good[:-1], 1).packets == [(2, BAD_HANDSHAKE)]


# --- command phase --------------------------------------------------------------------------


def test_ping_and_sequence_numbers() -> None:
    driver = logged_in()
    assert driver.send(b"\x0e").packets == [(1, OK_AFTER_LOGIN)]
    assert driver.send(b"\x0eignored").packets == [(1, OK_AFTER_LOGIN)]


def test_command_out_of_order() -> None:
    driver = logged_in()
    reply = driver.send(b"\x03SELECT 1", 5)
    assert reply.packets == [(0, b"\xff\x84\x04#08S01Got packets out of order")]
    assert reply.of_type(Close)


@pytest.mark.parametrize("command", [0x00, 0x99, 0x1E, 0x1D, 0xFF])
def test_unknown_commands(command: int) -> None:
    driver = logged_in()
    reply = driver.send(bytes((command,)) + b"\0\0\0")
    assert reply.packets == [(1, b"\xff\x17\x04#08S01Unknown command")]
    assert driver.send(b"\x0e").payloads == [OK_AFTER_LOGIN]  # the connection goes on


def test_empty_command_packet() -> None:
    driver = logged_in()
    assert parse_err(driver.send(b"").payloads[0]).errno == 1047


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"information_schema", OK_AFTER_LOGIN),
        (b"nodb", b"\xff\x19\x04#42000Unknown database 'nodb'"),
        (b"", b"\xff\x16\x04#3D000No database selected"),
    ],
)
def test_init_db(body: bytes, expected: bytes) -> None:
    driver = logged_in()
    assert driver.send(b"\x02" + body).payloads == [expected]


def test_field_list_and_set_option_and_statistics() -> None:
    now = [1_700_000_000.0]  # the server's clock, moved by the test
    server = ServerState(ServerConfig(user="repl", password="secret"), clock=lambda: now[0])
    driver = SessionDriver(ServerSession(server))
    assert driver.login().payloads == [OK_AFTER_LOGIN]
    # No database: 1046 before the empty name is looked at (MariaDB 10.11.19, differential).
    assert driver.send(b"\x04").payloads == [b"\xff\x16\x04#3D000No database selected"]
    assert driver.send(b"\x02information_schema").payloads[0][:1] == b"\x00"
    assert driver.send(b"\x04").payloads == [b"\xff\x4f\x04#42000Incorrect table name ''"]
    assert driver.send(b"\x1b\x00\x00").payloads == [b"\xfe\x00\x00\x02\x00"]
    multi = driver.query("SELECT 1; SELECT 2").payloads
    assert len(multi) == 10 and multi[0] == b"\x01"
    now[0] += 42.75
    stats = driver.send(b"\x09").payloads[0]
    # The shape of a MariaDB 10.11 COM_STATISTICS answer; the uptime in whole seconds.
    assert re.fullmatch(
        rb"Uptime: 42  Threads: \d+  Questions: \d+  Slow queries: \d+  Opens: \d+  "
        rb"Open tables: \d+  Queries per second avg: \d+\.\d{3}",
        stats,
    ), stats


def test_quit_closes_without_reply() -> None:
    driver = logged_in()
    reply = driver.send(b"\x01")
    assert reply.data == b""
    assert reply.of_type(Close)
    assert driver.session.state is State.CLOSED
    assert driver.send(b"\x0e").actions == []


def test_packet_larger_than_max_allowed_packet() -> None:
    driver = logged_in(max_allowed_packet=1024)
    reply = driver.send(b"\x03" + b"x" * 2000)
    assert parse_err(reply.payloads[0]).errno == 1153
    assert reply.of_type(Close)


def test_bytes_arriving_one_at_a_time() -> None:
    driver = new_driver()
    data = frame(response(driver), 1)[0] + frame(b"\x03SELECT @@server_id", 0)[0]
    actions = []
    for index in range(len(data)):
        actions.extend(driver.session.receive_data(data[index : index + 1]))
    payloads = [p for a in actions if isinstance(a, SendBytes) for p in _payloads(a.data)]
    assert payloads[0] == OK_AFTER_LOGIN
    result = read_result_set(iter(payloads[1:]), ClientProtocol(BASE_CAPABILITIES))
    assert result.rows == ((b"1",),)


def _payloads(data: bytes) -> list[bytes]:
    from tests.support.wire import packets

    return [payload for _, payload in packets(data)]


def test_session_state_tracking_and_autocommit_status() -> None:
    driver = new_driver()
    driver.login(capabilities=BASE_CAPABILITIES | Capability.SESSION_TRACK)
    # Captured from 10.11.19: SET autocommit=0 with CLIENT_SESSION_TRACK.
    assert driver.query("SET autocommit=0").payloads == [
        bytes.fromhex("000000004000000011000f0a6175746f636f6d6d6974034f4646")
    ]
    ok = parse_ok(driver.query("SET @a=1").payloads[0])
    assert ok.status_flags == 0  # autocommit off, nothing tracked


def test_deprecate_eof_result_set() -> None:
    driver = new_driver()
    driver.login(capabilities=BASE_CAPABILITIES | Capability.DEPRECATE_EOF)
    # Captured from 10.11.19.
    assert driver.query("SELECT 1").payloads == [
        b"\x01",
        bytes.fromhex("036465660000000131000c3f0001000000038100000000"),
        b"\x011",
        bytes.fromhex("fe000002000000"),
    ]


def test_mariadb_client_gets_extended_metadata_and_cache_flag() -> None:
    driver = new_driver(version="10.11.19-MariaDB-0+deb12u1-log")
    driver.login(
        capabilities=(BASE_CAPABILITIES & ~Capability.MYSQL) | Capability.SESSION_TRACK,
        charset=33,
        mariadb_capabilities=0x1D,
    )
    # What the mariadb CLI received from 10.11.19 for SELECT VERSION().
    assert driver.query("SELECT VERSION()").payloads == [
        bytes.fromhex("0101"),
        bytes.fromhex("036465660000000956455253494f4e282900000c21005a000000fd0100270000"),
        bytes.fromhex("fe00000200"),
        bytes.fromhex("1e31302e31312e31392d4d6172696144422d302b646562313275312d6c6f67"),
        bytes.fromhex("fe00000200"),
    ]


# --- replication commands -------------------------------------------------------------------


def register_payload(**fields: object) -> bytes:
    values: dict[str, object] = {
        "server_id": 77,
        "host": b"replhost",
        "user": b"ruser",
        "password": b"rpass",
        "port": 3307,
        "rank": 0,
        "master_id": 0,
    }
    values.update(fields)
    return RegisterSlave(**values).encode()  # type: ignore[arg-type]


def show_slave_hosts(driver: SessionDriver) -> list[tuple[bytes | None, ...]]:
    payloads = driver.query("SHOW SLAVE HOSTS").payloads
    return list(read_result_set(iter(payloads), ClientProtocol(BASE_CAPABILITIES)).rows)


def test_register_slave_and_show_slave_hosts() -> None:
    first = logged_in()
    assert first.send(register_payload()).payloads == [OK_AFTER_LOGIN]
    second = SessionDriver(ServerSession(first.session.server))
    second.login()
    second.send(register_payload(server_id=78, host=b"", port=0, master_id=5))
    # Newest connection first; an empty host is the peer's address; master_id 0 is ours.
    assert show_slave_hosts(first) == [
        (b"78", b"127.0.0.1", b"0", b"5"),
        (b"77", b"replhost", b"3307", b"1"),
    ]
    # The replica's id becomes the session's server_id, as on MariaDB.
    rows = read_result_set(
        iter(first.query("SELECT @@server_id").payloads), ClientProtocol(BASE_CAPABILITIES)
    ).rows
    assert rows == ((b"77",),)
    second.send(b"\x01")
    assert show_slave_hosts(first) == [(b"77", b"replhost", b"3307", b"1")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (struct.pack("<I", 79) + b"\x05ab", "Failed to register slave: too long 'report-host'"),
        (b"\x01", "Failed to register slave: too long 'report-host'"),
        (
            struct.pack("<I", 79) + b"\x00\x00\x61" + b"p" * 0x61 + bytes(10),
            "Failed to register slave; too long 'report-password'",
        ),
        (
            struct.pack("<I", 79) + b"\x00\x00\x00\x01\x00",
            "Wrong parameters to function register_slave",
        ),
    ],
)
def test_malformed_register_slave(body: bytes, message: str) -> None:
    driver = logged_in()
    reply = driver.send(b"\x15" + body)
    assert reply.payloads == [b"\xff\x51\x04#HY000" + message.encode()]
    assert driver.send(b"\x0e").payloads == [OK_AFTER_LOGIN]


def start_dump(driver: SessionDriver, payload: bytes) -> StartDump:
    reply = driver.send(payload)
    assert reply.data == b""  # a dump gets no OK: the stream (or its ERR) comes from the dump
    [action] = reply.of_type(StartDump)
    assert isinstance(action, StartDump)
    assert driver.session.state is State.DUMPING
    return action


def test_binlog_dump_request_carries_the_session_settings() -> None:
    driver = logged_in()
    for statement in [
        "SET @master_heartbeat_period= 1000000000",
        "SET @master_binlog_checksum= @@global.binlog_checksum",
        "SET @mariadb_slave_capability=4",
        "SET @slave_connect_state='0-1-5'",
        "SET @slave_gtid_strict_mode=1",
        "SET @slave_gtid_ignore_duplicates=0",
        "SET @slave_until_gtid='0-1-9'",
        "SET @rpl_semi_sync_slave= 1",
        "SET skip_replication=1",
    ]:
        assert parse_ok(driver.query(statement).payloads[0])
    driver.send(register_payload(server_id=200))
    payload = BinlogDump(position=4, flags=2, server_id=200, file_name=b"mysql-bin.000001").encode()
    request = start_dump(driver, payload).request
    assert request.command == Command.BINLOG_DUMP
    assert (request.position, request.flags, request.server_id) == (4, 2, 200)
    assert request.file_name == "mysql-bin.000001"
    assert request.master_binlog_checksum == "CRC32"
    assert request.slave_capability == 4
    assert request.connect_state == "0-1-5" and request.gtid_mode
    assert request.gtid_strict_mode and not request.gtid_ignore_duplicates
    assert request.until_gtid == "0-1-9"
    assert request.heartbeat_period_ns == 1_000_000_000
    assert request.semi_sync and request.skip_replication
    assert request.replica is not None and request.replica.server_id == 200
    assert not request.non_blocking
    assert request.thread_id == driver.session.thread_id


def test_binlog_dump_defaults_without_settings() -> None:
    driver = logged_in(default_heartbeat_period_ns=5)
    request = start_dump(driver, BinlogDump(position=4, flags=1, server_id=0).encode()).request
    assert request.master_binlog_checksum is None
    assert request.connect_state is None and not request.gtid_mode
    assert request.slave_capability == 0
    assert request.heartbeat_period_ns == 5
    assert request.file_name == ""
    assert request.non_blocking


def test_python_mysql_replication_dump_quirk() -> None:
    """pmr declares 14 payload bytes but writes 15: the name is three NULs and a stray 0x00
    byte stays in the socket; the session must neither choke on it nor answer it."""
    driver = logged_in()
    body = BinlogDump(position=4, flags=1, server_id=100, file_name=b"\0\0\0").encode()
    wire = struct.pack("<I", 14)[:3] + b"\x00" + body + b"\x00"
    reply = driver.send_raw(wire)
    [action] = reply.of_type(StartDump)
    assert isinstance(action, StartDump)
    assert action.request.file_name == "" and action.request.raw_file_name == b"\0\0\0"
    assert reply.data == b""
    assert driver.send_raw(b"\x00\x00\x00").actions == []
    # Never read, as by a real primary's dump thread: its close will be a reset.
    assert driver.session.unread_input == 4


def test_semi_sync_acks_during_a_dump() -> None:
    driver = logged_in()
    driver.query("SET @rpl_semi_sync_slave= 1")
    start_dump(
        driver, BinlogDump(position=4, flags=0, server_id=9, file_name=b"mysql-bin.000001").encode()
    )
    ack = b"\xef" + struct.pack("<Q", 1234) + b"mysql-bin.000001"
    reply = driver.send(ack, 0)
    assert reply.actions == [Ack(1234, "mysql-bin.000001")]
    assert driver.send(ack, 0).actions == [Ack(1234, "mysql-bin.000001")]  # seq 0 every time
    assert driver.send(b"\xef\x01", 0).actions == []  # truncated ACK: ignored
    assert driver.send(b"\x03SELECT 1", 0).actions == []  # a dumping primary reads nothing else


def test_an_oversized_packet_during_a_dump_is_never_read() -> None:
    # A MariaDB 10.11 dump thread reads nothing from a replica that is not semi-sync: the
    # connection stays, unanswered (differential: the probe in test_malformed_commands).
    driver = logged_in(max_allowed_packet=1024)
    start_dump(driver, BinlogDump(position=4, flags=0, server_id=9).encode())
    reply = driver.send_raw(struct.pack("<I", 5000)[:3] + b"\x00" + b"x" * 100)
    assert reply.data == b""
    assert not reply.of_type(Close)
    assert driver.session.unread_input == 104


def test_mysql_binlog_dump_gtid_is_unknown_unless_enabled() -> None:
    name = b"mysql-bin.000001"
    payload = BinlogDumpGtid(
        flags=GTID_DUMP_THROUGH_GTID, server_id=300, file_name=name, gtid_set=b"\x01" * 8
    ).encode()
    driver = logged_in()
    assert driver.send(payload).payloads == [b"\xff\x17\x04#08S01Unknown command"]
    enabled = logged_in(mysql_gtid_dump=True)
    request = start_dump(enabled, payload).request
    assert request.command == Command.BINLOG_DUMP_GTID
    assert (request.flags, request.server_id, request.file_name) == (4, 300, "mysql-bin.000001")
    assert request.position == 4 and request.mysql_gtid_set == b"\x01" * 8


def test_kill_between_sessions() -> None:
    killer = logged_in()
    victim = SessionDriver(ServerSession(killer.session.server))
    victim.login()
    reply = killer.query(f"KILL {victim.session.thread_id}")
    assert reply.payloads == [OK_AFTER_LOGIN]
    assert reply.of_type(KillConnection) == [KillConnection(victim.session.thread_id, False)]
    reply = killer.send(b"\x0c" + struct.pack("<I", victim.session.thread_id))
    assert reply.of_type(KillConnection)
    assert killer.query("KILL 99999").payloads == [b"\xff\x46\x04#HY000Unknown thread id: 99999"]
    reply = killer.query(f"KILL {killer.session.thread_id}")
    assert reply.payloads == [b"\xff\x87\x07#70100Connection was killed"]
    assert reply.of_type(Close)


# --- robustness -----------------------------------------------------------------------------


chunks = st.lists(st.binary(max_size=40), max_size=12)


@settings(max_examples=examples(2), deadline=None)
@given(prefix=st.sampled_from(["none", "login", "dump"]), data=chunks)
def test_garbage_never_raises(prefix: str, data: list[bytes]) -> None:
    driver = new_driver()
    if prefix != "none":
        driver.login()
    if prefix == "dump":
        driver.send(BinlogDump(position=4, flags=0, server_id=1).encode())
    for chunk in data:
        for action in driver.session.receive_data(chunk):
            assert isinstance(action, SendBytes | Close | StartDump | KillConnection | Ack)
    assert driver.session.internal_errors == []


@settings(max_examples=examples(1.5), deadline=None)
@given(payloads=st.lists(st.binary(max_size=60), max_size=8))
def test_framed_garbage_commands_never_raise(payloads: list[bytes]) -> None:
    driver = logged_in()
    for payload in payloads:
        if driver.session.state is not State.COMMAND:
            break
        reply = driver.send(payload, 0)
        # QUIT, the dumps, COM_STMT_SEND_LONG_DATA and COM_STMT_CLOSE have no answer.
        if payload[:1] not in (b"\x01", b"\x12", b"\x1e", b"\x18", b"\x19"):
            assert reply.data  # every other command gets an answer
    assert driver.session.internal_errors == []


def test_closed_session_forgets_its_thread() -> None:
    driver = logged_in()
    server = driver.session.server
    assert driver.session.thread_id in server.connections
    driver.session.connection_lost()
    assert driver.session.thread_id not in server.connections
