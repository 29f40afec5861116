"""What executing a statement gives: its responses, the state they are sent with, and the
side effects (killing another connection, closing this one) the session carries out.

:class:`Context` is what a statement handler gets: the statement, its tokens and the session.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fakemaster.protocol.charsets import Collation
from fakemaster.protocol.resultset import ResultSet, SqlError
from fakemaster.sql.sqltext import Parser, Token
from fakemaster.sql.state import ServerState, SessionState

__all__ = ["Context", "Handler", "KillRequest", "OkResult", "Outcome", "Response"]


@dataclass(slots=True)
class OkResult:
    session_state: list[bytes] = field(default_factory=list)
    warnings: int = 0
    affected_rows: int = 0


@dataclass(frozen=True, slots=True)
class KillRequest:
    thread_id: int
    query_only: bool


Response = ResultSet | OkResult | SqlError


@dataclass(slots=True)
class Outcome:
    """Answers to one COM_QUERY (several for a multi-statement query) and side effects."""

    responses: list[Response] = field(default_factory=list)
    # The session's status flags and (results, connection) collations right after each
    # response's statement: what its packets are encoded with.
    statuses: list[int] = field(default_factory=list)
    collations: list[tuple[Collation | None, Collation]] = field(default_factory=list)
    kills: list[KillRequest] = field(default_factory=list)
    close_connection: bool = False
    # Set by SHOW WARNINGS, which must not clear the diagnostics it shows.
    keep_diagnostics: bool = False


@dataclass(slots=True)
class Context:
    session: SessionState
    text: str
    tokens: list[Token]
    outcome: Outcome
    match: re.Match[str]
    # From the statement's start to the end of the whole query (what syntax errors quote).
    quote_text: str
    # ``text`` with its comments blanked, same offsets: what patterns on the statement read.
    plain: str = ""
    cuts: tuple[tuple[int, int], ...] = ()  # see :class:`~fakemaster.sql.sqltext.LexedText`
    first_line: int = 1  # the query's line the statement starts on

    @property
    def server(self) -> ServerState:
        return self.session.server

    def parser(self, from_index: int = 0) -> Parser:
        parser = Parser(self.text, self.tokens, self.quote_text, self.cuts, self.first_line)
        parser.index = from_index
        return parser

    def parser_after(self, pattern_end: int) -> Parser:
        """A parser positioned at the first token at or after text offset ``pattern_end``."""
        for index, token in enumerate(self.tokens):
            if token.start >= pattern_end:
                return self.parser(index)
        return self.parser(len(self.tokens) - 1)


Handler = Callable[[Context], Response]
