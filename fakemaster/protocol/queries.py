"""COM_QUERY: the statements a fake master answers, and the SQL-visible state behind them.

:data:`STATEMENTS` is the one table: a pattern on the statement text and the function that
answers it. Every answer (column definitions, values, status bits, error texts) copies what a
MariaDB 10.11 primary sends for the same statement (transcripts captured from one are in
``tests/golden/mariadb_10_11_queries.json``).

State lives in two objects: :class:`ServerState` (one per fake master: global variables,
connected threads and registered replicas, the binlog catalogue) and :class:`SessionState`
(one per connection: session and user variables, current database, transaction flag).
Executing a statement returns an :class:`Outcome`; side effects that need the network (killing
another connection) are described in it for the session to carry out.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from enum import Enum
from typing import Protocol

from fakemaster.config import ServerConfig
from fakemaster.constants import ColumnType
from fakemaster.protocol.charsets import (
    BINARY_COLLATION_ID,
    UTF8MB3_GENERAL_CI,
    Collation,
    charset_default,
    collation_by_id,
    collation_by_name,
)
from fakemaster.protocol.handshake import Capability, ServerStatus
from fakemaster.protocol.resultset import (
    NOT_FIXED_DEC,
    Cell,
    Column,
    ColumnFlag,
    ResultSet,
    SessionTrack,
    SqlError,
    session_state_entry,
    sql_error,
    syntax_error,
    text_column,
)
from fakemaster.protocol.sqltext import (
    Comparison,
    DefaultValue,
    Expr,
    FunctionCall,
    Literal,
    Negation,
    Parser,
    SysVarRef,
    Tok,
    Token,
    UserVarAssignment,
    UserVarRef,
    Word,
    like_to_regex,
    line_of,
    split_statements,
    tokenize,
    unknown_column,
)
from fakemaster.protocol.variables import (
    CHARSET_VARIABLES,
    COLLATION_VARIABLES,
    SQL_MODE_COMBINATIONS,
    SYSTEM_VARIABLES,
    SystemVariable,
    Value,
    VarKind,
    lookup,
    show_text,
)

# ---------------------------------------------------------------------------------------------
# State


class BinlogCatalog(Protocol):
    """What SQL statements need to know about the binlog (the store provides it)."""

    def binary_logs(self) -> Sequence[tuple[str, int]]:
        """(file name, size) of every binlog file, oldest first."""
        ...

    def gtid_binlog_pos(self) -> str:
        """@@gtid_binlog_pos: the last GTID logged in each domain."""
        ...

    def gtid_binlog_state(self) -> str:
        """@@gtid_binlog_state: the last GTID of each (domain, server) pair."""
        ...

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        """BINLOG_GTID_POS(): the GTID position at an event boundary, None if not one."""
        ...


@dataclass(slots=True)
class ReplicaInfo:
    """What COM_REGISTER_SLAVE told (SHOW SLAVE HOSTS)."""

    server_id: int
    host: str
    user: str
    password: str
    port: int
    rank: int
    master_id: int


@dataclass(slots=True)
class ConnectionInfo:
    thread_id: int
    host: str
    user: str = ""
    replica: ReplicaInfo | None = None
    dumping: bool = False


class ServerState:
    """State shared by all connections of one fake master."""

    def __init__(
        self,
        config: ServerConfig,
        catalog: BinlogCatalog | None = None,
        *,
        clock: Callable[[], float] = time.time,
        port: int | None = None,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.clock = clock
        self.started_at = clock()
        self.globals: dict[str, Value] = config.global_variables(port)
        self.connections: dict[int, ConnectionInfo] = {}
        self._next_thread_id = config.first_thread_id
        self.accounts = config.accounts()

    def set_port(self, port: int) -> None:
        self.globals["port"] = port
        self.globals["report_port"] = port

    def open_connection(self, host: str) -> ConnectionInfo:
        info = ConnectionInfo(self._next_thread_id, host)
        self._next_thread_id += 1
        self.connections[info.thread_id] = info
        return info

    def close_connection(self, thread_id: int) -> None:
        self.connections.pop(thread_id, None)

    def replicas(self) -> list[ReplicaInfo]:
        """Registered replicas, newest connection first (the order of MariaDB's thread list)."""
        return [
            info.replica
            for _, info in sorted(self.connections.items(), reverse=True)
            if info.replica is not None
        ]

    def dynamic_global(self, name: str) -> Value:
        """A global value, with the ones computed from the binlog or the clock filled in."""
        catalog = self.catalog
        if name in ("gtid_binlog_pos", "gtid_current_pos"):
            return catalog.gtid_binlog_pos() if catalog is not None else self.globals[name]
        if name == "gtid_binlog_state":
            return catalog.gtid_binlog_state() if catalog is not None else self.globals[name]
        return self.globals[name]


class UKind(Enum):
    INT = "int"
    DECIMAL = "decimal"
    DOUBLE = "double"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class SqlValue:
    """A typed SQL value (user variables keep these). ``value`` None is NULL; a STRING in the
    binary collation holds bytes."""

    kind: UKind
    value: int | Decimal | float | str | bytes | None
    unsigned: bool = False
    collation: int = BINARY_COLLATION_ID
    # DOUBLE shown with a fixed number of decimals (system variables: 6).
    decimals: int | None = None

    def text(self) -> bytes | None:
        value = self.value
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, float):
            if self.decimals is not None:
                return f"{value:.{self.decimals}f}".encode()
            return format_double(value).encode()
        return str(value).encode("utf-8", "surrogateescape")

    def as_number(self) -> int | Decimal | float | None:
        value = self.value
        if value is None or isinstance(value, int | Decimal | float):
            return value
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        match = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text)
        return float(match.group(0)) if match else 0


def format_double(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}".replace("e+", "e")


@dataclass(slots=True)
class SessionState:
    """The SQL-visible state of one connection."""

    server: ServerState
    thread_id: int
    user: str
    host: str
    capabilities: int = 0
    database: str | None = None
    variables: dict[str, Value] = field(default_factory=dict)
    user_variables: dict[str, SqlValue] = field(default_factory=dict)
    in_transaction: bool = False
    transaction_read_only: bool = False
    # SHOW WARNINGS of the last statement: (level, code, message).
    diagnostics: list[tuple[str, int, str]] = field(default_factory=list)
    # character_set_results is a collation inside the server: the handshake's or SET NAMES'
    # COLLATE one; None: no conversion (SET character_set_results = NULL).
    results_collation_id: int | None = None

    @classmethod
    def create(
        cls, server: ServerState, thread_id: int, user: str, host: str, client_collation: int
    ) -> SessionState:
        variables = {
            name: server.globals[name]
            for name, var in SYSTEM_VARIABLES.items()
            if var.allows_session()
        }
        variables["pseudo_thread_id"] = thread_id
        collation = collation_by_id(client_collation)
        results: int | None = None
        if collation is not None:
            variables["character_set_client"] = collation.charset
            variables["character_set_connection"] = collation.charset
            variables["character_set_results"] = collation.charset
            variables["collation_connection"] = collation.name
            results = collation.id
        session = cls(server, thread_id, user, host, variables=variables)
        session.results_collation_id = results
        if results is None:
            session.set_results_charset(variables["character_set_results"])
        return session

    def set_results_charset(self, charset: Value, collation: Collation | None = None) -> None:
        """Set character_set_results to a character set (None: NULL) or a collation."""
        if collation is None and charset is not None:
            collation = charset_default(str(charset))
        self.variables["character_set_results"] = None if collation is None else collation.charset
        self.results_collation_id = None if collation is None else collation.id

    @property
    def autocommit(self) -> bool:
        return bool(self.variables["autocommit"])

    def status(self) -> int:
        status = ServerStatus.AUTOCOMMIT if self.autocommit else 0
        if self.in_transaction:
            status |= ServerStatus.IN_TRANS
            if self.transaction_read_only:
                status |= ServerStatus.IN_TRANS_READONLY
        modes = str(self.variables.get("sql_mode") or "").split(",")
        if "ANSI_QUOTES" in modes:
            status |= SERVER_STATUS_ANSI_QUOTES
        if "NO_BACKSLASH_ESCAPES" in modes:
            status |= ServerStatus.NO_BACKSLASH_ESCAPES
        return int(status)

    def connection_collation(self) -> Collation:
        name = self.variables["collation_connection"]
        collation = collation_by_name(str(name)) if name is not None else None
        return collation or _must(collation_by_id(UTF8MB3_GENERAL_CI))

    def results_collation(self) -> Collation | None:
        """The collation result text is converted to; None: no conversion (NULL)."""
        if self.results_collation_id is None:
            return None
        return collation_by_id(self.results_collation_id)

    def value_of(self, var: SystemVariable, scope: str) -> Value:
        """The value ``SELECT @@[scope.]name`` reads; SqlError 1238 for the wrong scope."""
        name = var.name
        if scope == "global":
            if not var.allows_global():
                raise sql_error(1238, name, "SESSION")
            return self.server.dynamic_global(name)
        if scope in ("session", "local") and not var.allows_session():
            raise sql_error(1238, name, "GLOBAL")
        if not var.allows_session():
            return self.server.dynamic_global(name)
        return self._session_value(name)

    def _session_value(self, name: str) -> Value:
        if name == "timestamp":
            return self.server.clock()
        if name == "warning_count":
            return sum(1 for level, _, _ in self.diagnostics if level != "Note")
        if name == "error_count":
            return sum(1 for level, _, _ in self.diagnostics if level == "Error")
        if name == "in_transaction":
            return int(self.in_transaction)
        return self.variables[name]


# MariaDB's status bit for sql_mode ANSI_QUOTES (not in MySQL's list).
SERVER_STATUS_ANSI_QUOTES = 0x8000


def _must(collation: Collation | None) -> Collation:
    assert collation is not None
    return collation


# ---------------------------------------------------------------------------------------------
# Outcomes


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

    @property
    def server(self) -> ServerState:
        return self.session.server

    def parser(self, from_index: int = 0) -> Parser:
        parser = Parser(self.text, self.tokens, self.quote_text)
        parser.index = from_index
        return parser

    def parser_after(self, pattern_end: int) -> Parser:
        """A parser positioned at the first token at or after text offset ``pattern_end``."""
        for index, token in enumerate(self.tokens):
            if token.start >= pattern_end:
                return self.parser(index)
        return self.parser(len(self.tokens) - 1)


Handler = Callable[[Context], Response]


# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True, slots=True)
class Item:
    """An evaluated SELECT expression: how its column is described, and its value."""

    column: Column
    value: SqlValue
    nullable: bool


NULL_STRING = SqlValue(UKind.STRING, None)


def evaluate(expr: Expr, name: str, session: SessionState, clause: str) -> Item:
    if isinstance(expr, Literal):
        return _literal(expr, name, session)
    if isinstance(expr, UserVarRef):
        return _user_variable(expr.name, name, session)
    if isinstance(expr, SysVarRef):
        return _system_variable(expr, name, session)
    if isinstance(expr, FunctionCall):
        function = FUNCTIONS.get(expr.name)
        if function is None:
            raise sql_error(1305, f"{session.database or ''}.{expr.name.lower()}".lstrip("."))
        return function(expr, name, session)
    if isinstance(expr, Comparison):
        left = evaluate(expr.left, "", session, clause)
        right = evaluate(expr.right, "", session, clause)
        result = compare(expr.op, left.value, right.value)
        nullable = left.nullable or right.nullable
        flags = ColumnFlag.BINARY | (0 if nullable else ColumnFlag.NOT_NULL)
        column = Column(name, ColumnType.LONG, length=1, flags=flags)
        return Item(column, SqlValue(UKind.INT, result), nullable)
    if isinstance(expr, Negation):
        inner = evaluate(expr.operand, "", session, clause)
        number = inner.value.as_number()
        negated = None if number is None else -number
        kind = (
            UKind.DOUBLE
            if isinstance(negated, float)
            else (UKind.DECIMAL if isinstance(negated, Decimal) else UKind.INT)
        )
        column = Column(
            name,
            inner.column.type,
            inner.column.length + 1,
            inner.column.flags,
            inner.column.decimals,
        )
        return Item(column, SqlValue(kind, negated), inner.nullable)
    if isinstance(expr, UserVarAssignment):
        item = evaluate(expr.value, name, session, clause)
        var_name = expr.name.lower()
        session.user_variables[var_name] = _stored(item.value, session, var_name)
        return item
    if isinstance(expr, Word):
        raise unknown_column(expr.name, clause)
    raise sql_error(1064, "DEFAULT", 1)


def _literal(expr: Literal, name: str, session: SessionState) -> Item:
    value = expr.value
    not_null = ColumnFlag.NOT_NULL | ColumnFlag.BINARY
    if value is None:
        return Item(Column(name, ColumnType.NULL, flags=ColumnFlag.BINARY), NULL_STRING, True)
    if expr.is_bool:
        column = Column(name, ColumnType.LONG, length=5, flags=not_null)
        return Item(column, SqlValue(UKind.INT, value), False)
    if isinstance(value, int):
        digits = len(expr.text.lstrip("-"))
        unsigned = value > (1 << 63) - 1
        column_type = ColumnType.LONG if digits <= 9 else ColumnType.LONGLONG
        flags = not_null | (ColumnFlag.UNSIGNED if unsigned else 0)
        column = Column(name, column_type, length=len(expr.text), flags=flags)
        return Item(column, SqlValue(UKind.INT, value, unsigned=unsigned), False)
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        digits = sum(ch.isdigit() for ch in expr.text)
        length = digits + (1 if scale else 0) + 1
        column = Column(name, ColumnType.NEWDECIMAL, length=length, flags=not_null, decimals=scale)
        return Item(column, SqlValue(UKind.DECIMAL, value), False)
    if isinstance(value, float):
        if math.isinf(value):
            # What MariaDB 10.11.19 answers for SELECT 1e999 (the connection stays).
            raise SqlError(
                1367, "22007", f"Illegal double '{expr.text}' value found during parsing"
            )
        column = Column(name, ColumnType.DOUBLE, length=len(expr.text), flags=not_null, decimals=31)
        return Item(column, SqlValue(UKind.DOUBLE, value), False)
    if isinstance(value, bytes):
        column = Column(
            name, ColumnType.VAR_STRING, length=len(value), flags=not_null | ColumnFlag.UNSIGNED
        )
        return Item(column, SqlValue(UKind.STRING, value), False)
    collation = _introducer_collation(expr.collation_hint, session)
    if collation == BINARY_COLLATION_ID:
        binary_value = value.encode("utf-8", "surrogateescape")
        column = text_column(
            name, len(binary_value), flags=ColumnFlag.NOT_NULL, collation=BINARY_COLLATION_ID
        )
        return Item(column, SqlValue(UKind.STRING, binary_value), False)
    column = text_column(name, len(value), flags=ColumnFlag.NOT_NULL, collation=collation)
    own = collation if collation is not None else session.connection_collation().id
    return Item(column, SqlValue(UKind.STRING, value, collation=own), False)


def _introducer_collation(introducer: str, session: SessionState) -> int | None:
    if not introducer:
        connection = session.connection_collation()
        return BINARY_COLLATION_ID if connection.id == BINARY_COLLATION_ID else None
    collation = charset_default(introducer)
    if collation is None:
        raise sql_error(1115, introducer)
    return collation.id


def _user_variable(var_name: str, name: str, session: SessionState) -> Item:
    value = session.user_variables.get(var_name.lower())
    if value is None:
        column = Column(
            name,
            ColumnType.LONG_BLOB,
            length=16777216,
            flags=ColumnFlag.BINARY,
            decimals=NOT_FIXED_DEC,
        )
        return Item(column, NULL_STRING, True)
    kind = value.kind
    if kind is UKind.INT:
        flags = ColumnFlag.BINARY | (ColumnFlag.UNSIGNED if value.unsigned else 0)
        column = Column(name, ColumnType.LONGLONG, length=20, flags=flags)
    elif kind is UKind.DECIMAL:
        column = Column(
            name, ColumnType.NEWDECIMAL, length=83, flags=ColumnFlag.BINARY, decimals=38
        )
    elif kind is UKind.DOUBLE:
        column = Column(name, ColumnType.DOUBLE, length=23, flags=ColumnFlag.BINARY, decimals=31)
    else:
        column = text_column(name, 16777215, type=ColumnType.LONG_BLOB, collation=value.collation)
    return Item(column, value, True)


def _system_variable(ref: SysVarRef, name: str, session: SessionState) -> Item:
    if "." in ref.name:
        raise sql_error(4081, ref.name.split(".", 1)[0])
    var = lookup(ref.name)
    if var is None:
        raise sql_error(1193, ref.name)
    value = session.value_of(var, ref.scope)
    kind = var.kind
    if kind is VarKind.BOOL:
        column = Column(name, ColumnType.LONGLONG, length=1, flags=ColumnFlag.BINARY)
        return Item(column, SqlValue(UKind.INT, int(bool(value))), True)
    if kind in (VarKind.UINT, VarKind.INT):
        unsigned = kind is VarKind.UINT
        flags = ColumnFlag.BINARY | (ColumnFlag.UNSIGNED if unsigned else 0)
        column = Column(name, ColumnType.LONGLONG, length=21, flags=flags)
        integer = None if value is None else int(value)
        return Item(column, SqlValue(UKind.INT, integer, unsigned=unsigned), True)
    if kind is VarKind.DOUBLE:
        column = Column(name, ColumnType.DOUBLE, length=21, flags=ColumnFlag.BINARY, decimals=6)
        real = None if value is None else float(value)
        return Item(column, SqlValue(UKind.DOUBLE, real, decimals=6), True)
    text = None if value is None else str(value)
    column = text_column(name, len(text or ""), collation=UTF8MB3_GENERAL_CI)
    return Item(column, SqlValue(UKind.STRING, text, collation=UTF8MB3_GENERAL_CI), True)


def _system_text(name: str, chars: int, value: str | None, *, not_null: bool = False) -> Item:
    column = text_column(
        name, chars, flags=ColumnFlag.NOT_NULL if not_null else 0, collation=UTF8MB3_GENERAL_CI
    )
    return Item(column, SqlValue(UKind.STRING, value, collation=UTF8MB3_GENERAL_CI), not not_null)


def _no_args(call: FunctionCall, count: int = 0) -> None:
    if len(call.args) != count:
        raise sql_error(1582, call.name.lower())


def _fn_version(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    version = str(session.server.globals["version"])
    return _system_text(name, len(version), version, not_null=True)


def _fn_unix_timestamp(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    column = Column(name, ColumnType.LONGLONG, length=17, flags=ColumnFlag.BINARY)
    return Item(column, SqlValue(UKind.INT, int(session.server.clock())), False)


def _fn_database(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    return _system_text(name, 64, session.database)


def _fn_user(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    return _system_text(name, 384, f"{session.user}@{session.host}")


def _fn_current_user(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    return _system_text(name, 384, f"{session.user}@%")


def _fn_connection_id(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    flags = ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY
    column = Column(name, ColumnType.LONG, length=10, flags=flags)
    return Item(column, SqlValue(UKind.INT, session.thread_id, unsigned=True), False)


def _fn_last_insert_id(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    flags = ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY
    column = Column(name, ColumnType.LONGLONG, length=21, flags=flags)
    value = int(session.variables["last_insert_id"] or 0)
    return Item(column, SqlValue(UKind.INT, value, unsigned=True), False)


def _datetime_item(name: str, moment: datetime) -> Item:
    column = Column(
        name, ColumnType.DATETIME, length=19, flags=ColumnFlag.NOT_NULL | ColumnFlag.BINARY
    )
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    return Item(column, SqlValue(UKind.STRING, text, collation=BINARY_COLLATION_ID), False)


def _fn_now(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    zone = _time_zone(str(session.variables["time_zone"]))
    return _datetime_item(name, datetime.fromtimestamp(session.server.clock(), zone))


def _fn_utc_timestamp(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call)
    return _datetime_item(name, datetime.fromtimestamp(session.server.clock(), UTC))


def _fn_binlog_gtid_pos(call: FunctionCall, name: str, session: SessionState) -> Item:
    _no_args(call, 2)
    file_item = evaluate(call.args[0], "", session, "SELECT")
    pos_item = evaluate(call.args[1], "", session, "SELECT")
    file_text = file_item.value.text()
    position = pos_item.value.as_number()
    result: str | None = None
    catalog = session.server.catalog
    if file_text is not None and position is not None and catalog is not None:
        result = catalog.binlog_gtid_pos(
            file_text.decode("utf-8", "surrogateescape"), int(position)
        )
    column = text_column(name, 16777216, type=ColumnType.LONG_BLOB, collation=UTF8MB3_GENERAL_CI)
    return Item(column, SqlValue(UKind.STRING, result, collation=UTF8MB3_GENERAL_CI), True)


FunctionImpl = Callable[[FunctionCall, str, SessionState], Item]

FUNCTIONS: dict[str, FunctionImpl] = {
    "VERSION": _fn_version,
    "UNIX_TIMESTAMP": _fn_unix_timestamp,
    "DATABASE": _fn_database,
    "SCHEMA": _fn_database,
    "USER": _fn_user,
    "SESSION_USER": _fn_user,
    "SYSTEM_USER": _fn_user,
    "CURRENT_USER": _fn_current_user,
    "CONNECTION_ID": _fn_connection_id,
    "LAST_INSERT_ID": _fn_last_insert_id,
    "NOW": _fn_now,
    "CURRENT_TIMESTAMP": _fn_now,
    "LOCALTIME": _fn_now,
    "LOCALTIMESTAMP": _fn_now,
    "SYSDATE": _fn_now,
    "UTC_TIMESTAMP": _fn_utc_timestamp,
    "BINLOG_GTID_POS": _fn_binlog_gtid_pos,
}


def compare(op: str, left: SqlValue, right: SqlValue) -> int | None:
    if left.value is None or right.value is None:
        if op == "<=>":
            return int(left.value is None and right.value is None)
        return None
    a: object
    b: object
    if left.kind is UKind.STRING and right.kind is UKind.STRING:
        binary = isinstance(left.value, bytes) or isinstance(right.value, bytes)
        a, b = left.text(), right.text()
        if not binary:
            a, b = _fold(a), _fold(b)
    else:
        a, b = left.as_number(), right.as_number()
    assert a is not None and b is not None
    result = {
        "=": a == b,
        "<=>": a == b,
        "<>": a != b,
        "!=": a != b,
        "<": a < b,  # type: ignore[operator]
        ">": a > b,  # type: ignore[operator]
        "<=": a <= b,  # type: ignore[operator]
        ">=": a >= b,  # type: ignore[operator]
    }[op]
    return int(result)


def _fold(text: bytes | None) -> bytes:
    # *_general_ci: case-insensitive, trailing spaces ignored.
    return (text or b"").decode("utf-8", "replace").upper().rstrip(" ").encode()


def _time_zone(name: str) -> timezone:
    match = re.fullmatch(r"([+-])(\d{1,2}):(\d{2})", name.strip())
    if not match:
        return UTC
    offset = timedelta(hours=int(match.group(2)), minutes=int(match.group(3)))
    return timezone(-offset if match.group(1) == "-" else offset)


# ---------------------------------------------------------------------------------------------
# SELECT


def select(ctx: Context) -> Response:
    parser = ctx.parser(1)
    while parser.accept_word(
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
    ):
        pass
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
            if error.errno != 1054:
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
        raise sql_error(1096)
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
                raise sql_error(1146, first, table)
            if ctx.session.database is None:
                raise sql_error(1046)
            raise sql_error(1146, ctx.session.database, first)
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


# ---------------------------------------------------------------------------------------------
# SET


@dataclass(slots=True)
class _Assignment:
    apply: Callable[[], None]
    tracked: list[tuple[str, Value]] = field(default_factory=list)


def set_statement(ctx: Context) -> Response:
    parser = ctx.parser(1)
    session = ctx.session
    assignments: list[_Assignment] = []
    default_scope = ""
    scope_word = parser.accept_word("GLOBAL", "SESSION", "LOCAL")
    if scope_word is not None and parser.peek.is_word("TRANSACTION"):
        return _set_transaction(parser, session, scope_word.text.lower())
    if scope_word is None and parser.peek.is_word("TRANSACTION"):
        return _set_transaction(parser, session, "")
    if scope_word is not None:
        default_scope = scope_word.text.lower()
    while True:
        assignments.append(_set_item(parser, session, default_scope))
        if not parser.accept_op(","):
            break
    parser.expect_end()
    warnings = 0
    state: list[bytes] = []
    tracked_names = _tracked_variables(session)
    for assignment in assignments:
        assignment.apply()
        for name, value in assignment.tracked:
            if name in tracked_names:
                state.append(
                    session_state_entry(
                        SessionTrack.SYSTEM_VARIABLES,
                        name.encode(),
                        show_text(SYSTEM_VARIABLES[name].kind, value).encode(),
                    )
                )
    return OkResult(session_state=state, warnings=warnings)


def _tracked_variables(session: SessionState) -> set[str]:
    listed = str(session.variables.get("session_track_system_variables") or "")
    return {name.strip().lower() for name in listed.split(",") if name.strip()}


def _set_transaction(parser: Parser, session: SessionState, scope: str) -> Response:
    parser.expect_word("TRANSACTION")
    changes: dict[str, Value] = {}
    while True:
        if parser.accept_word("ISOLATION"):
            parser.expect_word("LEVEL")
            if parser.accept_word("READ"):
                level = "READ-" + parser.expect_word("COMMITTED", "UNCOMMITTED").text.upper()
            elif parser.accept_word("REPEATABLE"):
                parser.expect_word("READ")
                level = "REPEATABLE-READ"
            else:
                parser.expect_word("SERIALIZABLE")
                level = "SERIALIZABLE"
            changes["tx_isolation"] = level
        elif parser.accept_word("READ"):
            changes["tx_read_only"] = parser.expect_word("ONLY", "WRITE").text.upper() == "ONLY"
        else:
            raise parser.error()
        if not parser.accept_op(","):
            break
    parser.expect_end()
    if session.in_transaction and scope == "":
        raise SqlError(
            1568,
            "25001",
            "Transaction characteristics can't be changed while a transaction is in progress",
        )
    if scope == "global":
        session.server.globals.update(changes)
    elif scope in ("session", "local"):
        session.variables.update(changes)
    return OkResult()


def _set_item(parser: Parser, session: SessionState, default_scope: str) -> _Assignment:
    token = parser.peek
    if token.kind is Tok.USER_VAR:
        parser.next()
        parser.expect_op("=", ":=")
        expr = parser.expression()
        name = token.text.lower()
        value = _assignable_value(expr, session, name)
        return _Assignment(lambda: session.user_variables.__setitem__(name, value))
    if token.is_word("NAMES"):
        parser.next()
        return _set_names(parser, session)
    if token.is_word("CHARACTER", "CHARSET"):
        parser.next()
        if token.text.upper() == "CHARACTER":
            parser.expect_word("SET")
        return _set_character_set(parser, session)
    scope = default_scope
    if token.kind is Tok.SYS_VAR:
        parser.next()
        name = token.text
        scope = token.extra or scope
        if "." in name:
            raise sql_error(4081, name.split(".", 1)[0])
    else:
        word = parser.accept_word("GLOBAL", "SESSION", "LOCAL")
        if word is not None:
            scope = word.text.lower()
        name_token = parser.next()
        if name_token.kind not in (Tok.WORD, Tok.QUOTED_IDENT):
            raise parser.error(name_token)
        name = name_token.text
        if parser.peek.is_op(".") and name_token.kind is Tok.WORD:
            raise sql_error(4081, name)
    parser.expect_op("=", ":=")
    expr = parser.expression()
    return _set_system_variable(session, name, scope, expr)


def _assignable_value(expr: Expr, session: SessionState, name: str) -> SqlValue:
    return _stored(evaluate(expr, "", session, "SET").value, session, name)


def _stored(value: SqlValue, session: SessionState, name: str) -> SqlValue:
    """What a user variable keeps of an assigned value: a NULL keeps the variable's type (a new
    one is a binary string); a DOUBLE read from a system variable loses its fixed decimals."""
    if value.value is None:
        previous = session.user_variables.get(name)
        if previous is not None:
            return SqlValue(previous.kind, None, previous.unsigned, previous.collation)
        return SqlValue(UKind.STRING, None, collation=BINARY_COLLATION_ID)
    if value.decimals is not None:
        return SqlValue(value.kind, value.value, value.unsigned, value.collation)
    return value


def _set_names(parser: Parser, session: SessionState) -> _Assignment:
    if parser.accept_word("DEFAULT"):
        charset = charset_default(str(session.server.globals["character_set_client"]))
        collation = charset
    else:
        name = parser.name()
        charset = charset_default(name)
        if charset is None:
            raise sql_error(1115, name)
        collation = charset
        if parser.accept_word("COLLATE"):
            collation_name = parser.name()
            collation = collation_by_name(collation_name)
            if collation is None:
                raise sql_error(1273, collation_name)
            if collation.charset != charset.charset:
                raise sql_error(1253, collation.name, charset.charset)
    assert charset is not None and collation is not None
    chosen_charset, chosen_collation = charset.charset, collation.name

    def apply() -> None:
        session.variables["character_set_client"] = chosen_charset
        session.variables["character_set_connection"] = chosen_charset
        session.set_results_charset(chosen_charset, collation)
        session.variables["collation_connection"] = chosen_collation

    tracked: list[tuple[str, Value]] = [
        ("character_set_connection", chosen_charset),
        ("character_set_client", chosen_charset),
        ("character_set_results", chosen_charset),
    ]
    return _Assignment(apply, tracked)


def _set_character_set(parser: Parser, session: SessionState) -> _Assignment:
    if parser.accept_word("DEFAULT"):
        charset = charset_default(str(session.server.globals["character_set_client"]))
    else:
        name = parser.name()
        charset = charset_default(name)
        if charset is None:
            raise sql_error(1115, name)
    assert charset is not None
    database_charset = str(session.variables["character_set_database"])
    database_collation = str(session.variables["collation_database"])
    chosen = charset.charset

    def apply() -> None:
        session.variables["character_set_client"] = chosen
        session.set_results_charset(chosen)
        session.variables["character_set_connection"] = database_charset
        session.variables["collation_connection"] = database_collation

    tracked: list[tuple[str, Value]] = [
        ("character_set_connection", database_charset),
        ("character_set_client", chosen),
        ("character_set_results", chosen),
    ]
    return _Assignment(apply, tracked)


def _set_system_variable(
    session: SessionState, written_name: str, scope: str, expr: Expr
) -> _Assignment:
    var = lookup(written_name)
    if var is None:
        raise sql_error(1193, written_name)
    name = var.name
    is_global = scope == "global"
    if var.read_only:
        raise sql_error(1238, name, "read only")
    if is_global and not var.allows_global():
        raise sql_error(1228, name)
    if not is_global and not var.allows_session():
        raise sql_error(1229, name)
    if not is_global and var.session_read_only:
        raise sql_error(1621, "SESSION", name, "GLOBAL")
    if isinstance(expr, DefaultValue):
        value = (
            var.default if is_global or not var.allows_global() else session.server.globals[name]
        )
    else:
        value = _system_value(var, expr, session)

    def apply() -> None:
        if is_global:
            session.server.globals[name] = value
            return
        session.variables[name] = value
        if name == "character_set_results":
            session.set_results_charset(value)
        if name == "autocommit" and value:
            session.in_transaction = False
        if name == "collation_connection" and isinstance(value, str):
            collation = collation_by_name(value)
            if collation is not None:
                session.variables["character_set_connection"] = collation.charset
        if name == "character_set_connection" and isinstance(value, str):
            charset = charset_default(value)
            if charset is not None:
                session.variables["collation_connection"] = charset.name

    return _Assignment(apply, [] if is_global else [(name, value)])


def _system_value(var: SystemVariable, expr: Expr, session: SessionState) -> Value:
    name = var.name
    if isinstance(expr, Word):
        raw: SqlValue = SqlValue(UKind.STRING, expr.name, collation=UTF8MB3_GENERAL_CI)
    else:
        raw = evaluate(expr, "", session, "SET").value
    value = raw.value
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    shown = (
        "NULL"
        if value is None
        else (format_double(value) if isinstance(value, float) else str(value))
    )
    kind = var.kind
    if kind is VarKind.BOOL:
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.upper() in ("ON", "OFF", "TRUE", "FALSE"):
            return value.upper() in ("ON", "TRUE")
        if isinstance(value, Decimal | float):
            raise sql_error(1232, name)
        raise sql_error(1231, name, shown)
    if kind in (VarKind.UINT, VarKind.INT):
        if not isinstance(value, int):
            raise sql_error(1232, name)
        return max(value, 0) if kind is VarKind.UINT else value
    if kind is VarKind.DOUBLE:
        if isinstance(value, int | Decimal | float):
            return float(value)
        raise sql_error(1232, name)
    # strings, enums, sets, character sets, collations
    if value is None:
        if name == "character_set_results":
            return None
        if var.default is None:
            return None
        raise sql_error(1231, name, "NULL")
    text = str(value)
    if name in CHARSET_VARIABLES:
        charset = charset_default(text)
        if charset is None:
            raise sql_error(1115, text)
        return charset.charset
    if name in COLLATION_VARIABLES:
        collation = collation_by_name(text)
        if collation is None:
            raise sql_error(1273, text)
        return collation.name
    if name == "time_zone":
        if text.upper() == "SYSTEM":
            return "SYSTEM"
        if not re.fullmatch(r"[+-]\d{1,2}:\d{2}", text.strip()):
            raise sql_error(1298, text)
        return text.strip()
    if var.choices is not None:
        by_upper = {choice.upper(): choice for choice in var.choices}
        if var.is_set:
            return _set_value(var, name, raw.value, text)
        if text.upper() not in by_upper:
            raise sql_error(1231, name, text)
        return by_upper[text.upper()]
    return text


def _set_value(var: SystemVariable, name: str, value: object, text: str) -> str:
    """A SET-type value: flags (or a bit mask) in any order and case, combination modes
    expanded, shown in the variable's own order like the server does."""
    choices = var.choices or ()
    if isinstance(value, int):
        if value < 0 or value >= 1 << len(choices):
            raise sql_error(1231, name, text)
        chosen = {choice for bit, choice in enumerate(choices) if value >> bit & 1}
    else:
        by_upper = {choice.upper(): choice for choice in choices}
        chosen = set()
        for part in (part.strip().upper() for part in text.split(",")):
            if not part:
                continue
            if part not in by_upper:
                raise sql_error(1231, name, text)
            chosen.add(by_upper[part])
    if name == "sql_mode":
        for combination in [mode for mode in chosen if mode in SQL_MODE_COMBINATIONS]:
            chosen.update(SQL_MODE_COMBINATIONS[combination].split(","))
    return ",".join(choice for choice in choices if choice in chosen)


# ---------------------------------------------------------------------------------------------
# SHOW


_VARIABLES_TABLE = "SESSION_VARIABLES"
_STATUS_TABLE = "SESSION_STATUS"


def _name_value_columns(table: str) -> list[Column]:
    flags = ColumnFlag.NOT_NULL | ColumnFlag.NO_DEFAULT_VALUE
    return [
        Column(
            name,
            ColumnType.VAR_STRING,
            flags=flags,
            text_chars=chars,
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
    rows: list[tuple[str, str]] = []
    for name, var in sorted(SYSTEM_VARIABLES.items()):
        if is_global and not var.allows_global():
            continue
        value = session.value_of(var, "global" if is_global else "")
        rows.append((name, show_text(var.kind, value)))
    selected = _filter_rows(ctx, rows)
    return ResultSet(
        _name_value_columns(_VARIABLES_TABLE),
        [(name.encode(), value.encode("utf-8", "surrogateescape")) for name, value in selected],
        extra_status=(ServerStatus.QUERY_NO_INDEX_USED, ServerStatus.QUERY_NO_INDEX_USED),
    )


def show_status(ctx: Context) -> Response:
    server = ctx.server
    uptime = int(server.clock() - server.started_at)
    replicas = sum(1 for info in server.connections.values() if info.replica is not None)
    semi_sync = bool(server.globals["rpl_semi_sync_master_enabled"])
    # The connection's own compression, in SHOW GLOBAL STATUS too (as MariaDB 10.11 shows it).
    compressed = bool(ctx.session.capabilities & Capability.COMPRESS)
    rows = sorted(
        [
            ("Compression", "ON" if compressed else "OFF"),
            ("Rpl_semi_sync_master_clients", str(replicas if semi_sync else 0)),
            ("Rpl_semi_sync_master_status", "ON" if semi_sync else "OFF"),
            ("Slaves_connected", str(replicas)),
            ("Threads_connected", str(len(server.connections))),
            ("Uptime", str(uptime)),
            ("Uptime_since_flush_status", str(uptime)),
        ],
        key=lambda row: row[0].lower(),
    )
    selected = _filter_rows(ctx, rows)
    return ResultSet(
        _name_value_columns(_STATUS_TABLE),
        [(name.encode(), value.encode()) for name, value in selected],
        extra_status=(ServerStatus.QUERY_NO_INDEX_USED, 0),
    )


def _filter_rows(ctx: Context, rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    parser = ctx.parser_after(ctx.match.end())
    if parser.accept_word("LIKE"):
        pattern_token = parser.next()
        if pattern_token.kind is not Tok.STRING:
            raise parser.error(pattern_token)
        parser.expect_end()
        regex = like_to_regex(pattern_token.text)
        return [row for row in rows if regex.match(row[0])]
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
        regex = like_to_regex(_string_operand(parser))

        def like(row: dict[str, str]) -> bool:
            return bool(regex.match(row[column])) != negate

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
    logs = _binary_logs(ctx)
    rows: list[Sequence[Cell]] = []
    if logs:
        name, size = logs[-1]
        rows.append((name.encode(), str(size).encode(), b"", b""))
    return ResultSet(columns, rows)


def show_binary_logs(ctx: Context) -> Response:
    ctx.parser_after(ctx.match.end()).expect_end()
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


def _binary_logs(ctx: Context) -> list[tuple[str, int]]:
    catalog = ctx.server.catalog
    return list(catalog.binary_logs()) if catalog is not None else []


def show_slave_hosts(ctx: Context) -> Response:
    ctx.parser_after(ctx.match.end()).expect_end()
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


# ---------------------------------------------------------------------------------------------
# KILL, USE, transactions


def kill(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    negative = parser.accept_op("-") is not None
    token = parser.next()
    if token.kind is Tok.WORD:
        raise unknown_column(token.text, "KILL")
    if token.kind is not Tok.NUMBER or not token.text.isdigit():
        raise parser.error(token)
    parser.expect_end()
    # The id is read as an unsigned 64-bit number: KILL -1 names thread 18446744073709551615.
    thread_id = (-int(token.text) if negative else int(token.text)) % (1 << 64)
    query_only = (ctx.match.group("what") or "").upper() == "QUERY"
    server = ctx.server
    if thread_id not in server.connections:
        raise sql_error(1094, thread_id)
    if thread_id == ctx.session.thread_id and not query_only:
        ctx.outcome.close_connection = True
        raise sql_error(1927)
    if thread_id != ctx.session.thread_id:
        ctx.outcome.kills.append(KillRequest(thread_id, query_only))
    return OkResult()


def use_database(ctx: Context) -> Response:
    parser = ctx.parser_after(ctx.match.end())
    name = parser.name()
    parser.expect_end()
    return change_database(ctx.session, name)


def apply_client_capabilities(session: SessionState, capabilities: int) -> None:
    """What a client's capability flags change in its new session, as MariaDB's login does:
    CLIENT_IGNORE_SPACE adds IGNORE_SPACE to sql_mode, CLIENT_INTERACTIVE makes wait_timeout
    interactive_timeout (COM_RESET_CONNECTION's fresh session has neither, as in MariaDB)."""
    variables = session.variables
    if capabilities & Capability.IGNORE_SPACE:
        mode = f"IGNORE_SPACE,{variables['sql_mode']}"
        variables["sql_mode"] = _set_value(SYSTEM_VARIABLES["sql_mode"], "sql_mode", mode, mode)
    if capabilities & Capability.INTERACTIVE:
        variables["wait_timeout"] = variables["interactive_timeout"]


def change_database(session: SessionState, name: str) -> OkResult:
    """USE / COM_INIT_DB: SqlError 1049 for a database the server does not have."""
    known = {db.lower(): db for db in session.server.config.databases}
    actual = known.get(name.lower())
    if actual is None:
        raise sql_error(1049, name)
    session.database = actual
    if actual == "information_schema":
        session.variables["character_set_database"] = "utf8mb3"
        session.variables["collation_database"] = "utf8mb3_general_ci"
    else:
        session.variables["character_set_database"] = session.server.globals["character_set_server"]
        session.variables["collation_database"] = session.server.globals["collation_server"]
    state = []
    if session.variables.get("session_track_schema"):
        state.append(session_state_entry(SessionTrack.SCHEMA, actual.encode()))
    return OkResult(session_state=state)


def begin(ctx: Context) -> Response:
    session = ctx.session
    session.in_transaction = True
    session.transaction_read_only = bool(re.search(r"\bREAD\s+ONLY\b", ctx.text, re.I)) or bool(
        session.variables.get("tx_read_only")
    )
    return OkResult()


def end_transaction(ctx: Context) -> Response:
    ctx.session.in_transaction = False
    ctx.session.transaction_read_only = False
    return OkResult()


def set_statement_for(ctx: Context) -> Response:
    """SET STATEMENT var=value[, ...] FOR <statement>: the settings only last for the inner
    statement, which is all that is answered here."""
    inner = ctx.match.start("inner")
    index = next(i for i, token in enumerate(ctx.tokens) if token.start >= inner)
    base = ctx.tokens[index].start
    rebased = [
        Token(t.kind, t.text, t.start - base, t.end - base, t.extra, t.raw)
        for t in ctx.tokens[index:]
    ]
    return _dispatch(ctx.session, ctx.text[base:], rebased, ctx.outcome, ctx.quote_text[base:])


# SHOW statements MariaDB 10.11 knows: first word -> the second words it allows (None: any).
_SHOW_GRAMMAR: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(
        "DATABASES SCHEMAS TABLES COLUMNS FIELDS INDEX INDEXES KEYS CREATE GRANTS PROCESSLIST "
        "PRIVILEGES ENGINES ENGINE PLUGINS CHARSET COLLATION TRIGGERS EVENTS PROCEDURE FUNCTION "
        "PACKAGE PROFILE PROFILES AUTHORS CONTRIBUTORS OPEN TABLE FULL EXTENDED STORAGE COUNT "
        "EXPLAIN ANALYZE USER_STATISTICS CLIENT_STATISTICS INDEX_STATISTICS TABLE_STATISTICS "
        "QUERY_RESPONSE_TIME LOCALES".split()
    ),
    "CHARACTER": frozenset({"SET"}),
    "MASTER": frozenset({"STATUS", "LOGS"}),
    "BINARY": frozenset({"LOGS"}),
    "BINLOG": frozenset({"STATUS", "EVENTS"}),
    "SLAVE": frozenset({"STATUS", "HOSTS"}),
    "REPLICA": frozenset({"STATUS", "HOSTS"}),
    "RELAYLOG": frozenset({"EVENTS"}),
    "ALL": frozenset({"SLAVES", "REPLICAS"}),
    "GLOBAL": frozenset({"VARIABLES", "STATUS"}),
    "SESSION": frozenset({"VARIABLES", "STATUS"}),
    "LOCAL": frozenset({"VARIABLES", "STATUS"}),
}


def not_supported(ctx: Context) -> Response:
    """ER_NOT_SUPPORTED_YET for a statement MariaDB knows (OK when the config is lenient); a
    SHOW of something MariaDB does not have is the syntax error it would be there."""
    tokens = ctx.tokens
    if tokens[0].is_word("SHOW"):
        first, second = tokens[1], tokens[2] if len(tokens) > 2 else tokens[1]
        if first.kind is not Tok.WORD or first.text.upper() not in _SHOW_GRAMMAR:
            return ctx.parser(1).error(first)
        allowed = _SHOW_GRAMMAR[first.text.upper()]
        if allowed is not None and not (second.kind is Tok.WORD and second.text.upper() in allowed):
            return ctx.parser(2).error(second)
    if not ctx.server.config.strict_queries:
        return OkResult()
    return sql_error(1235, tokens[0].text.upper())


# ---------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True, slots=True)
class Statement:
    pattern: re.Pattern[str]
    handler: Handler
    examples: tuple[str, ...]  # statements real clients send that this row answers


def _statement(pattern: str, handler: Handler, *examples: str) -> Statement:
    return Statement(re.compile(pattern, re.I | re.S), handler, examples)


# fmt: off
STATEMENTS: tuple[Statement, ...] = (
    _statement(r"SET\s+STATEMENT\s+.+?\s+FOR\s+(?P<inner>\S.*)", set_statement_for,
               "SET STATEMENT max_statement_time=1 FOR SELECT 1"),
    _statement(r"SELECT\b", select,
               "SELECT UNIX_TIMESTAMP()", "SELECT @@GLOBAL.gtid_domain_id",
               "SELECT @master_binlog_checksum", "SELECT VERSION()",
               "SELECT @@version_comment LIMIT 1", "SELECT binlog_gtid_pos('mysql-bin.000001',4)",
               "SELECT @rpl_semi_sync_slave=1", "select @@server_id",
               "SELECT @@GLOBAL.gtid_binlog_pos", "SELECT @@GLOBAL.gtid_current_pos"),
    _statement(r"SET\b", set_statement,
               "SET @master_binlog_checksum= @@global.binlog_checksum",
               "SET @master_heartbeat_period= 1000000000", "SET @mariadb_slave_capability=4",
               "SET @slave_connect_state=''", "SET @slave_gtid_strict_mode=0",
               "SET @slave_gtid_ignore_duplicates=0", "SET @slave_until_gtid='0-1-5'",
               "SET @rpl_semi_sync_slave= 1", "SET skip_replication=1", "SET NAMES utf8",
               "SET AUTOCOMMIT = 0",
               "SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'",
               "set net_write_timeout=600"),
    _statement(r"SHOW\s+(?:(?P<scope>GLOBAL|SESSION|LOCAL)\s+)?VARIABLES\b", show_variables,
               "SHOW VARIABLES LIKE 'SERVER_ID'", "SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'",
               "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'",
               "SHOW VARIABLES WHERE Variable_name IN ('rpl_semi_sync_master_enabled', "
               "'rpl_semi_sync_source_enabled')"),
    _statement(r"SHOW\s+(?:(?P<scope>GLOBAL|SESSION|LOCAL)\s+)?STATUS\b", show_status,
               "SHOW STATUS LIKE 'Uptime'"),
    _statement(r"SHOW\s+(?:MASTER|BINLOG)\s+STATUS\b", show_master_status, "SHOW MASTER STATUS"),
    _statement(r"SHOW\s+(?:BINARY|MASTER)\s+LOGS\b", show_binary_logs, "SHOW BINARY LOGS"),
    _statement(r"SHOW\s+(?:SLAVE|REPLICA)\s+HOSTS\b", show_slave_hosts, "SHOW SLAVE HOSTS"),
    _statement(r"SHOW\s+(?P<what>WARNINGS|ERRORS)\b", show_warnings, "SHOW WARNINGS"),
    _statement(r"KILL(?:\s+(?P<what>CONNECTION|QUERY))?\b", kill, "KILL 12", "KILL QUERY 12"),
    _statement(r"USE\b", use_database, "USE information_schema"),
    _statement(r"(?:BEGIN(?:\s+WORK)?|START\s+TRANSACTION\b.*)\s*$", begin,
               "BEGIN", "START TRANSACTION"),
    _statement(r"(?:COMMIT|ROLLBACK)(?:\s+WORK)?\s*$", end_transaction, "COMMIT", "ROLLBACK"),
    # Statements a real server knows but a fake master does not emulate: ER_NOT_SUPPORTED_YET
    # (or OK when the config is lenient), never a misleading syntax error.
    _statement(
        r"(?:ALTER|ANALYZE|BINLOG|CALL|CHANGE|CHECK|CHECKSUM|CREATE|DEALLOCATE|DELETE|DESC|"
        r"DESCRIBE|DO|DROP|EXECUTE|EXPLAIN|FLUSH|GRANT|HANDLER|HELP|INSERT|INSTALL|LOAD|LOCK|"
        r"OPTIMIZE|PREPARE|PURGE|RENAME|REPAIR|REPLACE|RESET|REVOKE|SAVEPOINT|SHOW|SHUTDOWN|"
        r"START|STOP|TRUNCATE|UNINSTALL|UNLOCK|UPDATE|WITH|XA)\b",
        not_supported,
        "FLUSH BINARY LOGS", "PURGE BINARY LOGS TO 'mysql-bin.000002'", "SHOW DATABASES",
    ),
)
# fmt: on


# ---------------------------------------------------------------------------------------------
# Entry point


def execute(session: SessionState, text: str) -> Outcome:
    """Answer one COM_QUERY. Several statements separated by ';' need CLIENT_MULTI_STATEMENTS,
    as on a real server; the answers stop at the first error."""
    outcome = Outcome()
    try:
        tokens = tokenize(text)
    except SqlError as lexing_error:
        return _fail(session, outcome, lexing_error)
    statements = split_statements(text, tokens)
    if not statements:
        return _fail(session, outcome, sql_error(1065))
    if len(statements) > 1 and not session.capabilities & Capability.MULTI_STATEMENTS:
        second = statements[1].start
        return _fail(session, outcome, syntax_error(text[second:], line_of(text, second)))
    for statement in statements:
        outcome.keep_diagnostics = False
        response = _dispatch(
            session, statement.text, statement.tokens, outcome, text[statement.start :]
        )
        outcome.responses.append(response)
        _note_state(session, outcome)
        if not outcome.keep_diagnostics:
            _record(session, response)
        if isinstance(response, SqlError) or outcome.close_connection:
            break
    return outcome


def _fail(session: SessionState, outcome: Outcome, error: SqlError) -> Outcome:
    _record(session, error)
    outcome.responses.append(error)
    _note_state(session, outcome)
    return outcome


def _note_state(session: SessionState, outcome: Outcome) -> None:
    outcome.statuses.append(session.status())
    outcome.collations.append((session.results_collation(), session.connection_collation()))


def _dispatch(
    session: SessionState, text: str, tokens: list[Token], outcome: Outcome, quote_text: str
) -> Response:
    """Answer one statement; ``text`` and ``tokens`` start at its first token."""
    for statement in STATEMENTS:
        match = statement.pattern.match(text)
        if match is None:
            continue
        context = Context(session, text, tokens, outcome, match, quote_text)
        try:
            return statement.handler(context)
        except SqlError as error:
            return error
    return syntax_error(quote_text, 1)


def _record(session: SessionState, response: Response) -> None:
    if isinstance(response, SqlError):
        session.diagnostics = [("Error", response.errno, response.message)]
    else:
        session.diagnostics = []
