"""Statements written with comments in every legal position, answered by fakemaster serving a
scenario and by a real MariaDB 10.11 holding the same tables (issue #21, must-show 2).

Every statement of :data:`STATEMENTS` is written once plainly and then with each kind of
comment in each gap between its words (before the first and after the last too): a plain
``/* */`` comment, ``-- `` and ``#`` line comments, its next word inside an executable comment
(``/*!NNNNN``, ``/*M!NNNNNN``, ``/*!`` without version, the served version itself), and words
that would be a syntax error inside comments MariaDB drops (a later version, a MySQL 5.7+
version, a nested plain comment). Both servers get the same text over the same raw connection;
their responses are compared payload by payload (column definitions, rows, OK, ERR code and
message), or on their column definitions only where a value is the server's own (ports, uptime).

The variants are made from the statement's words here, by string joining: no code of the fake
decides where a comment may go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from fakemaster.config.accounts import ALL_PRIVILEGES, Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import SCENARIOS, describe_payload, keyed
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

# (statement with single spaces between its words, compare rows): the statements of the fake's
# statement table that answer the same on both servers, in the keyed scenario's database.
STATEMENTS: list[tuple[str, bool]] = [
    ("SHOW FULL TABLES FROM `keys`", True),
    ("SHOW TABLES LIKE 'p%'", True),
    ("SHOW FULL TABLES FROM nowhere", True),
    ("SHOW GLOBAL VARIABLES LIKE 'port'", False),
    ("SHOW VARIABLES LIKE 'port'", False),
    ("SHOW SESSION VARIABLES LIKE 'binlog_format'", True),
    ("SHOW GLOBAL STATUS LIKE 'Uptime'", False),
    ("SHOW DATABASES LIKE 'keys'", True),
    ("SHOW CREATE TABLE `keys`.`people`", True),
    ("SHOW FULL COLUMNS FROM `pairs`", True),
    ("SHOW CREATE DATABASE `keys`", True),
    ("SHOW MASTER STATUS", False),
    ("SHOW BINARY LOGS", False),
    ("SELECT `id`, `email` FROM `keys`.`people` WHERE `id` = 2", True),
    ("SELECT COUNT(*) FROM `people`", True),
    ("SELECT @@global.binlog_format", True),
    ("SELECT 1", True),
    # What a primary answers about replication and logs.
    ("SHOW SLAVE STATUS", True),
    ("SHOW REPLICA STATUS", True),
    ("SHOW ALL SLAVES STATUS", True),
    ("SHOW ALL REPLICAS STATUS", True),
    ("SHOW SLAVE '' STATUS", True),
    ("SHOW SLAVE 'other' STATUS", True),
    ("SHOW SLAVE STATUS FOR CHANNEL 'other'", True),
    ("SHOW SLAVE STATUS other", True),
    ("SELECT @@default_master_connection", True),
    ("SELECT @@global.default_master_connection", True),
    ("SHOW VARIABLES LIKE 'default_master_connection'", True),
    ("SHOW GLOBAL VARIABLES LIKE 'default_master_connection'", True),
    ("SHOW TRIGGERS FROM `keys` LIKE 'people'", True),
    ("SHOW TRIGGERS", True),
    ("SHOW TRIGGERS IN nowhere", True),
    ("SHOW TRIGGERS WHERE `Table` = 'people'", True),
    ("FLUSH LOGS", True),
    ("FLUSH LOCAL BINARY LOGS", True),
    ("FLUSH ENGINE LOGS, ERROR LOGS", True),
    # EXPLAIN of the whole-table reads snapshot tools plan with.
    ("EXPLAIN SELECT `id` FROM `keys`.`people`", True),
    ("EXPLAIN SELECT * FROM `people`", True),
    ("DESCRIBE SELECT `id`, `team` FROM people", True),
    ("EXPLAIN SELECT `a` FROM `pairs`", True),
    ("EXPLAIN SELECT `v` FROM `pairs`", True),
    ("EXPLAIN SELECT 1", True),
    ("EXPLAIN SELECT `id` FROM `nosuch`", True),
    ("EXPLAIN SELECT `nosuch` FROM `people`", True),
    ("SHOW ENGINES", True),
    ("SHOW STORAGE ENGINES", True),
    ("SHOW PROCESSLIST", False),
    ("SHOW FULL PROCESSLIST", False),
]

# Whole queries: comments alone, comments left open, a comment closed where none is open.
WHOLE_QUERIES = [
    "/* nothing */",
    "-- nothing",
    "# nothing",
    "/*!99999 SELECT 1 */",
    "/*!50000 */",
    "/* c */;",
    ";",
    "SELECT 1 /* open",
    "SELECT 1 /*!50000 + 1",
    "SELECT 1 /*!99999 + 1",
    "SELECT 1 --\tx",
    "SELECT 1 /*!50000 -- swallows the end */\n",
    "SELECT 1 /*!123 + 1*/",
    "SELECT /*!99999 a /* nested */ b */ 1",
    "SELECT /*!90000 /*!50000 x */ */ 1",
    "SELECT 1 /*!50000 -- swallows the end */\n;\n",
    # The session's default replica connection is the one SHOW SLAVE STATUS means.
    "SET default_master_connection = 'other'",
    "SELECT @@default_master_connection",
    "SHOW SLAVE STATUS",
    "SET default_master_connection = ''",
    # SET STATEMENT ... FOR hands its statement on with its comments.
    "SET STATEMENT max_statement_time=1 FOR SHOW /*!50002 FULL*/ TABLES",
    "SET STATEMENT max_statement_time=1 FOR /* c */ SELECT DATABASE(/*!50000 */)",
    "SET STATEMENT max_statement_time=1 /*!50000 FOR */ SHOW\n/* x */ SLAVE STATUS other",
    # An error after the column definitions, and what SHOW WARNINGS then lists.
    "EXPLAIN SELECT `id`, nosuch FROM `keys`.`people`",
    "SHOW WARNINGS",
    # Lines: counted from the start of the query, comments included, leading blanks not.
    "\n\n  SHOW SLAVE STATUS other",
    "/* one\ntwo */ SHOW\nSLAVE STATUS other\n;\n",
    "-- one\n# two\nSHOW TRIGGERS other",
    # Column names: MariaDB's preprocessed text, executable markers out, plain comments in.
    "SELECT DATABASE(/*!50000 */)",
    "SELECT DATABASE(/* c */)",
    "SELECT DATABASE(/*!99999 x */)",
    "SELECT DATABASE(/*!*/)",
    "SELECT @@binlog_format /*!50000 */, @@binlog_format -- x",
    "SELECT 'a' /*!50000 'b' */ 'c'",
]


def variants(sql: str, served: int) -> Iterator[str]:
    """``sql`` with one comment in one position, for every position and kind of comment."""
    words = sql.split(" ")
    for gap in range(len(words) + 1):
        before, after = " ".join(words[:gap]), " ".join(words[gap:])
        for comment in (
            "/* plain */",
            "/**/",
            "-- line\n",
            "#line\n",
            "/*!99999 JUNK */",
            "/*!50700 JUNK */",
            f"/*!{served + 1} JUNK */",
            "/*!99999 JUNK /* nested */ JUNK */",
        ):
            yield f"{before} {comment} {after}".strip(" ")
            yield f"{before}{comment}{after}" if not comment.startswith(("--", "#")) or gap else ""
        if gap < len(words):
            word, rest = words[gap], " ".join(words[gap + 1 :])
            for opening in (
                "/*!50002 ",
                "/*!40003",
                "/*!",
                "/*M!100000 ",
                "/*M!50700 ",
                f"/*!{served} ",
            ):
                yield f"{before} {opening}{word}*/ {rest}".strip(" ")
                yield f"{before} {opening}{word} {rest}*/".strip(" ")
    yield f"/*!40101 {sql} */"


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=7)
    try:
        yield instance.start()
    finally:
        instance.close()


def _served_version(client: RawClient) -> int:
    payloads = client.query("SELECT @@version")
    value = payloads[3][1:].decode()  # count, column, EOF, the row
    major, minor, patch = (int(part) for part in re.findall(r"\d+", value)[:3])
    return major * 10000 + minor * 100 + patch


def test_statements_with_comments_anywhere_answer_as_a_real_server(real: MariaDBServer) -> None:
    scenario = keyed()
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            "DROP DATABASE IF EXISTS `keys`",
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    with (
        BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master,
        RawClient(real.host, real.port, "root", "", database="keys") as want_client,
        RawClient(master.host, master.port, "root", "", database="keys") as got_client,
    ):
        served = _served_version(want_client)
        assert _served_version(got_client) == served  # the version comments are read against
        queries = list(WHOLE_QUERIES)
        rows_of = dict.fromkeys(WHOLE_QUERIES, True)
        for sql, rows in STATEMENTS:
            for variant in [sql, *variants(sql, served)]:
                if variant and variant not in rows_of:
                    queries.append(variant)
                    rows_of[variant] = rows
        problems: list[str] = []
        for sql in queries:
            want, got = want_client.query(sql), got_client.query(sql)
            if not rows_of[sql] and want[0][:1] not in (b"\x00", b"\xff"):
                want, got = want[: 1 + want[0][0]], got[: 1 + want[0][0]]
            if want != got:
                lines = [f"{sql!r}:"]
                for index in range(max(len(want), len(got))):
                    a = want[index] if index < len(want) else b"<none>"
                    b = got[index] if index < len(got) else b"<none>"
                    if a != b:
                        lines.append(f"  [{index}] real {describe_payload(a)}")
                        lines.append(f"  [{index}] fake {describe_payload(b)}")
                problems.append("\n".join(lines[:7]))
        assert master.errors == []
    assert len(queries) > 20 * len(STATEMENTS)  # the variants were made
    assert not problems, f"{len(problems)} of {len(queries)} differ:\n" + "\n".join(problems[:40])


# (statement, files it adds to SHOW BINARY LOGS on a primary): once per statement naming LOGS
# or BINARY LOGS, however many log kinds it lists; none for the other kinds.
ROTATIONS = [
    "FLUSH LOGS",
    "FLUSH BINARY LOGS",
    "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS, ENGINE LOGS, LOGS",
    "FLUSH ENGINE LOGS",
    "FLUSH RELAY LOGS, SLOW LOGS",
    "/*!40101 FLUSH */ LOGS",
]


def test_flush_logs_rotates_the_served_binlog_as_a_real_primary_rotates(
    real: MariaDBServer,
) -> None:
    with (
        BackgroundFakeMaster(ServerConfig(), ScenarioStore(keyed())) as master,
        RawClient(real.host, real.port, "root", "") as want_client,
        RawClient(master.host, master.port, "root", "") as got_client,
    ):
        added: dict[str, list[int]] = {}
        for client in (want_client, got_client):
            for sql in ROTATIONS:
                before = len(client.query("SHOW BINARY LOGS")) - 4  # count, column x2, EOF x2
                assert client.query(sql)[0][:1] == b"\x00", sql
                after = len(client.query("SHOW BINARY LOGS")) - 4
                added.setdefault(sql, []).append(after - before)
        assert master.errors == []
    assert {sql: counts[0] for sql, counts in added.items()} == {
        sql: counts[1] for sql, counts in added.items()
    }
    assert sum(counts[0] for counts in added.values()) >= 3  # the real server did rotate


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_explain_of_whole_table_reads_answers_as_a_real_server(
    real: MariaDBServer, name: str
) -> None:
    """Every column alone, the key, and ``*``, of every table of the snapshot scenarios: the
    index InnoDB scans, its key length over every column type, the row count."""
    scenario = SCENARIOS[name]()
    databases = sorted({t.database for t in scenario.tables.values()})
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
            *(
                f"ANALYZE TABLE {quote_name(t.database)}.{quote_name(t.name)}"
                for t in scenario.tables.values()
            ),
        ]
    )
    queries = []
    for model in scenario.tables.values():
        table = f"{quote_name(model.database)}.{quote_name(model.name)}"
        queries.append(f"EXPLAIN SELECT * FROM {table}")
        queries += [f"EXPLAIN SELECT {quote_name(c.name)} FROM {table}" for c in model.columns]
        key = ", ".join(quote_name(model.columns[p].name) for p in model.key)
        if key:
            queries.append(f"EXPLAIN SELECT {key} FROM {table}")
    problems = []
    with (
        BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master,
        RawClient(real.host, real.port, "root", "") as want_client,
        RawClient(master.host, master.port, "root", "") as got_client,
    ):
        for sql in queries:
            want, got = want_client.query(sql), got_client.query(sql)
            if want != got:
                problems.append(f"{sql}:\n  real {want[-2:]!r}\n  fake {got[-2:]!r}")
        assert master.errors == []
    assert not problems, "\n".join(problems)


# The same accounts on both servers: (account, the GRANT that makes it on the real one).
_CDC = (
    Privilege.SELECT
    | Privilege.RELOAD
    | Privilege.SHOW_DATABASES
    | Privilege.REPLICATION_SLAVE
    | Privilege.BINLOG_MONITOR
)
ACCOUNTS = [
    (Account.replication("g_repl", "pw"), "REPLICATION SLAVE, REPLICATION CLIENT", ""),
    (
        Account(user="g_cdc", privileges=_CDC),
        "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR",
        "",
    ),
    (
        Account(user="g_all", password="x", privileges=ALL_PRIVILEGES),
        "ALL PRIVILEGES",
        " WITH GRANT OPTION",
    ),
    (Account(user="g_none", password="n"), "USAGE", ""),
]


def test_show_grants_answers_as_a_real_server_with_the_same_accounts(real: MariaDBServer) -> None:
    setup = []
    for account, grants, option in ACCOUNTS:
        identified = f" IDENTIFIED BY '{account.password}'" if account.password else ""
        setup += [
            f"DROP USER IF EXISTS '{account.user}'@'%'",
            f"CREATE USER '{account.user}'@'%'{identified}",
            f"GRANT {grants} ON *.* TO '{account.user}'@'%'{option}",
        ]
    real.execute(setup)
    config = ServerConfig(accounts=tuple(account for account, _, _ in ACCOUNTS))
    as_root = [
        *(f"SHOW GRANTS FOR '{a.user}'@'%'" for a, _, _ in ACCOUNTS),
        *(f"SHOW GRANTS FOR {a.user}" for a, _, _ in ACCOUNTS),
        "SHOW /*!50000 GRANTS */ FOR `g_cdc`@`%`",
        "SHOW GRANTS FOR 'nobody'@'%' x",
        "SHOW GRANTS FOR 'nobody'@'%'",
        "SHOW GRANTS FOR 'g_repl'@'localhost'",
        "SHOW WARNINGS",
    ]
    as_each = [
        "SHOW GRANTS",
        "SHOW GRANTS FOR CURRENT_USER",
        "SHOW GRANTS FOR CURRENT_USER()",
        "SHOW GRANTS FOR 'g_cdc'@'%'",
        "SHOW ENGINES",
    ]
    problems = []
    with BackgroundFakeMaster(config, ScenarioStore(keyed())) as master:
        sessions = [("root", "", as_root)] + [(a.user, a.password, as_each) for a, _, _ in ACCOUNTS]
        for user, password, queries in sessions:
            with (
                RawClient(real.host, real.port, user, password) as want_client,
                RawClient(master.host, master.port, user, password) as got_client,
            ):
                for sql in queries:
                    want, got = want_client.query(sql), got_client.query(sql)
                    if want != got:
                        problems.append(f"{user}: {sql}:\n  real {want!r}\n  fake {got!r}")
        assert master.errors == []
    assert not problems, "\n".join(problems)


def _binary_log_count(client: RawClient) -> int:
    return len(client.query("SHOW BINARY LOGS")) - 4  # count, column x2, EOF x2


def test_com_refresh_answers_and_rotates_as_a_real_server(real: MariaDBServer) -> None:
    """COM_REFRESH (``mysql_refresh()``: ``mariadb-dump --flush-logs``), its options byte absent,
    each option, trailing bytes, and from an account without RELOAD."""
    real.execute(
        [
            "DROP USER IF EXISTS 'g_noreload'@'%'",
            "CREATE USER 'g_noreload'@'%' IDENTIFIED BY 'pw'",
            "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'g_noreload'@'%'",
        ]
    )
    config = ServerConfig(accounts=(Account.replication("g_noreload", "pw"),))
    bodies = [b"", b"\x00", b"\x02", b"\x02\x00\x00", b"\x04", b"\x10", b"\x01", b"\x08"]
    seen: list[list[tuple[bytes, int]]] = []
    with BackgroundFakeMaster(config, ScenarioStore(keyed())) as master:
        for host, port in ((real.host, real.port), (master.host, master.port)):
            answers = []
            for user, password in (("root", ""), ("g_noreload", "pw")):
                with RawClient(host, port, user, password) as client:
                    for body in bodies:
                        before = _binary_log_count(client) if user == "root" else 0
                        client.write(b"\x07" + body, 0)
                        reply = client.read()
                        after = _binary_log_count(client) if user == "root" else 0
                        answers.append((reply, after - before))
            seen.append(answers)
        assert master.errors == []
    want, got = seen
    assert any(added for _, added in want)  # the real server did rotate
    assert got == want
