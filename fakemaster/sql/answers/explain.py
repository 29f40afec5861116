"""EXPLAIN (DESCRIBE, DESC) SELECT columns FROM table: the plan InnoDB on MariaDB 10.11 shows
for a whole-table read, the form snapshot tools send (mydumper ``-r`` sizes its chunks with
``EXPLAIN SELECT `id` FROM `db`.`t` ``).

The plan, as 10.11 chooses it for a table with fresh statistics: a covering secondary index
(its columns and the clustered key's) is scanned, the one with the shortest key first; else the
clustered index when it covers the columns; else the whole table (``ALL``). ``rows`` is the
table's row count (at least 1, as InnoDB estimates an empty table): exact where InnoDB's
statistics are, an estimate there on a large table. ``EXPLAIN SELECT`` without a table is
``No tables used``.

An index hint (``FORCE|USE INDEX|KEY (k)``) and a WHERE of comparisons ORed together, the form
pt-duplicate-key-checker sizes a key with, are planned as 10.11 plans them when the OR cannot
be a range of the key (it compares another column, or ``c = v OR c <> v``): the whole key is
scanned when it covers the columns read and compared, else the table (``ALL``); the key is a
possible one when the WHERE compares its first column. Other EXPLAINs (ranges, index merges,
joins, EXTENDED, FORMAT=JSON) are left to
:func:`~fakemaster.sql.answers.unsupported.not_supported`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakemaster.protocol.charsets import collation_by_name
from fakemaster.protocol.resultset import (
    Cell,
    Column,
    ColumnFlag,
    ResultSet,
    SqlError,
    sql_error,
    text_column,
)
from fakemaster.sql.answers.select import accept_select_options
from fakemaster.sql.answers.table_select import table_source, where_condition
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Comparison, Expr, FunctionCall, Literal, Parser, Tok, Word
from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    find_table,
)
from fakemaster.sql.tables.table_statistics import clustered_key
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import ER_BAD_FIELD_ERROR, ER_KEY_DOES_NOT_EXISTS
from fakemaster.vocabulary.packets import ServerStatus

__all__ = ["explain", "key_length"]


def _columns() -> list[Column]:
    text = ColumnFlag.NOT_NULL
    return [
        Column("id", ColumnType.LONGLONG, length=3, flags=ColumnFlag.UNSIGNED | ColumnFlag.BINARY),
        text_column("select_type", 19, flags=text, decimals=39),
        text_column("table", 64, decimals=39),
        text_column("type", 10, decimals=39),
        text_column("possible_keys", 4096, decimals=39),
        text_column("key", 64, decimals=39),
        text_column("key_len", 4096, decimals=39),
        text_column("ref", 2048, decimals=39),
        text_column("rows", 64, decimals=39),
        text_column("Extra", 255, flags=text, decimals=39),
    ]


_FIXED = {
    "tinyint": 1,
    "smallint": 2,
    "mediumint": 3,
    "int": 4,
    "bigint": 8,
    "float": 4,
    "double": 8,
    "year": 1,
    "date": 3,
}
_DECIMAL_DIGITS = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)  # bytes for 0-8 leftover digits


def _decimal_bytes(digits: int) -> int:
    return digits // 9 * 4 + _DECIMAL_DIGITS[digits % 9]


def key_length(column: CatalogueColumn) -> int | None:
    """The bytes a key part on the whole of ``column`` takes in EXPLAIN's key_len (None: a
    type not indexed whole, TEXT or BLOB)."""
    kind = column.data_type
    size: int | None = _FIXED.get(kind)
    if kind in ("decimal", "numeric"):
        precision, scale = column.precision or 10, column.scale or 0
        size = _decimal_bytes(precision - scale) + _decimal_bytes(scale)
    elif kind in ("datetime", "timestamp", "time"):
        size = {"datetime": 5, "timestamp": 4, "time": 3}[kind] + (column.fsp + 1) // 2
    elif kind in ("char", "varchar"):
        found = collation_by_name(column.collation or "utf8mb4_general_ci")
        size = (column.length or 1) * (found.mbmaxlen if found else 4)
        size += 2 if kind == "varchar" else 0
    elif kind in ("binary", "varbinary"):
        size = (column.length or 1) + (2 if kind == "varbinary" else 0)
    elif kind == "enum":
        size = 1 if len(column.members) < 256 else 2
    elif kind == "set":
        size = min((len(column.members) + 7) // 8, 8)
        size = 8 if size > 4 else size
    elif kind == "bit":
        size = ((column.length or 1) + 7) // 8
    if size is None:
        return None
    return size + (1 if column.nullable else 0)


def _column(table: CatalogueTable, name: str) -> CatalogueColumn:
    position = table.position(name)
    assert position is not None
    return table.columns[position]


def _plan(table: CatalogueTable, wanted: set[str]) -> tuple[CatalogueKey, int] | None:
    """The index scanned to read ``wanted`` (lower-case names) and its key length; None: the
    whole table is read."""
    clustered = clustered_key(table)
    base = {name.lower() for name in clustered.columns} if clustered else set()
    best: tuple[CatalogueKey, int] | None = None
    for key in table.keys:
        if key is clustered or not wanted <= base | {n.lower() for n in key.columns}:
            continue
        length = _key_length(table, key)
        if length is not None and (best is None or length < best[1]):
            best = (key, length)
    if best is None and clustered is not None and wanted <= base:
        length = _key_length(table, clustered)
        if length is not None:
            best = (clustered, length)
    return best


def _key_length(table: CatalogueTable, key: CatalogueKey) -> int | None:
    total = 0
    for name in key.columns:
        part = key_length(_column(table, name))
        if part is None:
            return None
        total += part
    return total


def _selected(ctx: Context, start: int) -> tuple[list[str], int] | None:
    """The names of ``SELECT a, `b` FROM`` (``*``: every column) and the index of FROM; None
    for any other select list."""
    tokens = ctx.tokens
    names: list[str] = []
    index = start
    while True:
        token = tokens[index]
        if token.is_op("*") and not names:
            names.append("*")
        elif token.kind in (Tok.WORD, Tok.QUOTED_IDENT) and not token.is_word("FROM"):
            names.append(token.text)
        else:
            return None
        index += 1
        if tokens[index].is_word("FROM"):
            return names, index
        if not tokens[index].is_op(","):
            return None
        index += 1


def _expressions(ctx: Context, start: int) -> tuple[list[str], int] | None:
    """The columns named in a select list of expressions (pt-table-checksum's ``COUNT(*) AS
    cnt, COALESCE(LOWER(CONV(BIT_XOR(...` ``) and the index of FROM; None for any other."""
    parser = ctx.parser(start)
    names: list[str] = []
    try:
        while True:
            _words(parser.expression(), names)
            if parser.accept_word("AS"):
                parser.name()
            if not parser.accept_op(","):
                break
    except SqlError:
        return None
    return (names, parser.index) if parser.peek.is_word("FROM") else None


def _words(expr: Expr, names: list[str]) -> None:
    if isinstance(expr, Word) and expr.name != "*":
        names.append(expr.name)
    elif isinstance(expr, FunctionCall):
        for arg in expr.args:
            _words(arg, names)


def explain(ctx: Context) -> Response:
    tokens = ctx.tokens
    if not tokens[1].is_word("SELECT"):
        return not_supported(ctx)
    if tokens[2].kind is Tok.END or (tokens[2].kind is Tok.NUMBER and tokens[3].kind is Tok.END):
        if tokens[2].kind is Tok.END:
            raise ctx.parser(2).error()
        row: list[Cell] = [b"1", b"SIMPLE", None, None, None, None, None, None, None]
        return ResultSet(_columns(), [[*row, b"No tables used"]])
    options = ctx.parser(2)
    accept_select_options(options)  # pt-table-checksum's /*!40001 SQL_NO_CACHE */
    selected = _selected(ctx, options.index) or _expressions(ctx, options.index)
    if selected is None:
        return not_supported(ctx)
    names, from_index = selected
    parser = ctx.parser(from_index + 1)
    first = parser.name()
    database: str | None = None
    name = first
    if parser.accept_op("."):
        database, name = first, parser.name()
    after_table = parser.index
    narrowing = _narrowing(parser)
    if narrowing is None:
        parser.index = after_table
        return _range_plan(ctx, parser, database, name, names)
    source = table_source(ctx.session, database, name)
    catalogue = ctx.server.tables
    table = find_table(catalogue, source.database, source.name) if catalogue else None
    if table is None:  # information_schema and the system tables: not planned here
        return not_supported(ctx)
    # Found while planning: the columns are out already.
    try:
        cells = _plan_row(table, name, names, narrowing, max(1, len(source.rows)))
    except SqlError as error:
        return ResultSet(_columns(), error=error)
    if cells is None:
        return not_supported(ctx)
    return ResultSet(_columns(), [cells], extra_status=(0, ServerStatus.QUERY_NO_INDEX_USED))


def _range_plan(
    ctx: Context, parser: Parser, database: str | None, name: str, names: list[str]
) -> Response:
    """``FORCE INDEX (k) WHERE`` comparisons of k's first column with constants, ANDed
    (pt-table-checksum's chunks: ``WHERE ((`id` >= '3')) AND ((`id` <= '33'))``), maybe
    ``ORDER BY`` and ``LIMIT``: 10.11 reads a range of k. ``rows`` is how many rows the range
    holds (at least 1), as InnoDB's index dives count them in a small table; Extra ``Using
    index`` when k covers the columns read. Any other form: not supported."""
    if not parser.accept_word("FORCE"):
        return not_supported(ctx)
    parser.expect_word("INDEX", "KEY")
    parser.expect_op("(")
    hint = parser.name()
    parser.expect_op(")")
    if not parser.accept_word("WHERE"):
        return not_supported(ctx)
    source = table_source(ctx.session, database, name)
    catalogue = ctx.server.tables
    table = find_table(catalogue, source.database, source.name) if catalogue else None
    key = (
        None
        if table is None
        else next((k for k in table.keys if k.name.lower() == hint.lower()), None)
    )
    if table is None or key is None:
        return not_supported(ctx)
    if any(word.is_word("OR", "NOT", "IN", "LIKE", "IS") for word in parser.tokens):
        return not_supported(ctx)
    predicate = where_condition(parser, source, ctx.session)
    if parser.accept_word("ORDER"):
        parser.expect_word("BY")
        parser.name()
        while parser.accept_op(","):
            parser.name()
    if parser.accept_word("LIMIT"):
        parser.integer()
        if parser.accept_op(","):
            parser.integer()
    if not parser.at_end() or source.constrained != {table.position(key.columns[0])}:
        return not_supported(ctx)
    unknown = next((n for n in names if n != "*" and table.position(n) is None), None)
    if unknown is not None:
        return ResultSet(_columns(), error=sql_error(ER_BAD_FIELD_ERROR, unknown, "SELECT"))
    held = sum(1 for row in source.rows if predicate(row))
    length = _key_length(table, key)
    covered = _covers(table, key, _wanted(table, names))
    extra = "Using where; Using index" if covered else "Using where"
    row: list[Cell] = [b"1", b"SIMPLE", name.encode(), b"range", key.name.encode()]
    row += [key.name.encode(), None if length is None else str(length).encode(), None]
    row += [str(max(1, held)).encode(), extra.encode()]
    return ResultSet(_columns(), [row])


@dataclass(frozen=True, slots=True)
class _Narrowing:
    """What follows the table: an index hint and a WHERE of ORed comparisons of a column with
    a literal, the form pt-duplicate-key-checker sizes a key with (``FORCE INDEX (`k`) WHERE
    `a`=1 OR `b`=1``; ``WHERE `a`=1 OR `a`<>1`` for a key of one column)."""

    hint: str | None = None
    # (column, "=" or "<>", the literal's text), ORed; empty: no WHERE.
    where: tuple[tuple[str, str, str], ...] = ()


def _narrowing(parser: Parser) -> _Narrowing | None:
    """The hint and WHERE after the table name; None for any other form."""
    hint: str | None = None
    if parser.accept_word("FORCE", "USE"):
        parser.expect_word("INDEX", "KEY")
        parser.expect_op("(")
        hint = parser.name()
        parser.expect_op(")")
    where: list[tuple[str, str, str]] = []
    if parser.accept_word("WHERE"):
        while True:
            expr = parser.expression()
            if _constant_true(expr):
                pass  # ``WHERE 1=1`` (pt-table-checksum's): the optimizer drops it
            elif (term := _column_comparison(expr)) is None:
                return None
            else:
                where.append(term)
            if not parser.accept_word("OR"):
                break
    return _Narrowing(hint, tuple(where)) if parser.at_end() else None


def _constant_true(expr: Expr) -> bool:
    """``n = n`` of two equal number literals."""
    return (
        isinstance(expr, Comparison)
        and expr.op == "="
        and isinstance(expr.left, Literal)
        and isinstance(expr.right, Literal)
        and isinstance(expr.left.value, int)
        and expr.left.value == expr.right.value
    )


def _column_comparison(expr: Expr) -> tuple[str, str, str] | None:
    if not isinstance(expr, Comparison) or expr.op not in ("=", "<>", "!="):
        return None
    left, right = expr.left, expr.right
    if isinstance(left, Literal) and isinstance(right, Word):
        left, right = right, left
    if not (isinstance(left, Word) and isinstance(right, Literal)):
        return None
    return left.name, "=" if expr.op == "=" else "<>", right.text


def _plan_row(
    table: CatalogueTable, written: str, names: list[str], narrowing: _Narrowing, rows: int
) -> Sequence[Cell] | None:
    """EXPLAIN's row for a read of ``names`` from the table named ``written``, narrowed; None:
    a plan not modelled (a range, an index merge). SqlError for an unknown key or column, in
    the order MariaDB finds them."""
    key: CatalogueKey | None = None
    if narrowing.hint is not None:
        wanted_key = narrowing.hint.lower()
        key = next((k for k in table.keys if k.name.lower() == wanted_key), None)
        if key is None:
            raise sql_error(ER_KEY_DOES_NOT_EXISTS, narrowing.hint, table.name)
    unknown = next((n for n in names if n != "*" and table.position(n) is None), None)
    if unknown is not None:
        raise sql_error(ER_BAD_FIELD_ERROR, unknown, "SELECT")
    compared = [column for column, _, _ in narrowing.where]
    unknown = next((n for n in compared if table.position(n) is None), None)
    if unknown is not None:
        raise sql_error(ER_BAD_FIELD_ERROR, unknown, "WHERE")
    wanted = _wanted(table, names) | {n.lower() for n in compared}
    if key is None:
        return None if narrowing.where else _row(written, _plan(table, wanted), rows, "")
    if narrowing.where and _may_range(key, narrowing.where):
        return None
    # The forced key is a possible one when the WHERE compares its first column.
    first = key.columns[0].lower()
    possible = key.name.encode() if first in {n.lower() for n in compared} else None
    plan = (key, _key_length(table, key)) if _covers(table, key, wanted) else None
    return _row(written, plan, rows, "Using where" if narrowing.where else "", possible)


def _may_range(key: CatalogueKey, where: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether the optimizer could read a range of ``key`` for the ORed comparisons: not when
    one compares a column other than the key's first (the OR then spans the whole index), nor
    when they are ``c = v OR c <> v`` (every value)."""
    first = key.columns[0].lower()
    if any(column.lower() != first for column, _, _ in where):
        return False
    equal = {text for _, op, text in where if op == "="}
    different = {text for _, op, text in where if op == "<>"}
    return not equal & different


def _covers(table: CatalogueTable, key: CatalogueKey, wanted: set[str]) -> bool:
    """Whether reading ``key`` alone gives the ``wanted`` columns (a secondary index holds the
    clustered key's columns too)."""
    clustered = clustered_key(table)
    held = {name.lower() for name in key.columns}
    if clustered is not None and key is not clustered:
        held |= {name.lower() for name in clustered.columns}
    return wanted <= held and _key_length(table, key) is not None


def _row(
    written: str,
    plan: tuple[CatalogueKey, int | None] | None,
    rows: int,
    where: str,
    possible: bytes | None = None,
) -> Sequence[Cell]:
    head: tuple[Cell, ...] = (b"1", b"SIMPLE", written.encode())
    count = str(rows).encode()
    if plan is None:
        return (*head, b"ALL", possible, None, None, None, count, where.encode())
    key, length = plan
    extra = "; ".join(part for part in (where, "Using index") if part)
    used = (key.name.encode(), str(length).encode())
    return (*head, b"index", possible, *used, None, count, extra.encode())


def _wanted(table: CatalogueTable, names: list[str]) -> set[str]:
    if names == ["*"]:
        return {column.name.lower() for column in table.columns}
    return {name.lower() for name in names}
