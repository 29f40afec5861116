"""The ``mysql`` database a fake master lists, byte for byte against a real MariaDB 10.11, and
LOCK TABLES (what ``mariadb-dump --all-databases`` without ``--single-transaction`` or
``--master-data`` sends).

``mariadb-dump`` reads the structure of ``mysql.general_log`` and ``mysql.slow_log`` whenever it
dumps the ``mysql`` database (10.11: ``dump_first_mysql_tables``, unconditionally), so a server
that lists ``mysql`` must describe them (:mod:`fakemaster.sql.tables.system_tables`). On the real
server (general_log and slow_query_log OFF, the fixture's default) both are empty, as on the
fake. Not compared: ``SHOW CREATE DATABASE mysql``, whose character set is the one the server
had when its data directory was made (latin1 for the fixtures' data directory; the fake
gives its ``character_set_server``). Its other ``mysql`` tables are not served: the statements here select the log tables by
name or by ``LIKE '%\\_log'`` (which matches no other table of a 10.11 ``mysql`` database).
"""

from __future__ import annotations

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import describe_payload, keyed
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

LOG_TABLES = ("general_log", "slow_log")


def mysql_statements() -> list[str]:
    # Read whole first: a real server's TABLE_ROWS of a CSV table is 2 until then (ha_tina),
    # the count after (a fake master's always).
    out = [f"SELECT * FROM `{name}`" for name in LOG_TABLES]
    out += [
        "SHOW FULL TABLES LIKE '%\\_log'",
        "SHOW TABLES FROM mysql LIKE '%\\_log'",
        "SELECT TABLE_NAME, ENGINE, TABLE_TYPE FROM information_schema.TABLES"
        " WHERE TABLE_SCHEMA = 'mysql' AND TABLE_NAME LIKE '%\\_log' ORDER BY TABLE_NAME",
    ]
    for name in LOG_TABLES:
        out += [
            f"show create table `{name}`",
            f"SHOW CREATE TABLE mysql.{name}",
            "SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES"
            f" WHERE table_schema = DATABASE() AND table_name = '{name}'",
            "select column_name, extra, generation_expression, data_type from"
            " information_schema.columns where table_schema=database() and"
            f" table_name='{name}' order by ordinal_position",
            "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
            f" AND TABLE_NAME = '{name}' ORDER BY ORDINAL_POSITION",
            f"SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql'"
            f" AND TABLE_NAME = '{name}'",
            f"SHOW TABLE STATUS LIKE '{name}'",
            f"SHOW COLUMNS FROM `{name}`",
            f"SHOW FULL COLUMNS FROM `{name}`",
            f"SHOW INDEX FROM `{name}`",
            f"SELECT * FROM `{name}`",
            f"SELECT COUNT(*) FROM mysql.`{name}`",
            f"LOCK TABLES `{name}` READ /*!32311 LOCAL */",
        ]
    return out


# One connection to the scenario's database, in order (OK status flags, errors, the implicit
# COMMIT of LOCK TABLES).
LOCK_SEQUENCE = [
    "BEGIN",
    "LOCK TABLES `people` READ /*!32311 LOCAL */,`pairs` READ /*!32311 LOCAL */",
    "SELECT @@in_transaction",
    "SELECT * FROM people ORDER BY id",
    "UNLOCK TABLES",
    "LOCK TABLES people READ, people READ",
    "LOCK TABLES people AS p READ, keys.people WRITE",
    "UNLOCK TABLES",
    "LOCK TABLES nosuch READ",
    "LOCK TABLE people LOW_PRIORITY WRITE",
    "UNLOCK TABLES",
    "BEGIN",
    "LOCK TABLES mysql.general_log READ",
    "SELECT @@in_transaction",
    "LOCK TABLES mysql.nosuch READ",
    "UNLOCK TABLES",
    # Held, LOCK TABLES restricts reads to its tables; BEGIN releases it, UNLOCK TABLES too.
    "LOCK TABLES people READ",
    "SELECT COUNT(*) FROM pairs",
    "SELECT COUNT(*) FROM keys.pairs",
    "SELECT COUNT(*) FROM people",
    "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'keys'",
    "BEGIN",
    "SELECT COUNT(*) FROM pairs",
    "COMMIT",
    "LOCK TABLES pairs READ",
    "SELECT COUNT(*) FROM people",
    "START TRANSACTION WITH CONSISTENT SNAPSHOT",
    "SELECT COUNT(*) FROM people",
    "COMMIT",
    "LOCK TABLES pairs READ",
    "UNLOCK TABLES",
    "SELECT COUNT(*) FROM people",
    # A new LOCK TABLES lets the earlier locks go first, even when it fails.
    "LOCK TABLES pairs READ",
    "LOCK TABLES nosuch READ",
    "SELECT COUNT(*) FROM people",
    # mariadb-dump --events --routines: the fake master has neither (and neither has the real
    # server's keys database).
    "show events",
    "SHOW EVENTS FROM `keys` LIKE 'x%'",
    "SHOW EVENTS WHERE Name = 'x'",
    "SHOW FUNCTION STATUS WHERE Db = 'keys'",
    "SHOW PROCEDURE STATUS WHERE Db = 'keys'",
    "SHOW PACKAGE STATUS WHERE Db = 'keys'",
    "SHOW PACKAGE BODY STATUS WHERE Db = 'keys'",
    "SHOW PROCEDURE STATUS LIKE 'x%'",
    "SELECT * FROM information_schema.EVENTS",
    "SELECT * FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'keys'",
]


real = module_mariadb(server_id=7)


def _differences(sql: str, want: list[bytes], got: list[bytes]) -> list[str]:
    if want == got:
        return []
    lines = [f"{sql}:"]
    for index in range(max(len(want), len(got))):
        a = want[index] if index < len(want) else b"<none>"
        b = got[index] if index < len(got) else b"<none>"
        if a != b:
            lines.append(f"  [{index}] real {describe_payload(a)}")
            lines.append(f"  [{index}] fake {describe_payload(b)}")
    return ["\n".join(lines[:9])]


@pytest.mark.parametrize("results", ["utf8mb4", "binary"])
def test_the_mysql_log_tables_answer_as_on_a_real_server(real: MariaDBServer, results: str) -> None:
    assert real.execute("SELECT @@general_log, @@slow_query_log") == [(0, 0)]
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(keyed())) as master:
        problems: list[str] = []
        with (
            RawClient(real.host, real.port, "root", "", database="mysql") as want_client,
            RawClient(master.host, master.port, "root", "", database="mysql") as got_client,
        ):
            for client in (want_client, got_client):
                client.query(f"SET SESSION character_set_results = '{results}'")
            for sql in mysql_statements():
                problems += _differences(sql, want_client.query(sql), got_client.query(sql))
        assert master.errors == []
    assert not problems, "\n".join(problems)


def test_lock_tables_answers_as_on_a_real_server(real: MariaDBServer) -> None:
    scenario = keyed()
    databases = sorted({t.database for t in scenario.tables.values()})
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master:
        problems: list[str] = []
        with (
            RawClient(real.host, real.port, "root", "", database="keys") as want_client,
            RawClient(master.host, master.port, "root", "", database="keys") as got_client,
        ):
            for sql in LOCK_SEQUENCE:
                problems += _differences(sql, want_client.query(sql), got_client.query(sql))
        assert master.errors == []
    assert not problems, "\n".join(problems)
