"""SHOW ENGINE name {STATUS | MUTEX | LOGS}: what an engine reports about itself, as MariaDB
10.11 answers it (audit tools send it for every engine they look at: pt-mysql-summary asks
``SHOW ENGINE NDB STATUS``).

An engine the server does not have is ER_UNKNOWN_STORAGE_ENGINE, before any privilege check
(the name is resolved while parsing). STATUS and MUTEX need PROCESS. The engines with nothing
to report (MyISAM, Aria, CSV, MEMORY, ...; InnoDB's MUTEX and LOGS) answer an empty
Type/Name/Status set. InnoDB's STATUS (the monitor output), performance_schema's STATUS (its
memory sizes), ``ALL`` and LOGS (which needs FILE) describe a running server's internals and are
left to :func:`~fakemaster.sql.answers.unsupported.not_supported`.
"""

from __future__ import annotations

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.resultset import ColumnFlag, ResultSet, sql_error, text_column
from fakemaster.sql.answers.show import ENGINE_NAMES
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Tok
from fakemaster.vocabulary.errcodes import ER_UNKNOWN_STORAGE_ENGINE

__all__ = ["show_engine"]

# (engine, what is asked) pairs whose answer is a running server's internals.
_NOT_MODELLED = {("INNODB", "STATUS"), ("PERFORMANCE_SCHEMA", "STATUS")}


def show_engine(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    token = parser.next()
    if token.kind not in (Tok.WORD, Tok.QUOTED_IDENT, Tok.STRING):
        raise parser.error(token)
    kind = parser.expect_word("STATUS", "MUTEX", "LOGS").text.upper()
    parser.expect_end()
    name = token.text
    if token.kind is Tok.WORD and name.upper() == "ALL":
        return not_supported(ctx)
    if name.upper() not in {engine.upper() for engine in ENGINE_NAMES}:
        raise sql_error(ER_UNKNOWN_STORAGE_ENGINE, name)
    if kind == "LOGS" or (name.upper(), kind) in _NOT_MODELLED:
        return not_supported(ctx)
    ctx.session.require(Privilege.PROCESS)
    columns = [
        text_column("Type", 10, flags=ColumnFlag.NOT_NULL),
        text_column("Name", 512, flags=ColumnFlag.NOT_NULL),
        text_column("Status", 10, flags=ColumnFlag.NOT_NULL),
    ]
    return ResultSet(columns, [])
