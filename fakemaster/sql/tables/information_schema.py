"""The information_schema tables CDC tools and dumps read, as MariaDB 10.11 defines them, and
their rows for the served catalogue (:mod:`fakemaster.sql.tables.catalogue`).

Column definitions are the server's own (captured from a 10.11 server: each is
``NAME:type:chars:flags:decimals`` for utf8mb3 text, ``NAME:type#length:flags:decimals`` for the
others). Rows are made from the catalogue; what a real server measures (sizes, row estimates,
times) is given as a server that just created the tables would (no size, exact row counts).
Tables a fake master has nothing in (TRIGGERS, FILES, PARTITIONS, VIEWS, ROUTINES, EVENTS) are
empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.charsets import UTF8MB3_GENERAL_CI, collation_by_name
from fakemaster.protocol.resultset import Column
from fakemaster.sql.answers.snapshot import read_snapshot
from fakemaster.sql.state import SessionState
from fakemaster.sql.tables.catalogue import (
    BLOB_BYTES,
    CatalogueColumn,
    CatalogueTable,
    CellValue,
    TimestampCell,
    column_key,
    create_table_text,
)
from fakemaster.sql.tables.plugins import PLUGINS
from fakemaster.sql.tables.table_statistics import (
    PAGE_SIZE,
    avg_row_length,
    cardinalities,
    frm_version,
    index_length,
)

__all__ = ["IS_COLUMNS", "IS_ROWS", "is_columns", "is_rows", "numeric_precision"]

_DEFINITIONS: dict[str, tuple[str, ...]] = {
    "PLUGINS": (
        "PLUGIN_NAME:253:64:4097:0",
        "PLUGIN_VERSION:253:20:4097:0",
        "PLUGIN_STATUS:253:16:4097:0",
        "PLUGIN_TYPE:253:80:4097:0",
        "PLUGIN_TYPE_VERSION:253:20:4097:0",
        "PLUGIN_LIBRARY:253:64:4096:0",
        "PLUGIN_LIBRARY_VERSION:253:20:4096:0",
        "PLUGIN_AUTHOR:253:64:4096:0",
        "PLUGIN_DESCRIPTION:252:196605:4112:0",
        "PLUGIN_LICENSE:253:80:4097:0",
        "LOAD_OPTION:253:64:4097:0",
        "PLUGIN_MATURITY:253:12:4097:0",
        "PLUGIN_AUTH_VERSION:253:80:4096:0",
    ),
    "SCHEMATA": (
        "CATALOG_NAME:253:512:4097:0",
        "SCHEMA_NAME:253:64:4097:0",
        "DEFAULT_CHARACTER_SET_NAME:253:32:4097:0",
        "DEFAULT_COLLATION_NAME:253:64:4097:0",
        "SQL_PATH:253:512:4096:0",
        "SCHEMA_COMMENT:253:1024:4097:0",
    ),
    "TABLES": (
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "TABLE_TYPE:253:64:4097:0",
        "ENGINE:253:64:4096:0",
        "VERSION:8#21:4128:0",
        "ROW_FORMAT:253:10:4096:0",
        "TABLE_ROWS:8#21:4128:0",
        "AVG_ROW_LENGTH:8#21:4128:0",
        "DATA_LENGTH:8#21:4128:0",
        "MAX_DATA_LENGTH:8#21:4128:0",
        "INDEX_LENGTH:8#21:4128:0",
        "DATA_FREE:8#21:4128:0",
        "AUTO_INCREMENT:8#21:4128:0",
        "CREATE_TIME:12#19:4224:0",
        "UPDATE_TIME:12#19:4224:0",
        "CHECK_TIME:12#19:4224:0",
        "TABLE_COLLATION:253:64:4096:0",
        "CHECKSUM:8#21:4128:0",
        "CREATE_OPTIONS:253:2048:4096:0",
        "TABLE_COMMENT:253:2048:4097:0",
        "MAX_INDEX_LENGTH:8#21:4128:0",
        "TEMPORARY:253:1:4096:0",
    ),
    "COLUMNS": (
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "COLUMN_NAME:253:64:4097:0",
        "ORDINAL_POSITION:8#21:4129:0",
        "COLUMN_DEFAULT:252:196596:4112:0",
        "IS_NULLABLE:253:3:4097:0",
        "DATA_TYPE:253:64:4097:0",
        "CHARACTER_MAXIMUM_LENGTH:8#21:4128:0",
        "CHARACTER_OCTET_LENGTH:8#21:4128:0",
        "NUMERIC_PRECISION:8#21:4128:0",
        "NUMERIC_SCALE:8#21:4128:0",
        "DATETIME_PRECISION:8#21:4128:0",
        "CHARACTER_SET_NAME:253:32:4096:0",
        "COLLATION_NAME:253:64:4096:0",
        "COLUMN_TYPE:252:196605:4113:0",
        "COLUMN_KEY:253:3:4097:0",
        "EXTRA:253:80:4097:0",
        "PRIVILEGES:253:80:4097:0",
        "COLUMN_COMMENT:253:1024:4097:0",
        "IS_GENERATED:253:6:4097:0",
        "GENERATION_EXPRESSION:252:196596:4112:0",
    ),
    "STATISTICS": (
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "NON_UNIQUE:8#1:4097:0",
        "INDEX_SCHEMA:253:64:4097:0",
        "INDEX_NAME:253:64:4097:0",
        "SEQ_IN_INDEX:3#2:4129:0",
        "COLUMN_NAME:253:64:4097:0",
        "COLLATION:253:1:4096:0",
        "CARDINALITY:8#21:4096:0",
        "SUB_PART:8#3:4096:0",
        "PACKED:253:10:4096:0",
        "NULLABLE:253:3:4097:0",
        "INDEX_TYPE:253:16:4097:0",
        "COMMENT:253:16:4096:0",
        "INDEX_COMMENT:253:1024:4097:0",
        "IGNORED:253:3:4097:0",
    ),
    "KEY_COLUMN_USAGE": (
        "CONSTRAINT_CATALOG:253:512:4097:0",
        "CONSTRAINT_SCHEMA:253:64:4097:0",
        "CONSTRAINT_NAME:253:64:4097:0",
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "COLUMN_NAME:253:64:4097:0",
        "ORDINAL_POSITION:8#10:4097:0",
        "POSITION_IN_UNIQUE_CONSTRAINT:8#10:4096:0",
        "REFERENCED_TABLE_SCHEMA:253:64:4096:0",
        "REFERENCED_TABLE_NAME:253:64:4096:0",
        "REFERENCED_COLUMN_NAME:253:64:4096:0",
    ),
    "TRIGGERS": (
        "TRIGGER_CATALOG:253:512:4097:0",
        "TRIGGER_SCHEMA:253:64:4097:0",
        "TRIGGER_NAME:253:64:4097:0",
        "EVENT_MANIPULATION:253:6:4097:0",
        "EVENT_OBJECT_CATALOG:253:512:4097:0",
        "EVENT_OBJECT_SCHEMA:253:64:4097:0",
        "EVENT_OBJECT_TABLE:253:64:4097:0",
        "ACTION_ORDER:8#4:4097:0",
        "ACTION_CONDITION:252:196605:4112:0",
        "ACTION_STATEMENT:252:196605:4112:0",
        "ACTION_ORIENTATION:253:9:4097:0",
        "ACTION_TIMING:253:6:4097:0",
        "ACTION_REFERENCE_OLD_TABLE:253:64:4096:0",
        "ACTION_REFERENCE_NEW_TABLE:253:64:4096:0",
        "ACTION_REFERENCE_OLD_ROW:253:3:4097:0",
        "ACTION_REFERENCE_NEW_ROW:253:3:4097:0",
        "CREATED:12#22:4224:2",
        "SQL_MODE:253:8192:4097:0",
        "DEFINER:253:384:4096:0",
        "CHARACTER_SET_CLIENT:253:32:4097:0",
        "COLLATION_CONNECTION:253:64:4097:0",
        "DATABASE_COLLATION:253:64:4097:0",
    ),
    "FILES": (
        "FILE_ID:8#4:4097:0",
        "FILE_NAME:253:512:4096:0",
        "FILE_TYPE:253:20:4097:0",
        "TABLESPACE_NAME:253:64:4096:0",
        "TABLE_CATALOG:253:64:4097:0",
        "TABLE_SCHEMA:253:64:4096:0",
        "TABLE_NAME:253:64:4096:0",
        "LOGFILE_GROUP_NAME:253:64:4096:0",
        "LOGFILE_GROUP_NUMBER:8#4:4096:0",
        "ENGINE:253:64:4097:0",
        "FULLTEXT_KEYS:253:64:4096:0",
        "DELETED_ROWS:8#4:4096:0",
        "UPDATE_COUNT:8#4:4096:0",
        "FREE_EXTENTS:8#4:4096:0",
        "TOTAL_EXTENTS:8#4:4096:0",
        "EXTENT_SIZE:8#4:4097:0",
        "INITIAL_SIZE:8#21:4128:0",
        "MAXIMUM_SIZE:8#21:4128:0",
        "AUTOEXTEND_SIZE:8#21:4128:0",
        "CREATION_TIME:12#19:4224:0",
        "LAST_UPDATE_TIME:12#19:4224:0",
        "LAST_ACCESS_TIME:12#19:4224:0",
        "RECOVER_TIME:8#4:4096:0",
        "TRANSACTION_COUNTER:8#4:4096:0",
        "VERSION:8#21:4128:0",
        "ROW_FORMAT:253:10:4096:0",
        "TABLE_ROWS:8#21:4128:0",
        "AVG_ROW_LENGTH:8#21:4128:0",
        "DATA_LENGTH:8#21:4128:0",
        "MAX_DATA_LENGTH:8#21:4128:0",
        "INDEX_LENGTH:8#21:4128:0",
        "DATA_FREE:8#21:4128:0",
        "CREATE_TIME:12#19:4224:0",
        "UPDATE_TIME:12#19:4224:0",
        "CHECK_TIME:12#19:4224:0",
        "CHECKSUM:8#21:4128:0",
        "STATUS:253:20:4097:0",
        "EXTRA:253:255:4096:0",
    ),
    "PARTITIONS": (
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "PARTITION_NAME:253:64:4096:0",
        "SUBPARTITION_NAME:253:64:4096:0",
        "PARTITION_ORDINAL_POSITION:8#21:4128:0",
        "SUBPARTITION_ORDINAL_POSITION:8#21:4128:0",
        "PARTITION_METHOD:253:18:4096:0",
        "SUBPARTITION_METHOD:253:12:4096:0",
        "PARTITION_EXPRESSION:252:196605:4112:0",
        "SUBPARTITION_EXPRESSION:252:196605:4112:0",
        "PARTITION_DESCRIPTION:252:196605:4112:0",
        "TABLE_ROWS:8#21:4129:0",
        "AVG_ROW_LENGTH:8#21:4129:0",
        "DATA_LENGTH:8#21:4129:0",
        "MAX_DATA_LENGTH:8#21:4128:0",
        "INDEX_LENGTH:8#21:4129:0",
        "DATA_FREE:8#21:4129:0",
        "CREATE_TIME:12#19:4224:0",
        "UPDATE_TIME:12#19:4224:0",
        "CHECK_TIME:12#19:4224:0",
        "CHECKSUM:8#21:4128:0",
        "PARTITION_COMMENT:253:80:4097:0",
        "NODEGROUP:253:12:4097:0",
        "TABLESPACE_NAME:253:64:4096:0",
    ),
    "TABLE_CONSTRAINTS": (
        "CONSTRAINT_CATALOG:253:512:4097:0",
        "CONSTRAINT_SCHEMA:253:64:4097:0",
        "CONSTRAINT_NAME:253:64:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "CONSTRAINT_TYPE:253:64:4097:0",
    ),
    "VIEWS": (
        "TABLE_CATALOG:253:512:4097:0",
        "TABLE_SCHEMA:253:64:4097:0",
        "TABLE_NAME:253:64:4097:0",
        "VIEW_DEFINITION:252:196605:4113:0",
        "CHECK_OPTION:253:8:4097:0",
        "IS_UPDATABLE:253:3:4097:0",
        "DEFINER:253:384:4097:0",
        "SECURITY_TYPE:253:7:4097:0",
        "CHARACTER_SET_CLIENT:253:32:4097:0",
        "COLLATION_CONNECTION:253:64:4097:0",
        "ALGORITHM:253:10:4097:0",
    ),
    "EVENTS": (
        "EVENT_CATALOG:253:64:4097:0",
        "EVENT_SCHEMA:253:64:4097:0",
        "EVENT_NAME:253:64:4097:0",
        "DEFINER:253:384:4097:0",
        "TIME_ZONE:253:64:4097:0",
        "EVENT_BODY:253:8:4097:0",
        "EVENT_DEFINITION:252:196605:4113:0",
        "EVENT_TYPE:253:9:4097:0",
        "EXECUTE_AT:12#19:4224:0",
        "INTERVAL_VALUE:253:256:4096:0",
        "INTERVAL_FIELD:253:18:4096:0",
        "SQL_MODE:253:8192:4097:0",
        "STARTS:12#19:4224:0",
        "ENDS:12#19:4224:0",
        "STATUS:253:18:4097:0",
        "ON_COMPLETION:253:12:4097:0",
        "CREATED:12#19:4225:0",
        "LAST_ALTERED:12#19:4225:0",
        "LAST_EXECUTED:12#19:4224:0",
        "EVENT_COMMENT:253:64:4097:0",
        "ORIGINATOR:8#10:4097:0",
        "CHARACTER_SET_CLIENT:253:32:4097:0",
        "COLLATION_CONNECTION:253:64:4097:0",
        "DATABASE_COLLATION:253:64:4097:0",
    ),
    "ROUTINES": (
        "SPECIFIC_NAME:253:64:4097:0",
        "ROUTINE_CATALOG:253:512:4097:0",
        "ROUTINE_SCHEMA:253:64:4097:0",
        "ROUTINE_NAME:253:64:4097:0",
        "ROUTINE_TYPE:253:13:4097:0",
        "DATA_TYPE:253:64:4097:0",
        "CHARACTER_MAXIMUM_LENGTH:3#21:4096:0",
        "CHARACTER_OCTET_LENGTH:3#21:4096:0",
        "NUMERIC_PRECISION:3#21:4096:0",
        "NUMERIC_SCALE:3#21:4096:0",
        "DATETIME_PRECISION:8#21:4128:0",
        "CHARACTER_SET_NAME:253:64:4096:0",
        "COLLATION_NAME:253:64:4096:0",
        "DTD_IDENTIFIER:252:196605:4112:0",
        "ROUTINE_BODY:253:8:4097:0",
        "ROUTINE_DEFINITION:252:196605:4112:0",
        "EXTERNAL_NAME:253:64:4096:0",
        "EXTERNAL_LANGUAGE:253:64:4096:0",
        "PARAMETER_STYLE:253:8:4097:0",
        "IS_DETERMINISTIC:253:3:4097:0",
        "SQL_DATA_ACCESS:253:64:4097:0",
        "SQL_PATH:253:64:4096:0",
        "SECURITY_TYPE:253:7:4097:0",
        "CREATED:12#19:4225:0",
        "LAST_ALTERED:12#19:4225:0",
        "SQL_MODE:253:8192:4097:0",
        "ROUTINE_COMMENT:252:196605:4113:0",
        "DEFINER:253:384:4097:0",
        "CHARACTER_SET_CLIENT:253:32:4097:0",
        "COLLATION_CONNECTION:253:64:4097:0",
        "DATABASE_COLLATION:253:64:4097:0",
    ),
}


def _column(table: str, spec: str) -> Column:
    name, kind, *rest = spec.split(":")
    flags, decimals = int(rest[-2]), int(rest[-1])
    common = {
        "schema": "information_schema",
        "table": table,
        "org_table": table,
        "org_name": name,
        "flags": flags,
        "decimals": decimals,
    }
    if "#" in kind:
        type_, length = kind.split("#")
        return Column(name, int(type_), length=int(length), **common)  # type: ignore[arg-type]
    return Column(name, int(kind), text_chars=int(rest[0]), collation=UTF8MB3_GENERAL_CI, **common)  # type: ignore[arg-type]


IS_COLUMNS: dict[str, list[Column]] = {
    table: [_column(table, spec) for spec in specs] for table, specs in _DEFINITIONS.items()
}


def is_columns(table: str) -> list[Column] | None:
    return IS_COLUMNS.get(table.upper())


_INTEGER_PRECISION = {"tinyint": 3, "smallint": 5, "mediumint": 7, "int": 10, "bigint": 19}


def numeric_precision(column: CatalogueColumn) -> int | None:
    kind = column.data_type
    if kind in _INTEGER_PRECISION:
        if column.unsigned and kind in ("bigint", "mediumint"):
            return _INTEGER_PRECISION[kind] + 1
        return _INTEGER_PRECISION[kind]
    if kind == "decimal":
        return column.precision
    if kind == "float":
        return 12
    if kind == "double":
        return 22
    if kind == "bit":
        return column.length
    return None


def _number(value: int | None) -> CellValue:
    return None if value is None else str(value).encode()


def _show_default(column: CatalogueColumn) -> str | None:
    """COLUMN_DEFAULT (10.11: the default as an expression, ``NULL`` for DEFAULT NULL)."""
    return column.default


def _column_row(table: CatalogueTable, position: int) -> list[CellValue]:
    column = table.columns[position]
    collation = collation_by_name(column.collation) if column.collation else None
    octets: int | None = None
    chars: int | None = None
    if column.is_text or column.data_type in (
        "binary",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
    ):
        chars = column.max_chars
        octets = chars * (collation.mbmaxlen if collation else 1)
        if column.data_type in (
            "tinytext",
            "text",
            "mediumtext",
            "longtext",
            "json",
            "tinyblob",
            "blob",
            "mediumblob",
            "longblob",
        ):
            octets = BLOB_BYTES[column.data_type]
    precision = numeric_precision(column)
    scale: int | None = None
    if column.data_type in _INTEGER_PRECISION:
        scale = 0
    elif column.data_type == "decimal":
        scale = column.scale
    datetime_precision = (
        column.fsp if column.data_type in ("time", "datetime", "timestamp") else None
    )
    return [
        "def",
        table.database,
        table.name,
        column.name,
        _number(position + 1),
        _show_default(column),
        "YES" if column.nullable else "NO",
        "longtext" if column.data_type == "json" else column.data_type,
        _number(chars),
        _number(octets),
        _number(precision),
        _number(scale),
        _number(datetime_precision),
        collation.charset if collation else None,
        collation.name if collation else None,
        column.column_type,
        column_key(table, column),
        "" if column.on_update is None else f"on update {column.on_update}",
        "select,insert,update,references",
        "",
        "NEVER",
        None,
    ]


RowMaker = Callable[[SessionState], list[Sequence[CellValue]]]


def _tables_of(session: SessionState) -> list[CatalogueTable]:
    """The served tables the session's account may see (those of databases it may use)."""
    catalogue = session.server.tables
    if catalogue is None:
        return []
    account = session.account
    return [t for db in catalogue.databases() if account.may_use(db) for t in catalogue.tables(db)]


def _schemata(session: SessionState) -> list[Sequence[CellValue]]:
    charset = str(session.server.globals["character_set_server"])
    collation = str(session.server.globals["collation_server"])
    rows: list[Sequence[CellValue]] = []
    account = session.account
    every = account.has_any(Privilege.SHOW_DATABASES)
    for name in session.server.databases():
        if not (every or account.may_use(name)):
            continue  # as MariaDB: only the databases the account may use
        if name == "information_schema":
            rows.append(("def", name, "utf8mb3", "utf8mb3_general_ci", None, ""))
        else:
            rows.append(("def", name, charset, collation, None, ""))
    return rows


def _tables(session: SessionState) -> list[Sequence[CellValue]]:
    rows: list[Sequence[CellValue]] = []
    catalogue = session.server.tables
    snapshot = None
    for table in _tables_of(session):
        if catalogue is not None and snapshot is None:
            snapshot = read_snapshot(session).tables
        count = len(snapshot.rows(table)) if snapshot is not None else 0
        # A CSV table (mysql.general_log) has no pages. Its TABLE_ROWS on MariaDB is 2 until
        # the table is first read whole (ha_tina::info), the count after: here always the count.
        csv = table.engine == "CSV"
        data_length = 0 if csv else PAGE_SIZE
        # Created and last changed, as far as a client can tell: when the fake started serving.
        # (A CSV table has no file times to show.)
        served_since = None if csv else TimestampCell(int(session.server.started_at))
        rows.append(
            (
                "def",
                table.database,
                table.name,
                table.table_type,
                table.engine,
                _number(frm_version(create_table_text(table))),
                b"Dynamic",
                _number(count),
                _number(avg_row_length(data_length, count)),
                _number(data_length),
                b"0",
                b"0" if csv else _number(index_length(table)),
                b"0",
                None,
                served_since,
                served_since,
                None,
                table.collation,
                None,
                b"",
                table.comment,
                b"0",
                "N",
            )
        )
    return rows


def _columns(session: SessionState) -> list[Sequence[CellValue]]:
    return [_column_row(t, i) for t in _tables_of(session) for i in range(len(t.columns))]


def _statistics(session: SessionState) -> list[Sequence[CellValue]]:
    rows: list[Sequence[CellValue]] = []
    snapshot = read_snapshot(session).tables if session.server.tables is not None else None
    for table in _tables_of(session):
        table_rows = snapshot.rows(table) if snapshot is not None else ()
        for key in table.keys:
            counted = cardinalities(table, key, table_rows)
            for seq, name in enumerate(key.columns, 1):
                position = table.position(name)
                nullable = position is not None and table.columns[position].nullable
                rows.append(
                    (
                        "def",
                        table.database,
                        table.name,
                        b"0" if key.unique else b"1",
                        table.database,
                        key.name,
                        _number(seq),
                        name,
                        "A",
                        _number(counted[seq - 1]),
                        None,
                        None,
                        "YES" if nullable else "",
                        "BTREE",
                        "",
                        "",
                        "NO",
                    )
                )
    return rows


def _key_column_usage(session: SessionState) -> list[Sequence[CellValue]]:
    rows: list[Sequence[CellValue]] = []
    for table in _tables_of(session):
        for key in table.keys:
            if not key.unique:
                continue
            for seq, name in enumerate(key.columns, 1):
                rows.append(
                    (
                        "def",
                        table.database,
                        key.name,
                        "def",
                        table.database,
                        table.name,
                        name,
                        _number(seq),
                        None,
                        None,
                        None,
                        None,
                    )
                )
    return rows


def _table_constraints(session: SessionState) -> list[Sequence[CellValue]]:
    rows: list[Sequence[CellValue]] = []
    for table in _tables_of(session):
        for key in table.keys:
            if key.unique:
                kind = "PRIMARY KEY" if key.is_primary else "UNIQUE"
                rows.append(("def", table.database, key.name, table.database, table.name, kind))
    return rows


def _empty(session: SessionState) -> list[Sequence[CellValue]]:
    return []


def _plugins(session: SessionState) -> list[Sequence[CellValue]]:
    return list(PLUGINS)


IS_ROWS: dict[str, RowMaker] = {
    "PLUGINS": _plugins,
    "SCHEMATA": _schemata,
    "TABLES": _tables,
    "COLUMNS": _columns,
    "STATISTICS": _statistics,
    "KEY_COLUMN_USAGE": _key_column_usage,
    "TABLE_CONSTRAINTS": _table_constraints,
    "TRIGGERS": _empty,
    "FILES": _empty,
    "PARTITIONS": _empty,
    "VIEWS": _empty,
    "ROUTINES": _empty,
    "EVENTS": _empty,
}


def is_rows(table: str, session: SessionState) -> list[Sequence[CellValue]]:
    return IS_ROWS[table.upper()](session)
