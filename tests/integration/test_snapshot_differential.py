"""The SQL snapshot answered by fakemaster, byte for byte against a real MariaDB 10.11 holding the
same tables and rows (issue #8, "Served over the binlog and over SQL").

The real server runs the scenario's SQL (its CREATE TABLEs, initial rows and transactions: the
differential tests of the compiler show it then holds the oracle's tables); fakemaster serves the
scenario with every transaction released. The same statements go to both over the same raw
connection (same capabilities, utf8mb4), and the responses are compared payload by payload:
column definitions (names, types, lengths, flags, charsets, decimals) and every row's text.

Masked, because a real server measures them (documented in the README): nothing in the
statements here; the statements that would show them (SHOW TABLE STATUS, TABLES.DATA_LENGTH,
STATISTICS.CARDINALITY ...) are compared on their column definitions only.
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
from tests.support.snapshot_statements import SCENARIOS, describe_payload, keyed, statements
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb


real = module_mariadb(server_id=7)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize(
    ("results", "zone"),
    [("utf8mb4", "+00:00"), ("binary", "+00:00"), ("latin1", "-03:30")],
    ids=["utf8mb4", "binary", "latin1_zone"],
)
def test_snapshot_statements_answer_as_a_real_server_holding_the_same_tables(
    real: MariaDBServer, name: str, results: str, zone: str
) -> None:
    scenario = SCENARIOS[name]()
    databases = sorted({t.database for t in scenario.tables.values()})
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,  # the scenario's SQL gives TIMESTAMPs in UTC
            *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    store = ScenarioStore(scenario)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        problems: list[str] = []
        for database, sql, rows in statements(scenario):
            answers = []
            for host, port in ((real.host, real.port), (master.host, master.port)):
                with RawClient(host, port, "root", "", database=database) as client:
                    client.query(f"SET time_zone = '{zone}'")
                    client.query(f"SET SESSION character_set_results = '{results}'")
                    answers.append(client.query(sql))
            want, got = answers
            if not rows:
                count = want[0][0] if want[0][:1] not in (b"\x00", b"\xff") else 0
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


# One connection, in order: the statements around a consistent read (status flags of each OK,
# savepoint errors, transaction state); (statement, compare rows): coordinates differ between
# the two servers, their column definitions must not.
SEQUENCE: list[tuple[str, bool]] = [
    ("SHOW DATABASES", True),
    ("FLUSH /*!40101 LOCAL */ TABLES", True),
    ("FLUSH TABLES WITH READ LOCK", True),
    ("SHOW MASTER STATUS", False),
    ("SHOW STATUS LIKE 'binlog_snapshot_%'", False),
    ("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", True),
    ("START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */", True),
    ("SHOW STATUS LIKE 'binlog_snapshot_%'", False),
    ("UNLOCK TABLES", True),
    ("SAVEPOINT sp", True),
    ("SELECT * FROM people ORDER BY id", True),
    ("ROLLBACK TO SAVEPOINT sp", True),
    ("RELEASE SAVEPOINT sp", True),
    ("ROLLBACK TO SAVEPOINT sp", True),
    ("SELECT @@in_transaction", True),
    ("COMMIT", True),
    ("START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT", True),
    ("SELECT id FROM people WHERE id = 2", True),
    ("ROLLBACK", True),
    ("SHOW TABLE STATUS", False),
    ("SHOW TABLE STATUS LIKE 'peo%'", False),
    ("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'", True),
    ("SHOW TABLES LIKE 'p%'", True),
    ("SELECT COUNT(*) FROM people", True),
    ("SELECT MIN(id), MAX(id) FROM people", True),
]


def test_a_consistent_read_session_answers_as_a_real_server(real: MariaDBServer) -> None:
    scenario = keyed()
    system = ("information_schema", "mysql", "performance_schema", "sys")
    others = [row[0] for row in real.execute("SHOW DATABASES") if row[0] not in system]
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            *(f"DROP DATABASE {quote_name(str(db))}" for db in others),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    store = ScenarioStore(scenario)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        problems: list[str] = []
        with (
            RawClient(real.host, real.port, "root", "", database="keys") as want_client,
            RawClient(master.host, master.port, "root", "", database="keys") as got_client,
        ):
            for sql, rows in SEQUENCE:
                want, got = want_client.query(sql), got_client.query(sql)
                if not rows and want[0][:1] not in (b"\x00", b"\xff"):
                    want, got = want[: 1 + want[0][0]], got[: 1 + want[0][0]]
                if want != got:
                    problems.append(
                        f"{sql}:\n"
                        + "\n".join(
                            f"  [{i}] real {describe_payload(a)}\n  [{i}] fake {describe_payload(b)}"
                            for i, (a, b) in enumerate(zip(want, got, strict=False))
                            if a != b
                        )
                        + (
                            f"\n  lengths {len(want)} != {len(got)}"
                            if len(want) != len(got)
                            else ""
                        )
                    )
        assert master.errors == []
    assert not problems, "\n".join(problems)
