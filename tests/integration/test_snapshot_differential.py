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

from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.resultset import ColumnDefinition
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.builder import column, table
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb


def keyed() -> Scenario:
    """Keys of every kind, defaults, and a latin1 table."""
    scenario = Scenario()
    scenario.create_table(
        table(
            "keys.people",
            column("id", "INT", null=False, unsigned=True),
            column("email", "VARCHAR(40)", null=False),
            column("nick", "VARCHAR(10)", charset="latin1", collation="latin1_bin"),
            column("team", "CHAR(3)", null=False, default="abc"),
            column("score", "DECIMAL(6,2)", default="1.50"),
            column("level", "TINYINT", null=False, default=3),
            column("born", "DATE", default="2000-01-01"),
            column("state", "ENUM('on','off')", null=False, default="on"),
            column("seen", "DATETIME(3)"),
            primary_key=("id",),
            unique=(("email",), ("team", "nick")),
        ),
        [
            {"id": 1, "email": "a@x", "nick": "Al", "team": "red"},
            {"id": 2, "email": "B@x", "nick": None, "score": None, "state": "off"},
            {"id": 3, "email": "c@x", "nick": "Cy", "level": -7, "seen": "2020-01-02 03:04:05.678"},
        ],
    )
    scenario.create_table(
        table(
            "keys.pairs",
            column("a", "INT", null=False),
            column("b", "VARCHAR(5)", null=False),
            column("v", "BIGINT"),
            unique=(("a", "b"),),
        ),
        [{"a": 1, "b": "x", "v": 5}, {"a": 0, "b": "y", "v": None}],
    )
    scenario.update("keys.people", {"id": 2}, {"nick": "Bo"})
    scenario.insert("keys.pairs", {"a": 2, "b": "z", "v": -1})
    return scenario


def text_keys() -> Scenario:
    """Text primary keys: InnoDB orders them by their collation."""
    scenario = Scenario()
    scenario.create_table(
        table(
            "texts.words",
            column("w", "VARCHAR(20)", null=False),
            column("n", "INT"),
            primary_key=("w",),
        ),
        [
            {"w": w, "n": i}
            for i, w in enumerate(["apple", "Banana", "cherry", "Éclair", "durian", "Zed", "zebra"])
        ],
    )
    scenario.create_table(
        table(
            "texts.codes",
            column("c", "VARCHAR(8)", null=False, collation="utf8mb4_bin"),
            column("k", "CHAR(2)", null=False),
            primary_key=("c", "k"),
        ),
        [{"c": c, "k": k} for c, k in [("b", "x"), ("B", "y"), ("a", "Z"), ("a", "b"), ("é", "e")]],
    )
    return scenario


SCENARIOS = {
    "text_keys": text_keys,
    "every_type": lambda: build("every_type"),
    "primary_key_updates": lambda: build("primary_key_updates"),
    "no_key_duplicates": lambda: build("no_key_duplicates"),
    "keyed": keyed,
}


def statements(scenario: Scenario) -> list[tuple[str, str, bool]]:
    """(database, statement, compare rows): what snapshot readers send, for every table."""
    out: list[tuple[str, str, bool]] = []
    for database in sorted({t.database for t in scenario.tables.values()}):
        out += [
            (database, "SHOW TABLES", True),
            (database, "SHOW FULL TABLES", True),
            (database, f"SHOW CREATE DATABASE {quote_name(database)}", True),
            (database, f"SHOW CREATE DATABASE IF NOT EXISTS {quote_name(database)}", True),
        ]
    for model in scenario.tables.values():
        db, name = model.database, quote_name(model.name)
        literal = model.name.replace("'", "''")
        key = [quote_name(model.columns[p].name) for p in model.key]
        order = f" ORDER BY {', '.join(key)}" if key else ""
        names = ", ".join(quote_name(c.name) for c in model.columns)
        out += [
            (db, f"SHOW CREATE TABLE {name}", True),
            (db, f"SHOW COLUMNS FROM {name}", True),
            (db, f"SHOW FULL COLUMNS FROM {name}", True),
            (db, f"SHOW FIELDS FROM {name} FROM {quote_name(db)}", True),
            (db, f"SHOW INDEX FROM {name}", False),
            (db, f"SELECT * FROM {name}{order}", bool(key)),
            (db, f"SELECT * FROM {name}", bool(key)),  # InnoDB: in key order
            (db, f"SELECT /*!40001 SQL_NO_CACHE */ {names} FROM {name}{order}", bool(key)),
            (db, f"SELECT * FROM {quote_name(db)}.{name}{order} LIMIT 1", bool(key)),
            (db, f"SELECT * FROM {name}{order} LIMIT 1, 2", bool(key)),
            (
                db,
                "SELECT engine, table_type FROM INFORMATION_SCHEMA.TABLES"
                f" WHERE table_schema = DATABASE() AND table_name = '{literal}'",
                True,
            ),
            (
                db,
                "select column_name, extra, generation_expression, data_type from"
                " information_schema.columns where table_schema=database() and"
                f" table_name='{literal}' order by ordinal_position",
                True,
            ),
            (
                db,
                "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
                f" AND TABLE_NAME = '{literal}' ORDER BY ORDINAL_POSITION",
                True,
            ),
            (
                db,
                "SELECT * FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA ="
                f" DATABASE() AND TABLE_NAME = '{literal}' ORDER BY CONSTRAINT_NAME,"
                " ORDINAL_POSITION",
                True,
            ),
            (
                db,
                "SELECT TABLE_NAME, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NULLABLE"
                " FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND"
                f" TABLE_NAME = '{literal}' ORDER BY INDEX_NAME, SEQ_IN_INDEX",
                True,
            ),
            (
                db,
                "SELECT * FROM INFORMATION_SCHEMA.TRIGGERS WHERE EVENT_OBJECT_SCHEMA ="
                f" DATABASE() AND EVENT_OBJECT_TABLE = '{literal}'",
                True,
            ),
        ]
        if key:
            first = model.columns[model.key[0]]
            if first.type in ("int", "bigint", "smallint", "tinyint", "mediumint"):
                out += [
                    (db, f"SELECT * FROM {name} WHERE {key[0]} > 1{order} LIMIT 2", True),
                    (db, f"SELECT {names} FROM {name} WHERE {key[0]} = 2", True),
                    (db, f"SELECT * FROM {name} WHERE {key[0]} IN (1, 3){order}", True),
                ]
    return out


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=7)
    try:
        yield instance.start()
    finally:
        instance.close()


def _describe(payload: bytes) -> str:
    try:
        return repr(ColumnDefinition.decode(payload))
    except Exception:  # not a column definition: the raw bytes
        return repr(payload)


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
                        lines.append(f"  [{index}] real {_describe(a)}")
                        lines.append(f"  [{index}] fake {_describe(b)}")
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
                            f"  [{i}] real {_describe(a)}\n  [{i}] fake {_describe(b)}"
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
