"""SELECT of aggregates over a table's rows, pt-table-checksum's chunk checksum: ``SELECT
COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(CONCAT_WS('#', cols...)) AS UNSIGNED)),
10, 16)), 0) AS crc FROM db.t [FORCE INDEX (k)] [WHERE ...] [LOCK IN SHARE MODE]``, and the same
row for ``INSERT|REPLACE ... SELECT`` (:mod:`~fakemaster.sql.answers.client_writes`).

The values come from :mod:`~fakemaster.sql.row_expressions`; the columns are described as
10.11 describes them (COUNT and BIT_XOR: BIGINT; CONV: 65 characters; LOWER and COALESCE:
their arguments').
"""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.protocol.resultset import Column, ColumnFlag, ResultSet, sql_error, text_column
from fakemaster.sql.answers.select import accept_select_options
from fakemaster.sql.answers.table_select import Source, table_source, where_condition, zone_offset
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.row_expressions import RowScope, Value, evaluate_group, has_aggregate
from fakemaster.sql.sqltext import Expr, FunctionCall, Literal, Parser, Tok, Word
from fakemaster.sql.state import SessionState
from fakemaster.sql.tables.catalogue import CellValue
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import ER_NOT_SUPPORTED_YET
from fakemaster.vocabulary.packets import ServerStatus

__all__ = [
    "aggregate_row",
    "aggregate_select",
    "is_row_aggregate",
    "row_parser",
    "selected_expressions",
]


def is_row_aggregate(ctx: Context) -> bool:
    """Whether the select list (before its FROM) calls BIT_XOR: this module answers it."""
    for index, token in enumerate(ctx.tokens):
        if token.is_word("FROM"):
            return False
        if token.is_word("BIT_XOR") and ctx.tokens[index + 1].is_op("("):
            return True
    return False


def selected_expressions(parser: Parser) -> list[tuple[Expr, str]]:
    """The select list: each expression and its name (its alias, else its text)."""
    items = [_aliased(parser)]
    while parser.accept_op(","):
        items.append(_aliased(parser))
    return items


def _aliased(parser: Parser) -> tuple[Expr, str]:
    start = parser.peek
    expr = parser.expression()
    shown = parser.source(start, parser.index)
    if parser.accept_word("AS"):
        return expr, parser.name()
    if parser.peek.kind in (Tok.WORD, Tok.QUOTED_IDENT) and not parser.peek.is_word("FROM"):
        return expr, parser.name()
    return expr, shown


def aggregate_row(ctx: Context, parser: Parser) -> tuple[list[Column], list[Value], bool]:
    """The select list's columns and its one row over the table, and whether the read used
    no index; the parser is past the SELECT."""
    accept_select_options(parser)
    items = selected_expressions(parser)
    if not any(has_aggregate(expr) for expr, _ in items):
        raise sql_error(ER_NOT_SUPPORTED_YET, "expressions over each row of a table")
    parser.expect_word("FROM")
    first = parser.name()
    database: str | None = None
    name = first
    if parser.accept_op("."):
        database, name = first, parser.name()
    source = table_source(ctx.session, database, name)
    if parser.accept_word("FORCE", "USE", "IGNORE"):
        parser.expect_word("INDEX", "KEY")
        parser.expect_op("(")
        parser.name()
        parser.expect_op(")")
    rows: Sequence[Sequence[CellValue]] = source.rows
    if parser.accept_word("WHERE"):
        predicate = where_condition(parser, source, ctx.session)
        rows = [row for row in rows if predicate(row)]
    if parser.accept_word("ORDER"):  # of the one row an aggregate gives: changes nothing
        parser.expect_word("BY")
        parser.name()
        while parser.accept_op(","):
            parser.name()
    if parser.accept_word("LOCK"):
        for word in ("IN", "SHARE", "MODE"):
            parser.expect_word(word)
    elif parser.accept_word("FOR"):
        parser.expect_word("UPDATE")
    parser.expect_end()
    scope = scope_of(source, ctx.session)
    columns = [_describe(expr, shown, source) for expr, shown in items]
    values = [evaluate_group(expr, scope, rows) for expr, _ in items]
    return columns, values, not (source.constrained & source.indexed)


class RowParser(Parser):
    """The expressions of a select list over rows: also ``expr + number``, the form
    pt-table-checksum reads a TIMESTAMP in (``ts + 0``: its number, not its text, which
    depends on the time zone)."""

    def _shifted(self, moment: Expr) -> Expr:
        moment = super()._shifted(moment)
        while self.peek.is_op("+") and self.tokens[self.index + 1].kind is Tok.NUMBER:
            self.next()
            moment = FunctionCall("PLUS", (moment, self.operand()))
        return moment


def row_parser(ctx: Context, from_index: int) -> RowParser:
    parser = RowParser(ctx.text, ctx.tokens, ctx.quote_text, ctx.cuts, ctx.first_line)
    parser.index = from_index
    return parser


def aggregate_select(ctx: Context) -> Response:
    columns, values, scanned = aggregate_row(ctx, row_parser(ctx, 1))
    cells = [
        None if v is None else (v if isinstance(v, bytes) else str(v).encode()) for v in values
    ]
    status = ServerStatus.QUERY_NO_INDEX_USED if scanned else 0
    return ResultSet(columns, [cells], extra_status=(status, status))


def scope_of(source: Source, session: SessionState) -> RowScope:
    """How the table's cells are read: text in its character set, bytes for binary columns."""
    binary = [
        charset is None and not numeric
        for charset, numeric in zip(source.text_charsets, source.numeric, strict=True)
    ]
    offset = zone_offset(str(session.variables["time_zone"]))
    return RowScope(source.names, binary, offset, session.database)


_BIGINT = ColumnFlag.NOT_NULL | ColumnFlag.BINARY


def _describe(expr: Expr, name: str, source: Source) -> Column:
    if isinstance(expr, FunctionCall) and expr.name == "COUNT":
        return Column(name, ColumnType.LONGLONG, 21, _BIGINT)
    if isinstance(expr, FunctionCall) and expr.name == "BIT_XOR":
        return Column(name, ColumnType.LONGLONG, 21, _BIGINT | ColumnFlag.UNSIGNED)
    shape = _text_shape(expr, source)
    if shape is None:
        raise sql_error(ER_NOT_SUPPORTED_YET, "this expression over a table's rows")
    chars, nullable = shape
    return text_column(name, chars, flags=0 if nullable else ColumnFlag.NOT_NULL)


def _text_shape(expr: Expr, source: Source) -> tuple[int, bool] | None:
    """(characters, nullable) of a text result, as 10.11 sizes it; None: not modelled."""
    if isinstance(expr, Literal):
        return len(expr.text), expr.value is None
    if isinstance(expr, Word) or not isinstance(expr, FunctionCall):
        return None
    if expr.name == "CONV":
        return 65, True
    if expr.name in ("LOWER", "LCASE") and len(expr.args) == 1:
        return _text_shape(expr.args[0], source)
    if expr.name == "COALESCE" and expr.args:
        shapes = [_text_shape(arg, source) for arg in expr.args]
        if any(shape is None for shape in shapes):
            return None
        known = [shape for shape in shapes if shape is not None]
        return max(c for c, _ in known), all(n for _, n in known)
    return None
