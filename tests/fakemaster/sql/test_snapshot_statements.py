"""The SQL snapshot statements, sans-IO: what a transaction reads (consistent snapshot, a plain
BEGIN's first read, no transaction), the binlog coordinates that go with it, savepoints, the
read lock, SELECT's WHERE/ORDER BY/LIMIT, and the errors a real server gives.

Byte-exactness against a real MariaDB 10.11 is tests/integration/test_snapshot_differential.py;
here the semantics, with a catalogue given outright (tests/support/catalogue.py) whose rows
a test changes together with the binlog coordinates.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fakemaster.config.accounts import REPLICATION_PRIVILEGES, Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.resultset import ResultSet, SqlError, converted_rows
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from tests.support.catalogue import StaticCatalogue, shop_catalogue

ADMIN = Account.admin("root")


class MovingBinlog:
    """A binlog whose end a test moves (with the catalogue's rows)."""

    def __init__(self) -> None:
        self.end = ("mysql-bin.000001", 400)
        self.pos = "0-1-3"

    def binary_logs(self) -> Sequence[tuple[str, int]]:
        return [self.end]

    def gtid_binlog_pos(self) -> str:
        return self.pos

    def gtid_binlog_state(self) -> str:
        return self.pos

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        return self.pos if (file_name, position) == self.end else None


def make(account: Account = ADMIN) -> tuple[MovingBinlog, StaticCatalogue, SessionState]:
    binlog, catalogue = MovingBinlog(), shop_catalogue()
    server = ServerState(ServerConfig(), binlog, tables=catalogue)
    info = server.open_connection("127.0.0.1")
    session = SessionState.create(server, info.thread_id, account.user, "127.0.0.1", 45, account)
    return binlog, catalogue, session


def advance(binlog: MovingBinlog, catalogue: StaticCatalogue) -> None:
    """One more transaction: id 11 inserted, the binlog 100 bytes longer, GTID 0-1-4."""
    rows = list(catalogue.rows[("shop", "t")])
    catalogue.rows[("shop", "t")] = [*rows, (b"11", "new", b"0.00")]
    binlog.end = (binlog.end[0], binlog.end[1] + 100)
    binlog.pos = "0-1-4"


def rows(session: SessionState, sql: str) -> list[tuple[bytes | None, ...]]:
    response = execute(session, sql).responses[-1]
    assert isinstance(response, ResultSet), response
    return [tuple(row) for row in response.rows]


def error(session: SessionState, sql: str) -> SqlError:
    response = execute(session, sql).responses[-1]
    assert isinstance(response, SqlError), response
    return response


def ids(session: SessionState) -> list[bytes | None]:
    return [row[0] for row in rows(session, "SELECT id FROM shop.t ORDER BY id")]


def snapshot_status(session: SessionState) -> list[tuple[bytes | None, ...]]:
    return rows(session, "SHOW STATUS LIKE 'binlog_snapshot_%'")


def test_a_consistent_snapshot_reads_the_tables_and_coordinates_of_its_start() -> None:
    binlog, catalogue, session = make()
    rows(session, "SELECT 1")
    execute(session, "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */")
    advance(binlog, catalogue)
    assert ids(session) == [b"1", b"2", b"10"]
    assert snapshot_status(session) == [
        (b"Binlog_snapshot_file", b"mysql-bin.000001"),
        (b"Binlog_snapshot_position", b"400"),
    ]
    count = rows(session, "SELECT table_rows FROM information_schema.TABLES WHERE table_name='t'")
    assert count == [(b"3",)]
    execute(session, "COMMIT")
    assert ids(session) == [b"1", b"2", b"10", b"11"]
    assert snapshot_status(session)[1] == (b"Binlog_snapshot_position", b"500")


def test_a_plain_transaction_reads_the_tables_of_its_first_read() -> None:
    binlog, catalogue, session = make()
    execute(session, "BEGIN")
    advance(binlog, catalogue)  # before the first read: seen
    assert ids(session) == [b"1", b"2", b"10", b"11"]
    catalogue.rows[("shop", "t")] = []
    assert ids(session) == [b"1", b"2", b"10", b"11"]
    execute(session, "ROLLBACK")
    assert ids(session) == []


def test_outside_a_transaction_every_read_is_current() -> None:
    binlog, catalogue, session = make()
    assert ids(session) == [b"1", b"2", b"10"]
    advance(binlog, catalogue)
    assert ids(session) == [b"1", b"2", b"10", b"11"]
    assert snapshot_status(session)[1] == (b"Binlog_snapshot_position", b"500")


def test_savepoints_are_kept_per_transaction() -> None:
    _, _, session = make()
    assert error(session, "ROLLBACK TO SAVEPOINT sp").message == "SAVEPOINT sp does not exist"
    execute(session, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
    for sql in ("SAVEPOINT a", "SAVEPOINT sp", "ROLLBACK TO SAVEPOINT a", "RELEASE SAVEPOINT a"):
        assert not isinstance(execute(session, sql).responses[-1], SqlError), sql
    assert error(session, "ROLLBACK WORK TO sp").errno == 1305  # rolled back past sp
    assert error(session, "RELEASE SAVEPOINT a").errno == 1305  # released


def test_the_read_lock_needs_reload() -> None:
    _, _, session = make()
    unlocked: list[bool] = []
    session.server.on_unlocked = lambda: unlocked.append(True)
    execute(session, "FLUSH TABLES WITH READ LOCK")
    assert session.server.read_locks == {session.thread_id}
    execute(session, "UNLOCK TABLES")
    assert session.server.read_locks == set()
    assert unlocked == [True]
    execute(session, "FLUSH TABLES WITH READ LOCK")
    session.server.close_connection(session.thread_id)  # the lock ends with the connection
    assert unlocked == [True, True]
    replication = Account(user="repl", privileges=REPLICATION_PRIVILEGES)
    _, _, other = make(replication)
    denied = error(other, "FLUSH TABLES WITH READ LOCK")
    assert (denied.errno, denied.message) == (
        1227,
        "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation",
    )


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT id FROM shop.t WHERE id > 1 ORDER BY id DESC LIMIT 1", [(b"10",)]),
        ("SELECT id FROM shop.t WHERE id >= 2 ORDER BY id LIMIT 1 OFFSET 1", [(b"10",)]),
        ("SELECT id FROM shop.t ORDER BY id LIMIT 1, 5", [(b"2",), (b"10",)]),
        ("SELECT id, name FROM shop.t WHERE name IS NULL", [(b"2", None)]),
        ("SELECT `id` FROM `shop`.`t` WHERE name = 'ZOË '", [(b"10",)]),  # ci, trailing space
        ("SELECT id FROM shop.t WHERE name LIKE 'a%' OR d < 0", [(b"1",), (b"10",)]),
        ("SELECT id FROM shop.t WHERE id IN (2, 10) AND NOT (d IS NULL)", [(b"10",)]),
        ("SELECT id FROM shop.t WHERE id BETWEEN 2 AND 9", [(b"2",)]),
        ("SELECT d AS amount FROM shop.t x WHERE x.id = 1", [(b"1.50",)]),
        ("SELECT * FROM shop.t WHERE id <=> 10", [(b"10", "Zoë".encode(), b"-3.00")]),
    ],
)
def test_select_filters_orders_and_limits_like_a_server(
    sql: str, expected: list[tuple[bytes | None, ...]]
) -> None:
    _, _, session = make()
    assert rows(session, sql) == expected


def test_a_select_names_its_columns_as_written() -> None:
    _, _, session = make()
    response = execute(session, "SELECT ID, d AS amount FROM shop.t AS x LIMIT 0").responses[0]
    assert isinstance(response, ResultSet)
    assert [(c.name, c.org_name, c.table, c.org_table) for c in response.columns] == [
        ("ID", "id", "x", "t"),
        ("amount", "d", "x", "t"),
    ]


@pytest.mark.parametrize(
    ("sql", "errno", "message"),
    [
        ("SELECT * FROM t", 1046, "No database selected"),
        ("SELECT * FROM shop.nope", 1146, "Table 'shop.nope' doesn't exist"),
        ("SELECT nope FROM shop.t", 1054, "Unknown column 'nope' in 'field list'"),
        ("SELECT id FROM shop.t WHERE nope = 1", 1054, "Unknown column 'nope' in 'where clause'"),
        ("SELECT id FROM shop.t ORDER BY nope", 1054, "Unknown column 'nope' in 'order clause'"),
        ("SHOW CREATE TABLE shop.nope", 1146, "Table 'shop.nope' doesn't exist"),
        ("SHOW TABLES FROM nope", 1049, "Unknown database 'nope'"),
        (
            "SELECT * FROM information_schema.NOPE",
            1109,
            "Unknown table 'NOPE' in information_schema",
        ),
    ],
)
def test_snapshot_statements_refuse_as_a_server(sql: str, errno: int, message: str) -> None:
    _, _, session = make()
    refused = error(session, sql)
    assert (refused.errno, refused.message) == (errno, message)


def test_reading_a_table_needs_select() -> None:
    replication = Account(user="repl", privileges=REPLICATION_PRIVILEGES)
    _, _, session = make(replication)
    refused = error(session, "SELECT * FROM shop.t")
    assert (refused.errno, refused.message) == (
        1142,
        "SELECT command denied to user 'repl'@'127.0.0.1' for table `shop`.`t`",
    )
    reader = Account(user="reader", privileges=Privilege.SELECT)
    _, _, allowed = make(reader)
    assert ids(allowed) == [b"1", b"2", b"10"]


def test_use_and_show_databases_know_the_served_databases() -> None:
    _, _, session = make()
    assert not isinstance(execute(session, "USE shop").responses[0], SqlError)
    assert [r[0] for r in rows(session, "SHOW DATABASES LIKE 's%'")] == [b"shop", b"sys"]
    assert rows(session, "SHOW FULL TABLES") == [(b"t", b"BASE TABLE")]
    assert [r[0] for r in rows(session, "SHOW COLUMNS FROM t")] == [b"id", b"name", b"d"]
    assert [(r[2], r[4]) for r in rows(session, "SHOW INDEX FROM t")] == [(b"PRIMARY", b"id")]


def sent_rows(session: SessionState, sql: str) -> list[tuple[bytes | None, ...]]:
    """The rows as the protocol sends them in the session's character_set_results."""
    response = execute(session, sql).responses[-1]
    assert isinstance(response, ResultSet), response
    results = session.results_collation()
    target = None if results is None or results.is_binary_charset else results.charset
    return [tuple(row) for row in converted_rows(response, target)]


def test_text_is_sent_in_the_connection_character_set() -> None:
    _, _, session = make()
    execute(session, "SET NAMES latin1")
    wanted = [("Zoë".encode("cp1252"),)]
    assert sent_rows(session, "SELECT name FROM shop.t WHERE id = 10") == wanted
    execute(session, "SET character_set_results = 'binary'")
    assert sent_rows(session, "SELECT name FROM shop.t WHERE id = 10") == [("Zoë".encode(),)]


def test_an_account_without_select_sees_no_served_table() -> None:
    # As a real 10.11.19 answers a user with REPLICATION SLAVE, BINLOG MONITOR only.
    replication = Account(user="repl", privileges=REPLICATION_PRIVILEGES)
    _, _, session = make(replication)
    assert rows(session, "SHOW DATABASES") == [(b"information_schema",)]
    assert rows(session, "SHOW TABLES FROM shop") == []
    assert rows(session, "SELECT table_name FROM information_schema.TABLES") == []
    refused = error(session, "SHOW CREATE TABLE shop.t")
    assert (refused.errno, refused.message) == (
        1142,
        "SHOW command denied to user 'repl'@'127.0.0.1' for table `shop`.`t`",
    )
    refused = error(session, "SHOW COLUMNS FROM shop.t")
    assert (
        refused.message == "SELECT command denied to user 'repl'@'127.0.0.1' for table `shop`.`t`"
    )
    refused = error(session, "SELECT * FROM mysql.nope")
    assert refused.message == (
        "SELECT command denied to user 'repl'@'127.0.0.1' for table `mysql`.`nope`"
    )
