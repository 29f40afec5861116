"""EXPLAIN (DESCRIBE, DESC) SELECT columns FROM table: the plan InnoDB on MariaDB 10.11 shows
for a whole-table read, the form snapshot tools send (mydumper ``-r`` sizes its chunks with
``EXPLAIN SELECT `id` FROM `db`.`t` ``).

The plan, as 10.11 chooses it for a table with fresh statistics: a covering secondary index
(its columns and the clustered key's) is scanned, the one with the shortest key first; else the
clustered index when it covers the columns; else the whole table (``ALL``). ``rows`` is the
table's row count (at least 1, as InnoDB estimates an empty table): exact where InnoDB's
statistics are, an estimate there on a large table. ``EXPLAIN SELECT`` without a table is
``No tables used``. Other EXPLAINs (WHERE, joins, EXTENDED, FORMAT=JSON) are left to
:func:`~fakemaster.sql.answers.unsupported.not_supported`.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.protocol.charsets import collation_by_name
from fakemaster.protocol.resultset import (
    Cell,
    Column,
    ColumnFlag,
    ResultSet,
    sql_error,
    text_column,
)
from fakemaster.sql.answers.table_select import table_source
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Tok
from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    find_table,
)
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import ER_BAD_FIELD_ERROR
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


def _clustered(table: CatalogueTable) -> CatalogueKey | None:
    """InnoDB's clustered index: the PRIMARY KEY, else the first UNIQUE key of NOT NULL
    columns (else a hidden row id: None)."""
    if table.primary_key is not None:
        return table.primary_key
    for key in table.keys:
        if key.unique and all(_column(table, name).nullable is False for name in key.columns):
            return key
    return None


def _column(table: CatalogueTable, name: str) -> CatalogueColumn:
    position = table.position(name)
    assert position is not None
    return table.columns[position]


def _plan(table: CatalogueTable, wanted: set[str]) -> tuple[CatalogueKey, int] | None:
    """The index scanned to read ``wanted`` (lower-case names) and its key length; None: the
    whole table is read."""
    clustered = _clustered(table)
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


def explain(ctx: Context) -> Response:
    tokens = ctx.tokens
    if not tokens[1].is_word("SELECT"):
        return not_supported(ctx)
    if tokens[2].kind is Tok.END or (tokens[2].kind is Tok.NUMBER and tokens[3].kind is Tok.END):
        if tokens[2].kind is Tok.END:
            raise ctx.parser(2).error()
        row: list[Cell] = [b"1", b"SIMPLE", None, None, None, None, None, None, None]
        return ResultSet(_columns(), [[*row, b"No tables used"]])
    selected = _selected(ctx, 2)
    if selected is None:
        return not_supported(ctx)
    names, from_index = selected
    parser = ctx.parser(from_index + 1)
    first = parser.name()
    database: str | None = None
    name = first
    if parser.accept_op("."):
        database, name = first, parser.name()
    if not parser.at_end():
        return not_supported(ctx)
    source = table_source(ctx.session, database, name)
    catalogue = ctx.server.tables
    table = find_table(catalogue, source.database, source.name) if catalogue else None
    if table is None:  # information_schema and the system tables: not planned here
        return not_supported(ctx)
    unknown = next((n for n in names if n != "*" and table.position(n) is None), None)
    if unknown is not None:  # found while planning: the columns are out already
        return ResultSet(_columns(), error=sql_error(ER_BAD_FIELD_ERROR, unknown, "SELECT"))
    wanted = _wanted(table, names)
    plan = _plan(table, wanted)
    count = str(max(1, len(source.rows))).encode()
    cells: Sequence[Cell]
    if plan is None:
        cells = (b"1", b"SIMPLE", name.encode(), b"ALL", None, None, None, None, count, b"")
    else:
        key, length = plan
        used = (key.name.encode(), str(length).encode())
        cells = (b"1", b"SIMPLE", name.encode(), b"index", None, *used, None, count)
        cells = (*cells, b"Using index")
    return ResultSet(_columns(), [cells], extra_status=(0, ServerStatus.QUERY_NO_INDEX_USED))


def _wanted(table: CatalogueTable, names: list[str]) -> set[str]:
    if names == ["*"]:
        return {column.name.lower() for column in table.columns}
    return {name.lower() for name in names}
