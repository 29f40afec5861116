"""CREATE USER, DROP USER, GRANT, REVOKE (fakemaster.sql.answers.account_statements): what the
fake does not model is refused as not supported, never half done; OR REPLACE replaces. The
server's answers are compared in tests/integration/test_account_statements.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.config.accounts import Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.resultset import ResultSet, SqlError
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from tests.budget import examples
from tests.fakemaster.sql.test_statements import error_of


def _session() -> SessionState:
    server = ServerState(ServerConfig(accounts=(Account(user="u", host="localhost"),)))
    info = server.open_connection("127.0.0.1")
    return SessionState.create(server, info.thread_id, "root", "127.0.0.1", 45)


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE USER u@'%'",  # a second host for the name u
        "CREATE USER x IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'",
        "CREATE USER x IDENTIFIED VIA unix_socket",
        "GRANT SELECT ON shop.t TO u@localhost",
        "GRANT SELECT ON t TO u@localhost",
    ],
)
def test_what_is_not_modelled_is_not_supported(sql: str) -> None:
    session = _session()
    before = dict(session.server.accounts)
    assert error_of(session, sql).errno == 1235
    assert session.server.accounts == before


def test_or_replace_and_syntax() -> None:
    session = _session()
    execute(session, "GRANT RELOAD ON *.* TO u@localhost")
    execute(session, "CREATE OR REPLACE USER u@localhost IDENTIFIED BY 'new'")
    assert session.server.accounts["u"] == Account(user="u", host="localhost", password="new")
    assert error_of(session, "REVOKE ALL FROM u@localhost").errno == 1064  # needs GRANT OPTION
    assert error_of(session, "GRANT ON *.* TO u@localhost").errno == 1064
    for cut in ("CREATE USER x IDENTIFIED", "CREATE USER x IDENTIFIED BY", "GRANT", "REVOKE"):
        assert error_of(session, cut).errno == 1064, cut
    execute(session, "GRANT SELECT ON *.* TO u@localhost WITH GRANT OPTION")
    assert session.server.accounts["u"].privileges == Privilege.SELECT | Privilege.GRANT_OPTION


account_words = st.lists(
    st.sampled_from(
        [
            "CREATE",
            "DROP",
            "GRANT",
            "REVOKE",
            "USER",
            "OR",
            "REPLACE",
            "IF",
            "NOT",
            "EXISTS",
            "IDENTIFIED",
            "BY",
            "PASSWORD",
            "VIA",
            "ON",
            "TO",
            "FROM",
            "WITH",
            "OPTION",
            "ALL",
            "PRIVILEGES",
            "SELECT",
            "RELOAD",
            "REPLICATION",
            "SLAVE",
            "CLIENT",
            "TABLE",
            "*",
            ".",
            ",",
            "u",
            "'pw'",
            "@",
            "@'%'",
            "@localhost",
            "`shop`",
            "shop",
            "t",
            ";",
            "(",
        ]
    ),
    max_size=14,
)


@settings(max_examples=examples(1), deadline=None)
@given(first=st.sampled_from(["CREATE USER", "DROP USER", "GRANT", "REVOKE"]), rest=account_words)
def test_any_account_statement_is_answered_never_crashes(first: str, rest: list[str]) -> None:
    session = _session()
    for response in execute(session, " ".join([first, *rest])).responses:
        assert isinstance(response, SqlError | OkResult | ResultSet)
