"""SELECT from tables: the served tables (from the catalogue's snapshot) and the
information_schema ones, with column lists, WHERE, ORDER BY and LIMIT.

What snapshot readers send: ``SELECT /*!40001 SQL_NO_CACHE */ `a`, `b` FROM `t``,
``SELECT * FROM db.t WHERE id > 10 ORDER BY id LIMIT 1000`` (chunked reads), and
``information_schema`` lookups (``WHERE table_schema = DATABASE() AND table_name = 't'``).
The WHERE language is comparisons (``= <> != < <= > >= <=>``), ``IN``, ``LIKE``, ``IS [NOT]
NULL``, ``BETWEEN``, ``AND``/``OR``/``NOT`` and parentheses, over columns, literals and
``DATABASE()``: numbers compare as numbers, text as the case-insensitive collations of
information_schema and of ``_ci`` columns do (case folded, trailing spaces ignored), bytes as
bytes. A query on a table that holds no rows is answered without looking past its FROM (what
mariadb-dump asks of information_schema.FILES uses subqueries and GROUP BY).
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from fakemaster.config.accounts import INFORMATION_SCHEMA, Privilege
from fakemaster.protocol.charsets import BINARY_COLLATION_ID, collation_by_id
from fakemaster.protocol.resultset import (
    Cell,
    Column,
    ColumnFlag,
    ResultSet,
    SqlError,
    sql_error,
    with_name,
)
from fakemaster.sql.answers.in_list import ConstantList
from fakemaster.sql.answers.select import accept_select_options
from fakemaster.sql.answers.snapshot import read_snapshot
from fakemaster.sql.like import LikePattern
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.release import defer_release, release_in_slices
from fakemaster.sql.sqltext import Parser, Tok, Token
from fakemaster.sql.state import SessionState
from fakemaster.sql.tables.account_tables import (
    USER_CHARSETS,
    USER_COLUMNS,
    USER_TABLE,
    is_account_table,
    user_rows,
)
from fakemaster.sql.tables.catalogue import (
    CatalogueTable,
    CellValue,
    TimestampCell,
    column_definition,
    find_table,
    general_ci_key,
)
from fakemaster.sql.tables.client_tables import ClientTable
from fakemaster.sql.tables.information_schema import is_columns, is_rows
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import (
    ER_BAD_FIELD_ERROR,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NOT_SUPPORTED_YET,
    ER_TABLE_NOT_LOCKED,
    ER_TABLEACCESS_DENIED_ERROR,
    ER_UNKNOWN_TABLE,
)
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES, FixedBinaryValue
from fakemaster.vocabulary.packets import ServerStatus

__all__ = [
    "Source",
    "client_table_source",
    "encode_cells",
    "from_table",
    "select_from_table",
    "table_source",
    "where_condition",
    "zone_offset",
]


@dataclass(slots=True)
class Source:
    """A table to read: its columns (their result-set definitions), whether each compares as a
    number or as text, and its rows."""

    database: str
    name: str
    names: list[str]
    columns: list[Column]
    numeric: list[bool]
    folded: list[bool]  # text compared case-insensitively
    rows: list[Sequence[CellValue]]
    text_charsets: list[str | None]  # the character set of each text column
    # Positions of the first column of each key (a WHERE on one uses an index).
    indexed: frozenset[int] = frozenset()
    # Columns a WHERE compared with a constant (filled while parsing it).
    constrained: set[int] = field(default_factory=set)
    # UUID/INET4/INET6 columns by position: ordered by their value, not their text.
    typed: dict[int, type[FixedBinaryValue]] = field(default_factory=dict)
    # Status bits reading it adds (a view's: SESSION_STATE_CHANGED, as MariaDB sets it).
    status: int = 0
    # A sequence's table: MariaDB flags no read of it QUERY_NO_INDEX_USED (checked on 10.11).
    sequence: bool = False

    def extra_status(self, scanned: bool) -> tuple[int, int]:
        bits = self.status | (ServerStatus.QUERY_NO_INDEX_USED if scanned else 0)
        return bits, bits

    def position(self, name: str) -> int | None:
        lowered = name.lower()
        for index, known in enumerate(self.names):
            if known.lower() == lowered:
                return index
        return None


def _from_index(tokens: list[Token]) -> int | None:
    """The index of the FROM of a top-level select naming a table (not DUAL), if any."""
    depth = 0
    for index, token in enumerate(tokens):
        if token.is_op("("):
            depth += 1
        elif token.is_op(")"):
            depth -= 1
        elif depth == 0 and token.is_word("FROM"):
            following = tokens[index + 1]
            return None if following.is_word("DUAL") else index
    return None


def from_table(ctx: Context) -> bool:
    """Whether this SELECT reads a table (then :func:`select_from_table` answers it)."""
    return _from_index(ctx.tokens) is not None


def table_source(session: SessionState, database: str | None, name: str) -> Source:
    """The table ``database.name`` (the current database when None); ER_NO_DB_ERROR or
    ER_NO_SUCH_TABLE."""
    if database is None:
        database = session.database
        if database is None:
            raise sql_error(ER_NO_DB_ERROR)
    if database.lower() == INFORMATION_SCHEMA:
        columns = is_columns(name)
        if columns is None:
            raise sql_error(ER_UNKNOWN_TABLE, name, "information_schema")
        return Source(
            INFORMATION_SCHEMA,
            name,
            [c.org_name for c in columns],
            columns,
            [c.text_chars is None for c in columns],
            [True] * len(columns),
            is_rows(name, session),
            ["utf8mb3" if c.text_chars is not None else None for c in columns],
        )
    written = session.server.client_tables.databases.get(database)
    if written is not None:  # a database a client created (sql.answers.client_writes)
        found = written.get(name)
        if found is None:
            raise sql_error(ER_NO_SUCH_TABLE, database, name)
        return client_table_source(found)
    if session.locked_tables is not None and (database, name) not in session.locked_tables:
        raise sql_error(ER_TABLE_NOT_LOCKED, name)
    catalogue = session.server.tables
    table = find_table(catalogue, database, name) if catalogue is not None else None
    account = session.account
    if not account.privileges_on(database) & Privilege.SELECT:
        raise sql_error(
            ER_TABLEACCESS_DENIED_ERROR, "SELECT", account.user, session.host, database, name
        )
    if table is None and is_account_table(database, name):
        return _account_source(session)
    if table is None:
        raise sql_error(ER_NO_SUCH_TABLE, database, name)
    snapshot = read_snapshot(session).tables
    rows = list(snapshot.rows(table)) if snapshot is not None else []
    if any(c.data_type == "timestamp" for c in table.columns):
        offset = zone_offset(str(session.variables["time_zone"]))
        rows = [
            tuple(c.text(offset) if isinstance(c, TimestampCell) else c for c in row)
            for row in rows
        ]
    return _user_source(table, rows)


def client_table_source(table: ClientTable) -> Source:
    """A table a client created: its rows are the store's own lists (writes change them)."""
    return _user_source(table.model, table.rows)  # type: ignore[arg-type]


def _account_source(session: SessionState) -> Source:
    """``mysql.user``: the server's accounts (:mod:`~fakemaster.sql.tables.account_tables`)."""
    folded = [
        column.collation is not None and not collation_name(column.collation).endswith("_bin")
        for column in USER_COLUMNS
    ]
    return Source(
        "mysql",
        USER_TABLE,
        [column.name for column in USER_COLUMNS],
        list(USER_COLUMNS),
        [column.text_chars is None for column in USER_COLUMNS],
        folded,
        user_rows(session.server.accounts.values()),
        list(USER_CHARSETS),
        frozenset({0}),  # the view's key (Host, User) is global_priv's
        status=ServerStatus.SESSION_STATE_CHANGED,
    )


def zone_offset(name: str) -> int:
    """Seconds east of UTC of a time_zone value ('+hh:mm'; SYSTEM is this server's UTC)."""
    match = re.fullmatch(r"([+-])(\d{1,2}):(\d{2})", name.strip())
    if not match:
        return 0
    seconds = int(match.group(2)) * 3600 + int(match.group(3)) * 60
    return -seconds if match.group(1) == "-" else seconds


def _user_source(table: CatalogueTable, rows: list[Sequence[CellValue]]) -> Source:
    firsts = {table.position(key.columns[0]) for key in table.keys if key.columns}
    return Source(
        table.database,
        table.name,
        [c.name for c in table.columns],
        [column_definition(table, c) for c in table.columns],
        [c.is_numeric for c in table.columns],
        [bool(c.collation and not c.collation.endswith("_bin")) for c in table.columns],
        rows,
        [c.charset for c in table.columns],
        frozenset(p for p in firsts if p is not None),
        typed={
            p: FIXED_BINARY_TYPES[c.data_type]
            for p, c in enumerate(table.columns)
            if c.data_type in FIXED_BINARY_TYPES
        },
        sequence=table.sequence,
    )


def collation_name(collation_id: int) -> str:
    found = collation_by_id(collation_id)
    return found.name if found is not None else ""


Value = Any  # CellValue, or a literal (str, Decimal)
Getter = Callable[[Sequence[CellValue]], Value]
Predicate = Callable[[Sequence[CellValue]], bool]


@dataclass(slots=True)
class _Operand:
    get: Getter
    numeric: bool
    folded: bool
    position: int | None = None  # a column's
    typed: type[FixedBinaryValue] | None = None  # a UUID/INET column: compared by value


def _note_constraint(source: Source, *operands: _Operand) -> None:
    """A column compared with constants only: the read may use an index on it."""
    columns = [o.position for o in operands if o.position is not None]
    if len(columns) == 1:
        source.constrained.add(columns[0])


def select_from_table(ctx: Context) -> Response:
    session = ctx.session
    parser = ctx.parser(1)
    distinct = accept_select_options(parser)
    items = _select_list(parser)  # resolved once the table is known
    aggregates = [item for item in items if item.aggregate]
    if aggregates and len(aggregates) != len(items):
        raise sql_error(ER_NOT_SUPPORTED_YET, "columns beside aggregates without GROUP BY")
    parser.expect_word("FROM")
    first = parser.name()
    database: str | None = None
    name = first
    if parser.accept_op("."):
        database, name = first, parser.name()
    source = table_source(session, database, name)
    if not source.rows and not aggregates:
        # Nothing to filter: the rest (WHERE with subqueries, GROUP BY ...) cannot change that.
        columns, _ = _resolve_items(items, source, name)
        return ResultSet(columns, [], extra_status=source.extra_status(True))
    alias = _table_alias(parser)
    _index_hint(parser)
    columns, positions = _resolve_items(items, source, alias or name)
    rows = source.rows
    if parser.accept_word("WHERE"):
        predicate = _condition(parser, source, session)
        rows = [row for row in rows if predicate(row)]
    if parser.accept_word("ORDER"):
        parser.expect_word("BY")
        rows = _ordered(parser, source, rows)
    offset, count = _limit_clause(parser)
    _locking_clause(parser)
    parser.expect_end()
    if aggregates:
        return _aggregated(session, items, source, rows, alias or name, parser)
    selected = [tuple(row[p] for p in positions) for row in rows]
    if distinct:
        selected = list(dict.fromkeys(selected))  # the first of equal rows, in order
    selected = selected[offset:] if count is None else selected[offset : offset + count]
    charsets = [source.text_charsets[p] for p in positions]
    # MariaDB flags a read that used no index (every information_schema read is one).
    scanned = source.database == INFORMATION_SCHEMA or not (source.constrained & source.indexed)
    scanned = scanned and not source.sequence
    return ResultSet(
        columns,
        encode_cells(session, selected, charsets),
        extra_status=source.extra_status(scanned),
    )


def _select_list(parser: Parser) -> list[_Item]:
    items = [_select_item(parser)]
    while parser.accept_op(","):
        items.append(_select_item(parser))
    return items


def _select_item(parser: Parser) -> _Item:
    """``*``, ``t.*``, a column (maybe qualified) or COUNT/MIN/MAX of one, maybe aliased."""
    start = parser.index
    aggregate = None
    span = None
    if parser.accept_op("*"):
        parts = ["*"]
    elif parser.peek.is_word("SUM") and parser.tokens[parser.index + 1].is_op("("):
        # SUM(condition): the condition is read once the table is known (_sum_of).
        aggregate = parser.next().text.upper()
        parser.expect_op("(")
        parts = ["*"]  # no column of its own
        argument = parser.index
        depth = 0
        while depth or not parser.peek.is_op(")"):
            token = parser.next()
            if token.kind is Tok.END:
                raise parser.error(token)
            depth += token.is_op("(") - token.is_op(")")
        span = (argument, parser.index)
        parser.expect_op(")")
    elif parser.peek.is_word(*_AGGREGATES) and parser.tokens[parser.index + 1].is_op("("):
        aggregate = parser.next().text.upper()
        parser.expect_op("(")
        if aggregate == "COUNT" and parser.accept_op("*"):
            parts = ["*"]
        else:
            parts = [parser.name()]
            while parser.accept_op("."):
                parts.append(parser.name())
        parser.expect_op(")")
    else:
        parts = [parser.name()]
        while parser.accept_op("."):
            parts.append("*" if parser.accept_op("*") else parser.name())
    shown = parser.source(parser.tokens[start], parser.index) if aggregate else parts[-1]
    alias = None
    if parts != ["*"] or aggregate:
        if parser.accept_word("AS"):
            alias = parser.name()
        elif parser.peek.kind in (Tok.WORD, Tok.QUOTED_IDENT) and not parser.peek.is_word("FROM"):
            alias = parser.name()
    return _Item(alias, parts, shown, aggregate, span)


def _table_alias(parser: Parser) -> str:
    """The alias after the table name, or ""."""
    if parser.accept_word("AS"):
        return parser.name()
    if parser.peek.kind in (Tok.WORD, Tok.QUOTED_IDENT) and not parser.peek.is_word(
        "WHERE", "ORDER", "LIMIT", "FOR", "LOCK", "GROUP", "FORCE", "USE", "IGNORE"
    ):
        return parser.name()
    return ""


def _index_hint(parser: Parser) -> None:
    """``FORCE|USE|IGNORE INDEX|KEY (k)``: parsed; the rows read are the same."""
    if parser.accept_word("FORCE", "USE", "IGNORE"):
        parser.expect_word("INDEX", "KEY")
        parser.expect_op("(")
        parser.name()
        parser.expect_op(")")


def _limit_clause(parser: Parser) -> tuple[int, int | None]:
    """``LIMIT n``, ``LIMIT offset, n`` or ``LIMIT n OFFSET offset``: (offset, row count)."""
    if not parser.accept_word("LIMIT"):
        return 0, None
    first = parser.integer()
    if parser.accept_op(","):
        return first, parser.integer()
    if parser.accept_word("OFFSET"):
        return parser.integer(), first
    return 0, first


def _locking_clause(parser: Parser) -> None:
    """FOR UPDATE or LOCK IN SHARE MODE: parsed; they change nothing here."""
    if parser.accept_word("FOR"):
        parser.expect_word("UPDATE")
    elif parser.accept_word("LOCK"):
        parser.expect_word("IN")
        parser.expect_word("SHARE")
        parser.expect_word("MODE")


@dataclass(slots=True)
class _Item:
    alias: str | None
    parts: list[str]  # a column (maybe qualified), or ["*"]
    shown: str  # its name in the result when not aliased
    aggregate: str | None = None  # COUNT, MIN, MAX, SUM
    span: tuple[int, int] | None = None  # SUM's argument: its tokens


_AGGREGATES = ("COUNT", "MIN", "MAX")


def _aggregated(
    session: SessionState,
    items: list[_Item],
    source: Source,
    rows: list[Sequence[CellValue]],
    table_alias: str,
    parser: Parser,
) -> ResultSet:
    """The one row of COUNT/MIN/MAX/SUM over ``rows`` (no GROUP BY)."""
    columns: list[Column] = []
    cells: list[CellValue] = []
    charsets: list[str | None] = []
    # MIN/MAX of a key's first column read the index (MariaDB: "Select tables optimized
    # away"); COUNT and the others scan.
    scanned = False
    for item in items:
        name = item.alias or item.shown
        if item.span is not None:
            columns.append(Column(name, ColumnType.NEWDECIMAL, length=24, flags=_SUM_FLAGS))
            cells.append(_sum_of(parser, item.span, source, session, rows))
            charsets.append(None)
            scanned = True
            continue
        if item.parts == ["*"]:
            columns.append(Column(name, ColumnType.LONGLONG, length=21, flags=_COUNT_FLAGS))
            cells.append(str(len(rows)).encode())
            charsets.append(None)
            scanned = True
            continue
        position = source.position(item.parts[-1])
        if position is None:
            raise sql_error(ER_BAD_FIELD_ERROR, ".".join(item.parts), "field list")
        values = [row[position] for row in rows if row[position] is not None]
        if item.aggregate == "COUNT":
            columns.append(Column(name, ColumnType.LONGLONG, length=21, flags=_COUNT_FLAGS))
            cells.append(str(len(values)).encode())
            charsets.append(None)
            scanned = True
            continue
        base = source.columns[position]
        flags = base.flags & (ColumnFlag.UNSIGNED | ColumnFlag.BINARY | ColumnFlag.ZEROFILL)
        if base.text_chars is None or base.collation == BINARY_COLLATION_ID:
            flags |= ColumnFlag.BINARY  # a value of the binary character set
        if position not in source.indexed:
            scanned = True
        columns.append(
            replace(base, name=name, flags=flags, schema="", table="", org_table="", org_name="")
        )
        operand = _Operand(
            operator.itemgetter(0), source.numeric[position], source.folded[position]
        )
        key = _sort_key(operand)
        chosen = (min if item.aggregate == "MIN" else max)(
            ((v,) for v in values), key=key, default=None
        )
        cells.append(None if chosen is None else chosen[0])
        charsets.append(source.text_charsets[position])
    return ResultSet(
        columns,
        encode_cells(session, [tuple(cells)], charsets),
        extra_status=source.extra_status(scanned or bool(source.constrained)),
    )


_COUNT_FLAGS = ColumnFlag.NOT_NULL | ColumnFlag.BINARY
_SUM_FLAGS = ColumnFlag.BINARY  # NULL over no rows


def _sum_of(
    parser: Parser,
    span: tuple[int, int],
    source: Source,
    session: SessionState,
    rows: list[Sequence[CellValue]],
) -> bytes | None:
    """SUM(condition): how many of ``rows`` meet it (NULL without rows), as pt-mysql-summary
    counts accounts (``SUM(password = "")``). A condition is the WHERE language; a SUM of
    anything else is ER_NOT_SUPPORTED_YET."""
    start, end = span
    parser.index = start
    try:
        predicate = _condition(parser, source, session)
    except SqlError:
        predicate = None
    if predicate is None or parser.index != end:
        raise sql_error(ER_NOT_SUPPORTED_YET, "SUM of anything but a condition")
    return str(sum(1 for row in rows if predicate(row))).encode() if rows else None


def _resolve_items(
    items: list[_Item], source: Source, alias: str = ""
) -> tuple[list[Column], list[int]]:
    columns: list[Column] = []
    positions: list[int] = []
    for item in items:
        item_alias, parts, shown = item.alias, item.parts, item.shown
        if parts[-1] == "*":
            for position, column in enumerate(source.columns):
                columns.append(_aliased(column, column.name, alias))
                positions.append(position)
            continue
        found = source.position(parts[-1])
        if found is None:
            raise sql_error(ER_BAD_FIELD_ERROR, ".".join(parts), "field list")
        columns.append(_aliased(source.columns[found], item_alias or shown, alias))
        positions.append(found)
    return columns, positions


def _aliased(column: Column, name: str, table_alias: str) -> Column:
    named = with_name(column, name)
    if table_alias:
        named = replace(named, table=table_alias)
    return named


def encode_cells(
    session: SessionState,
    rows: Sequence[Sequence[CellValue]],
    charsets: Sequence[str | None],
) -> list[Sequence[Cell]]:
    """Rows as the table holds them: each text in its column's own character set (the
    protocol converts them to ``character_set_results``, fakemaster.protocol.conversion)."""
    catalogue = session.server.tables

    def codec(charset: str) -> str:
        found = catalogue.text_codec(charset) if catalogue is not None else None
        return found or "utf-8"

    encoders: list[Callable[[str], bytes]] = []
    for charset in charsets:
        name = codec(charset or "utf8mb4")
        encoders.append(lambda text, name=name: text.encode(name, "replace"))  # type: ignore[misc]
    offset = zone_offset(str(session.variables["time_zone"]))

    def sent(index: int, cell: CellValue) -> Cell:
        if isinstance(cell, str):
            return encoders[index](cell)
        if isinstance(cell, TimestampCell):
            return cell.text(offset)
        return cell

    return [tuple(sent(i, cell) for i, cell in enumerate(row)) for row in rows]


# --- WHERE ------------------------------------------------------------------------------------


def where_condition(
    parser: Parser, source: Source, session: SessionState
) -> Callable[[Sequence[CellValue]], bool]:
    """The condition after a WHERE (the parser past it), over ``source``'s columns."""
    return _condition(parser, source, session)


def _condition(parser: Parser, source: Source, session: SessionState) -> Predicate:
    terms = [_conjunction(parser, source, session)]
    while parser.accept_word("OR") or parser.accept_op("||"):
        terms.append(_conjunction(parser, source, session))
    if len(terms) == 1:
        return terms[0]
    return lambda row: any(term(row) for term in terms)


def _conjunction(parser: Parser, source: Source, session: SessionState) -> Predicate:
    factors = [_factor(parser, source, session)]
    while parser.accept_word("AND") or parser.accept_op("&&"):
        factors.append(_factor(parser, source, session))
    if len(factors) == 1:
        return factors[0]
    return lambda row: all(factor(row) for factor in factors)


def _factor(parser: Parser, source: Source, session: SessionState) -> Predicate:
    with parser.nested():
        if parser.accept_word("NOT") or parser.accept_op("!"):
            inner = _factor(parser, source, session)
            return lambda row: not inner(row)
        if parser.peek.is_op("("):
            parser.next()
            inner = _condition(parser, source, session)
            parser.expect_op(")")
            return inner
        left = _operand(parser, source, session)
        return _predicate(parser, left, source, session)


def _predicate(parser: Parser, left: _Operand, source: Source, session: SessionState) -> Predicate:
    if parser.accept_word("IS"):
        negate = parser.accept_word("NOT") is not None
        parser.expect_word("NULL")
        return lambda row: (left.get(row) is None) != negate
    negate = parser.accept_word("NOT") is not None
    if parser.accept_word("IN"):
        parser.expect_op("(")
        options = [_operand(parser, source, session)]
        while parser.accept_op(","):
            options.append(_operand(parser, source, session))
        parser.expect_op(")")
        if not negate:  # (columns only: a million constants are not copied into a tuple)
            _note_constraint(source, left, *[o for o in options if o.position is not None])
        within = _within(left, options, negate)
        release_in_slices(options)  # a million operands are not freed in one call
        return within
    if parser.accept_word("LIKE"):
        pattern_operand = _operand(parser, source, session)

        def like(row: Sequence[CellValue]) -> bool:
            value, pattern = left.get(row), pattern_operand.get(row)
            if value is None or pattern is None:
                return False
            compiled = LikePattern.compile(_text(pattern))
            return compiled.matches(_text(value)) != negate

        return like
    if parser.accept_word("BETWEEN"):
        low = _operand(parser, source, session)
        parser.expect_word("AND")
        high = _operand(parser, source, session)
        if not negate:
            _note_constraint(source, left, low, high)

        def between(row: Sequence[CellValue]) -> bool:
            value = left.get(row)
            a, b = low.get(row), high.get(row)
            if value is None or a is None or b is None:
                return False
            inside = _compare(left, value, low, a) >= 0 and _compare(left, value, high, b) <= 0
            return inside != negate

        return between
    if negate:
        raise parser.error()
    op = parser.next()
    if op.kind is not Tok.OP or op.text not in ("=", "<>", "!=", "<", "<=", ">", ">=", "<=>"):
        raise parser.error(op)
    right = _operand(parser, source, session)
    if op.text not in ("<>", "!="):
        _note_constraint(source, left, right)
    test = _COMPARISON_TESTS[op.text]
    null_safe = op.text == "<=>"

    def compare(row: Sequence[CellValue]) -> bool:
        a, b = left.get(row), right.get(row)
        if a is None or b is None:
            return null_safe and a is None and b is None
        return test(_compare(left, a, right, b))

    return compare


def _within(left: _Operand, options: list[_Operand], negate: bool) -> Predicate:
    """``left [NOT] IN (options)``: the constants looked up in sets (linear in rows +
    constants), columns compared row by row. NULL when nothing matched and a NULL was listed:
    the row is left out either way."""
    constants = ConstantList(
        left.numeric,
        left.folded,
        [(o.get(()), o.numeric, o.folded) for o in options if o.position is None],
        number=_number,
        text=_text,
        fold=general_ci_key,
    )
    columns = [o for o in options if o.position is not None]
    defer_release(constants.release)  # the WHERE clause holds them until the statement ends

    def compare(value: Value, constant: tuple[Value, bool, bool]) -> int:
        held, numeric, folded = constant
        return _compare(left, value, _Operand(lambda row: held, numeric, folded), held)

    def within(row: Sequence[CellValue]) -> bool:
        value = left.get(row)
        if value is None:
            return False
        if constants.holds(value, compare):
            return not negate
        unknown = constants.has_null
        for option in columns:
            other = option.get(row)
            if other is None:
                unknown = True
            elif _compare(left, value, option, other) == 0:
                return not negate
        return False if unknown else negate

    return within


# Each comparison operator as a test of the sign of _compare's result.
_COMPARISON_TESTS: dict[str, Callable[[int], bool]] = {
    "=": lambda c: c == 0,
    "<=>": lambda c: c == 0,
    "<>": lambda c: c != 0,
    "!=": lambda c: c != 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


def _operand(parser: Parser, source: Source, session: SessionState) -> _Operand:
    token = parser.next()
    if token.kind is Tok.STRING:
        text = token.text
        return _Operand(lambda row: text, False, True)
    if token.kind is Tok.NUMBER:
        number = Decimal(token.text)
        return _Operand(lambda row: number, True, False)
    if token.kind is Tok.HEX and token.raw is not None:
        raw = token.raw
        return _Operand(lambda row: raw, False, False)
    if token.is_op("-") and parser.peek.kind is Tok.NUMBER:
        negative = -Decimal(parser.next().text)
        return _Operand(lambda row: negative, True, False)
    if token.kind is Tok.WORD and token.text.upper() == "NULL":
        return _Operand(lambda row: None, False, False)
    if token.kind is Tok.WORD and token.text.upper() in ("DATABASE", "SCHEMA"):
        if parser.accept_op("("):
            parser.expect_op(")")
            current = session.database
            return _Operand(lambda row: current, False, True)
    if token.kind in (Tok.WORD, Tok.QUOTED_IDENT):
        parts = [token.text]
        while parser.accept_op("."):
            parts.append(parser.name())
        position = source.position(parts[-1])
        if position is None:
            raise sql_error(ER_BAD_FIELD_ERROR, ".".join(parts), "where clause")
        numeric, folded = source.numeric[position], source.folded[position]
        typed = source.typed.get(position)
        return _Operand(lambda row: row[position], numeric, folded, position, typed)
    raise parser.error(token)


def _text(value: Value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _number(value: Value) -> Decimal | None:
    try:
        number = Decimal(_text(value).strip() or "0")
    except InvalidOperation:
        return None
    # 'NaN' and 'Infinity' are text to MariaDB (and a NaN raises when Decimals are ordered).
    return number if number.is_finite() else None


def _typed_key(kind: type[FixedBinaryValue], value: Value) -> bytes | None:
    """The order of a UUID/INET value, its column's cell or a literal converted as the server
    converts it (None: not a value of the type)."""
    try:
        text = value.decode("ascii") if isinstance(value, bytes) else str(value)
        return kind.parse(text).sort_key()
    except (UnicodeDecodeError, ValueError):
        return None


def _compare(left: _Operand, a: Value, right: _Operand, b: Value) -> int:
    kind = left.typed or right.typed
    if kind is not None:
        p, q = _typed_key(kind, a), _typed_key(kind, b)
        if p is not None and q is not None:
            return (p > q) - (p < q)
    if left.numeric or right.numeric:
        x, y = _number(a), _number(b)
        if x is not None and y is not None:
            return (x > y) - (x < y)
    if isinstance(a, bytes) and isinstance(b, bytes) and not (left.folded or right.folded):
        return (a > b) - (a < b)
    s, t = _text(a).rstrip(" "), _text(b).rstrip(" ")
    if left.folded or right.folded:
        s, t = general_ci_key(s), general_ci_key(t)
    return (s > t) - (s < t)


def _ordered(
    parser: Parser, source: Source, rows: list[Sequence[CellValue]]
) -> list[Sequence[CellValue]]:
    keys: list[tuple[int, bool]] = []
    while True:
        parts = [parser.name()]
        while parser.accept_op("."):
            parts.append(parser.name())
        position = source.position(parts[-1])
        if position is None:
            raise sql_error(ER_BAD_FIELD_ERROR, ".".join(parts), "order clause")
        descending = parser.accept_word("DESC") is not None
        if not descending:
            parser.accept_word("ASC")
        keys.append((position, descending))
        if not parser.accept_op(","):
            break
    ordered = list(rows)
    for position, descending in reversed(keys):
        kind = source.typed.get(position)
        getter: Getter = (
            operator.itemgetter(position) if kind is None else _value_order(position, kind)
        )
        operand = _Operand(getter, source.numeric[position], source.folded[position])
        ordered.sort(key=_sort_key(operand), reverse=descending)
    return ordered


def _value_order(position: int, kind: type[FixedBinaryValue]) -> Getter:
    """The bytes a UUID/INET4/INET6 cell (its text) is ordered by, as the server orders it."""

    def get(row: Sequence[CellValue]) -> Value:
        cell = row[position]
        return None if cell is None else _typed_key(kind, cell)

    return get


def _sort_key(operand: _Operand) -> Callable[[Sequence[CellValue]], Any]:
    def cmp(r1: Sequence[CellValue], r2: Sequence[CellValue]) -> int:
        a, b = operand.get(r1), operand.get(r2)
        if a is None or b is None:
            return (a is not None) - (b is not None)
        return _compare(operand, a, operand, b)

    return functools.cmp_to_key(cmp)
