"""SELECT without tables: a one-row result of expressions, FROM DUAL, WHERE and LIMIT."""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.protocol.resultset import Cell, ResultSet, SqlError, sql_error
from fakemaster.sql.expressions import Item, evaluate
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Literal, Parser, Tok
from fakemaster.vocabulary.errcodes import (
    ER_BAD_FIELD_ERROR,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NO_TABLES_USED,
)

__all__ = ["SELECT_OPTIONS", "accept_select_options", "select"]

# The words MariaDB takes between SELECT and the select list, in any order (select_option).
SELECT_OPTIONS = (
    "ALL",
    "DISTINCT",
    "DISTINCTROW",
    "HIGH_PRIORITY",
    "STRAIGHT_JOIN",
    "SQL_SMALL_RESULT",
    "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT",
    "SQL_CACHE",
    "SQL_NO_CACHE",
    "SQL_CALC_FOUND_ROWS",
)


def accept_select_options(parser: Parser) -> bool:
    """Pass over the option words after SELECT; whether DISTINCT (or DISTINCTROW) was one."""
    distinct = False
    while (option := parser.accept_word(*SELECT_OPTIONS)) is not None:
        distinct = distinct or option.is_word("DISTINCT", "DISTINCTROW")
    return distinct


def select(ctx: Context) -> Response:
    """A SELECT of expressions, without tables (its option words change nothing here)."""
    parser = ctx.parser(1)
    accept_select_options(parser)
    items: list[Item] = []
    session = ctx.session
    star = False
    while True:
        start_index = parser.index
        start = parser.peek
        if start.kind is Tok.END:
            raise parser.error()
        if parser.accept_op("*"):
            star = True
            if not parser.accept_op(","):
                break
            continue
        expr = parser.expression()
        text = parser.source(start, parser.index)
        if isinstance(expr, Literal) and isinstance(expr.value, str):
            text = expr.value
        alias = _alias(parser)
        deferred_error: SqlError | None = None
        try:
            items.append(evaluate(expr, alias if alias is not None else text, session, "SELECT"))
        except SqlError as error:
            if error.errno != ER_BAD_FIELD_ERROR:
                raise
            deferred_error = error  # checked after the whole statement parsed, as MariaDB does
        if deferred_error is not None:
            _finish_select(parser, ctx)
            raise deferred_error
        if not parser.accept_op(","):
            break
        if parser.index == start_index:
            raise parser.error()
    limit = _finish_select(parser, ctx)
    if star:
        raise sql_error(ER_NO_TABLES_USED)
    rows: list[Sequence[Cell]] = []
    if limit != 0:
        rows.append([item.value.text() for item in items])
    return ResultSet([item.column for item in items], rows)


def _alias(parser: Parser) -> str | None:
    if parser.accept_word("AS"):
        return parser.name()
    token = parser.peek
    if token.kind in (Tok.QUOTED_IDENT, Tok.STRING):
        parser.next()
        return token.text
    if token.kind is Tok.WORD and token.text.upper() not in _SELECT_TAIL_WORDS:
        parser.next()
        return token.text
    return None


_SELECT_TAIL_WORDS = frozenset(
    "FROM WHERE LIMIT GROUP ORDER HAVING INTO FOR UNION LOCK PROCEDURE WINDOW".split()
)


def _finish_select(parser: Parser, ctx: Context) -> int | None:
    """Parse FROM/LIMIT after the select list; returns the LIMIT row count, if any."""
    if parser.accept_word("FROM"):
        if parser.accept_word("DUAL"):
            pass
        else:
            first = parser.name()
            if parser.accept_op("."):
                table = parser.name()
                raise sql_error(ER_NO_SUCH_TABLE, first, table)
            if ctx.session.database is None:
                raise sql_error(ER_NO_DB_ERROR)
            raise sql_error(ER_NO_SUCH_TABLE, ctx.session.database, first)
    if parser.accept_word("WHERE"):
        condition = evaluate(parser.expression(), "", ctx.session, "WHERE").value.as_number()
        if not condition:
            _limit(parser)
            parser.expect_end()
            return 0
    limit = _limit(parser)
    parser.expect_end()
    return limit


def _limit(parser: Parser) -> int | None:
    """``LIMIT n``, ``LIMIT offset, n``, ``LIMIT n OFFSET offset`` for a one-row result: the
    number of rows kept (None: no LIMIT)."""
    if not parser.accept_word("LIMIT"):
        return None
    first_number = parser.integer()
    if parser.accept_op(","):
        offset, count = first_number, parser.integer()
    else:
        count = first_number
        offset = parser.integer() if parser.accept_word("OFFSET") else 0
    return 0 if offset else count
