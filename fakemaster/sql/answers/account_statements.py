"""CREATE USER, DROP USER, GRANT and REVOKE: the server's accounts changed as MariaDB 10.11
changes them, for the logins that follow (and SHOW GRANTS at once).

Global (``ON *.*``) and database (``ON db.*``, ``ON *`` for the current one) grants; table and
column grants, roles, ``IDENTIFIED BY PASSWORD``/``VIA`` and a second host for one user name
are ER_NOT_SUPPORTED_YET. The errors are the server's: CREATE USER and DROP USER need CREATE
USER (1227), GRANT and REVOKE need GRANT OPTION and, for GRANT, the privileges granted (1045),
an account that exists or not as the statement needs it is 1396 naming each (the others in the
list are still created or dropped), GRANT to an unknown account 1133, a global privilege on a
database 1221, REVOKE of a database grant there is not 1141; ``IF [NOT] EXISTS`` turns 1396
into notes 1973/1974.
"""

from __future__ import annotations

from dataclasses import replace

from fakemaster.config.account_spec import PRIVILEGE_NAMES
from fakemaster.config.accounts import (
    ALL_PRIVILEGES,
    DATABASE_PRIVILEGES,
    NO_PRIVILEGES,
    Account,
    Privilege,
)
from fakemaster.protocol.resultset import SqlError, sql_error
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.sqltext import Parser, Tok
from fakemaster.vocabulary.errcodes import (
    ER_ACCESS_DENIED_ERROR,
    ER_CANNOT_USER,
    ER_DBACCESS_DENIED_ERROR,
    ER_NO_DB_ERROR,
    ER_NONEXISTING_GRANT,
    ER_NOT_SUPPORTED_YET,
    ER_PASSWORD_NO_MATCH,
    ER_USER_CREATE_EXISTS,
    ER_USER_DROP_EXISTS,
    ER_WRONG_USAGE,
)

__all__ = ["create_user", "drop_user", "grant", "revoke"]

_ALL = ("ALL", "ALL PRIVILEGES")


def _user(parser: Parser) -> tuple[str, str]:
    """``user[@host]`` (host ``%`` when left out)."""
    user = parser.name()
    host = "%"
    if parser.peek.kind is Tok.USER_VAR:  # 'u'@'h' lexes as a name and @h
        host = parser.next().text
    return user, host


def _quoted(user: str, host: str) -> str:
    return f"'{user}'@'{host}'"


def _password(parser: Parser) -> str | None:
    """``IDENTIFIED BY 'password'`` if it follows."""
    if not parser.accept_word("IDENTIFIED"):
        return None
    after = parser.tokens[min(parser.index + 1, len(parser.tokens) - 1)]
    if parser.peek.is_word("VIA", "WITH") or after.is_word("PASSWORD"):
        raise sql_error(ER_NOT_SUPPORTED_YET, "IDENTIFIED BY PASSWORD or VIA a plugin")
    parser.expect_word("BY")
    token = parser.next()
    if token.kind is not Tok.STRING:
        raise parser.error(token)
    return token.text


def _existing(ctx: Context, user: str, host: str) -> Account | None:
    account = ctx.server.accounts.get(user)
    return account if account is not None and account.host == host else None


def _done(
    ctx: Context, operation: str, failed: list[str], notes: list[tuple[int, str]]
) -> Response:
    """OK with the notes of IF [NOT] EXISTS, or 1396 naming every account that failed."""
    if failed:
        raise sql_error(ER_CANNOT_USER, operation, ",".join(failed))
    if notes:
        ctx.session.diagnostics = [("Note", code, text) for code, text in notes]
        ctx.outcome.keep_diagnostics = True
    return OkResult(warnings=len(notes))


def create_user(ctx: Context) -> Response:
    """CREATE [OR REPLACE] USER [IF NOT EXISTS] user [IDENTIFIED BY 'pw'] [, ...]"""
    parser = ctx.parser(1)
    or_replace = False
    if parser.accept_word("OR"):
        parser.expect_word("REPLACE")
        or_replace = True
    parser.expect_word("USER")
    if_not_exists = False
    if parser.accept_word("IF"):
        parser.expect_word("NOT")
        parser.expect_word("EXISTS")
        if_not_exists = True
    specs: list[tuple[str, str, str]] = []
    while True:
        user, host = _user(parser)
        specs.append((user, host, _password(parser) or ""))
        if not parser.accept_op(","):
            break
    parser.expect_end()
    ctx.session.require(Privilege.CREATE_USER)
    failed: list[str] = []
    notes: list[tuple[int, str]] = []
    accounts = ctx.server.accounts
    for user, host, password in specs:
        taken = accounts.get(user)
        if taken is not None and taken.host != host:
            raise sql_error(ER_NOT_SUPPORTED_YET, "a second host for one user name")
        if taken is not None and not or_replace:
            if if_not_exists:
                note = sql_error(ER_USER_CREATE_EXISTS, user, host).message
                notes.append((ER_USER_CREATE_EXISTS, note))
            else:
                failed.append(_quoted(user, host))
            continue
        accounts[user] = Account(user=user, password=password, host=host)
    return _done(ctx, "CREATE USER", failed, notes)


def drop_user(ctx: Context) -> Response:
    """DROP USER [IF EXISTS] user [, ...]"""
    parser = ctx.parser(1)
    parser.expect_word("USER")
    if_exists = False
    if parser.accept_word("IF"):
        parser.expect_word("EXISTS")
        if_exists = True
    users = [_user(parser)]
    while parser.accept_op(","):
        users.append(_user(parser))
    parser.expect_end()
    ctx.session.require(Privilege.CREATE_USER)
    failed: list[str] = []
    notes: list[tuple[int, str]] = []
    for user, host in users:
        if _existing(ctx, user, host) is not None:
            del ctx.server.accounts[user]
        elif if_exists:
            notes.append((ER_USER_DROP_EXISTS, sql_error(ER_USER_DROP_EXISTS, user, host).message))
        else:
            failed.append(_quoted(user, host))
    return _done(ctx, "DROP USER", failed, notes)


def _privileges(parser: Parser) -> tuple[Privilege, bool]:
    """The privilege list before ON: (privileges, whether it was ALL [PRIVILEGES])."""
    held = NO_PRIVILEGES
    every = False
    while True:
        first = parser.index
        words: list[str] = []
        while parser.peek.kind is Tok.WORD and not parser.peek.is_word("ON", "FROM"):
            words.append(parser.next().text.upper())
        name = " ".join(words)
        if not words:
            raise parser.error()
        if name in _ALL:
            every = True  # ALL of the level the grant is on
        elif name in PRIVILEGE_NAMES:
            held |= PRIVILEGE_NAMES[name]
        else:
            # MariaDB reads an unknown name as a role and stops at what follows it.
            raise parser.error(parser.tokens[first + 1])
        if not parser.accept_op(","):
            return held, every


def _level(parser: Parser, ctx: Context) -> str | None:
    """The database of ``ON db.*`` / ``ON *`` (the current one), None for ``ON *.*``."""
    parser.accept_word("TABLE")
    if parser.accept_op("*"):
        if parser.accept_op("."):
            parser.expect_op("*")
            return None
        if ctx.session.database is None:
            raise sql_error(ER_NO_DB_ERROR)
        return ctx.session.database
    database = parser.name()
    if not parser.accept_op("."):
        raise sql_error(ER_NOT_SUPPORTED_YET, "table-level GRANT and REVOKE")
    if not parser.accept_op("*"):
        raise sql_error(ER_NOT_SUPPORTED_YET, "table-level GRANT and REVOKE")
    return database


def _denied(ctx: Context, database: str | None) -> SqlError:
    """1045 for a global grant, 1044 naming the database for a database one."""
    own = ctx.session.account
    if database is not None:
        return sql_error(ER_DBACCESS_DENIED_ERROR, own.user, own.host, database)
    return sql_error(ER_ACCESS_DENIED_ERROR, own.user, own.host, "YES" if own.password else "NO")


def _granted(account: Account, database: str | None, privileges: Privilege) -> Account:
    if database is None:
        return replace(account, privileges=account.privileges | privileges)
    current = dict(account.database_privileges)
    current[database] = current.get(database, NO_PRIVILEGES) | privileges
    return replace(account, database_privileges=tuple(current.items()))


def grant(ctx: Context) -> Response:
    """GRANT privileges ON *.* | db.* | * TO user [IDENTIFIED BY 'pw'] [, ...]
    [WITH GRANT OPTION]"""
    parser = ctx.parser(1)
    privileges, every = _privileges(parser)
    parser.expect_word("ON")
    database = _level(parser, ctx)
    parser.expect_word("TO")
    grantees: list[tuple[str, str, str | None]] = []
    while True:
        user, host = _user(parser)
        grantees.append((user, host, _password(parser)))
        if not parser.accept_op(","):
            break
    if parser.accept_word("WITH"):
        parser.expect_word("GRANT")
        parser.expect_word("OPTION")
        privileges |= Privilege.GRANT_OPTION
    parser.expect_end()
    scope = DATABASE_PRIVILEGES if database is not None else ALL_PRIVILEGES
    if every:
        privileges |= scope & ~Privilege.GRANT_OPTION
    if database is not None and privileges & ~DATABASE_PRIVILEGES:
        raise sql_error(ER_WRONG_USAGE, "DB GRANT", "GLOBAL PRIVILEGES")
    own = ctx.session.account
    held = own.privileges if database is None else own.privileges_on(database)
    if not held & Privilege.GRANT_OPTION or privileges & ~held:
        raise _denied(ctx, database)
    for user, host, password in grantees:
        account = _existing(ctx, user, host)
        if account is None:
            raise sql_error(ER_PASSWORD_NO_MATCH)
        account = _granted(account, database, privileges)
        if password is not None:
            account = replace(account, password=password)
        ctx.server.accounts[user] = account
    return OkResult()


def revoke(ctx: Context) -> Response:
    """REVOKE privileges ON *.* | db.* | * FROM user [, ...];
    REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, ...]"""
    parser = ctx.parser(1)
    privileges, every = _privileges(parser)
    everything = parser.peek.is_word("FROM")
    if everything and not (every and Privilege.GRANT_OPTION in privileges):
        raise parser.error()
    database: str | None = None
    if not everything:
        parser.expect_word("ON")
        database = _level(parser, ctx)
    parser.expect_word("FROM")
    users = [_user(parser)]
    while parser.accept_op(","):
        users.append(_user(parser))
    parser.expect_end()
    own = ctx.session.account
    held = own.privileges if database is None else own.privileges_on(database)
    if not held & (Privilege.GRANT_OPTION | Privilege.CREATE_USER):
        raise _denied(ctx, database)
    for user, host in users:
        account = _existing(ctx, user, host)
        if account is None:
            raise sql_error(ER_NONEXISTING_GRANT, user, host)
        ctx.server.accounts[user] = _revoked(account, database, privileges, every, everything)
    return OkResult()


def _revoked(
    account: Account, database: str | None, privileges: Privilege, every: bool, everything: bool
) -> Account:
    if everything:
        return replace(
            account, privileges=NO_PRIVILEGES, database_privileges=(), databases=frozenset()
        )
    if database is None:
        taken = ALL_PRIVILEGES if every else privileges
        return replace(account, privileges=account.privileges & ~taken)
    current = dict(account.database_privileges)
    if database not in current:
        raise sql_error(ER_NONEXISTING_GRANT, account.user, account.host)
    taken = DATABASE_PRIVILEGES if every else privileges
    left = current[database] & ~taken
    if left:
        current[database] = left
    else:
        del current[database]
    return replace(account, database_privileges=tuple(current.items()))
