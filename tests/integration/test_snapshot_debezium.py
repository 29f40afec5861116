"""What Debezium's MariaDB connector sends for its initial snapshot, answered by fakemaster as a
real MariaDB 10.11 answers it (issue #8: "drive the statement list by what real tools send").

The sequence is read from Debezium's source (debezium/debezium, ``debezium-connector-binlog``
``BinlogSnapshotChangeEventSource`` and ``jdbc/BinlogConnectorConnection``, and
``debezium-connector-mariadb`` ``MariaDbSnapshotChangeEventSource``, ``DefaultSnapshotLock``,
``SelectAllSnapshotQuery``), for the default ``snapshot.mode=initial`` with
``snapshot.locking.mode=minimal``: list the tables of every database, take the global read
lock, open a consistent-snapshot transaction, read the coordinates, the character-set and
sql_mode variables, the databases' collations and each table's ``SHOW CREATE TABLE``, release
the lock, then for each table estimate its size (``USE `db`;`` and ``SHOW TABLE STATUS LIKE
't';``, trailing semicolons included) and read it whole. The JDBC driver's own statements
(``set autocommit=0``, the isolation level) are sent as MariaDB Connector/J spells them. The
tool itself was not run: the statements are, on one connection, in this order.

Compared byte for byte on both servers; for the statements whose values a real server measures
or owns (coordinates, GTID position, row estimates, the system databases' tables and character
sets), the column definitions only. Debezium drops the system databases by its built-in filter
(``mysql``, ``sys``, ``performance_schema``, ``information_schema``), so what the fake lists
there (nothing but ``mysql``'s log tables) does not reach it.
"""

from __future__ import annotations

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import describe_payload, keyed, text_keys
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

SYSTEM = ("information_schema", "mysql", "performance_schema", "sys")


def debezium_snapshot(scenario: Scenario) -> list[tuple[str, bool]]:
    """(statement, compare rows) in Debezium's order for ``scenario``'s tables."""
    databases = sorted({t.database for t in scenario.tables.values()})
    tables = sorted((t.database, t.name) for t in scenario.tables.values())
    out: list[tuple[str, bool]] = [("SHOW DATABASES", True)]
    for database in [*SYSTEM, *databases]:
        out.append(
            (
                f"SHOW FULL TABLES IN {quote_name(database)} where Table_Type = 'BASE TABLE'",
                database not in SYSTEM,
            )
        )
    out += [
        ("set autocommit=0", True),
        ("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", True),
        ("SET SESSION lock_wait_timeout=10", True),
        ("SET SESSION innodb_lock_wait_timeout=10", True),
        ("FLUSH TABLES WITH READ LOCK", True),
        ("START TRANSACTION WITH CONSISTENT SNAPSHOT", True),
        ("SHOW MASTER STATUS", False),
        ("SHOW GLOBAL VARIABLES LIKE 'GTID_BINLOG_POS'", False),
        ("SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')", True),
        ("SHOW VARIABLES WHERE Variable_name = 'sql_mode'", True),
        (
            "SELECT schema_name, default_character_set_name, default_collation_name"
            " FROM information_schema.schemata",
            False,
        ),
    ]
    names = ", ".join(f"'{db}'" for db in databases)
    out.append(
        (
            "SELECT schema_name, default_character_set_name, default_collation_name"
            f" FROM information_schema.schemata WHERE schema_name IN ({names})",
            True,
        )
    )
    out += [(f"SHOW CREATE TABLE {quote_name(db)}.{quote_name(t)}", True) for db, t in tables]
    out.append(("UNLOCK TABLES", True))
    for db, name in tables:
        literal = name.replace("'", "''")
        out += [
            (f"USE {quote_name(db)};", True),
            (f"SHOW TABLE STATUS LIKE '{literal}';", False),
            (f"SELECT * FROM {quote_name(db)}.{quote_name(name)}", _keyed(scenario, db, name)),
        ]
    out.append(("COMMIT", True))
    return out


def _keyed(scenario: Scenario, database: str, name: str) -> bool:
    """Rows of a table without a key come in InnoDB's insertion order, which a fake master
    does not promise to keep after deletes: compared for keyed tables only."""
    return bool(scenario.tables[f"{database}.{name}"].key)


real = module_mariadb(server_id=7)


SCENARIOS = {
    "keyed": keyed,
    "text_keys": text_keys,
    "every_type": lambda: build("every_type"),
    "primary_key_updates": lambda: build("primary_key_updates"),
    "no_key_duplicates": lambda: build("no_key_duplicates"),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_debezium_snapshot_statements_answer_as_a_real_server(
    real: MariaDBServer, name: str
) -> None:
    scenario = SCENARIOS[name]()
    others = [row[0] for row in real.execute("SHOW DATABASES") if row[0] not in SYSTEM]
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            *(f"DROP DATABASE {quote_name(str(db))}" for db in others),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master:
        problems: list[str] = []
        with (
            RawClient(real.host, real.port, "root", "") as want_client,
            RawClient(master.host, master.port, "root", "") as got_client,
        ):
            for sql, rows in debezium_snapshot(scenario):
                want, got = want_client.query(sql), got_client.query(sql)
                if not rows and want[0][:1] not in (b"\x00", b"\xff"):
                    count = want[0][0]
                    want, got = want[: 1 + count], got[: 1 + count]
                if want != got:
                    lines = [f"{sql}:"]
                    for index in range(max(len(want), len(got))):
                        a = want[index] if index < len(want) else b"<none>"
                        b = got[index] if index < len(got) else b"<none>"
                        if a != b:
                            lines.append(f"  [{index}] real {describe_payload(a)}")
                            lines.append(f"  [{index}] fake {describe_payload(b)}")
                    problems.append("\n".join(lines[:9]))
        assert master.errors == []
    assert not problems, "\n".join(problems)
