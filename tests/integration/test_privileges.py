"""Privileges, differentially: the same statements and commands, as the same accounts, against a
real MariaDB 10.11 started by the harness and against the fake master; the answers (OK, a result
set, or the ERR packet's code, SQLSTATE and text) must be the same.

The accounts are those of a real setup: ``repl`` with ``GRANT REPLICATION SLAVE, REPLICATION
CLIENT ON *.*``, ``nopriv`` without any privilege, ``admin`` with ``ALL PRIVILEGES ON *.* WITH
GRANT OPTION``. Statements the fake master does not carry out are only in the lists where the
real server refuses them for lack of a privilege (what the fake must say too).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from decoder import decode_event
from decoder.packets import parse_err
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.config.variables import SYSTEM_VARIABLES
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import QueryEvent
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

PASSWORD = "pw"
ACCOUNTS = (
    Account.replication("repl", PASSWORD),
    Account(user="nopriv", password=PASSWORD),
    Account.admin("admin", PASSWORD),
)
CREATE_ACCOUNTS = [
    f"CREATE USER repl@'%' IDENTIFIED BY '{PASSWORD}'",
    "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO repl@'%'",
    f"CREATE USER nopriv@'%' IDENTIFIED BY '{PASSWORD}'",
    f"CREATE USER admin@'%' IDENTIFIED BY '{PASSWORD}'",
    "GRANT ALL PRIVILEGES ON *.* TO admin@'%' WITH GRANT OPTION",
]

# What a replication account sends, and what it must not be allowed to do.
REPLICATION_ACCOUNT_STATEMENTS = [
    "SET GLOBAL binlog_checksum='NONE'",
    "SET GLOBAL binlog_checksum='BOGUS'",
    "SET GLOBAL nosuch=1",
    "SET @@global.binlog_format='STATEMENT'",
    "SET GLOBAL binlog_format=DEFAULT",
    "SET GLOBAL gtid_slave_pos=''",
    "SET @@global.gtid_slave_pos = @@global.gtid_binlog_pos",
    "SET GLOBAL server_id=7",
    "SET GLOBAL gtid_domain_id=2",
    "SET GLOBAL gtid_strict_mode=1",
    "SET GLOBAL read_only=1",
    "SET GLOBAL rpl_semi_sync_master_enabled=1",
    "SET GLOBAL max_connections=10",
    "SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET GLOBAL TRANSACTION READ ONLY",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET sql_log_bin=0",
    "SET SESSION gtid_domain_id=3",
    "SET server_id=9",
    "SET @@session.server_id=9",
    "SET gtid_seq_no=5",
    "SET pseudo_thread_id=1",
    "SET skip_replication=1",
    "SET @x=1, GLOBAL binlog_format='ROW'",
    "SELECT @x",
    "SET STATEMENT server_id=3 FOR SELECT 1",
    "SET STATEMENT sql_log_bin=0, max_statement_time=1 FOR SELECT 1",
    "SET STATEMENT max_statement_time=1 FOR SELECT 1",
    "SET GLOBAL version='x'",
    "SET GLOBAL version='x', GLOBAL binlog_checksum='NONE'",
    "SET GLOBAL binlog_checksum='NONE', GLOBAL version='x'",
    "SET SESSION binlog_checksum='NONE'",
    "SET GLOBAL skip_replication=1",
    "SET @master_binlog_checksum= @@global.binlog_checksum",
    "USE mysql",
    "USE MYSQL",
    "USE information_schema",
    "USE INFORMATION_SCHEMA",
    "USE performance_schema",
    "USE sys",
    "USE nosuch",
    "SHOW SLAVE HOSTS",
    "SHOW REPLICA HOSTS",
    "SHOW MASTER STATUS",
    "SHOW BINLOG STATUS",
    "SHOW BINARY LOGS",
    "SHOW MASTER LOGS",
    "SHOW GLOBAL VARIABLES LIKE 'binlog_checksum'",
    "FLUSH BINARY LOGS",
    "FLUSH LOGS",
    "FLUSH PRIVILEGES",
    "RESET MASTER",
    "RESET SLAVE",
    "PURGE BINARY LOGS TO 'mysql-bin.000001'",
    "PURGE BINARY LOGS BEFORE NOW()",
    "SHOW SLAVE STATUS",
    "SHOW ALL SLAVES STATUS",
    "STOP SLAVE",
    "START SLAVE",
    "CHANGE MASTER TO MASTER_HOST='x'",
    "SHOW RELAYLOG EVENTS",
    "SHUTDOWN",
    "KILL 999999",
    "KILL QUERY 999999",
]
# An account without privileges: what REPLICATION CLIENT (BINLOG MONITOR) would allow.
NO_PRIVILEGE_STATEMENTS = [
    "SHOW MASTER STATUS",
    "SHOW BINARY LOGS",
    "SHOW SLAVE HOSTS",
    "SET GLOBAL binlog_format='ROW'",
    "SET skip_replication=1",
    "USE mysql",
]
ADMIN_STATEMENTS = [
    "SET GLOBAL binlog_format='ROW'",
    "SET sql_log_bin=0",
    "SET SESSION gtid_domain_id=0",
    "SHOW SLAVE HOSTS",
    "SHOW MASTER STATUS",
    "USE mysql",
    "USE MYSQL",
    "USE nosuch",
    "USE information_schema",
]
# The globals a replication account's attempts must leave alone.
WATCHED = (
    "SELECT @@global.binlog_checksum, @@global.binlog_format, @@global.server_id, "
    "@@global.gtid_slave_pos, @@global.gtid_domain_id, @@global.read_only"
)


def answer(payloads: list[bytes]) -> object:
    """What a response says: "OK", "RESULTSET", or the ERR's (code, SQLSTATE, text)."""
    first = payloads[-1] if payloads[0][:1] == b"\x00" else payloads[0]
    if first[:1] == b"\xff":
        error = parse_err(first)
        return error.errno, error.sqlstate, error.message
    return "OK" if first[:1] == b"\x00" else "RESULTSET"


@dataclass
class Pair:
    real: MariaDBServer
    fake: BackgroundFakeMaster

    def clients(self, user: str, **kw: object) -> tuple[RawClient, RawClient]:
        real = RawClient(self.real.host, self.real.port, user, PASSWORD, **kw)  # type: ignore[arg-type]
        fake = RawClient(self.fake.host, self.fake.port, user, PASSWORD, **kw)  # type: ignore[arg-type]
        return real, fake

    def differences(self, user: str, statements: list[str]) -> list[tuple[str, object, object]]:
        real, fake = self.clients(user)
        try:
            out = []
            for sql in statements:
                want, got = answer(real.query(sql)), answer(fake.query(sql))
                if got != want:
                    out.append((sql, got, want))
            return out
        finally:
            real.close()
            fake.close()


def fake_store() -> MemoryBinlogStore:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE t (i INT)")])
    return store


@pytest.fixture
def pair(mariadb_factory: MariaDBFactory) -> Iterator[Pair]:
    real = mariadb_factory()
    real.execute(CREATE_ACCOUNTS)
    config = ServerConfig(accounts=ACCOUNTS, server_id=real.server_id)
    with BackgroundFakeMaster(config, fake_store()) as fake:
        yield Pair(real, fake)
        assert fake.errors == []


def test_replication_account_statements(pair: Pair) -> None:
    real, fake = pair.clients("repl")
    before = (answer(real.query(WATCHED)), real.query(WATCHED), fake.query(WATCHED))
    real.close()
    fake.close()
    assert pair.differences("repl", REPLICATION_ACCOUNT_STATEMENTS) == []
    real, fake = pair.clients("repl")
    # Nothing a refused statement tried sticks.
    assert (answer(real.query(WATCHED)), real.query(WATCHED), fake.query(WATCHED)) == before
    real.close()
    fake.close()


def test_set_every_variable_as_the_replication_account(pair: Pair) -> None:
    statements = []
    for name, var in sorted(SYSTEM_VARIABLES.items()):
        statements.append(
            f"SET GLOBAL {name} = @@global.{name}"
            if var.allows_global()
            else f"SET GLOBAL {name} = 1"
        )
        statements.append(
            f"SET SESSION {name} = @@session.{name}"
            if var.allows_session()
            else f"SET SESSION {name} = 1"
        )
    assert pair.differences("repl", statements) == []


def test_account_without_privileges(pair: Pair) -> None:
    assert pair.differences("nopriv", NO_PRIVILEGE_STATEMENTS) == []


def test_admin_account(pair: Pair) -> None:
    assert pair.differences("admin", ADMIN_STATEMENTS) == []


@pytest.mark.parametrize(
    ("user", "database"),
    [
        ("repl", "mysql"),
        ("repl", "nosuch"),
        ("repl", "information_schema"),
        ("repl", ""),
        ("admin", "nosuch"),
        ("admin", "mysql"),
    ],
)
def test_connect_with_database(pair: Pair, user: str, database: str) -> None:
    real, fake = pair.clients(user, database=database)
    assert answer([fake.login_reply]) == answer([real.login_reply])
    if real.login_reply[:1] == b"\x00":
        assert fake.query("SELECT DATABASE()")[-2] == real.query("SELECT DATABASE()")[-2]
    real.sock.close()
    fake.sock.close()


def test_init_db(pair: Pair) -> None:
    real, fake = pair.clients("repl")
    for name in (b"mysql", b"information_schema", b"sys", b"nosuch", b""):
        real.write(b"\x02" + name)
        fake.write(b"\x02" + name)
        assert answer([fake.read()]) == answer([real.read()]), name
    real.close()
    fake.close()


REGISTER = RegisterSlave(server_id=77).encode()
DUMP = BinlogDump(position=4, flags=0, server_id=5, file_name=b"mysql-bin.000001").encode()


@pytest.mark.parametrize("user", ["nopriv", "repl"])
def test_register_slave(pair: Pair, user: str) -> None:
    real, fake = pair.clients(user)
    for client in (real, fake):
        client.write(REGISTER)
    assert answer([fake.read()]) == answer([real.read()])
    real.close()
    fake.close()


def test_binlog_dump_without_replication_slave(pair: Pair) -> None:
    real, fake = pair.clients("nopriv")
    for client in (real, fake):
        client.write(DUMP)
    assert answer([fake.read()]) == answer([real.read()])
    # The connection stays usable on both.
    assert answer(fake.query("SELECT 1")) == answer(real.query("SELECT 1")) == "RESULTSET"
    real.close()
    fake.close()


def test_kill(pair: Pair) -> None:
    results = []
    for host, port in ((pair.real.host, pair.real.port), (pair.fake.host, pair.fake.port)):
        repl = RawClient(host, port, "repl", PASSWORD)
        own = RawClient(host, port, "repl", PASSWORD)
        other = RawClient(host, port, "nopriv", PASSWORD)
        admin = RawClient(host, port, "admin", PASSWORD)
        ids = {
            str(client.greeting.thread_id): name
            for name, client in (("repl", repl), ("own", own), ("other", other), ("admin", admin))
        }

        def said(payloads: list[bytes], ids: dict[str, str] = ids) -> object:
            shown = answer(payloads)
            if isinstance(shown, tuple):  # thread ids differ between the servers
                errno, state, text = shown
                for number, name in ids.items():
                    text = text.replace(f"thread {number}", f"thread <{name}>")
                return errno, state, text
            return shown

        other_id = other.greeting.thread_id
        repl.write(b"\x0c" + struct.pack("<I", other_id))
        results.append(
            [
                said(repl.query(f"KILL {other_id}")),
                said(repl.query(f"KILL QUERY {other_id}")),
                said(repl.query(f"KILL CONNECTION {admin.greeting.thread_id}")),
                said([repl.read()]),  # COM_PROCESS_KILL's answer, after the others
                said(repl.query(f"KILL QUERY {repl.greeting.thread_id}")),
                said(repl.query(f"KILL QUERY {own.greeting.thread_id}")),
                said(repl.query(f"KILL {own.greeting.thread_id}")),
                said(admin.query(f"KILL {other_id}")),
            ]
        )
        for client in (repl, own, other, admin):
            client.sock.close()
    real, fake = results
    assert fake == real


def test_a_dump_still_works_after_refused_set_global(pair: Pair) -> None:
    fake = pair.fake
    client = RawClient(fake.host, fake.port, "repl", PASSWORD)
    for sql in ("SET GLOBAL binlog_checksum='NONE'", "SET GLOBAL binlog_format='STATEMENT'"):
        assert answer(client.query(sql))[0] == 1227  # type: ignore[index]
    client.close()
    # As a replica starts: it takes the primary's checksum setting, then dumps.
    replica = RawClient(fake.host, fake.port, "repl", PASSWORD)
    replica.query("SET @master_binlog_checksum= @@global.binlog_checksum")
    replica.write(
        BinlogDump(position=4, flags=1, server_id=0, file_name=b"mysql-bin.000001").encode()
    )
    # Events checked with CRC32, as the primary's untouched setting says they come.
    context = BinlogContext.for_checksum(True)
    events = []
    while (payload := replica.read())[:1] == b"\x00":
        events.append(decode_event(payload[1:], context))
    assert payload[:1] == b"\xfe"  # the non-blocking dump's EOF
    assert any(
        isinstance(event, QueryEvent) and event.query.startswith(b"CREATE") for event in events
    )
    replica.sock.close()
