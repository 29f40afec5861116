"""Statements MariaDB knows that a fake master does not carry out: ER_NOT_SUPPORTED_YET
(OK when the config is lenient) after the privilege check a real primary makes first; a SHOW
of something MariaDB does not have is the syntax error it is there.
"""

from __future__ import annotations

import re

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.resultset import sql_error
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.sqltext import Tok
from fakemaster.vocabulary.errcodes import ER_NOT_SUPPORTED_YET

__all__ = ["not_supported"]


# SHOW statements MariaDB 10.11 knows: first word -> the second words it allows (None: any).
_SHOW_GRAMMAR: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(
        "DATABASES SCHEMAS TABLES COLUMNS FIELDS INDEX INDEXES KEYS CREATE GRANTS PROCESSLIST "
        "PRIVILEGES ENGINES ENGINE PLUGINS CHARSET COLLATION TRIGGERS EVENTS PROCEDURE FUNCTION "
        "PACKAGE PROFILE PROFILES AUTHORS CONTRIBUTORS OPEN TABLE FULL EXTENDED STORAGE COUNT "
        "EXPLAIN ANALYZE USER_STATISTICS CLIENT_STATISTICS INDEX_STATISTICS TABLE_STATISTICS "
        "QUERY_RESPONSE_TIME LOCALES".split()
    ),
    "CHARACTER": frozenset({"SET"}),
    "MASTER": frozenset({"STATUS", "LOGS"}),
    "BINARY": frozenset({"LOGS"}),
    "BINLOG": frozenset({"STATUS", "EVENTS"}),
    "SLAVE": frozenset({"STATUS", "HOSTS"}),
    "REPLICA": frozenset({"STATUS", "HOSTS"}),
    "RELAYLOG": frozenset({"EVENTS"}),
    "ALL": frozenset({"SLAVES", "REPLICAS"}),
    "GLOBAL": frozenset({"VARIABLES", "STATUS"}),
    "SESSION": frozenset({"VARIABLES", "STATUS"}),
    "LOCAL": frozenset({"VARIABLES", "STATUS"}),
}


def not_supported(ctx: Context) -> Response:
    """ER_NOT_SUPPORTED_YET for a statement MariaDB knows (OK when the config is lenient); a
    SHOW of something MariaDB does not have is the syntax error it would be there."""
    tokens = ctx.tokens
    if tokens[0].is_word("SHOW"):
        first, second = tokens[1], tokens[2] if len(tokens) > 2 else tokens[1]
        if first.kind is not Tok.WORD or first.text.upper() not in _SHOW_GRAMMAR:
            return ctx.parser(1).error(first)
        allowed = _SHOW_GRAMMAR[first.text.upper()]
        if allowed is not None and not (second.kind is Tok.WORD and second.text.upper() in allowed):
            return ctx.parser(2).error(second)
    for pattern, accepted in _PRIVILEGED_UNSUPPORTED:
        if pattern.match(ctx.plain):
            ctx.session.require(accepted)
            break
    if not ctx.server.config.strict_queries:
        return OkResult()
    return sql_error(ER_NOT_SUPPORTED_YET, tokens[0].text.upper())


# Statements the fake master does not carry out but a user without these privileges is refused
# anyway, before anything else (10.11.19's answers to a replication account).
_PRIVILEGED_UNSUPPORTED: tuple[tuple[re.Pattern[str], Privilege], ...] = tuple(
    (re.compile(pattern, re.I | re.S), accepted)
    for pattern, accepted in (
        (r"(?:FLUSH|RESET)\b", Privilege.RELOAD),
        (r"PURGE\s+(?:BINARY|MASTER)\s+LOGS\b", Privilege.SUPER | Privilege.BINLOG_ADMIN),
        (
            r"SHOW\s+(?:ALL\s+)?(?:SLAVE|REPLICA)S?\b.*\bSTATUS\b",
            Privilege.SUPER | Privilege.SLAVE_MONITOR,
        ),
        (
            r"(?:START|STOP)\s+(?:ALL\s+)?(?:SLAVE|REPLICA)S?\b|CHANGE\s+MASTER\b",
            Privilege.SUPER | Privilege.REPLICATION_SLAVE_ADMIN,
        ),
        (r"SHOW\s+BINLOG\s+EVENTS\b", Privilege.BINLOG_MONITOR),
        (r"SHOW\s+RELAYLOG\s+EVENTS\b", Privilege.SLAVE_MONITOR),
        (r"SHUTDOWN\b", Privilege.SHUTDOWN),
    )
)
