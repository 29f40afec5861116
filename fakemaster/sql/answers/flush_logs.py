"""FLUSH [LOCAL | NO_WRITE_TO_BINLOG] LOGS | BINARY LOGS | ENGINE|ERROR|GENERAL|SLOW|RELAY LOGS
[, ...]: RELOAD, as on the server; the binlog rotates once per statement that names LOGS or
BINARY LOGS, where the served binlog can rotate (:class:`~fakemaster.sql.state.RotatingBinlog`).

A binlog read from a directory another server writes cannot be rotated from here: the statement
is answered OK and the files stay as they are (README, "SQL statements"). Options a fake master
does not model (``DELETE_DOMAIN_ID``, ``FOR CHANNEL``, STATUS, PRIVILEGES ...) are left to
:func:`~fakemaster.sql.answers.unsupported.not_supported`.
"""

from __future__ import annotations

from fakemaster.config.accounts import Privilege
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.sqltext import Parser
from fakemaster.sql.state import RotatingBinlog

__all__ = ["flush_logs"]

# The kinds of log FLUSH names; only these two end the binlog's current file.
_LOG_KINDS = ("BINARY", "ENGINE", "ERROR", "GENERAL", "SLOW", "RELAY")
_ROTATING = (None, "BINARY")


def _log_option(parser: Parser) -> tuple[bool, str | None] | None:
    """(one option read, its kind) for ``[kind] LOGS``; None for anything else."""
    start = parser.index
    kind = parser.accept_word(*_LOG_KINDS)
    if parser.accept_word("LOGS") is None:
        parser.index = start
        return None
    return True, kind.text.upper() if kind is not None else None


def flush_logs(ctx: Context) -> Response:
    parser = ctx.parser(1)
    parser.accept_word("LOCAL", "NO_WRITE_TO_BINLOG")
    rotate = False
    while True:
        option = _log_option(parser)
        if option is None:
            return not_supported(ctx)
        rotate = rotate or option[1] in _ROTATING
        if parser.accept_op(",") is None:
            break
    if not parser.at_end():
        return not_supported(ctx)
    ctx.session.require(Privilege.RELOAD)
    positions = ctx.server.positions
    if rotate and isinstance(positions, RotatingBinlog):
        positions.rotate()
    return OkResult()
