"""fakemaster.sql.status_variables: which statement counts in which Com_* counter, per session
and over the server, and the idle values. Expected counts are what 10.11.19 counted for the same
statements, one session each (the per-session counters after each statement of
tests/integration/test_real_tools_differential.py's ANSWERS are compared there with a real
server's)."""

from __future__ import annotations

import pytest

from fakemaster.sql.state import SessionState
from fakemaster.sql.statements import execute
from fakemaster.sql.status_variables import IDLE_VALUES, STATUS_ORDER, com_variable
from tests.fakemaster.sql.test_statements import make_session, values


def _status(session: SessionState, sql: str) -> dict[str, str]:
    return {row[0].decode(): row[1].decode() for row in values(session, sql) if row[0] and row[1]}


@pytest.mark.parametrize(
    ("sql", "counter"),
    [
        ("SELECT 1", "Com_select"),
        ("EXPLAIN SELECT 1", "Com_select"),
        ("SHOW ENGINE innodb MUTEX", "Com_show_engine_mutex"),
        ("SHOW ENGINE MyISAM STATUS", "Com_show_engine_status"),
        ("SHOW PLUGINS", "Com_show_plugins"),
        ("SHOW MASTER STATUS", "Com_show_binlog_status"),
        ("ROLLBACK", "Com_rollback"),
        ("SHOW FULL PROCESSLIST", "Com_show_processlist"),
        ("SHOW ERRORS", "Com_show_errors"),
    ],
)
def test_a_statement_counts_once_in_its_counter(sql: str, counter: str) -> None:
    _, session = make_session()
    before = _status(session, "SHOW STATUS LIKE 'Com\\_%'")
    execute(session, sql)
    after = _status(session, "SHOW STATUS LIKE 'Com\\_%'")
    moved = {
        name: int(after[name]) - int(before[name]) for name in after if after[name] != before[name]
    }
    assert moved == {counter: 1, "Com_show_status": 1}


@pytest.mark.parametrize(
    "sql", ["SHOW PLUGINS LIKE 'a%'", "SHOW ENGINE 'BLACKHOLE' STATUS", "SHOW ENGINE NDB STATUS"]
)
def test_what_10_11_does_not_count(sql: str) -> None:
    _, session = make_session()
    execute(session, sql)
    assert _status(session, "SHOW STATUS LIKE 'Com\\_show\\_%'") == {
        name: "1" if name == "Com_show_status" else "0"
        for name in STATUS_ORDER
        if name.startswith("Com_show_")
    }


def test_session_and_global_counts() -> None:
    server, first = make_session()
    info = server.open_connection("127.0.0.1")
    second = SessionState.create(server, info.thread_id, "repl", "127.0.0.1", 45, first.account)
    for session in (first, first, second):
        execute(session, "SELECT 1")
    assert _status(second, "SHOW STATUS LIKE 'Com_select'") == {"Com_select": "1"}
    assert _status(second, "SHOW GLOBAL STATUS LIKE 'Com_select'") == {"Com_select": "3"}
    # Questions is the session's, Queries the server's in either scope (as 10.11 shows them).
    assert _status(second, "SHOW STATUS LIKE 'Questions'") == {"Questions": "4"}
    assert _status(second, "SHOW STATUS LIKE 'Queries'") == {"Queries": "7"}  # 2 + 5
    connections = _status(second, "SHOW GLOBAL STATUS LIKE '%connections'")
    assert connections == {
        "Connections": str(server.connections_opened),
        "Max_used_connections": "2",
    }


def test_idle_values_in_the_servers_order() -> None:
    _, session = make_session()
    shown = _status(session, "SHOW GLOBAL STATUS")
    assert list(shown) == [name for name in STATUS_ORDER if name in shown]
    assert len(shown) == len(STATUS_ORDER)
    # 10.11.19 right after start, 1 MiB query cache unused.
    assert shown["Qcache_free_memory"] == IDLE_VALUES["Qcache_free_memory"] == "1031272"
    assert com_variable("not_supported", "FLUSH STATUS") is None
