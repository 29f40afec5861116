"""The SHOW statements a fake master answers: VARIABLES, STATUS (with LIKE and WHERE),
MASTER STATUS, BINARY LOGS, SLAVE HOSTS, WARNINGS and ERRORS.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fakemaster.config.accounts import Privilege
from fakemaster.config.variables import SYSTEM_VARIABLES, show_text
from fakemaster.protocol.charsets import UTF8MB3_GENERAL_CI
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import Cell, Column, ColumnFlag, ResultSet, text_column
from fakemaster.sql.like import LikePattern
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Parser, Tok, unknown_column
from fakemaster.sql.status_variables import GLOBAL_ONLY, IDLE_VALUES, STATUS_ORDER
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.packets import ServerStatus

__all__ = [
    "BINLOG_STATUS_PRIVILEGES",
    "ENGINE_NAMES",
    "show_binary_logs",
    "show_engines",
    "show_master_status",
    "show_slave_hosts",
    "show_status",
    "show_variables",
    "show_warnings",
]


_VARIABLES_TABLE = "SESSION_VARIABLES"
_STATUS_TABLE = "SESSION_STATUS"
_COM_NAMES = [name[4:] for name in STATUS_ORDER if name.startswith("Com_")]
# SHOW [SESSION] VARIABLES lists every variable, SHOW GLOBAL VARIABLES those with a global
# value; in name order, as MariaDB sorts them.
_VARIABLE_NAMES = tuple(sorted(SYSTEM_VARIABLES))
_GLOBAL_VARIABLE_NAMES = tuple(n for n in _VARIABLE_NAMES if SYSTEM_VARIABLES[n].allows_global())


def _name_value_columns(table: str) -> list[Column]:
    flags = ColumnFlag.NOT_NULL | ColumnFlag.NO_DEFAULT_VALUE
    return [
        Column(
            name,
            ColumnType.VAR_STRING,
            flags=flags,
            text_chars=chars,
            collation=UTF8MB3_GENERAL_CI,  # information_schema's: the system character set
            schema="information_schema",
            table=table,
            org_table=table,
            org_name=org_name,
        )
        for name, org_name, chars in (
            ("Variable_name", "VARIABLE_NAME", 64),
            ("Value", "VARIABLE_VALUE", 4096),
        )
    ]


def show_variables(ctx: Context) -> Response:
    session = ctx.session
    scope = (ctx.match.group("scope") or "session").lower()
    is_global = scope == "global"
    names = _GLOBAL_VARIABLE_NAMES if is_global else _VARIABLE_NAMES
    value_scope = "global" if is_global else ""

    def value(name: str) -> str:
        var = SYSTEM_VARIABLES[name]
        return show_text(var.kind, session.value_of(var, value_scope))

    selected = _filter_rows(ctx, names, value)
    return ResultSet(
        _name_value_columns(_VARIABLES_TABLE),
        [(name.encode(), value.encode("utf-8", "surrogateescape")) for name, value in selected],
        extra_status=(ServerStatus.QUERY_NO_INDEX_USED, ServerStatus.QUERY_NO_INDEX_USED),
    )


def show_status(ctx: Context) -> Response:
    # Imported here: a replica's SHOW VARIABLES loads this module, the snapshot answers (and
    # the table catalogue under them) are for a client that asks for the status.
    from fakemaster.sql.answers.snapshot import binlog_snapshot_status

    server = ctx.server
    uptime = int(server.clock() - server.started_at)
    # A snapshot of the connections: a worker thread may add one while this runs.
    connections = list(server.connections.values())
    replicas = sum(1 for info in connections if info.replica is not None)
    # Dumping connections, registered replicas or not (as SHOW PROCESSLIST lists them).
    dumps = sum(1 for info in connections if info.dumping or info.dump_server_id is not None)
    semi_sync = bool(server.globals["rpl_semi_sync_master_enabled"])
    # The connection's own compression, in SHOW GLOBAL STATUS too (as MariaDB 10.11 shows it).
    compressed = bool(ctx.session.capabilities & Capability.COMPRESS)
    session = ctx.session
    scope = (ctx.match.group("scope") or "SESSION").upper()
    counts = server.counts if scope == "GLOBAL" else session.counts
    values = {
        **IDLE_VALUES,
        **{f"Com_{name}": "0" for name in _COM_NAMES},
        **{name: str(count) for name, count in counts.items()},
        **{name: str(server.counts[name]) for name in GLOBAL_ONLY},
        **dict(binlog_snapshot_status(session)),
        "Compression": "ON" if compressed else "OFF",
        "Connections": str(server.connections_opened),
        "Max_used_connections": str(server.max_used_connections),
        "Rpl_semi_sync_master_clients": str(replicas if semi_sync else 0),
        "Rpl_semi_sync_master_status": "ON" if semi_sync else "OFF",
        "Slaves_connected": str(replicas),
        "Threads_connected": str(len(server.connections)),
        # Not sleeping: the connection asking, and every replica's dump (as on 10.11).
        "Threads_running": str(1 + dumps),
        "Uptime": str(uptime),
        "Uptime_since_flush_status": str(uptime),
    }
    selected = _filter_rows(
        ctx, [name for name in STATUS_ORDER if name in values], values.__getitem__
    )
    return ResultSet(
        _name_value_columns(_STATUS_TABLE),
        [(name.encode(), value.encode()) for name, value in selected],
        extra_status=(ServerStatus.QUERY_NO_INDEX_USED, 0),
    )


def _filter_rows(
    ctx: Context, names: Sequence[str], value: Callable[[str], str]
) -> list[tuple[str, str]]:
    """(name, value) of ``names`` as the statement's LIKE or WHERE selects them. A value is
    computed only for a name a LIKE keeps: some are read from the served binlog, and a
    replica's ``SHOW VARIABLES LIKE 'SERVER_ID'`` computed all 202 (about 5 ms of the event
    loop per statement)."""
    parser = ctx.parser_after(ctx.match.end())
    if parser.accept_word("LIKE"):
        pattern_token = parser.next()
        if pattern_token.kind is not Tok.STRING:
            raise parser.error(pattern_token)
        parser.expect_end()
        like = LikePattern.compile(pattern_token.text)
        return [(name, value(name)) for name in names if like.matches(name)]
    rows = [(name, value(name)) for name in names]
    if parser.accept_word("WHERE"):
        condition = _condition(parser)
        parser.expect_end()
        return [row for row in rows if condition({"variable_name": row[0], "value": row[1]})]
    parser.expect_end()
    return rows


Condition = Callable[[dict[str, str]], bool]


def _condition(parser: Parser) -> Condition:
    terms = [_conjunction(parser)]
    while parser.accept_word("OR") or parser.accept_op("||"):
        terms.append(_conjunction(parser))
    if len(terms) == 1:
        return terms[0]
    return lambda row: any(term(row) for term in terms)


def _conjunction(parser: Parser) -> Condition:
    factors = [_factor(parser)]
    while parser.accept_word("AND") or parser.accept_op("&&"):
        factors.append(_factor(parser))
    if len(factors) == 1:
        return factors[0]
    return lambda row: all(factor(row) for factor in factors)


def _factor(parser: Parser) -> Condition:
    with parser.nested():
        return _nested_factor(parser)


def _nested_factor(parser: Parser) -> Condition:
    if parser.accept_word("NOT") or parser.accept_op("!"):
        inner = _factor(parser)
        return lambda row: not inner(row)
    if parser.accept_op("("):
        inner = _condition(parser)
        parser.expect_op(")")
        return inner
    column_token = parser.next()
    if column_token.kind not in (Tok.WORD, Tok.QUOTED_IDENT):
        raise parser.error(column_token)
    column = column_token.text.lower()
    if column not in ("variable_name", "value"):
        raise unknown_column(column_token.text, "WHERE")
    negate = parser.accept_word("NOT") is not None
    if parser.accept_word("LIKE"):
        pattern = LikePattern.compile(_string_operand(parser))

        def like(row: dict[str, str]) -> bool:
            return pattern.matches(row[column]) != negate

        return like
    if parser.accept_word("IN"):
        parser.expect_op("(")
        options = {_string_operand(parser).upper().rstrip(" ")}
        while parser.accept_op(","):
            options.add(_string_operand(parser).upper().rstrip(" "))
        parser.expect_op(")")
        return lambda row: (row[column].upper().rstrip(" ") in options) != negate
    if negate:
        raise parser.error()
    op_token = parser.next()
    if not (op_token.kind is Tok.OP and op_token.text in ("=", "<>", "!=", "<=>")):
        raise parser.error(op_token)
    operand = _string_operand(parser).upper().rstrip(" ")
    if op_token.text in ("=", "<=>"):
        return lambda row: row[column].upper().rstrip(" ") == operand
    return lambda row: row[column].upper().rstrip(" ") != operand


def _string_operand(parser: Parser) -> str:
    token = parser.next()
    if token.kind in (Tok.STRING, Tok.NUMBER):
        return token.text
    raise parser.error(token)


def show_master_status(ctx: Context) -> Response:
    not_null = ColumnFlag.NOT_NULL
    columns = [
        text_column("File", 512, flags=not_null),
        Column(
            "Position",
            ColumnType.LONGLONG,
            length=20,
            flags=not_null | ColumnFlag.UNSIGNED | ColumnFlag.BINARY,
        ),
        text_column("Binlog_Do_DB", 255, flags=not_null),
        text_column("Binlog_Ignore_DB", 255, flags=not_null),
    ]
    ctx.parser_after(ctx.match.end()).expect_end()
    ctx.session.require(BINLOG_STATUS_PRIVILEGES)
    logs = _binary_logs(ctx)
    rows: list[Sequence[Cell]] = []
    if logs:
        name, size = logs[-1]
        rows.append((name.encode(), str(size).encode(), b"", b""))
    return ResultSet(columns, rows)


def show_binary_logs(ctx: Context) -> Response:
    ctx.parser_after(ctx.match.end()).expect_end()
    ctx.session.require(BINLOG_STATUS_PRIVILEGES)
    columns = [
        text_column("Log_name", 255, flags=ColumnFlag.NOT_NULL),
        Column(
            "File_size",
            ColumnType.LONGLONG,
            length=20,
            flags=ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY,
        ),
    ]
    rows: list[Sequence[Cell]] = [
        (name.encode(), str(size).encode()) for name, size in _binary_logs(ctx)
    ]
    return ResultSet(columns, rows)


# What SHOW MASTER STATUS and SHOW BINARY LOGS accept.
BINLOG_STATUS_PRIVILEGES = Privilege.SUPER | Privilege.BINLOG_MONITOR


def _binary_logs(ctx: Context) -> list[tuple[str, int]]:
    positions = ctx.server.positions
    return list(positions.binary_logs()) if positions is not None else []


def show_slave_hosts(ctx: Context) -> Response:
    ctx.parser_after(ctx.match.end()).expect_end()
    # Only this one: not even SUPER will do (10.11.19).
    ctx.session.require(Privilege.REPLICATION_MASTER_ADMIN)
    number = ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY
    columns = [
        Column("Server_id", ColumnType.LONG, length=10, flags=number),
        text_column("Host", 20, flags=ColumnFlag.NOT_NULL),
        Column("Port", ColumnType.LONG, length=7, flags=number),
        Column("Master_id", ColumnType.LONG, length=10, flags=number),
    ]
    rows: list[Sequence[Cell]] = [
        (
            str(replica.server_id).encode(),
            replica.host.encode("utf-8", "surrogateescape"),
            str(replica.port).encode(),
            str(replica.master_id).encode(),
        )
        for replica in ctx.server.replicas()
    ]
    return ResultSet(columns, rows)


def show_warnings(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    limit = _warnings_limit(parser)
    parser.expect_end()
    ctx.outcome.keep_diagnostics = True
    errors_only = ctx.match.group("what").upper() == "ERRORS"
    columns = [
        text_column("Level", 7, flags=ColumnFlag.NOT_NULL),
        Column(
            "Code",
            ColumnType.LONG,
            length=4,
            flags=ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY,
        ),
        text_column("Message", 512, flags=ColumnFlag.NOT_NULL),
    ]
    rows: list[Sequence[Cell]] = [
        (level.encode(), str(code).encode(), message.encode("utf-8", "surrogateescape"))
        for level, code, message in ctx.session.diagnostics
        if not errors_only or level == "Error"
    ]
    if limit is not None:
        offset, count = limit
        rows = rows[offset : offset + count]
    return ResultSet(columns, rows)


def _warnings_limit(parser: Parser) -> tuple[int, int] | None:
    if not parser.accept_word("LIMIT"):
        return None
    first = parser.integer()
    if parser.accept_op(","):
        return first, parser.integer()
    return 0, first


# SHOW ENGINES of a MariaDB 10.11 primary as Debian's packages install it (information_schema
# .ENGINES, in its order).
_ENGINES = (
    ("CSV", "YES", "Stores tables as CSV files", "NO", "NO", "NO"),
    ("MRG_MyISAM", "YES", "Collection of identical MyISAM tables", "NO", "NO", "NO"),
    (
        "MEMORY",
        "YES",
        "Hash based, stored in memory, useful for temporary tables",
        "NO",
        "NO",
        "NO",
    ),
    (
        "Aria",
        "YES",
        "Crash-safe tables with MyISAM heritage. Used for internal temporary tables "
        "and privilege tables",
        "NO",
        "NO",
        "NO",
    ),
    (
        "MyISAM",
        "YES",
        "Non-transactional engine with good performance and small data footprint",
        "NO",
        "NO",
        "NO",
    ),
    ("SEQUENCE", "YES", "Generated tables filled with sequential values", "YES", "NO", "YES"),
    (
        "InnoDB",
        "DEFAULT",
        "Supports transactions, row-level locking, foreign keys and encryption for tables",
        "YES",
        "YES",
        "YES",
    ),
    ("PERFORMANCE_SCHEMA", "YES", "Performance Schema", "NO", "NO", "NO"),
)
# The storage engines SHOW ENGINES lists (SHOW ENGINE name STATUS knows these).
ENGINE_NAMES = tuple(row[0] for row in _ENGINES)


def show_engines(ctx: Context) -> Response:
    """SHOW [STORAGE] ENGINES: a view of information_schema.ENGINES."""
    ctx.parser_after(ctx.match.end()).expect_end()
    not_null = ColumnFlag.NOT_NULL | ColumnFlag.NO_DEFAULT_VALUE
    columns = [
        Column(
            name,
            ColumnType.VAR_STRING,
            flags=(not_null if required else ColumnFlag.NO_DEFAULT_VALUE),
            text_chars=chars,
            schema="information_schema",
            table="ENGINES",
            org_table="ENGINES",
            org_name=name.upper(),
        )
        for name, chars, required in (
            ("Engine", 64, True),
            ("Support", 8, True),
            ("Comment", 160, True),
            ("Transactions", 3, False),
            ("XA", 3, False),
            ("Savepoints", 3, False),
        )
    ]
    rows: list[Sequence[Cell]] = [tuple(cell.encode() for cell in row) for row in _ENGINES]
    flag = ServerStatus.QUERY_NO_INDEX_USED
    return ResultSet(columns, rows, extra_status=(flag, flag))
