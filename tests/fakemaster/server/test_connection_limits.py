"""One client can never freeze the server: the login packet limit, the total connect timeout and
max_connections.

Expected bytes come from a MariaDB 10.11 started by the test harness (max_connections=10, the
smallest it takes; max_allowed_packet=1M for the oversized handshake response).
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator

import pytest

from decoder.packets import parse_err
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import Close, ServerSession
from fakemaster.protocol.handshake import HandshakeResponse
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.sql.state import ServerState
from tests.support.wire import BASE_CAPABILITIES, RawClient, SessionDriver

# What MariaDB sends a connection beyond max_connections+1, before any greeting.
TOO_MANY_BEFORE_GREETING = b"\x17\x00\x00\x00\xff\x10\x04Too many connections"
# What it sends a non-SUPER login beyond max_connections (its handshake response was seq 1).
TOO_MANY_AT_LOGIN = b"\x1d\x00\x00\x02\xff\x10\x04#08004Too many connections"

ACCOUNTS = (Account.admin("root", ""), Account.replication("repl", "secret"))
# Bounds a hang only: a healthy run never comes near it.
HANG_BOUND = 60.0


def _config(**settings: object) -> ServerConfig:
    return ServerConfig(accounts=ACCOUNTS, **settings)  # type: ignore[arg-type]


def _header(size: int, seq: int) -> bytes:
    return size.to_bytes(3, "little") + bytes([seq])


# --- the login packet limit (sans-IO) ------------------------------------------------------


def test_an_oversized_handshake_response_is_refused_from_its_header() -> None:
    driver = SessionDriver(ServerSession(ServerState(_config(max_login_packet=1024))))
    # Only the header: the session refuses before a byte of the body is kept.
    reply = driver.send_raw(_header(1025, 1))
    assert reply.packets[0][0] == 2  # as MariaDB: the number after the refused header's
    error = parse_err(reply.payloads[0])
    assert (error.errno, error.sqlstate) == (1153, "08S01")
    assert error.message == "Got a packet bigger than 'max_allowed_packet' bytes"
    assert reply.of_type(Close)
    assert driver.session.closed


def _response_of_size(size: int) -> bytes:
    """A handshake response of exactly ``size`` bytes (an unknown user of a long name)."""
    base = HandshakeResponse(capabilities=BASE_CAPABILITIES, user=b"", auth_response=b"")
    padding = size - len(base.encode())
    return HandshakeResponse(
        capabilities=BASE_CAPABILITIES, user=b"u" * padding, auth_response=b""
    ).encode()


def test_a_handshake_response_at_the_limit_is_read() -> None:
    driver = SessionDriver(ServerSession(ServerState(_config(max_login_packet=1024))))
    payload = _response_of_size(1024)
    assert len(payload) == 1024
    reply = driver.send(payload, 1)
    # Read and answered: no plugin named, so the switch to mysql_native_password.
    assert reply.payloads[0][:1] == b"\xfe"
    assert not driver.session.closed


def test_the_login_limit_is_also_enforced_before_tls_starts() -> None:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    session = ServerSession(ServerState(_config(max_login_packet=1024, ssl_context=tls)))
    driver = SessionDriver(session)
    reply = driver.send_raw(_header(1 << 23, 1))
    assert parse_err(reply.payloads[0]).errno == 1153
    assert reply.of_type(Close)


def test_after_the_login_max_allowed_packet_bounds_packets() -> None:
    driver = SessionDriver(ServerSession(ServerState(_config(max_login_packet=1024))))
    driver.login("root", "")
    reply = driver.query("SELECT '" + "x" * 4000 + "'")
    assert reply.payloads[0][:1] != b"\xff"
    assert not reply.of_type(Close)


def test_after_the_login_an_oversized_command_gets_1153_numbered_after_it() -> None:
    driver = SessionDriver(ServerSession(ServerState(_config(max_allowed_packet=1024))))
    driver.login("root", "")
    reply = driver.send_raw(_header(1025, 0))
    # MariaDB: "<\0\0\1\xff\x81\x04#08S01Got a packet bigger than..." for a command of seq 0.
    assert reply.packets[0][0] == 1
    assert parse_err(reply.payloads[0]).errno == 1153
    assert reply.of_type(Close)


def test_the_login_limit_never_exceeds_max_allowed_packet() -> None:
    config = _config(max_login_packet=1 << 20, max_allowed_packet=2048)
    driver = SessionDriver(ServerSession(ServerState(config)))
    reply = driver.send_raw(_header(2049, 1))
    assert parse_err(reply.payloads[0]).errno == 1153


# --- max_connections (sans-IO) -------------------------------------------------------------


def test_beyond_max_connections_plus_one_the_err_replaces_the_greeting() -> None:
    state = ServerState(_config(variables={"max_connections": 1}))
    first, second = ServerSession(state), ServerSession(state)
    assert first.initial_bytes()[4] == 10 and second.initial_bytes()[4] == 10  # greetings
    third = ServerSession(state)
    assert third.initial_bytes() == TOO_MANY_BEFORE_GREETING
    assert third.closed
    assert third.thread_id not in state.connections  # a refused connection does not count
    first.connection_lost()
    assert ServerSession(state).initial_bytes()[4] == 10


def test_the_extra_connection_is_for_super_only() -> None:
    state = ServerState(_config(variables={"max_connections": 1}))
    SessionDriver(ServerSession(state)).login("root", "")
    replica = SessionDriver(ServerSession(state))
    reply = replica.login("repl", "secret")
    assert reply.data == TOO_MANY_AT_LOGIN
    assert reply.of_type(Close)
    admin = SessionDriver(ServerSession(state))
    assert admin.login("root", "").payloads[0][:1] == b"\x00"


# --- through the server --------------------------------------------------------------------


@pytest.fixture
def limited_master() -> Iterator[BackgroundFakeMaster]:
    config = _config(handshake_timeout=0.5, variables={"max_connections": 1})
    with BackgroundFakeMaster(config) as master:
        yield master


def _read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    sock.settimeout(HANG_BOUND)
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not data:
            return received
        received += data


def test_a_trickling_client_is_cut_off_by_the_total_connect_timeout(
    limited_master: BackgroundFakeMaster,
) -> None:
    """Each byte comes well within the timeout, so only a bound on the whole login ends it."""
    sock = socket.create_connection((limited_master.host, limited_master.port), HANG_BOUND)
    sock.recv(65536)  # the greeting
    gone = threading.Event()
    # A handshake response that would take HANG_BOUND seconds at one byte per 0.1 s.
    trickle = _header(1000, 1) + b"\x00" * 1000

    def trickler() -> None:
        for byte in trickle[: int(HANG_BOUND / 0.1)]:
            if gone.wait(0.1):
                return
            try:
                sock.send(bytes([byte]))
            except OSError:
                return

    thread = threading.Thread(target=trickler, daemon=True)
    thread.start()
    try:
        # The server hangs up without an answer, as MariaDB after connect_timeout.
        assert _read_until_closed(sock) == b""
    finally:
        gone.set()
        thread.join(HANG_BOUND)
        sock.close()
    assert limited_master.call(lambda: limited_master._running.connection_count) == 0


def test_the_connection_beyond_the_limit_gets_err_1040_and_a_close(
    limited_master: BackgroundFakeMaster,
) -> None:
    address = (limited_master.host, limited_master.port)
    with RawClient(*address, "repl", "secret") as replica, RawClient(*address, "root", "") as root:
        assert replica.login_reply[:1] == b"\x00" and root.login_reply[:1] == b"\x00"
        with socket.create_connection(address, HANG_BOUND) as third:
            assert _read_until_closed(third) == TOO_MANY_BEFORE_GREETING
        # The others go on.
        assert root.query("SELECT 1")[-1][:1] in (b"\x00", b"\xfe")


def test_other_clients_are_served_while_one_trickles() -> None:
    config = _config(handshake_timeout=HANG_BOUND)
    with BackgroundFakeMaster(config) as master:
        address = (master.host, master.port)
        with socket.create_connection(address, HANG_BOUND) as trickler:
            trickler.recv(65536)  # the greeting
            trickler.sendall(_header(1000, 1) + b"\x00" * 10)  # and then nothing more
            with RawClient(*address, "root", "") as probe:
                assert probe.login_reply[:1] == b"\x00"
                assert probe.query("SELECT 1")[-1][:1] in (b"\x00", b"\xfe")
                # The trickler still waits for its login: two connections open.
                assert master.call(lambda: master._running.connection_count) == 2
