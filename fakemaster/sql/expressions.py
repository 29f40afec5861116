"""SELECT expressions: evaluated to an :class:`Item` (column definition and value) as
MariaDB 10.11 describes them; the functions a fake master knows; comparisons.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal

from fakemaster.config.variables import VarKind, lookup
from fakemaster.protocol.charsets import BINARY_COLLATION_ID, UTF8MB3_GENERAL_CI, charset_default
from fakemaster.protocol.resultset import (
    NOT_FIXED_DEC,
    Column,
    ColumnFlag,
    sql_error,
    text_column,
)
from fakemaster.sql.sqltext import (
    Comparison,
    Expr,
    FunctionCall,
    IntervalShift,
    Literal,
    Negation,
    SysVarRef,
    UserVarAssignment,
    UserVarRef,
    Word,
    unknown_column,
)
from fakemaster.sql.sqlvalue import SqlValue, UKind
from fakemaster.sql.state import SessionState
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import (
    ER_ILLEGAL_VALUE_FOR_TYPE,
    ER_NOT_SUPPORTED_YET,
    ER_PARSE_ERROR,
    ER_SP_DOES_NOT_EXIST,
    ER_UNKNOWN_CHARACTER_SET,
    ER_UNKNOWN_STRUCTURED_VARIABLE,
    ER_UNKNOWN_SYSTEM_VARIABLE,
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
)

__all__ = [
    "FUNCTIONS",
    "FunctionImpl",
    "Item",
    "NULL_STRING",
    "compare",
    "evaluate",
    "stored_user_value",
]


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
        if function is None and expr.name in _OVER_ROWS:
            # Built-ins answered over a table's rows (sql.row_expressions), not as constants.
            raise sql_error(ER_NOT_SUPPORTED_YET, f"{_OVER_ROWS[expr.name]} without a table")
        if function is None:
            raise sql_error(
                ER_SP_DOES_NOT_EXIST,
                "FUNCTION",
                f"{session.database or ''}.{expr.name.lower()}".lstrip("."),
            )
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
    if isinstance(expr, IntervalShift):
        return _interval_shift(expr, name, session, clause)
    if isinstance(expr, UserVarAssignment):
        item = evaluate(expr.value, name, session, clause)
        var_name = expr.name.lower()
        session.user_variables[var_name] = stored_user_value(item.value, session, var_name)
        return item
    if isinstance(expr, Word):
        niladic = None if expr.quoted else _NILADIC.get(expr.name.upper())
        if niladic is not None:  # a keyword, never a column: the function without its ()
            return FUNCTIONS[niladic](FunctionCall(niladic, ()), name, session)
        raise unknown_column(expr.name, clause)
    raise sql_error(ER_PARSE_ERROR, "DEFAULT", 1)


# The built-ins only a read of a table's rows evaluates, by the name the parser gives them.
_OVER_ROWS = {
    "CAST": "CAST",
    "CONVERT_USING": "CONVERT",
    "COUNT": "COUNT",
    "BIT_XOR": "BIT_XOR",
    "CONCAT_WS": "CONCAT_WS",
    "CONCAT": "CONCAT",
    "CONV": "CONV",
    "LOWER": "LOWER",
    "COALESCE": "COALESCE",
    "ISNULL": "ISNULL",
}

# SQL's functions written without parentheses (pt-find sends ``SELECT CURRENT_TIMESTAMP``).
_NILADIC = {
    "CURRENT_TIMESTAMP": "CURRENT_TIMESTAMP",
    "LOCALTIME": "LOCALTIME",
    "LOCALTIMESTAMP": "LOCALTIMESTAMP",
    "CURRENT_USER": "CURRENT_USER",
}


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
            raise sql_error(ER_ILLEGAL_VALUE_FOR_TYPE, "double", expr.text)
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
        raise sql_error(ER_UNKNOWN_CHARACTER_SET, introducer)
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
        raise sql_error(ER_UNKNOWN_STRUCTURED_VARIABLE, ref.name.split(".", 1)[0])
    var = lookup(ref.name)
    if var is None:
        raise sql_error(ER_UNKNOWN_SYSTEM_VARIABLE, ref.name)
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
        raise sql_error(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, call.name.lower())


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


_UNIT_SECONDS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400, "WEEK": 604800}


def _interval_shift(expr: IntervalShift, name: str, session: SessionState, clause: str) -> Item:
    """A DATETIME moved by an interval (NULL when either is NULL or the moment is no date)."""
    moment = evaluate(expr.moment, "", session, clause)
    amount = evaluate(expr.amount, "", session, clause).value.as_number()
    text = moment.value.text()
    shifted: datetime | None = None
    if text is not None and amount is not None:
        try:
            start = datetime.fromisoformat(text.decode("ascii", "replace"))
        except ValueError:
            start = None
        if start is not None:
            shifted = _shifted(start, expr.sign * float(amount), expr.unit)
    # A date moved by days stays a date ('2020-01-01' + INTERVAL 1 WEEK is '2020-01-08').
    date_only = text is not None and len(text.strip()) == 10 and expr.unit in ("DAY", "WEEK")
    shape = "%Y-%m-%d" if date_only else "%Y-%m-%d %H:%M:%S"
    value = None if shifted is None else shifted.strftime(shape)
    if moment.column.type not in _TEMPORAL:
        # A string moved by an interval is a string (of the connection's character set).
        collation = session.connection_collation().id
        column = text_column(name, 19, type=ColumnType.STRING, decimals=0, collation=collation)
        return Item(column, SqlValue(UKind.STRING, value, collation=collation), True)
    # Always nullable: the result may fall out of DATETIME's range.
    column = Column(name, ColumnType.DATETIME, length=19, flags=ColumnFlag.BINARY)
    return Item(column, SqlValue(UKind.STRING, value, collation=BINARY_COLLATION_ID), True)


_TEMPORAL = (ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.DATE)


def _shifted(start: datetime, amount: float, unit: str) -> datetime | None:
    """``start`` moved by ``amount`` units; None out of the DATETIME range (MariaDB: NULL)."""
    seconds = amount / 1_000_000 if unit == "MICROSECOND" else amount * _UNIT_SECONDS[unit]
    try:
        return start + timedelta(seconds=seconds)
    except (OverflowError, ValueError):  # also an infinite or NaN amount
        return None


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
    positions = session.server.positions
    if file_text is not None and position is not None and positions is not None:
        result = positions.binlog_gtid_pos(
            file_text.decode("utf-8", "surrogateescape"), int(position)
        )
    column = text_column(name, 16777216, type=ColumnType.LONG_BLOB, collation=UTF8MB3_GENERAL_CI)
    return Item(column, SqlValue(UKind.STRING, result, collation=UTF8MB3_GENERAL_CI), True)


def _fn_crc32(call: FunctionCall, name: str, session: SessionState) -> Item:
    """CRC32(expr) of the value's bytes in its character set, CRC32(crc, expr) going on from a
    previous checksum (pt-table-checksum checks CRC32 works before it checksums)."""
    if len(call.args) not in (1, 2):
        _no_args(call, 1)
    items = [evaluate(arg, "", session, "SELECT") for arg in call.args]
    data = items[-1].value.text()
    start = items[0].value.as_number() if len(items) == 2 else 0
    result = None if data is None or start is None else zlib.crc32(data, int(start) & 0xFFFFFFFF)
    flags = ColumnFlag.UNSIGNED | ColumnFlag.BINARY
    nullable = any(item.nullable for item in items)
    column = Column(
        name, ColumnType.LONG, length=10, flags=flags if nullable else flags | ColumnFlag.NOT_NULL
    )
    return Item(column, SqlValue(UKind.INT, result, unsigned=True), nullable)


def _length(count: int | Decimal | float) -> int:
    """A count of characters: negative ones are 0, a NaN or infinite one none or all."""
    if isinstance(count, float) and not math.isfinite(count):
        return 0 if count != count or count < 0 else 1 << 62
    if isinstance(count, float):
        return max(round(count), 0)  # as rint(): 2.5 is 2
    return max(int(Decimal(count).to_integral_value(ROUND_HALF_UP)), 0)  # 2.5 is 3


def _fn_left(call: FunctionCall, name: str, session: SessionState) -> Item:
    """LEFT(str, n): the first ``n`` characters of the string (pt-mysql-summary cuts a
    DATETIME to its minutes with it)."""
    _no_args(call, 2)
    text_item = evaluate(call.args[0], "", session, "SELECT")
    count = evaluate(call.args[1], "", session, "SELECT").value.as_number()
    data = text_item.value.text()
    collation = text_item.value.collation
    if collation is None or collation == BINARY_COLLATION_ID:
        collation = session.connection_collation().id
    result = None
    if data is not None and count is not None:
        chars = data.decode("utf-8", "surrogateescape")[: _length(count)]
        result = chars.encode("utf-8", "surrogateescape")
    if isinstance(call.args[0], Literal) and call.args[0].value is None:
        # LEFT(NULL, n): a NULL of the binary character set, 0 characters long.
        column = text_column(name, 0, flags=ColumnFlag.BINARY, collation=BINARY_COLLATION_ID)
        return Item(column, SqlValue(UKind.STRING, None, collation=BINARY_COLLATION_ID), True)
    chars_max = text_item.column.text_chars or text_item.column.length
    if count is not None:
        chars_max = min(chars_max, _length(count))
    # Always nullable (MariaDB's Item_func_left), whatever its arguments.
    column = text_column(name, chars_max, collation=collation)
    return Item(column, SqlValue(UKind.STRING, result, collation=collation), True)


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
    "LEFT": _fn_left,
    "CRC32": _fn_crc32,
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


def stored_user_value(value: SqlValue, session: SessionState, name: str) -> SqlValue:
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
