"""Statements about the connection itself: KILL, USE (and COM_INIT_DB), BEGIN, COMMIT and
ROLLBACK.
"""

from __future__ import annotations

import re

from fakemaster.config.accounts import INFORMATION_SCHEMA, Privilege
from fakemaster.config.variables import SYSTEM_VARIABLES
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import SessionTrack, session_state_entry, sql_error
from fakemaster.sql.answers.set_statement import set_type_value
from fakemaster.sql.outcome import Context, KillRequest, OkResult, Response
from fakemaster.sql.sqltext import Tok, unknown_column
from fakemaster.sql.state import SessionState
from fakemaster.vocabulary.errcodes import (
    ER_BAD_DB_ERROR,
    ER_CONNECTION_KILLED,
    ER_DBACCESS_DENIED_ERROR,
    ER_KILL_DENIED_ERROR,
    ER_NO_SUCH_THREAD,
    ER_QUERY_INTERRUPTED,
    ER_WRONG_DB_NAME,
)

__all__ = [
    "apply_client_capabilities",
    "KILL_OTHER_USER_PRIVILEGES",
    "begin",
    "change_database",
    "end_transaction",
    "kill",
    "use_database",
]


# What KILL of another user's connection needs.
KILL_OTHER_USER_PRIVILEGES = Privilege.SUPER | Privilege.CONNECTION_ADMIN


def kill(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    negative = parser.accept_op("-") is not None
    token = parser.next()
    if token.kind is Tok.WORD:
        raise unknown_column(token.text, "KILL")
    if token.kind is not Tok.NUMBER or not token.text.isdigit():
        raise parser.error(token)
    parser.expect_end()
    # The id is read as an unsigned 64-bit number: KILL -1 names thread 18446744073709551615.
    thread_id = (-int(token.text) if negative else int(token.text)) % (1 << 64)
    query_only = (ctx.match.group("what") or "").upper() == "QUERY"
    server = ctx.server
    session = ctx.session
    target = server.connections.get(thread_id)
    if target is None:
        raise sql_error(ER_NO_SUCH_THREAD, thread_id)
    if target.user != session.user and not session.account.has_any(KILL_OTHER_USER_PRIVILEGES):
        raise sql_error(ER_KILL_DENIED_ERROR, thread_id)
    if thread_id == session.thread_id:
        if query_only:
            raise sql_error(ER_QUERY_INTERRUPTED)  # the KILL statement is the query it interrupts
        ctx.outcome.close_connection = True
        raise sql_error(ER_CONNECTION_KILLED)
    ctx.outcome.kills.append(KillRequest(thread_id, query_only))
    return OkResult()


def use_database(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    name = parser.name()
    parser.expect_end()
    return change_database(ctx.session, name)


def apply_client_capabilities(session: SessionState, capabilities: int) -> None:
    """What a client's capability flags change in its new session, as MariaDB's login does:
    CLIENT_IGNORE_SPACE adds IGNORE_SPACE to sql_mode, CLIENT_INTERACTIVE makes wait_timeout
    interactive_timeout (COM_RESET_CONNECTION's fresh session has neither, as in MariaDB)."""
    variables = session.variables
    if capabilities & Capability.IGNORE_SPACE:
        mode = f"IGNORE_SPACE,{variables['sql_mode']}"
        variables["sql_mode"] = set_type_value(SYSTEM_VARIABLES["sql_mode"], "sql_mode", mode, mode)
    if capabilities & Capability.INTERACTIVE:
        variables["wait_timeout"] = variables["interactive_timeout"]


def change_database(session: SessionState, name: str) -> OkResult:
    """USE / COM_INIT_DB / the database of the handshake: ER_DBACCESS_DENIED_ERROR for a
    database the account may not use (whether it exists or not), then ER_BAD_DB_ERROR for one
    the server does not have. Names are case-sensitive but for information_schema's, as on Linux."""
    if not _valid_database_name(name):
        # check_db_name first, as mysql_change_db does; the message stops at a NUL.
        raise sql_error(ER_WRONG_DB_NAME, name.split("\0", 1)[0][:100])
    account = session.account
    if not account.may_use(name):
        raise sql_error(ER_DBACCESS_DENIED_ERROR, account.user, account.host, name)
    actual = name if name.lower() != INFORMATION_SCHEMA else INFORMATION_SCHEMA
    server = session.server
    known = actual in server.config.databases  # before reading the served tables' catalogue
    if not known and actual not in server.databases():
        raise sql_error(ER_BAD_DB_ERROR, name)
    session.database = actual
    if actual == "information_schema":
        session.variables["character_set_database"] = "utf8mb3"
        session.variables["collation_database"] = "utf8mb3_general_ci"
    else:
        session.variables["character_set_database"] = session.server.globals["character_set_server"]
        session.variables["collation_database"] = session.server.globals["collation_server"]
    state = []
    if session.variables.get("session_track_schema"):
        state.append(session_state_entry(SessionTrack.SCHEMA, actual.encode()))
    return OkResult(session_state=state)


def _valid_database_name(name: str) -> bool:
    """As MariaDB 10.11's check_db_name: at most 64 characters, no trailing space, and (sent
    with COM_INIT_DB, which counts its bytes) no NUL."""
    return len(name) <= 64 and not name.endswith(" ") and "\0" not in name


def begin(ctx: Context) -> Response:
    # Imported here: this module is loaded at every first login, the snapshot answers (and
    # the table catalogue under them) only by a client that asks for a transaction.
    from fakemaster.sql.answers.snapshot import release_table_locks

    session = ctx.session
    release_table_locks(session)
    session.in_transaction = True
    session.snapshot = None  # taken at the first read (REPEATABLE READ)
    session.savepoints.clear()
    session.transaction_read_only = bool(re.search(r"\bREAD\s+ONLY\b", ctx.plain, re.I)) or bool(
        session.variables.get("tx_read_only")
    )
    return OkResult()


def end_transaction(ctx: Context) -> Response:
    ctx.session.snapshot = None
    ctx.session.savepoints.clear()
    ctx.session.in_transaction = False
    ctx.session.transaction_read_only = False
    return OkResult()
