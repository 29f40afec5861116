"""FLUSH LOGS / FLUSH BINARY LOGS on the served binlog (fakemaster.sql.answers.flush_logs): a
memory store rotates once per statement, a binlog that cannot rotate is left alone, RELOAD is
required. The count of rotations per statement is compared with a real 10.11 in
tests/integration/test_sql_comments_differential.py."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.resultset import SqlError
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from fakemaster.store.memory import MemoryBinlogStore
from fakemaster.vocabulary.constants import EventType
from tests.fakemaster.config.test_accounts import DENIED


def session_on(store: object, account: Account) -> SessionState:
    server = ServerState(ServerConfig(accounts=(account,)), store)  # type: ignore[arg-type]
    info = server.open_connection("127.0.0.1")
    info.user = account.user
    return SessionState.create(server, info.thread_id, account.user, "127.0.0.1", 45)


@pytest.mark.parametrize(
    ("sql", "rotations"),
    [
        ("FLUSH LOGS", 1),
        ("FLUSH BINARY LOGS", 1),
        ("flush local binary logs", 1),
        ("FLUSH NO_WRITE_TO_BINLOG LOGS, BINARY LOGS, ENGINE LOGS", 1),
        ("FLUSH /*!40101 LOCAL */ LOGS", 1),
        ("FLUSH ENGINE LOGS", 0),
        ("FLUSH ERROR LOGS, SLOW LOGS, GENERAL LOGS, RELAY LOGS", 0),
    ],
)
def test_a_memory_store_rotates_once_per_statement_naming_the_binlog(
    sql: str, rotations: int
) -> None:
    store = MemoryBinlogStore(server_id=1)
    session = session_on(store, Account.admin("root", ""))
    before = store.file_names()
    assert isinstance(execute(session, sql).responses[0], OkResult)
    after = store.file_names()
    assert len(after) == len(before) + rotations
    if rotations:
        last_of_old = list(store.iter_events(before[-1]))[-1][1]
        assert last_of_old[4] == EventType.ROTATE  # the old file ends with a ROTATE


class _Fixed:
    """Binlog positions that cannot rotate (a directory another server writes)."""

    def binary_logs(self) -> Sequence[tuple[str, int]]:
        return [("mysql-bin.000001", 256)]

    def gtid_binlog_pos(self) -> str:
        return ""

    def gtid_binlog_state(self) -> str:
        return ""

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        return None


def test_a_binlog_that_cannot_rotate_is_left_alone_and_the_statement_is_ok() -> None:
    session = session_on(_Fixed(), Account.admin("root", ""))
    assert isinstance(execute(session, "FLUSH BINARY LOGS").responses[0], OkResult)


def test_flush_logs_needs_reload_and_rotates_nothing_without_it() -> None:
    store = MemoryBinlogStore(server_id=1)
    session = session_on(store, Account.replication("repl", "pw"))
    before = store.file_names()
    response = execute(session, "FLUSH LOGS").responses[0]
    assert isinstance(response, SqlError)
    assert (response.errno, response.message) == (1227, DENIED.format("RELOAD"))
    assert store.file_names() == before


@pytest.mark.parametrize(
    "sql", ["FLUSH LOGS, STATUS", "FLUSH BINARY LOGS DELETE_DOMAIN_ID = (0)", "FLUSH LOGS x"]
)
def test_options_not_modelled_are_not_supported_and_rotate_nothing(sql: str) -> None:
    store = MemoryBinlogStore(server_id=1)
    session = session_on(store, Account.admin("root", ""))
    before = store.file_names()
    response = execute(session, sql).responses[0]
    assert isinstance(response, SqlError) and response.errno == 1235
    assert store.file_names() == before
