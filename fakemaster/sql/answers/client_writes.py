"""What clients write into databases they create on a fake master (pt-table-checksum's
``percona.checksums``): CREATE DATABASE, CREATE TABLE, INSERT/REPLACE ... VALUES or ... SELECT,
UPDATE ... SET ... WHERE, DELETE ... WHERE, kept in :mod:`~fakemaster.sql.tables.client_tables`
(never in the served binlog). A write to any other database (the scenario's) is answered as
before, by :func:`~fakemaster.sql.answers.unsupported.not_supported`.

``INSERT|REPLACE ... SELECT`` reads a served table with the expressions of
:mod:`~fakemaster.sql.row_expressions`: the checksum of a chunk, ``COUNT(*)`` and
``BIT_XOR(CAST(CRC32(CONCAT_WS(...)) AS UNSIGNED))``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.charsets import charset_default
from fakemaster.protocol.resultset import sql_error
from fakemaster.sql.answers.aggregate_select import aggregate_row, row_parser, selected_expressions
from fakemaster.sql.answers.table_select import (
    client_table_source,
    where_condition,
)
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.row_expressions import (
    RowScope,
    Value,
    evaluate_group,
    text_bytes,
)
from fakemaster.sql.sqltext import Expr, Parser, Tok
from fakemaster.sql.state import SessionState
from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    CellValue,
    TimestampCell,
    general_ci_key,
)
from fakemaster.sql.tables.client_tables import ClientTable
from fakemaster.vocabulary.errcodes import (
    ER_BAD_FIELD_ERROR,
    ER_DB_CREATE_EXISTS,
    ER_DBACCESS_DENIED_ERROR,
    ER_DUP_ENTRY,
    ER_KEY_COLUMN_DOES_NOT_EXITS,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_TABLE_EXISTS_ERROR,
    ER_TABLEACCESS_DENIED_ERROR,
    ER_UNKNOWN_CHARACTER_SET,
    ER_WRONG_VALUE_COUNT_ON_ROW,
)

__all__ = ["create_database", "create_table", "delete", "insert", "update"]


def _qualified(parser: Parser, session: SessionState) -> tuple[str, str]:
    first = parser.name()
    if parser.accept_op("."):
        return first, parser.name()
    if session.database is None:
        raise sql_error(ER_NO_DB_ERROR)
    return session.database, first


def _if_not_exists(parser: Parser) -> bool:
    if parser.accept_word("IF"):
        parser.expect_word("NOT")
        parser.expect_word("EXISTS")
        return True
    return False


def create_database(ctx: Context) -> Response:
    parser = ctx.parser(1)
    parser.expect_word("DATABASE", "SCHEMA")
    quiet = _if_not_exists(parser)
    name = parser.name()
    server = ctx.server
    if name in server.databases():
        if quiet:
            return OkResult(warnings=1)
        raise sql_error(ER_DB_CREATE_EXISTS, name)
    account = ctx.session.account
    if not account.privileges_on(name) & Privilege.CREATE:
        raise sql_error(ER_DBACCESS_DENIED_ERROR, account.user, account.host, name)
    server.client_tables.databases[name] = {}
    return OkResult(affected_rows=1)


def create_table(ctx: Context) -> Response:
    """CREATE TABLE [IF NOT EXISTS] in a client's database: columns of the catalogue's types,
    PRIMARY KEY, UNIQUE and plain keys, table options (DEFAULT CHARSET) as the model holds
    them."""
    parser = ctx.parser(1)
    parser.expect_word("TABLE")
    quiet = _if_not_exists(parser)
    database, name = _qualified(parser, ctx.session)
    tables = ctx.server.client_tables.databases.get(database)
    if tables is None:
        return not_supported(ctx)  # the scenario's databases are not the clients'
    _require(ctx, Privilege.CREATE, "CREATE", database, name)
    if name in tables:
        if quiet:
            return OkResult(warnings=1)
        raise sql_error(ER_TABLE_EXISTS_ERROR, name)
    parser.expect_op("(")
    columns: list[_ColumnText] = []
    keys: list[CatalogueKey] = []
    while True:
        if parser.accept_word("PRIMARY"):
            parser.expect_word("KEY")
            keys.insert(0, CatalogueKey("PRIMARY", tuple(_name_list(parser))))
        elif parser.peek.is_word("INDEX", "KEY", "UNIQUE"):
            unique = parser.next().is_word("UNIQUE")
            parser.accept_word("KEY", "INDEX")
            key_name = None if parser.peek.is_op("(") else parser.name()
            parts = _name_list(parser)
            keys.append(CatalogueKey(key_name or parts[0], tuple(parts), unique))
        else:
            columns.append(_column(parser))
        if not parser.accept_op(","):
            break
    parser.expect_op(")")
    collation = _table_collation(parser)
    model = CatalogueTable(
        database,
        name,
        tuple(column.model(collation) for column in columns),
        tuple(keys),
        collation=collation,
    )
    for key in keys:
        for part in key.columns:
            if model.position(part) is None:
                raise sql_error(ER_KEY_COLUMN_DOES_NOT_EXITS, part)
    tables[name] = ClientTable(model)
    return OkResult()


def _table_collation(parser: Parser) -> str:
    """The table's collation from its options (``DEFAULT CHARSET=utf8``: utf8mb3's default);
    the server's default, utf8mb4_general_ci, without one."""
    collation = "utf8mb4_general_ci"
    while not parser.at_end():
        token = parser.next()
        if token.is_word("CHARSET", "CHARACTER", "COLLATE"):
            if token.is_word("CHARACTER"):
                parser.expect_word("SET")
            parser.accept_op("=")
            value = parser.name().lower()
            if token.is_word("COLLATE"):
                collation = value
            else:
                charset = "utf8mb3" if value == "utf8" else value
                found = charset_default(charset)
                if found is None:
                    raise sql_error(ER_UNKNOWN_CHARACTER_SET, value)
                collation = found.name
    return collation


def _require(ctx: Context, privilege: Privilege, command: str, database: str, name: str) -> None:
    """ER_TABLEACCESS_DENIED_ERROR unless the account holds ``privilege`` on the database."""
    account = ctx.session.account
    if not account.privileges_on(database) & privilege:
        raise sql_error(
            ER_TABLEACCESS_DENIED_ERROR, command, account.user, ctx.session.host, database, name
        )


def _name_list(parser: Parser) -> list[str]:
    parser.expect_op("(")
    names = [parser.name()]
    while parser.accept_op(","):
        names.append(parser.name())
    parser.expect_op(")")
    return names


@dataclass(slots=True)
class _ColumnText:
    """A column definition as written, before the table's collation is known."""

    name: str
    data_type: str
    length: int | None = None
    scale: int | None = None
    unsigned: bool = False
    nullable: bool = True
    default: str | None = None
    on_update: str | None = None

    def model(self, collation: str) -> CatalogueColumn:
        kind = self.data_type
        text = kind in ("char", "varchar") or kind.endswith("text")
        default = self.default
        if default is None and self.nullable:
            default = "NULL"
        return CatalogueColumn(
            self.name,
            kind,
            nullable=self.nullable,
            unsigned=self.unsigned,
            length=self.length if kind in ("char", "varchar", "binary", "varbinary") else None,
            precision=self.length if kind == "decimal" else None,
            scale=self.scale if kind == "decimal" else None,
            collation=collation if text else None,
            default=default,
            on_update=self.on_update,
        )


_TYPE_NAMES = {"integer": "int", "bool": "tinyint", "boolean": "tinyint", "real": "double"}


def _column(parser: Parser) -> _ColumnText:
    column = _ColumnText(parser.name(), "")
    written = parser.name().lower()
    column.data_type = _TYPE_NAMES.get(written, written)
    if parser.accept_op("("):
        column.length = parser.integer()
        if parser.accept_op(","):
            column.scale = parser.integer()
        parser.expect_op(")")
    while not (parser.peek.is_op(",", ")") or parser.peek.kind is Tok.END):
        token = parser.next()
        if token.is_word("UNSIGNED"):
            column.unsigned = True
        elif token.is_word("NOT"):
            parser.expect_word("NULL")
            column.nullable = False
        elif token.is_word("DEFAULT"):
            column.default = _default_text(parser)
        elif token.is_word("ON"):
            parser.expect_word("UPDATE")
            column.on_update = _default_text(parser)
    return column


def _default_text(parser: Parser) -> str:
    """A DEFAULT or ON UPDATE value as SHOW CREATE TABLE prints it."""
    token = parser.next()
    if token.is_word("CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP"):
        if parser.accept_op("("):
            parser.expect_op(")")
        return "current_timestamp()"
    if token.kind is Tok.STRING:
        return "'" + token.text.replace("'", "''") + "'"
    if token.is_op("-") and parser.peek.kind is Tok.NUMBER:
        return "-" + parser.next().text
    return token.text


def _client_table(ctx: Context, parser: Parser) -> ClientTable | None:
    database, name = _qualified(parser, ctx.session)
    tables = ctx.server.client_tables.databases.get(database)
    if tables is None:
        return None
    table = tables.get(name)
    if table is None:
        raise sql_error(ER_NO_SUCH_TABLE, database, name)
    return table


def delete(ctx: Context) -> Response:
    parser = ctx.parser(1)
    parser.expect_word("FROM")
    table = _client_table(ctx, parser)
    if table is None:
        return not_supported(ctx)
    _require(ctx, Privilege.DELETE, "DELETE", table.model.database, table.model.name)
    kept = table.rows
    if parser.accept_word("WHERE"):
        predicate = where_condition(parser, client_table_source(table), ctx.session)
        parser.expect_end()
        kept = [row for row in table.rows if not predicate(row)]
    else:
        parser.expect_end()
        kept = []
    gone = len(table.rows) - len(kept)
    table.rows[:] = kept
    return OkResult(affected_rows=gone)


def update(ctx: Context) -> Response:
    parser = ctx.parser(1)
    table = _client_table(ctx, parser)
    if table is None:
        return not_supported(ctx)
    _require(ctx, Privilege.UPDATE, "UPDATE", table.model.database, table.model.name)
    parser.expect_word("SET")
    settings: list[tuple[int, Value]] = []
    while True:
        column = parser.name()
        position = table.model.position(column)
        if position is None:
            raise sql_error(ER_BAD_FIELD_ERROR, column, "field list")
        parser.expect_op("=")
        settings.append((position, _constant(parser.expression())))
        if not parser.accept_op(","):
            break
    predicate = None
    if parser.accept_word("WHERE"):
        predicate = where_condition(parser, client_table_source(table), ctx.session)
    parser.expect_end()
    changed = 0
    for row in table.rows:
        if predicate is not None and not predicate(row):
            continue
        before = list(row)
        for position, value in settings:
            row[position] = _stored(table.model.columns[position], value)
        if row != before:
            changed += 1
            _touch(ctx.session, table, row, {p for p, _ in settings}, updating=True)
    return OkResult(affected_rows=changed)


def insert(ctx: Context) -> Response:
    """INSERT or REPLACE [INTO] t [(columns)] VALUES (...), ... | SELECT ..."""
    parser = ctx.parser(0)
    replacing = parser.next().is_word("REPLACE")
    parser.accept_word("INTO")
    table = _client_table(ctx, parser)
    if table is None:
        return not_supported(ctx)
    _require(ctx, Privilege.INSERT, "INSERT", table.model.database, table.model.name)
    if replacing:
        _require(ctx, Privilege.DELETE, "DELETE", table.model.database, table.model.name)
    if parser.peek.is_op("("):
        named = _name_list(parser)
    else:
        named = [c.name for c in table.model.columns]
    positions = []
    for column in named:
        position = table.model.position(column)
        if position is None:
            raise sql_error(ER_BAD_FIELD_ERROR, column, "field list")
        positions.append(position)
    if parser.accept_word("VALUES", "VALUE"):
        rows = [_values(parser)]
        while parser.accept_op(","):
            rows.append(_values(parser))
        parser.expect_end()
    elif parser.accept_word("SELECT"):
        rows = [_selected(ctx, parser)]
    else:
        raise parser.error()
    affected = 0
    for values in rows:
        if len(values) != len(positions):
            raise sql_error(ER_WRONG_VALUE_COUNT_ON_ROW, 1)
        row: list[CellValue] = [None] * len(table.model.columns)
        for position, value in zip(positions, values, strict=True):
            row[position] = _stored(table.model.columns[position], value)
        _touch(ctx.session, table, row, set(positions), updating=False)
        affected += _put(table, row, replacing)
    return OkResult(affected_rows=affected)


def _values(parser: Parser) -> list[Value]:
    parser.expect_op("(")
    values = [_constant(parser.expression())]
    while parser.accept_op(","):
        values.append(_constant(parser.expression()))
    parser.expect_op(")")
    return values


def _constant(expr: Expr) -> Value:
    return evaluate_group(expr, RowScope((), ()), [()])


def _selected(ctx: Context, parser: Parser) -> list[Value]:
    """The one row of ``SELECT constants`` or of an aggregate over a table
    (:func:`~fakemaster.sql.answers.aggregate_select.aggregate_row`)."""
    start = parser.index
    expressions = selected_expressions(parser)
    if not parser.peek.is_word("FROM"):
        parser.expect_end()
        return [_constant(e) for e, _ in expressions]
    return aggregate_row(ctx, row_parser(ctx, start))[1]


def _stored(column: CatalogueColumn, value: Value) -> CellValue:
    """A value as the column keeps it: its text as the server renders it (integers and
    FLOAT's 6 significant digits), character columns as text."""
    if value is None:
        return None
    kind = column.data_type
    if kind in ("tinyint", "smallint", "mediumint", "int", "bigint", "float", "double"):
        digits = (text_bytes(value) or b"0").decode("ascii", "replace").strip()
        try:
            number = Decimal(digits or "0")
        except InvalidOperation:
            number = Decimal(0)  # the server warns and stores 0
        if kind == "float":
            return f"{float(number):.6g}".encode()
        if kind == "double":
            return repr(float(number)).removesuffix(".0").encode()
        return str(int(number.to_integral_value(ROUND_HALF_UP))).encode()
    if column.is_numeric or column.collation is None:
        return text_bytes(value)
    data = text_bytes(value)
    return None if data is None else data.decode("utf-8", "replace")


def _touch(
    session: SessionState,
    table: ClientTable,
    row: list[CellValue],
    written: set[int],
    *,
    updating: bool,
) -> None:
    """The TIMESTAMP columns set to now: DEFAULT CURRENT_TIMESTAMP in a new row, ON UPDATE
    CURRENT_TIMESTAMP in a changed one, when the statement does not set them itself."""
    now = TimestampCell(int(session.server.clock()))
    for position, column in enumerate(table.model.columns):
        automatic = column.on_update if updating else column.default
        if automatic == "current_timestamp()" and position not in written:
            row[position] = now


def _put(table: ClientTable, row: list[CellValue], replacing: bool) -> int:
    """Adds ``row`` in the primary key's order (InnoDB's clustered order, which a SELECT
    without ORDER BY follows); a REPLACE first deletes the row with an equal key (2 rows
    affected), an INSERT is ER_DUP_ENTRY. Keys compare by their columns' collations."""
    if not table.key:
        table.rows.append(row)
        return 1
    wanted = _key_order(table, row)
    keys = [_key_order(table, held) for held in table.rows]
    index = bisect.bisect_left(keys, wanted)
    if index < len(keys) and keys[index] == wanted:
        if not replacing:
            shown = "-".join("NULL" if row[p] is None else _cell_text(row[p]) for p in table.key)
            raise sql_error(ER_DUP_ENTRY, shown, "PRIMARY")
        table.rows[index] = row
        return 2
    table.rows.insert(index, row)
    return 1


def _cell_text(cell: CellValue) -> str:
    if isinstance(cell, bytes):
        return cell.decode("utf-8", "replace")
    return str(cell)


def _key_order(table: ClientTable, row: Sequence[CellValue]) -> tuple[tuple[int, object], ...]:
    """The primary key of ``row`` as it sorts: numbers by value, text by its collation (case
    and trailing spaces ignored for a ``_ci`` one)."""
    parts: list[tuple[int, object]] = []
    for position in table.key:
        column, cell = table.model.columns[position], row[position]
        text = _cell_text(cell)
        if column.is_numeric:
            try:
                parts.append((0, Decimal(text)))
            except InvalidOperation:
                parts.append((1, text))
        elif column.collation is not None and not column.collation.endswith("_bin"):
            parts.append((1, general_ci_key(text.rstrip(" "))))
        else:
            parts.append((1, text))
    return tuple(parts)
