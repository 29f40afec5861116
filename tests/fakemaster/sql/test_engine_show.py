"""SHOW ENGINE name STATUS|MUTEX|LOGS (fakemaster.sql.answers.engine_show). The answers
themselves are compared byte for byte with a real 10.11 in
tests/integration/test_real_tools_differential.py; here: what is answered, in what order the
checks come, and what is left to ER_NOT_SUPPORTED_YET."""

from __future__ import annotations

import pytest

from fakemaster.config.accounts import Account, Privilege
from fakemaster.sql.state import SessionState
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, make_session, single_result


def _without_process() -> SessionState:
    server, _ = make_session()
    info = server.open_connection("127.0.0.1")
    account = Account(user="watcher", privileges=Privilege.SELECT)
    return SessionState.create(server, info.thread_id, "watcher", "127.0.0.1", 45, account)


@pytest.mark.parametrize(
    "sql", ["SHOW ENGINE MyISAM STATUS", "SHOW ENGINE innodb MUTEX", "SHOW ENGINE `Aria` STATUS"]
)
def test_an_engine_with_nothing_to_report_answers_an_empty_set(sql: str) -> None:
    _, session = make_session()
    result = single_result(session, sql)
    assert [column.name for column in result.columns] == ["Type", "Name", "Status"]
    assert result.rows == []


@pytest.mark.parametrize("name", ["NDB", "`ndbcluster`", "'BLACKHOLE'", "binlog"])
def test_an_engine_the_server_lacks_is_unknown_before_any_privilege_check(name: str) -> None:
    error = error_of(_without_process(), f"SHOW ENGINE {name} STATUS")
    assert error.errno == 1286
    assert error.message == f"Unknown storage engine '{name.strip('`').strip(chr(39))}'"


def test_status_needs_process() -> None:
    error = error_of(_without_process(), "SHOW ENGINE MyISAM STATUS")
    assert (error.errno, error.message) == (
        1227,
        "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SHOW ENGINE InnoDB STATUS",
        "SHOW ENGINE performance_schema STATUS",
        "SHOW ENGINE ALL STATUS",
        "SHOW ENGINE MyISAM LOGS",
    ],
)
def test_a_running_servers_internals_are_not_modelled(sql: str) -> None:
    _, session = make_session()
    assert error_of(session, sql).errno == 1235


def test_a_missing_kind_is_a_syntax_error() -> None:
    _, session = make_session()
    assert error_of(session, "SHOW ENGINE MyISAM").errno == 1064
    assert execute(session, "SHOW ENGINE MyISAM STATUS").responses
