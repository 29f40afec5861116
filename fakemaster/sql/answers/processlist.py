"""SHOW [FULL] PROCESSLIST: the connections of the fake master as a 10.11 primary lists them,
its own statement as ``Query``/``starting``, replicas streaming as ``Binlog Dump`` (what
pt-slave-find looks for), the others as ``Sleep``. Without PROCESS an account sees its own
connections only, as on the server.

What the fake does not track is shown as an idle server shows it: ``Time`` 0, other
connections' ``db`` NULL, ``Host`` the client's address without its port.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.resultset import Cell, Column, ColumnFlag, ResultSet, text_column
from fakemaster.sql.outcome import Context, Response
from fakemaster.vocabulary.constants import ColumnType

__all__ = ["show_processlist"]

# sql_show.cc: a replica's dump thread once it has sent everything there is.
DUMP_STATE = b"Master has sent all binlog to slave; waiting for more updates"
# Without FULL, Info shows the statement's first 100 characters.
SHORT_INFO = 100


def _columns(full: bool) -> list[Column]:
    number = ColumnFlag.NOT_NULL | ColumnFlag.BINARY
    info = (
        text_column("Info", 201326592, type=ColumnType.LONG_BLOB, decimals=39)
        if full
        else text_column("Info", SHORT_INFO, decimals=39)
    )
    return [
        Column("Id", ColumnType.LONGLONG, length=11, flags=number),
        text_column("User", 128, flags=ColumnFlag.NOT_NULL, decimals=39),
        text_column("Host", 64, flags=ColumnFlag.NOT_NULL, decimals=39),
        text_column("db", 64, decimals=39),
        text_column("Command", 16, flags=ColumnFlag.NOT_NULL, decimals=39),
        Column("Time", ColumnType.LONG, length=7, flags=number),
        text_column("State", 30, decimals=39),
        info,
        Column("Progress", ColumnType.DOUBLE, length=7, flags=number, decimals=3),
    ]


def show_processlist(ctx: Context) -> Response:
    full = bool(ctx.match.group("full"))
    ctx.parser_after(ctx.match.end()).expect_end()
    session = ctx.session
    sees_all = session.account.has_any(Privilege.PROCESS)
    rows: list[Sequence[Cell]] = []
    for thread_id, info in sorted(ctx.server.connections.items()):
        if not sees_all and info.user != session.user:
            continue
        own = thread_id == session.thread_id
        statement = ctx.text if full else ctx.text[:SHORT_INFO]
        if own:
            database = session.database.encode() if session.database is not None else None
            command, state, text = b"Query", b"starting", statement.encode()
        elif info.dumping or info.dump_server_id is not None:
            database, command, state, text = None, b"Binlog Dump", DUMP_STATE, None
        else:
            database, command, state, text = None, b"Sleep", b"", None
        user = info.user.encode() if info.user else b"unauthenticated user"
        row = (str(thread_id).encode(), user, info.host.encode(), database, command, b"0")
        rows.append((*row, state, text, b"0.000"))
    return ResultSet(_columns(full), rows)
