"""SHOW GRANTS (fakemaster.sql.answers.grants_show): the GRANT line of each kind of account, who
may see whose. The lines are compared with a real 10.11's for the same accounts in
tests/integration/test_sql_comments_differential.py."""

from __future__ import annotations

from fakemaster.config.accounts import ALL_PRIVILEGES, Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.resultset import ResultSet
from fakemaster.sql.answers.grants_show import grant_text
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, values


def test_grant_lines() -> None:
    assert grant_text(Account(user="u")) == "GRANT USAGE ON *.* TO `u`@`%`"
    assert grant_text(Account(user="u", privileges=ALL_PRIVILEGES & ~Privilege.GRANT_OPTION)) == (
        "GRANT ALL PRIVILEGES ON *.* TO `u`@`%`"
    )
    assert grant_text(Account.admin("a`b", host="10.%")) == (
        "GRANT ALL PRIVILEGES ON *.* TO `a``b`@`10.%` WITH GRANT OPTION"
    )
    # MariaDB's hash of 'pw': SHA1(SHA1('pw')), as 10.11.19 printed it.
    assert grant_text(Account.replication("r", "pw")) == (
        "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `r`@`%` IDENTIFIED BY PASSWORD"
        " '*D821809F681A40A6E379B50D0463EFAE20BDD122'"
    )


def _session(account: Account, *others: Account) -> SessionState:
    server = ServerState(ServerConfig(accounts=(account, *others)))
    info = server.open_connection("127.0.0.1")
    info.user = account.user
    return SessionState.create(server, info.thread_id, account.user, "127.0.0.1", 45)


def test_another_accounts_grants_need_select_and_an_existing_account() -> None:
    repl, reader = Account.replication("r", "pw"), Account(user="s", privileges=Privilege.SELECT)
    session = _session(repl, reader)
    assert values(session, "SHOW GRANTS FOR r") == [[grant_text(repl).encode()]]
    assert error_of(session, "SHOW GRANTS FOR 's'@'%'").errno == 1044
    session = _session(reader, repl)
    assert values(session, "SHOW GRANTS FOR 'r'@'%'") == [[grant_text(repl).encode()]]
    for sql, heading in [
        ("SHOW GRANTS FOR 'r'@'localhost'", "Grants for r@localhost"),
        ("SHOW GRANTS FOR nobody", "Grants for nobody@%"),
    ]:
        # As MariaDB: the heading goes out, then the ERR instead of rows.
        response = execute(session, sql).responses[0]
        assert isinstance(response, ResultSet) and response.error is not None
        assert (response.error.errno, response.columns[0].name) == (1141, heading)
        assert session.diagnostics[0][1] == 1141
    assert execute(session, "SHOW GRANTS FOR CURRENT_USER()").responses
