"""mysql.user (fakemaster.sql.tables.account_tables): the rows of the accounts, as a real 10.11
shows them for the same accounts. The expected rows are 10.11.19's for ``CREATE USER 'root'@'%'``
+ ``GRANT ALL PRIVILEGES ... WITH GRANT OPTION`` and ``CREATE USER 'cdc'@'%' IDENTIFIED BY
'cdc-pw'`` + ``GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.*``
(the whole result set, definitions included, is compared with a real server's in
tests/integration/test_real_tools_differential.py)."""

from __future__ import annotations

from fakemaster.config.account_spec import parse_account
from fakemaster.config.server_config import ServerConfig
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, values

CDC = "cdc@%:cdc-pw:SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR"
CDC_HASH = b"*146ADFACF93B2CB58534BCCA87D19BAEED1C645F"  # 10.11.19's, for 'cdc-pw'
# Select, Insert ... Delete_history (30 columns): Y where the real server showed Y for cdc.
CDC_FLAGS = [b"Y" if i in (0, 6, 14, 19, 20) else b"N" for i in range(30)]
TAIL = [b"0", b"0", b"0", b"0", b"mysql_native_password"]


def _session(*accounts: str, user: str = "root") -> SessionState:
    config = ServerConfig(accounts=tuple(parse_account(text) for text in accounts))
    server = ServerState(config)
    info = server.open_connection("127.0.0.1")
    info.user = user
    return SessionState.create(server, info.thread_id, user, "127.0.0.1", 45)


def test_every_account_is_a_row_as_created() -> None:
    session = _session(CDC)
    rows = values(session, "SELECT * FROM mysql.user")
    assert [row[:2] for row in rows] == [[b"%", b"root"], [b"%", b"cdc"]]
    root, cdc = rows
    assert root[2:] == [
        b"",
        *[b"Y"] * 30,
        b"",
        b"",
        b"",
        b"",
        *TAIL,
        b"",
        b"N",
        b"N",
        b"",
        b"0.000000",
    ]
    assert cdc[2:] == [CDC_HASH, *CDC_FLAGS, b"", b"", b"", b"", *TAIL, CDC_HASH, b"N", b"N"] + [
        b"",
        b"0.000000",
    ]


def test_pt_show_grants_query_and_grants_since_login() -> None:
    session = _session(CDC)
    sql = "SELECT DISTINCT User, Host FROM mysql.user  ORDER BY User, Host"
    assert values(session, sql) == [[b"cdc", b"%"], [b"root", b"%"]]
    execute(session, "CREATE USER 'new'@'%'")
    assert values(session, sql)[1] == [b"new", b"%"]
    assert values(session, "SELECT COUNT(*) FROM mysql.user WHERE Repl_slave_priv = 'y'") == [
        [b"2"]
    ]


def test_reading_it_needs_select() -> None:
    session = _session(CDC, user="cdc")
    assert values(session, "SELECT User FROM mysql.user WHERE User = 'cdc'") == [[b"cdc"]]
    session = _session("repl@%:pw", user="repl")  # REPLICATION SLAVE, REPLICATION CLIENT
    assert error_of(session, "SELECT User FROM mysql.user").errno == 1142
    assert error_of(session, "SELECT User FROM mysql.users").errno == 1142


def test_pt_mysql_summary_counts_the_accounts() -> None:
    """SUM(condition) over the rows (10.11.19: 2, 0, 1, 1 for root@'%' and cdc@'%')."""
    session = _session(CDC)
    sql = 'SELECT COUNT(*), SUM(user=""), SUM(password=""), SUM(password NOT LIKE "*%") FROM mysql.user'
    assert values(session, sql) == [[b"2", b"0", b"1", b"1"]]
    assert values(session, "SELECT SUM(User = '') FROM mysql.user WHERE User = 'nobody'") == [
        [None]
    ]
    assert error_of(session, "SELECT SUM(max_questions) FROM mysql.user").errno == 1235
