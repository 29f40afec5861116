"""Accounts declared in a scenario file, differentially: the CDC account a connector's manual
asks for (``SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT``) snapshots
and streams, a dump tool logs in as another user with database grants, and an account lacking
REPLICATION SLAVE is refused the dump, each exactly as a real MariaDB 10.11 does with the same
accounts made by CREATE USER and GRANT.

The fake's accounts come from the scenario's ``[[accounts]]`` (parsed by the project); the real
server's from hand-written GRANT statements, so SHOW GRANTS on both sides compares the parser
and the printer with the server's own rendering.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from decoder.packets import parse_err
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.vocabulary.commands import BinlogDump
from scenarios.history import Scenario
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from scenarios.toml_form import load_scenario
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

SCENARIO = """
[[accounts]]
user = "cdc"
password = "cdc-pw"
grants = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"

[[accounts]]
user = "cdc105"
password = "cdc-pw"
grants = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR"

[[accounts]]
user = "dumper"
host = "%"
password = "dump:pw"
grants = ["RELOAD", "SELECT, LOCK TABLES, SHOW VIEW ON shop.*"]

[[accounts]]
user = "norepl"
password = "x"
grants = "SELECT, RELOAD, SHOW DATABASES, REPLICATION CLIENT"

[[accounts]]
user = "owner"
host = "localhost"
grants = ["USAGE", "ALL PRIVILEGES ON shop.* WITH GRANT OPTION", "SELECT ON `hr`.*"]

[[tables]]
create = "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))"
rows = [{ id = 1, note = "first" }, { id = 2, note = "second" }]

[[tables]]
create = "CREATE TABLE hr.staff (id INT PRIMARY KEY, name VARCHAR(20))"
rows = [{ id = 1, name = "Ann" }]

[[steps]]
changes = [{ insert = "shop.orders", rows = [{ id = 3, note = "third" }] }]
"""

# The same accounts, made on the real server as an administrator makes them.
REAL_ACCOUNTS = [
    "CREATE USER cdc@'%' IDENTIFIED BY 'cdc-pw'",
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO cdc@'%'",
    "CREATE USER cdc105@'%' IDENTIFIED BY 'cdc-pw'",
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO cdc105@'%'",
    "CREATE USER dumper@'%' IDENTIFIED BY 'dump:pw'",
    "GRANT RELOAD ON *.* TO dumper@'%'",
    "GRANT SELECT, LOCK TABLES, SHOW VIEW ON shop.* TO dumper@'%'",
    "CREATE USER norepl@'%' IDENTIFIED BY 'x'",
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION CLIENT ON *.* TO norepl@'%'",
    "CREATE USER owner@localhost",
    "GRANT ALL ON shop.* TO owner@localhost WITH GRANT OPTION",
    "GRANT SELECT ON hr.* TO owner@localhost",
]
PASSWORDS = {"cdc": "cdc-pw", "cdc105": "cdc-pw", "dumper": "dump:pw", "norepl": "x"}

GRANTS = ["SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()", "SHOW GRANTS FOR CURRENT_USER"]
# What a CDC connector sends to take its snapshot (Debezium's MySQL/MariaDB connector and the
# like): the coordinates, the databases and tables, a global read lock, a consistent read.
SNAPSHOT = [
    *GRANTS,
    "SHOW GLOBAL VARIABLES LIKE 'binlog_format'",
    "SHOW GLOBAL VARIABLES LIKE 'binlog_row_image'",
    "SHOW DATABASES",
    "FLUSH TABLES WITH READ LOCK",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    "SHOW FULL TABLES IN shop WHERE Table_Type = 'BASE TABLE'",
    "SHOW FULL TABLES IN hr WHERE Table_Type = 'BASE TABLE'",
    "SHOW CREATE TABLE shop.orders",
    "SHOW CREATE TABLE hr.staff",
    "SHOW MASTER STATUS",
    "SHOW BINARY LOGS",
    "UNLOCK TABLES",
    "SELECT * FROM shop.orders ORDER BY id",
    "SELECT * FROM hr.staff ORDER BY id",
    "COMMIT",
]
# A dump tool granted one database: the other is refused as the server refuses it.
DUMPER = [
    *GRANTS,
    "SHOW DATABASES",
    "FLUSH TABLES WITH READ LOCK",
    "UNLOCK TABLES",
    "USE shop",
    "LOCK TABLES orders READ",
    "SELECT * FROM orders ORDER BY id",
    "UNLOCK TABLES",
    "USE hr",
    "SELECT * FROM hr.staff",
    "LOCK TABLES hr.staff READ",
    "SHOW CREATE TABLE hr.staff",
    "SHOW GRANTS FOR cdc@'%'",
    "SHOW MASTER STATUS",
]
# Coordinates differ between the servers: their answers are compared up to the column
# definitions (the first payloads) only.
COORDINATES = {"SHOW MASTER STATUS", "SHOW BINARY LOGS"}


@dataclass
class Pair:
    real: MariaDBServer
    fake: BackgroundFakeMaster
    scenario: Scenario

    def clients(self, user: str) -> tuple[RawClient, RawClient]:
        password = PASSWORDS[user]
        return (
            RawClient(self.real.host, self.real.port, user, password),
            RawClient(self.fake.host, self.fake.port, user, password),
        )


def shown(payloads: list[bytes], sql: str) -> object:
    """What the comparison sees of a response: an ERR as (code, SQLSTATE, text), else the
    payloads (up to the column definitions where the servers' coordinates differ)."""
    first = payloads[0]
    if first[:1] == b"\xff":
        error = parse_err(first)
        return error.errno, error.sqlstate, error.message
    if sql in COORDINATES and first[:1] != b"\x00":
        return payloads[: 1 + first[0]]
    if first[:1] == b"\x00":
        return "OK"
    return payloads


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    require_mariadb()
    scenario = load_scenario(SCENARIO, source="cdc.toml")
    databases = sorted({t.database for t in scenario.tables.values()})
    real = MariaDBServer(server_id=7)
    try:
        real.start()
        real.execute(
            [
                "SET SESSION sql_log_bin = 0",
                *SESSION_SETUP,
                *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases),
                *setup_sql(scenario),
                *(sql for step in scenario.steps for sql in step_sql(step)),
                *REAL_ACCOUNTS,
            ]
        )
        config = ServerConfig(accounts=scenario.accounts)
        with BackgroundFakeMaster(config, ScenarioStore(scenario)) as fake:
            yield Pair(real, fake, scenario)
            assert fake.errors == []
    finally:
        real.close()


def differences(pair: Pair, user: str, statements: list[str]) -> list[str]:
    real, fake = pair.clients(user)
    try:
        out = []
        for sql in statements:
            want, got = shown(real.query(sql), sql), shown(fake.query(sql), sql)
            if want != got:
                out.append(f"{user}: {sql}\n  real {want!r}\n  fake {got!r}")
        return out
    finally:
        real.close()
        fake.close()


@pytest.mark.parametrize("user", ["cdc", "cdc105", "norepl"])
def test_a_cdc_account_snapshots_as_on_a_real_server(pair: Pair, user: str) -> None:
    assert differences(pair, user, SNAPSHOT) == []


def test_a_dump_tool_with_database_grants_logs_in_beside_the_cdc_account(pair: Pair) -> None:
    assert differences(pair, "dumper", DUMPER) == []


def test_every_account_shows_the_grants_the_server_shows(pair: Pair) -> None:
    shows = [f"SHOW GRANTS FOR {user}@'%'" for user in PASSWORDS]
    shows += ["SHOW GRANTS FOR owner@localhost", "SHOW GRANTS FOR owner@'%'"]
    real = RawClient(pair.real.host, pair.real.port, "root", "")
    fake = RawClient(pair.fake.host, pair.fake.port, "root", "")
    try:
        assert [shown(fake.query(sql), sql) for sql in shows] == [
            shown(real.query(sql), sql) for sql in shows
        ]
    finally:
        real.close()
        fake.close()


def _dump_answer(client: RawClient, file_name: bytes) -> object:
    """The first packet a COM_BINLOG_DUMP gets: the ERR's (code, SQLSTATE, text), or
    ``"EVENT"`` for an event packet (a stream that started)."""
    client.write(BinlogDump(position=4, flags=0, server_id=0, file_name=file_name).encode())
    first = client.read()
    if first[:1] == b"\xff":
        error = parse_err(first)
        return error.errno, error.sqlstate, error.message
    return "EVENT" if first[:1] == b"\x00" else first


@pytest.mark.parametrize("user", ["cdc", "cdc105", "norepl", "dumper"])
def test_the_dump_is_streamed_or_refused_as_on_a_real_server(pair: Pair, user: str) -> None:
    real, fake = pair.clients(user)
    try:
        file_names = []
        for client in (real, fake):
            logs = client.query("SHOW BINARY LOGS")
            file_names.append(b"" if logs[0][:1] == b"\xff" else b"mysql-bin.000001")
        want = _dump_answer(real, file_names[0])
        got = _dump_answer(fake, file_names[1])
        assert got == want
        if user in ("cdc", "cdc105"):
            assert want == "EVENT"  # the documented grants stream
        else:  # no REPLICATION SLAVE: ER_SPECIFIC_ACCESS_DENIED_ERROR
            assert isinstance(want, tuple) and want[0] == 1227, want
    finally:
        real.sock.close()
        fake.sock.close()


@pytest.mark.parametrize("user", ["cdc", "norepl"])
def test_mariadb_binlog_streams_as_the_account_or_is_refused(pair: Pair, user: str) -> None:
    """A real replication client logging in as the account: the whole first binlog file with
    the documented grants; without REPLICATION SLAVE the same error and exit status."""
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    results = []
    for server in (pair.real, pair.fake):
        results.append(
            subprocess.run(
                [
                    tool,
                    "--read-from-remote-server",
                    f"--host={server.host}",
                    f"--port={server.port}",
                    f"--user={user}",
                    f"--password={PASSWORDS[user]}",
                    "mysql-bin.000001",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
        )
    real, fake = results
    assert fake.returncode == real.returncode, (real.stderr, fake.stderr)
    if user == "cdc":
        assert real.returncode == 0
        # The fake's file holds the scenario's insert, written as a row event.
        assert "Write_rows" in fake.stdout or "WRITE_ROWS" in fake.stdout.upper()
    else:
        assert real.returncode != 0 and "REPLICATION SLAVE" in real.stderr
        assert fake.stderr == real.stderr
