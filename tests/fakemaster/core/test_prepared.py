"""Prepared statements through the sans-IO session: what the differential against a real
server (tests/integration/test_prepared_statements_differential.py) cannot show cheaply, each
fact as the real server showed it there or in its source: ids counted across connections,
KILL through COM_STMT_EXECUTE, COM_STMT_CLOSE unanswered, a cursor fetched in pieces,
statements closed by COM_RESET_CONNECTION and COM_CHANGE_USER."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import parse_err
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import Close, KillConnection, ServerSession
from fakemaster.protocol.handshake import native_password_response
from fakemaster.sql.state import ServerState
from tests.budget import examples
from tests.support.wire import SessionDriver

PING_OK = bytes.fromhex("00000002000000")


def _driver(state: ServerState) -> SessionDriver:
    driver = SessionDriver(ServerSession(state))
    assert driver.login().payloads == [PING_OK]
    return driver


def _state() -> ServerState:
    accounts = (Account.admin("repl", "secret"), Account.admin("other", "pw"))
    return ServerState(ServerConfig(user="repl", password="secret", accounts=accounts))


def _prepare(driver: SessionDriver, sql: str) -> int:
    first = driver.send(b"\x16" + sql.encode()).payloads[0]
    assert first[:1] == b"\x00", first
    return int(struct.unpack_from("<I", first, 1)[0])


def _execute(
    driver: SessionDriver, statement: int, tail: bytes = b"", flags: int = 0
) -> list[bytes]:
    return driver.send(b"\x17" + struct.pack("<IBI", statement, flags, 1) + tail).payloads


def test_statement_ids_count_across_the_servers_connections() -> None:
    state = _state()
    one, two = _driver(state), _driver(state)
    assert _prepare(one, "SELECT 1") == 1
    assert _prepare(two, "SELECT 1") == 2
    assert parse_err(one.send(b"\x16SELEC").payloads[0]).errno == 1064  # a failure takes 3
    assert _prepare(one, "SELECT 1") == 4
    # Each connection sees only its own.
    assert parse_err(_execute(one, 2)[0]).errno == 1243


def test_kill_through_a_prepared_statement_is_carried_out() -> None:
    state = _state()
    killer, victim = _driver(state), _driver(state)
    statement = _prepare(killer, "KILL ?")
    tail = b"\x00\x01\x08\x00" + struct.pack("<q", victim.session.thread_id)
    reply = killer.send(b"\x17" + struct.pack("<IBI", statement, 0, 1) + tail)
    assert reply.of_type(KillConnection) == [KillConnection(victim.session.thread_id, False)]
    own = _prepare(killer, "KILL ?")
    tail = b"\x00\x01\x08\x00" + struct.pack("<q", killer.session.thread_id)
    assert killer.send(b"\x17" + struct.pack("<IBI", own, 0, 1) + tail).of_type(Close)


def test_close_and_long_data_have_no_answer() -> None:
    driver = _driver(_state())
    statement = _prepare(driver, "SELECT ?")
    assert driver.send(b"\x18" + struct.pack("<IH", statement, 0) + b"x").payloads == []
    assert driver.send(b"\x19" + struct.pack("<I", statement)).payloads == []
    assert parse_err(_execute(driver, statement)[0]).errno == 1243


def test_a_cursor_is_fetched_in_pieces() -> None:
    driver = _driver(_state())
    statement = _prepare(driver, "SHOW VARIABLES LIKE 'version%'")
    opened = _execute(driver, statement, flags=1)
    assert struct.unpack_from("<H", opened[-1], 3)[0] & 0x40  # CURSOR_EXISTS, no rows yet
    first = driver.send(b"\x1c" + struct.pack("<II", statement, 1)).payloads
    assert len(first) == 2 and struct.unpack_from("<H", first[-1], 3)[0] & 0x40
    rest = driver.send(b"\x1c" + struct.pack("<II", statement, 100)).payloads
    assert struct.unpack_from("<H", rest[-1], 3)[0] & 0x80  # LAST_ROW_SENT
    assert (
        parse_err(driver.send(b"\x1c" + struct.pack("<II", statement, 1)).payloads[0]).errno == 1421
    )


def test_reset_connection_and_change_user_close_the_statements() -> None:
    driver = _driver(_state())
    statement = _prepare(driver, "SELECT 1")
    assert driver.send(b"\x1f").payloads == [PING_OK]
    assert parse_err(_execute(driver, statement)[0]).errno == 1243
    statement = _prepare(driver, "SELECT 1")
    switch = driver.send(b"\x11other\0\0\0\x2d\x00mysql_native_password\0").packets
    assert switch[0][0] == 1 and switch[0][1][:1] == b"\xfe"
    scramble = switch[0][1][len(b"\xfemysql_native_password\0") : -1]
    ok = driver.send(native_password_response("pw", scramble), 2).packets
    assert ok == [(3, PING_OK)]
    assert driver.session.sql is not None and driver.session.sql.user == "other"
    assert parse_err(_execute(driver, statement)[0]).errno == 1243


@settings(max_examples=examples(1), deadline=None)
@given(
    commands=st.lists(
        st.tuples(st.sampled_from([0x16, 0x17, 0x18, 0x19, 0x1A, 0x1C]), st.binary(max_size=40)),
        max_size=8,
    )
)
def test_garbage_prepared_statement_commands_never_raise(commands: list[tuple[int, bytes]]) -> None:
    driver = _driver(_state())
    statement = _prepare(driver, "SELECT ?, ? LIMIT 1")
    del statement  # the garbage may name it (id 1) or not
    for command, body in commands:
        if body[:1] == b"\x00" and command != 0x16:
            body = b"\x01\x00\x00\x00" + body[4:]  # aim some at the prepared statement
        reply = driver.send(bytes((command,)) + body)
        if command in (0x18, 0x19):
            assert reply.payloads == []  # never answered
        else:
            assert reply.payloads
    assert driver.session.internal_errors == []
    assert driver.send(b"\x0e").payloads == [PING_OK]


def test_status_counters_of_a_prepare_execute_and_close() -> None:
    """10.11.19 for prepare, execute (one parameter) and close of ``SELECT 1, ?``: one each in
    Com_stmt_prepare, Com_stmt_execute, Com_stmt_close and Com_select, one Question (the
    execute); the prepare runs its statement for the columns but counts in nothing else."""
    state = _state()
    driver = _driver(state)
    statement = _prepare(driver, "SELECT 1, ?")
    _execute(driver, statement, b"\x00\x01\x08\x00" + struct.pack("<q", 5))
    driver.send(b"\x19" + struct.pack("<I", statement))
    assert dict(state.counts) == {
        "Com_stmt_prepare": 1,
        "Com_stmt_execute": 1,
        "Com_stmt_close": 1,
        "Com_select": 1,
        "Questions": 1,
        "Queries": 1,
    }
