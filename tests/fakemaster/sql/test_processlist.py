"""SHOW [FULL] PROCESSLIST (fakemaster.sql.answers.processlist): who is listed and how. The column
definitions are compared with a real 10.11's in tests/integration/test_sql_comments_differential.py."""

from __future__ import annotations

from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.sql.answers.processlist import DUMP_STATE
from fakemaster.sql.state import ServerState, SessionState
from tests.fakemaster.sql.test_statements import values


def _server() -> tuple[ServerState, SessionState, SessionState]:
    root, repl = Account.admin("root"), Account.replication("repl", "pw")
    server = ServerState(ServerConfig(accounts=(root, repl)))
    sessions = []
    for account in (root, repl):
        info = server.open_connection("127.0.0.1")
        info.user = account.user
        sessions.append(SessionState.create(server, info.thread_id, account.user, "127.0.0.1", 45))
    return server, sessions[0], sessions[1]


def test_own_statement_dumps_and_idle_connections() -> None:
    server, root, repl = _server()
    server.claim_dump(repl.thread_id, 7)
    rows = values(root, "SHOW PROCESSLIST")
    assert [row[4] for row in rows] == [b"Query", b"Binlog Dump"]
    assert rows[0][6:] == [b"starting", b"SHOW PROCESSLIST", b"0.000"]
    assert rows[1][6] == DUMP_STATE and rows[1][7] is None
    idle = server.open_connection("127.0.0.1")
    idle.user = "root"
    assert values(root, "SHOW PROCESSLIST")[-1][4:8] == [b"Sleep", b"0", b"", None]


def test_without_process_an_account_sees_its_own_connections() -> None:
    _, _, repl = _server()
    assert [row[1] for row in values(repl, "SHOW PROCESSLIST")] == [b"repl"]


def test_info_is_cut_at_100_characters_unless_full() -> None:
    _, root, _ = _server()
    sql = "SHOW PROCESSLIST" + " " * 200
    assert len(values(root, sql + "-- x")[0][7] or b"") == 100
    assert values(root, "SHOW FULL PROCESSLIST /* long */")[0][7] == (
        b"SHOW FULL PROCESSLIST /* long */"
    )
