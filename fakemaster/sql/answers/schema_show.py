"""SHOW statements about the served tables: DATABASES, CREATE DATABASE, [FULL] TABLES,
CREATE TABLE, [FULL] COLUMNS (FIELDS), INDEX (INDEXES, KEYS).

As in MariaDB, most are views of information_schema (the same column definitions, renamed);
SHOW CREATE answers with its own two text columns. The text of SHOW CREATE TABLE is
:func:`~fakemaster.sql.tables.catalogue.create_table_text`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from fakemaster.protocol.resultset import Column, ColumnFlag, ResultSet, sql_error, text_column
from fakemaster.sql.answers.table_select import Source, encode_cells, where_condition
from fakemaster.sql.answers.unsupported import not_supported
from fakemaster.sql.like import LikePattern
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Parser, Tok
from fakemaster.sql.state import SessionState
from fakemaster.sql.tables.catalogue import CatalogueTable, CellValue, create_table_text, find_table
from fakemaster.sql.tables.information_schema import is_columns, is_rows
from fakemaster.vocabulary.errcodes import (
    ER_BAD_DB_ERROR,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_TABLEACCESS_DENIED_ERROR,
)
from fakemaster.vocabulary.packets import ServerStatus

__all__ = [
    "show_plugins",
    "show_table_status",
    "show_columns",
    "show_create_database",
    "show_create_table",
    "show_databases",
    "show_events",
    "show_routine_status",
    "show_index",
    "show_tables",
    "show_triggers",
]


def _view(
    table: str, picks: Sequence[tuple[str, str]], rows: list[Sequence[CellValue]]
) -> tuple[list[Column], list[Sequence[CellValue]]]:
    """Columns ``picks`` ((org name, shown name)) of information_schema ``table`` and the
    matching cells of ``rows``."""
    base = is_columns(table) or []
    index = {c.org_name: i for i, c in enumerate(base)}
    columns = [replace(base[index[org]], name=shown) for org, shown in picks]
    cells: list[Sequence[CellValue]] = [tuple(row[index[org]] for org, _ in picks) for row in rows]
    return columns, cells


def _like(parser: Parser) -> LikePattern | None:
    if parser.accept_word("LIKE"):
        token = parser.next()
        if token.kind is not Tok.STRING:
            raise parser.error(token)
        return LikePattern.compile(token.text)
    return None


def _result(
    session: SessionState,
    columns: list[Column],
    rows: list[Sequence[CellValue]],
    *,
    scan: bool = True,
) -> Response:
    """The rows of an information_schema view (a scan: QUERY_NO_INDEX_USED) or of SHOW
    CREATE (``scan=False``)."""
    charsets = ["utf8mb3" if c.text_chars is not None else None for c in columns]
    flag = ServerStatus.QUERY_NO_INDEX_USED if scan else 0
    return ResultSet(columns, encode_cells(session, rows, charsets), extra_status=(flag, flag))


def show_databases(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    like_text = parser.tokens[parser.index + 1].text if parser.peek.is_word("LIKE") else None
    like = _like(parser)
    parser.expect_end()
    rows = [r for r in is_rows("SCHEMATA", ctx.session) if like is None or like.matches(str(r[1]))]
    # MariaDB heads the column with the pattern, as SHOW TABLES LIKE: "Database (keys)".
    heading = "Database" + (f" ({like_text})" if like_text is not None else "")
    columns, cells = _view("SCHEMATA", [("SCHEMA_NAME", heading)], rows)
    return _result(ctx.session, columns, cells)


def _database(ctx: Context, parser: Parser) -> str:
    if parser.accept_word("FROM", "IN"):
        name = parser.name()
    elif ctx.session.database is not None:
        name = ctx.session.database
    else:
        raise sql_error(ER_NO_DB_ERROR)
    if name not in ctx.server.databases():
        raise sql_error(ER_BAD_DB_ERROR, name)
    return name


def show_tables(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    full = bool(ctx.match.group("full"))
    database = _database(ctx, parser)
    like_text = None
    if parser.peek.is_word("LIKE"):
        like_text = parser.tokens[parser.index + 1].text
    like = _like(parser)
    catalogue = ctx.server.tables
    tables = list(catalogue.tables(database)) if catalogue is not None else []
    written = ctx.server.client_tables.databases.get(database, {})
    tables += sorted((table.model for table in written.values()), key=lambda t: t.name)
    heading = f"Tables_in_{database}" + (f" ({like_text})" if like is not None else "")
    if not ctx.session.account.may_use(database):
        tables = []  # MariaDB: an empty list, no error
    shown = [t for t in tables if like is None or like.matches(t.name)]
    names = [t.name for t in shown]
    kinds = {t.name: t.shown_type for t in shown}
    if like is None and parser.accept_word("WHERE"):
        view = Source(
            database,
            "TABLE_NAMES",
            [heading, "Table_type"],
            [],
            [False, False],
            [True, True],
            [(n, kinds[n]) for n in names],
            ["utf8mb3", "utf8mb3"],
        )
        condition = where_condition(parser, view, ctx.session)
        names = [row[0] for row in view.rows if condition(row) and isinstance(row[0], str)]
    parser.expect_end()
    column = Column(
        heading,
        253,
        flags=ColumnFlag.NOT_NULL | ColumnFlag.NO_DEFAULT_VALUE,
        text_chars=73,
        collation=33,
        schema="information_schema",
        table="TABLE_NAMES",
        org_table="TABLE_NAMES",
        org_name="TABLE_NAME",
    )
    columns = [column]
    rows: list[Sequence[CellValue]] = [(name,) for name in names]
    if full:
        kind, _ = _view("TABLES", [("TABLE_TYPE", "Table_type")], [])
        columns.append(replace(kind[0], table="TABLE_NAMES", org_table="TABLE_NAMES"))
        rows = [(name, kinds[name]) for name in names]
    return _result(ctx.session, columns, rows)


def _create_columns(first: str, second: str, text: str) -> list[Column]:
    """The two columns of SHOW CREATE: the second as long as its text's UTF-8 bytes (the
    server counts its buffer, checked on 10.11 with non-ASCII ENUM members), 1024 at least."""
    return [
        text_column(first, 64, flags=ColumnFlag.NOT_NULL, collation=33),
        text_column(second, max(1024, len(text.encode())), flags=ColumnFlag.NOT_NULL, collation=33),
    ]


def show_create_database(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    if_not_exists = False
    if parser.accept_word("IF"):
        parser.expect_word("NOT")
        parser.expect_word("EXISTS")
        if_not_exists = True
    name = parser.name()
    parser.expect_end()
    if name not in ctx.server.databases():
        raise sql_error(ER_BAD_DB_ERROR, name)
    charset = ctx.server.globals["character_set_server"]
    collation = ctx.server.globals["collation_server"]
    if name == "information_schema":
        charset, collation = "utf8mb3", "utf8mb3_general_ci"
    text = (
        "CREATE DATABASE "
        + ("/*!32312 IF NOT EXISTS*/ " if if_not_exists else "")
        + f"`{name}` /*!40100 DEFAULT CHARACTER SET {charset} COLLATE {collation} */"
    )
    rows: list[Sequence[CellValue]] = [(name, text)]
    return _result(
        ctx.session, _create_columns("Database", "Create Database", text), rows, scan=False
    )


def _table(ctx: Context, parser: Parser, command: str = "SELECT") -> CatalogueTable:
    """The table a SHOW names; ER_TABLEACCESS_DENIED_ERROR (``command`` denied) unless the
    account may use its database, then ER_NO_SUCH_TABLE when there is no such table (MariaDB
    checks in that order)."""
    first = parser.name()
    database = None
    name = first
    if parser.accept_op("."):
        database, name = first, parser.name()
    if parser.accept_word("FROM", "IN"):
        database = parser.name()
    if database is None:
        database = ctx.session.database
        if database is None:
            raise sql_error(ER_NO_DB_ERROR)
    account = ctx.session.account
    if not account.may_use(database):
        raise sql_error(
            ER_TABLEACCESS_DENIED_ERROR, command, account.user, ctx.session.host, database, name
        )
    catalogue = ctx.server.tables
    table = find_table(catalogue, database, name) if catalogue is not None else None
    written = ctx.server.client_tables.databases.get(database, {}).get(name)
    if written is not None:  # a table a client created (sql.answers.client_writes)
        table = written.model
    if table is None:
        raise sql_error(ER_NO_SUCH_TABLE, database, name)
    return table


def show_create_table(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    table = _table(ctx, parser, "SHOW")
    parser.expect_end()
    text = create_table_text(table)
    rows: list[Sequence[CellValue]] = [(table.name, text)]
    return _result(ctx.session, _create_columns("Table", "Create Table", text), rows, scan=False)


def show_columns(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    full = bool(ctx.match.group("full"))
    table = _table(ctx, parser)
    like = _like(parser)
    parser.expect_end()
    rows = [
        r
        for r in is_rows("COLUMNS", ctx.session)
        if r[1] == table.database
        and r[2] == table.name
        and (like is None or like.matches(str(r[3])))
    ]
    # SHOW COLUMNS gives the default's value, not its expression: 'abc' as abc, NULL as NULL.
    default_at = 5
    shown_rows: list[Sequence[CellValue]] = []
    for row in rows:
        default = row[default_at]
        if default == "NULL":
            default = None
        elif isinstance(default, str) and default.startswith("'") and default.endswith("'"):
            default = default[1:-1].replace("''", "'").replace("\\\\", "\\")
        shown_rows.append((*row[:default_at], default, *row[default_at + 1 :]))
    picks = [("COLUMN_NAME", "Field"), ("COLUMN_TYPE", "Type")]
    if full:
        picks.append(("COLLATION_NAME", "Collation"))
    picks += [
        ("IS_NULLABLE", "Null"),
        ("COLUMN_KEY", "Key"),
        ("COLUMN_DEFAULT", "Default"),
        ("EXTRA", "Extra"),
    ]
    if full:
        picks += [("PRIVILEGES", "Privileges"), ("COLUMN_COMMENT", "Comment")]
    columns, cells = _view("COLUMNS", picks, shown_rows)
    return _result(ctx.session, columns, cells)


def show_index(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    table = _table(ctx, parser)
    parser.expect_end()
    rows = [
        r
        for r in is_rows("STATISTICS", ctx.session)
        if r[1] == table.database and r[2] == table.name
    ]
    picks = [
        ("TABLE_NAME", "Table"),
        ("NON_UNIQUE", "Non_unique"),
        ("INDEX_NAME", "Key_name"),
        ("SEQ_IN_INDEX", "Seq_in_index"),
        ("COLUMN_NAME", "Column_name"),
        ("COLLATION", "Collation"),
        ("CARDINALITY", "Cardinality"),
        ("SUB_PART", "Sub_part"),
        ("PACKED", "Packed"),
        ("NULLABLE", "Null"),
        ("INDEX_TYPE", "Index_type"),
        ("COMMENT", "Comment"),
        ("INDEX_COMMENT", "Index_comment"),
        ("IGNORED", "Ignored"),
    ]
    columns, cells = _view("STATISTICS", picks, rows)
    return _result(ctx.session, columns, cells)


_TABLE_STATUS = [
    ("TABLE_NAME", "Name"),
    ("ENGINE", "Engine"),
    ("VERSION", "Version"),
    ("ROW_FORMAT", "Row_format"),
    ("TABLE_ROWS", "Rows"),
    ("AVG_ROW_LENGTH", "Avg_row_length"),
    ("DATA_LENGTH", "Data_length"),
    ("MAX_DATA_LENGTH", "Max_data_length"),
    ("INDEX_LENGTH", "Index_length"),
    ("DATA_FREE", "Data_free"),
    ("AUTO_INCREMENT", "Auto_increment"),
    ("CREATE_TIME", "Create_time"),
    ("UPDATE_TIME", "Update_time"),
    ("CHECK_TIME", "Check_time"),
    ("TABLE_COLLATION", "Collation"),
    ("CHECKSUM", "Checksum"),
    ("CREATE_OPTIONS", "Create_options"),
    ("TABLE_COMMENT", "Comment"),
    ("MAX_INDEX_LENGTH", "Max_index_length"),
    ("TEMPORARY", "Temporary"),
]


def show_table_status(ctx: Context) -> Response:
    """SHOW TABLE STATUS [FROM db] [LIKE 'pattern' | WHERE ...]: information_schema.TABLES
    renamed (sizes and times as information_schema gives them)."""
    parser = ctx.parser_after(ctx.match.end())
    database = _database(ctx, parser)
    like = _like(parser)
    rows = [
        r
        for r in is_rows("TABLES", ctx.session)
        if r[1] == database and (like is None or like.matches(str(r[2])))
    ]
    columns, cells = _view("TABLES", _TABLE_STATUS, rows)
    if like is None and parser.accept_word("WHERE"):
        view = Source(
            database,
            "TABLES",
            [shown for _, shown in _TABLE_STATUS],
            columns,
            [c.text_chars is None for c in columns],
            [True] * len(columns),
            cells,
            ["utf8mb3" if c.text_chars is not None else None for c in columns],
        )
        condition = where_condition(parser, view, ctx.session)
        cells = [row for row in cells if condition(row)]
    parser.expect_end()
    return _result(ctx.session, columns, cells)


_EVENTS = [
    ("EVENT_SCHEMA", "Db"),
    ("EVENT_NAME", "Name"),
    ("DEFINER", "Definer"),
    ("TIME_ZONE", "Time zone"),
    ("EVENT_TYPE", "Type"),
    ("EXECUTE_AT", "Execute at"),
    ("INTERVAL_VALUE", "Interval value"),
    ("INTERVAL_FIELD", "Interval field"),
    ("STARTS", "Starts"),
    ("ENDS", "Ends"),
    ("STATUS", "Status"),
    ("ORIGINATOR", "Originator"),
    ("CHARACTER_SET_CLIENT", "character_set_client"),
    ("COLLATION_CONNECTION", "collation_connection"),
    ("DATABASE_COLLATION", "Database Collation"),
]
_ROUTINE_STATUS = [
    ("ROUTINE_SCHEMA", "Db"),
    ("ROUTINE_NAME", "Name"),
    ("ROUTINE_TYPE", "Type"),
    ("DEFINER", "Definer"),
    ("LAST_ALTERED", "Modified"),
    ("CREATED", "Created"),
    ("SECURITY_TYPE", "Security_type"),
    ("ROUTINE_COMMENT", "Comment"),
    ("CHARACTER_SET_CLIENT", "character_set_client"),
    ("COLLATION_CONNECTION", "collation_connection"),
    ("DATABASE_COLLATION", "Database Collation"),
]


def _filtered_view(
    ctx: Context,
    parser: Parser,
    table: str,
    picks: list[tuple[str, str]],
    name_at: int,
    keep: Callable[[Sequence[CellValue]], bool],
) -> Response:
    """An information_schema view renamed (``picks``) of the rows ``keep`` keeps, filtered by
    ``[LIKE 'p' | WHERE condition]`` (LIKE on the ``name_at`` column)."""
    like = _like(parser)
    rows = [
        r
        for r in is_rows(table, ctx.session)
        if keep(r) and (like is None or like.matches(str(r[name_at])))
    ]
    columns, cells = _view(table, picks, rows)
    if like is None and parser.accept_word("WHERE"):
        view = Source(
            "information_schema",
            table,
            [shown for _, shown in picks],
            columns,
            [c.text_chars is None for c in columns],
            [True] * len(columns),
            cells,
            ["utf8mb3" if c.text_chars is not None else None for c in columns],
        )
        condition = where_condition(parser, view, ctx.session)
        cells = [row for row in cells if condition(row)]
    parser.expect_end()
    return _result(ctx.session, columns, cells)


def show_events(ctx: Context) -> Response:
    """SHOW EVENTS [FROM db] [LIKE 'p' | WHERE ...]: information_schema.EVENTS of a database
    (a fake master schedules none: no rows)."""
    parser = ctx.parser_after(ctx.match.end())
    database = _database(ctx, parser)
    response = _filtered_view(ctx, parser, "EVENTS", _EVENTS, 2, lambda row: row[1] == database)
    if isinstance(response, ResultSet):  # MariaDB 10.11: QUERY_NO_INDEX_USED after the columns only
        response.extra_status = (ServerStatus.QUERY_NO_INDEX_USED, 0)
    return response


_TRIGGERS = [
    ("TRIGGER_NAME", "Trigger"),
    ("EVENT_MANIPULATION", "Event"),
    ("EVENT_OBJECT_TABLE", "Table"),
    ("ACTION_STATEMENT", "Statement"),
    ("ACTION_TIMING", "Timing"),
    ("CREATED", "Created"),
    ("SQL_MODE", "sql_mode"),
    ("DEFINER", "Definer"),
    ("CHARACTER_SET_CLIENT", "character_set_client"),
    ("COLLATION_CONNECTION", "collation_connection"),
    ("DATABASE_COLLATION", "Database Collation"),
]


def show_triggers(ctx: Context) -> Response:
    """SHOW TRIGGERS [FROM db] [LIKE 'table' | WHERE ...]: information_schema.TRIGGERS of a
    database, LIKE on the table (a fake master's tables have none: no rows)."""
    parser = ctx.parser_after(ctx.match.end())
    database = _database(ctx, parser)
    return _filtered_view(ctx, parser, "TRIGGERS", _TRIGGERS, 6, lambda row: row[1] == database)


def show_routine_status(ctx: Context) -> Response:
    """SHOW {FUNCTION|PROCEDURE|PACKAGE [BODY]} STATUS [LIKE 'p' | WHERE ...]:
    information_schema.ROUTINES of that kind (a fake master stores none: no rows)."""
    kind = " ".join(ctx.match.group(0).upper().split()[1:-1])
    parser = ctx.parser_after(ctx.match.end())
    return _filtered_view(ctx, parser, "ROUTINES", _ROUTINE_STATUS, 3, lambda row: row[4] == kind)


def show_plugins(ctx: Context) -> Response:
    """SHOW PLUGINS: a view of information_schema.PLUGINS (no LIKE or WHERE: MariaDB has none).
    ``SHOW PLUGINS SONAME`` lists the libraries of the server's plugin directory: not served."""
    parser = ctx.parser_after(ctx.match.end())
    if parser.peek.is_word("SONAME"):
        return not_supported(ctx)
    parser.expect_end()
    picks = [
        ("PLUGIN_NAME", "Name"),
        ("PLUGIN_STATUS", "Status"),
        ("PLUGIN_TYPE", "Type"),
        ("PLUGIN_LIBRARY", "Library"),
        ("PLUGIN_LICENSE", "License"),
    ]
    columns, cells = _view("PLUGINS", picks, is_rows("PLUGINS", ctx.session))
    return _result(ctx.session, columns, cells)
