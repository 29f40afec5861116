"""What the SQL differential tests share: the scenarios whose snapshot they compare, the
statements snapshot readers send for every table, loading a scenario into a real server, and a
readable form of a response packet."""

from __future__ import annotations

from fakemaster.protocol.resultset import ColumnDefinition
from scenarios.builder import column, table
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.mariadb import MariaDBServer

__all__ = ["SCENARIOS", "describe_payload", "keyed", "load_scenario", "statements", "text_keys"]


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


def describe_payload(payload: bytes) -> str:
    try:
        return repr(ColumnDefinition.decode(payload))
    except Exception:  # not a column definition: the raw bytes
        return repr(payload)


def load_scenario(real: MariaDBServer, scenario: Scenario, database: str) -> None:
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            f"DROP DATABASE IF EXISTS `{database}`",
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )


def snapshot_differences(
    real: MariaDBServer, scenario: Scenario, cases: list[tuple[str, str, bool]], results: str
) -> list[str]:
    """Each case's ``(database, statement, compare rows)`` sent to ``real`` (which holds the
    scenario) and to a fake master serving it, under ``character_set_results = results``: the
    statements whose responses differ, with the first differing packets described."""
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.server.master import BackgroundFakeMaster
    from scenarios.live import ScenarioStore
    from tests.support.wire import RawClient

    problems: list[str] = []
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master:
        for database, sql, rows in cases:
            answers = []
            for host, port in ((real.host, real.port), (master.host, master.port)):
                with RawClient(host, port, "root", "", database=database) as client:
                    client.query(f"SET SESSION character_set_results = '{results}'")
                    answers.append(client.query(sql))
            want, got = answers
            if not rows:  # the column definitions only
                count = want[0][0] if want[0][:1] not in (b"\x00", b"\xff") else 0
                want, got = want[: 1 + count], got[: 1 + count]
            if want != got:
                lines = [f"{sql}:"] + [
                    f"  [{i}] real {describe_payload(a)}\n  [{i}] fake {describe_payload(b)}"
                    for i, (a, b) in enumerate(zip(want, got, strict=False))
                    if a != b
                ]
                problems.append("\n".join(lines[:7]))
        assert master.errors == []
    return problems
