"""Accounts and privilege checks, without sockets.

Expected codes and texts are what MariaDB 10.11.19 answered a replication account
(``GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl@'%'``), an account without any
privilege and an ``ALL PRIVILEGES`` one, all started by the test harness (the live comparison
is ``tests/integration/test_privileges.py``).
"""

from __future__ import annotations

import pytest

from decoder.packets import parse_err
from fakemaster.config.accounts import (
    ALL_PRIVILEGES,
    REPLICATION_PRIVILEGES,
    Account,
    Privilege,
    privilege_names,
)
from fakemaster.config.server_config import ServerConfig
from fakemaster.config.variables import SYSTEM_VARIABLES
from fakemaster.core.session import Close, ServerSession, StartDump, State
from fakemaster.protocol.resultset import SqlError
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave
from tests.support.wire import SessionDriver

DENIED = "Access denied; you need (at least one of) the {} privilege(s) for this operation"


# --- the vocabulary ---------------------------------------------------------------------------


def test_privilege_bits_are_mariadbs() -> None:
    # sql/privilege.h of 10.11: SUPER_ACL is bit 15, REPL_SLAVE_ACL 19, BINLOG_MONITOR_ACL 20,
    # SLAVE_MONITOR_ACL 38 (the last one 10.11 grants with ALL PRIVILEGES).
    assert Privilege.SUPER.value == 1 << 15
    assert Privilege.REPLICATION_SLAVE.value == 1 << 19
    assert Privilege.BINLOG_MONITOR.value == 1 << 20
    assert Privilege.SLAVE_MONITOR.value == 1 << 38
    assert ALL_PRIVILEGES.value == (1 << 39) - 1


@pytest.mark.parametrize(
    ("privileges", "text"),
    [
        # Texts of 10.11.19's ER 1227 messages.
        (Privilege.SUPER, "SUPER"),
        (Privilege.SUPER | Privilege.BINLOG_ADMIN, "SUPER, BINLOG ADMIN"),
        (Privilege.BINLOG_ADMIN | Privilege.SUPER, "SUPER, BINLOG ADMIN"),
        (Privilege.SUPER | Privilege.REPLICATION_MASTER_ADMIN, "SUPER, REPLICATION MASTER ADMIN"),
        (Privilege.SUPER | Privilege.REPLICATION_SLAVE_ADMIN, "SUPER, REPLICATION SLAVE ADMIN"),
        (Privilege.SUPER | Privilege.BINLOG_REPLAY, "SUPER, BINLOG REPLAY"),
        (Privilege.SUPER | Privilege.CONNECTION_ADMIN, "SUPER, CONNECTION ADMIN"),
        (Privilege.SUPER | Privilege.BINLOG_MONITOR, "SUPER, BINLOG MONITOR"),
        (Privilege.SUPER | Privilege.SLAVE_MONITOR, "SUPER, SLAVE MONITOR"),
        (Privilege.READ_ONLY_ADMIN, "READ_ONLY ADMIN"),
        (Privilege.REPLICATION_MASTER_ADMIN, "REPLICATION MASTER ADMIN"),
        (Privilege.REPLICATION_SLAVE, "REPLICATION SLAVE"),
        (Privilege.RELOAD, "RELOAD"),
        (Privilege.SHUTDOWN, "SHUTDOWN"),
    ],
)
def test_privilege_names_as_in_mariadbs_messages(privileges: Privilege, text: str) -> None:
    assert privilege_names(privileges) == text


def test_ready_made_accounts() -> None:
    repl = Account.replication("repl", "pw")
    assert repl.privileges == Privilege.REPLICATION_SLAVE | Privilege.BINLOG_MONITOR
    assert repl.privileges == REPLICATION_PRIVILEGES
    assert repl.host == "%"
    assert repl.may_use("information_schema") and repl.may_use("INFORMATION_SCHEMA")
    assert not repl.may_use("mysql") and not repl.may_use("nodb")
    admin = Account.admin("root")
    assert admin.privileges == ALL_PRIVILEGES and admin.may_use("mysql")
    # SUPER alone opens no database (10.11.19: 1044 for USE mysql).
    assert not Account(user="su", privileges=Privilege.SUPER).may_use("mysql")
    granted = Account(user="d", privileges=Privilege(0), databases=frozenset({"shop"}))
    assert granted.may_use("shop") and not granted.may_use("SHOP")


def test_config_accounts() -> None:
    accounts = ServerConfig().all_accounts()
    assert accounts == {"root": Account.admin("root", "")}
    accounts = ServerConfig(user="repl", password="pw", extra_users={"cdc": "x"}).all_accounts()
    assert accounts == {
        "repl": Account.replication("repl", "pw"),
        "cdc": Account.replication("cdc", "x"),
    }
    mine = Account(user="repl", password="other", privileges=Privilege.REPLICATION_SLAVE)
    accounts = ServerConfig(user="repl", password="pw", accounts=(mine,)).all_accounts()
    assert accounts == {"repl": mine}
    accounts = ServerConfig(accounts=(Account.admin("admin", "a"),)).all_accounts()
    assert set(accounts) == {"root", "admin"}


# --- statements -------------------------------------------------------------------------------


def session_of(account: Account, **config: object) -> SessionState:
    server = ServerState(ServerConfig(accounts=(account,), **config))  # type: ignore[arg-type]
    info = server.open_connection("127.0.0.1")
    info.user = account.user
    return SessionState.create(server, info.thread_id, account.user, "127.0.0.1", 45)


def answer(session: SessionState, sql: str) -> tuple[int, str] | str:
    response = execute(session, sql).responses[-1]
    if isinstance(response, SqlError):
        return response.errno, response.message
    return "OK" if isinstance(response, OkResult) else "RESULTSET"


REPL = Account.replication("repl", "pw")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SET GLOBAL binlog_checksum='NONE'", (1227, DENIED.format("SUPER"))),
        ("SET GLOBAL binlog_checksum='BOGUS'", (1227, DENIED.format("SUPER"))),
        ("SET @@global.binlog_format='STATEMENT'", (1227, DENIED.format("SUPER, BINLOG ADMIN"))),
        ("SET GLOBAL binlog_format=DEFAULT", (1227, DENIED.format("SUPER, BINLOG ADMIN"))),
        (
            "SET GLOBAL gtid_slave_pos=''",
            (1227, DENIED.format("SUPER, REPLICATION SLAVE ADMIN")),
        ),
        ("SET GLOBAL server_id=7", (1227, DENIED.format("SUPER, REPLICATION MASTER ADMIN"))),
        ("SET GLOBAL read_only=1", (1227, DENIED.format("READ_ONLY ADMIN"))),
        ("SET sql_log_bin=0", (1227, DENIED.format("SUPER, BINLOG ADMIN"))),
        ("SET SESSION gtid_domain_id=3", (1227, DENIED.format("SUPER, BINLOG REPLAY"))),
        ("SET server_id=9", (1227, DENIED.format("SUPER, BINLOG REPLAY"))),
        ("SET gtid_seq_no=5", (1227, DENIED.format("SUPER, BINLOG REPLAY"))),
        ("SET STATEMENT server_id=3 FOR SELECT 1", (1227, DENIED.format("SUPER, BINLOG REPLAY"))),
        (
            "SET STATEMENT sql_log_bin=0, max_statement_time=1 FOR SELECT 1",
            (1227, DENIED.format("SUPER, BINLOG ADMIN")),
        ),
        ("SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED", (1227, DENIED.format("SUPER"))),
        ("SET GLOBAL TRANSACTION READ ONLY", (1227, DENIED.format("SUPER"))),
        # The checks in MariaDB's order: unknown, read-only and scope errors come first.
        ("SET GLOBAL nosuch=1", (1193, "Unknown system variable 'nosuch'")),
        ("SET GLOBAL version='x'", (1238, "Variable 'version' is a read only variable")),
        (
            "SET GLOBAL version='x', GLOBAL binlog_checksum='NONE'",
            (1238, "Variable 'version' is a read only variable"),
        ),
        (
            "SET GLOBAL binlog_checksum='NONE', GLOBAL version='x'",
            (1227, DENIED.format("SUPER")),
        ),
        (
            "SET SESSION binlog_checksum='NONE'",
            (
                1229,
                "Variable 'binlog_checksum' is a GLOBAL variable and should be set with SET GLOBAL",
            ),
        ),
        # What a replication account may do.
        ("SET skip_replication=1", "OK"),
        ("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "OK"),
        ("SET NAMES utf8", "OK"),
        ("SET @master_binlog_checksum = @@global.binlog_checksum", "OK"),
        ("SHOW MASTER STATUS", "RESULTSET"),
        ("SHOW BINARY LOGS", "RESULTSET"),
        ("SELECT @@global.gtid_binlog_pos", "RESULTSET"),
        ("USE information_schema", "OK"),
        ("USE INFORMATION_SCHEMA", "OK"),
        ("USE mysql", (1044, "Access denied for user 'repl'@'%' to database 'mysql'")),
        ("USE MYSQL", (1044, "Access denied for user 'repl'@'%' to database 'MYSQL'")),
        ("USE nosuch", (1044, "Access denied for user 'repl'@'%' to database 'nosuch'")),
        ("SHOW SLAVE HOSTS", (1227, DENIED.format("REPLICATION MASTER ADMIN"))),
        ("SHOW REPLICA HOSTS", (1227, DENIED.format("REPLICATION MASTER ADMIN"))),
        ("FLUSH BINARY LOGS", (1227, DENIED.format("RELOAD"))),
        ("RESET MASTER", (1227, DENIED.format("RELOAD"))),
        ("PURGE BINARY LOGS BEFORE NOW()", (1227, DENIED.format("SUPER, BINLOG ADMIN"))),
        ("SHOW SLAVE STATUS", (1227, DENIED.format("SUPER, SLAVE MONITOR"))),
        ("SHOW ALL SLAVES STATUS", (1227, DENIED.format("SUPER, SLAVE MONITOR"))),
        ("STOP SLAVE", (1227, DENIED.format("SUPER, REPLICATION SLAVE ADMIN"))),
        (
            "CHANGE MASTER TO MASTER_HOST='x'",
            (1227, DENIED.format("SUPER, REPLICATION SLAVE ADMIN")),
        ),
        ("SHOW RELAYLOG EVENTS", (1227, DENIED.format("SLAVE MONITOR"))),
        ("SHUTDOWN", (1227, DENIED.format("SHUTDOWN"))),
        ("KILL 999999", (1094, "Unknown thread id: 999999")),
    ],
)
def test_replication_account(sql: str, expected: tuple[int, str] | str) -> None:
    assert answer(session_of(REPL), sql) == expected


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW MASTER STATUS", (1227, DENIED.format("SUPER, BINLOG MONITOR"))),
        ("SHOW BINARY LOGS", (1227, DENIED.format("SUPER, BINLOG MONITOR"))),
        ("SET GLOBAL binlog_format='ROW'", (1227, DENIED.format("SUPER, BINLOG ADMIN"))),
        ("SET skip_replication=1", "OK"),
    ],
)
def test_account_without_privileges(sql: str, expected: tuple[int, str] | str) -> None:
    assert answer(session_of(Account(user="nopriv", password="pw")), sql) == expected


@pytest.mark.parametrize(
    ("privileges", "sql", "expected"),
    [
        # 10.11.19: SUPER does not do for SHOW SLAVE HOSTS, REPLICATION MASTER ADMIN does.
        (Privilege.SUPER, "SHOW SLAVE HOSTS", (1227, DENIED.format("REPLICATION MASTER ADMIN"))),
        (Privilege.REPLICATION_MASTER_ADMIN, "SHOW SLAVE HOSTS", "RESULTSET"),
        (Privilege.SUPER, "SHOW MASTER STATUS", "RESULTSET"),
        (Privilege.SUPER, "SET GLOBAL binlog_format='ROW'", "OK"),
        (Privilege.REPLICATION_MASTER_ADMIN, "SET GLOBAL server_id=1", "OK"),
        (
            Privilege.REPLICATION_MASTER_ADMIN,
            "SET GLOBAL binlog_format='ROW'",
            (1227, DENIED.format("SUPER, BINLOG ADMIN")),
        ),
        (
            Privilege.SUPER,
            "USE mysql",
            (1044, "Access denied for user 'x'@'%' to database 'mysql'"),
        ),
    ],
)
def test_single_privileges(
    privileges: Privilege, sql: str, expected: tuple[int, str] | str
) -> None:
    assert answer(session_of(Account(user="x", privileges=privileges)), sql) == expected


def test_refused_set_global_changes_nothing() -> None:
    session = session_of(REPL)
    before = dict(session.server.globals)
    for name, var in SYSTEM_VARIABLES.items():
        if var.allows_global() and not var.read_only:
            response = execute(session, f"SET GLOBAL {name} = DEFAULT").responses[-1]
            assert isinstance(response, SqlError) and response.errno == 1227, name
    execute(session, "SET @x=1, GLOBAL binlog_format='STATEMENT'")
    assert session.server.globals == before
    assert "x" not in session.user_variables  # nothing of a refused SET is applied


def test_admin_may_do_it_all() -> None:
    session = session_of(Account.admin("admin", "pw"))
    assert answer(session, "SET GLOBAL binlog_format='STATEMENT'") == "OK"
    assert session.server.globals["binlog_format"] == "STATEMENT"
    assert answer(session, "SET sql_log_bin=0") == "OK"
    assert answer(session, "SHOW SLAVE HOSTS") == "RESULTSET"
    assert answer(session, "USE mysql") == "OK"
    assert answer(session, "USE nosuch") == (1049, "Unknown database 'nosuch'")
    # Database names are case-sensitive (Linux): 10.11.19 answers 1049 here.
    assert answer(session, "USE MYSQL") == (1049, "Unknown database 'MYSQL'")
    assert answer(session, "FLUSH BINARY LOGS") == "OK"
    assert answer(session, "SHOW SLAVE STATUS") == "RESULTSET"
    assert answer(session, "FLUSH STATUS") == (
        1235,
        "This version of MariaDB doesn't yet support 'FLUSH'",
    )


def test_kill_needs_the_same_user_or_connection_admin() -> None:
    session = session_of(REPL)
    server = session.server
    same_user = server.open_connection("127.0.0.1")
    same_user.user = "repl"
    other_user = server.open_connection("127.0.0.1")
    other_user.user = "nopriv"
    assert answer(session, f"KILL {other_user.thread_id}") == (
        1095,
        f"You are not owner of thread {other_user.thread_id}",
    )
    assert answer(session, f"KILL QUERY {other_user.thread_id}") == (
        1095,
        f"You are not owner of thread {other_user.thread_id}",
    )
    outcome = execute(session, f"KILL {same_user.thread_id}")
    assert [kill.thread_id for kill in outcome.kills] == [same_user.thread_id]
    # KILL QUERY of its own thread interrupts the KILL itself (10.11.19).
    assert answer(session, f"KILL QUERY {session.thread_id}") == (
        1317,
        "Query execution was interrupted",
    )
    admin = SessionState.create(server, 99, "root", "127.0.0.1", 45, Account.admin("root"))
    outcome = execute(admin, f"KILL {other_user.thread_id}")
    assert [kill.thread_id for kill in outcome.kills] == [other_user.thread_id]


# --- commands and the handshake ---------------------------------------------------------------


def driver_for(*accounts: Account) -> SessionDriver:
    server = ServerState(ServerConfig(accounts=accounts))
    return SessionDriver(ServerSession(server))


def err(payload: bytes) -> tuple[int, str | None, str]:
    packet = parse_err(payload)
    return packet.errno, packet.sqlstate, packet.message


def test_empty_database_name_at_connect_is_ignored() -> None:
    driver = driver_for(REPL)
    reply = driver.login("repl", "pw", database="")
    assert reply.payloads == [bytes.fromhex("00000002000000")]
    assert driver.session.sql is not None and driver.session.sql.database is None


@pytest.mark.parametrize(
    ("database", "expected"),
    [
        ("mysql", (1044, "42000", "Access denied for user 'repl'@'%' to database 'mysql'")),
        ("nosuch", (1044, "42000", "Access denied for user 'repl'@'%' to database 'nosuch'")),
    ],
)
def test_connect_with_a_refused_database(database: str, expected: tuple[int, str, str]) -> None:
    driver = driver_for(REPL)
    reply = driver.login("repl", "pw", database=database)
    [(seq, payload)] = reply.packets
    assert seq == 2 and err(payload) == expected
    assert reply.of_type(Close)


def test_connect_with_information_schema() -> None:
    driver = driver_for(REPL)
    assert driver.login("repl", "pw", database="information_schema").payloads == [
        bytes.fromhex("00000002000000")
    ]


def test_init_db_refused() -> None:
    driver = driver_for(REPL)
    driver.login("repl", "pw")
    reply = driver.send(b"\x02mysql")
    assert [err(p) for p in reply.payloads] == [
        (1044, "42000", "Access denied for user 'repl'@'%' to database 'mysql'")
    ]
    assert driver.session.state is State.COMMAND


REGISTER = RegisterSlave(server_id=77).encode()
DUMP = BinlogDump(position=4, flags=0, server_id=5, file_name=b"mysql-bin.000001").encode()


@pytest.mark.parametrize(
    ("password", "using"),
    [("pw", "YES"), ("", "NO")],
)
def test_register_slave_without_replication_slave(password: str, using: str) -> None:
    driver = driver_for(Account(user="np", password=password))
    driver.login("np", password)
    for body in (REGISTER, b"\x15\x01"):  # refused before the packet is read
        reply = driver.send(body)
        assert [err(p) for p in reply.payloads] == [
            (1045, "28000", f"Access denied for user 'np'@'%' (using password: {using})")
        ]
    assert driver.session.state is State.COMMAND
    assert driver.session.info.replica is None


def test_binlog_dump_without_replication_slave() -> None:
    driver = driver_for(Account(user="np", password="pw", privileges=Privilege.BINLOG_MONITOR))
    driver.login("np", "pw")
    reply = driver.send(DUMP)
    assert [err(p) for p in reply.payloads] == [(1227, "42000", DENIED.format("REPLICATION SLAVE"))]
    assert not reply.of_type(StartDump)
    # The connection stays usable, as on a real primary.
    assert driver.session.state is State.COMMAND
    assert driver.query("SELECT 1").payloads[0] == b"\x01"


def test_replication_account_may_register_and_dump() -> None:
    driver = driver_for(REPL)
    driver.login("repl", "pw")
    assert driver.send(REGISTER).payloads == [bytes.fromhex("00000002000000")]
    assert driver.send(DUMP).of_type(StartDump)
