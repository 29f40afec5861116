"""SHOW GRANTS [FOR user[@host] | FOR CURRENT_USER[()]]: an account's global grant as MariaDB
10.11 prints it (privileges in MariaDB's order, ``ALL PRIVILEGES``, ``USAGE`` for none, the
password hash, ``WITH GRANT OPTION``). Another account's grants need SELECT, as on the server
(ER_DBACCESS_DENIED_ERROR on ``mysql``); an unknown one is ER_NONEXISTING_GRANT.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.config.accounts import (
    ALL_PRIVILEGES,
    DATABASE_PRIVILEGES,
    Account,
    Privilege,
    native_password_hash,
    privilege_names,
)
from fakemaster.protocol.resultset import (
    Cell,
    Column,
    ColumnFlag,
    ResultSet,
    sql_error,
    text_column,
)
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Parser, Tok
from fakemaster.vocabulary.errcodes import ER_DBACCESS_DENIED_ERROR, ER_NONEXISTING_GRANT

__all__ = ["grant_lines", "grant_text", "show_grants"]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _names(privileges: Privilege, everything: Privilege) -> str:
    granted = privileges & ~Privilege.GRANT_OPTION
    if granted == everything & ~Privilege.GRANT_OPTION:
        return "ALL PRIVILEGES"
    return privilege_names(granted) if granted else "USAGE"


def grant_text(account: Account) -> str:
    """The ``GRANT ... ON *.*`` line of ``account``."""
    names = _names(account.privileges, ALL_PRIVILEGES)
    text = f"GRANT {names} ON *.* TO {_quoted(account.user)}@{_quoted(account.host)}"
    if account.password:
        text += f" IDENTIFIED BY PASSWORD '{native_password_hash(account.password)}'"
    if account.privileges & Privilege.GRANT_OPTION:
        text += " WITH GRANT OPTION"
    return text


def grant_lines(account: Account) -> list[str]:
    """Every line SHOW GRANTS prints for ``account``: the global grant, then one per database
    granted on its own (``GRANT ... ON `db`.* TO ...``), in the order they were granted."""
    lines = [grant_text(account)]
    granted = dict(account.database_privileges)
    for database in sorted(account.databases - granted.keys()):
        granted[database] = Privilege.SELECT
    for database, privileges in granted.items():
        if not privileges:
            continue  # REVOKEd to nothing: the server deletes the row
        names = _names(privileges, DATABASE_PRIVILEGES)
        line = f"GRANT {names} ON {_quoted(database)}.* TO {_quoted(account.user)}@"
        line += _quoted(account.host)
        if privileges & Privilege.GRANT_OPTION:
            line += " WITH GRANT OPTION"
        lines.append(line)
    return lines


def _target(parser: Parser) -> tuple[str, str] | None:
    """(user, host) after FOR; None for the session's own account."""
    if not parser.accept_word("FOR"):
        return None
    if parser.accept_word("CURRENT_USER"):
        if parser.accept_op("("):
            parser.expect_op(")")
        return None
    user = parser.name()
    host = "%"
    if parser.peek.kind is Tok.USER_VAR:  # 'u'@'h' lexes as a name and @h
        host = parser.next().text
    return user, host


def show_grants(ctx: Context) -> Response:
    parser = ctx.parser(2)
    target = _target(parser)
    parser.expect_end()
    session = ctx.session
    own = session.account
    if target is None or (target[0] == own.user and target[1] == own.host):
        current = ctx.server.accounts.get(own.user)  # GRANTs since the login show
        account = current if current is not None and current.host == own.host else own
    else:
        if not own.privileges & Privilege.SELECT:
            raise sql_error(ER_DBACCESS_DENIED_ERROR, own.user, own.host, "mysql")
        user, host = target
        found = ctx.server.accounts.get(user)
        if found is None or found.host != host:  # the heading is out before the lookup
            error = sql_error(ER_NONEXISTING_GRANT, user, host)
            return ResultSet([_heading(user, host)], error=error)
        account = found
    rows: list[Sequence[Cell]] = [(line.encode(),) for line in grant_lines(account)]
    return ResultSet([_heading(account.user, account.host)], rows)


def _heading(user: str, host: str) -> Column:
    return text_column(f"Grants for {user}@{host}", 1024, flags=ColumnFlag.NOT_NULL, decimals=39)
