"""Expressions over a table's rows: the functions pt-table-checksum computes a chunk's checksum
with, evaluated as MariaDB 10.11 evaluates them.

``COUNT(*)``, ``BIT_XOR`` and the functions in them (``CRC32``, ``CONCAT_WS``, ``CONCAT``,
``ISNULL``, ``CONVERT(x USING cs)``, ``CAST(x AS UNSIGNED)``, ``CONV``, ``LOWER``, ``COALESCE``)
over columns and literals. A column's value is its text as the server renders it in a result
(the snapshot's cells are that text already); a character column's text is encoded in its own
character set unless converted. :mod:`~fakemaster.sql.expressions` evaluates constant
expressions; this one evaluates the same :class:`~fakemaster.sql.sqltext.Expr` trees once per
row, an aggregate over a group of rows. What it cannot evaluate is the server's error
(ER_SP_DOES_NOT_EXIST for a function it does not know, ER_BAD_FIELD_ERROR for a column), never
a crash.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from fakemaster.protocol.resultset import sql_error
from fakemaster.sql.sqltext import Expr, FunctionCall, Literal, Word, unknown_column
from fakemaster.sql.tables.catalogue import CellValue, TimestampCell
from fakemaster.vocabulary.errcodes import ER_SP_DOES_NOT_EXIST, ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT

__all__ = ["AGGREGATES", "RowScope", "Value", "evaluate_group", "has_aggregate", "text_bytes"]

# A value: NULL, an integer, character text (``str``) or a binary string (``bytes``).
Value = int | str | bytes | None

AGGREGATES = frozenset({"COUNT", "BIT_XOR"})
_UINT64 = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class RowScope:
    """The columns a row's cells are read by: names, and whether each is binary (its cell's
    bytes are the value) or character text."""

    names: Sequence[str]
    binary: Sequence[bool]
    timestamp_offset: int = 0
    database: str | None = None  # the session's: an unknown function is named in it

    def position(self, name: str) -> int:
        lowered = name.lower()
        for index, known in enumerate(self.names):
            if known.lower() == lowered:
                return index
        raise unknown_column(name, "SELECT")  # as 10.11 names a select list's clause

    def cell(self, row: Sequence[CellValue], position: int) -> Value:
        cell = row[position]
        if cell is None:
            return None
        if isinstance(cell, TimestampCell):
            return cell.text(self.timestamp_offset).decode()
        if isinstance(cell, bytes) and not self.binary[position]:
            return cell.decode("utf-8", "surrogateescape")
        return cell


def has_aggregate(expr: Expr) -> bool:
    if isinstance(expr, FunctionCall):
        return expr.name in AGGREGATES or any(has_aggregate(arg) for arg in expr.args)
    return False


def evaluate_group(expr: Expr, scope: RowScope, rows: Sequence[Sequence[CellValue]]) -> Value:
    """``expr`` over a group of rows: its aggregates over all of them, a column outside one
    the first row's (MariaDB without ONLY_FULL_GROUP_BY; NULL over no rows)."""
    if isinstance(expr, FunctionCall) and expr.name in AGGREGATES:
        return _aggregate(expr, scope, rows)
    if isinstance(expr, FunctionCall):
        if expr.name == "UNIX_TIMESTAMP" and len(expr.args) == 1:
            inner = evaluate_group(expr.args[0], scope, rows)
            return _unix_timestamp(inner, scope.timestamp_offset)
        return _call(expr, lambda arg: evaluate_group(arg, scope, rows), scope)
    if isinstance(expr, Word):
        position = scope.position(expr.name)
        return scope.cell(rows[0], position) if rows else None
    return _literal(expr)


def _evaluate_row(expr: Expr, scope: RowScope, row: Sequence[CellValue]) -> Value:
    if isinstance(expr, FunctionCall):
        if expr.name in AGGREGATES:
            raise sql_error(ER_SP_DOES_NOT_EXIST, "FUNCTION", expr.name.lower())  # nested
        if expr.name == "UNIX_TIMESTAMP" and len(expr.args) == 1:
            inner = _evaluate_row(expr.args[0], scope, row)
            return _unix_timestamp(inner, scope.timestamp_offset)
        return _call(expr, lambda arg: _evaluate_row(arg, scope, row), scope)
    if isinstance(expr, Word):
        return scope.cell(row, scope.position(expr.name))
    return _literal(expr)


def _aggregate(call: FunctionCall, scope: RowScope, rows: Sequence[Sequence[CellValue]]) -> Value:
    if call.name == "COUNT":
        if len(call.args) == 1 and isinstance(call.args[0], Word) and call.args[0].name == "*":
            return len(rows)
        _arguments(call, 1)
        return sum(_evaluate_row(call.args[0], scope, row) is not None for row in rows)
    _arguments(call, 1)
    result = 0  # BIT_XOR over no rows (or only NULLs) is 0
    for row in rows:
        value = _integer(_evaluate_row(call.args[0], scope, row))
        if value is not None:
            result ^= value & _UINT64
    return result


def _literal(expr: Expr) -> Value:
    if isinstance(expr, Literal):
        value = expr.value
        if value is None or isinstance(value, int | str | bytes):
            return value
        return str(value)  # a decimal or float literal: its text
    raise sql_error(ER_SP_DOES_NOT_EXIST, "FUNCTION", type(expr).__name__.lower())


def _arguments(call: FunctionCall, *counts: int) -> None:
    if len(call.args) not in counts:
        raise sql_error(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, call.name)


def text_bytes(value: Value) -> bytes | None:
    """A value's bytes in a string context: text in utf8mb4, a number as its digits."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogateescape")


def _text(value: Value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _integer(value: Value) -> int | None:
    """A value as an unsigned 64-bit integer, as CAST(... AS UNSIGNED) makes it: text is read as
    far as it is a number (MariaDB warns and keeps the prefix), negatives wrap."""
    if value is None:
        return None
    if isinstance(value, int):
        return value & _UINT64
    text = _text(value) or ""
    prefix = _number_prefix(text.strip())
    try:
        number = Decimal(prefix) if prefix else Decimal(0)
    except InvalidOperation:
        number = Decimal(0)
    if number < 0:
        return int(number.to_integral_value()) & _UINT64
    return min(int(number.to_integral_value()), _UINT64)


def _number_prefix(text: str) -> str:
    end = 0
    seen_digit = seen_point = False
    for index, char in enumerate(text):
        if char.isdigit():
            seen_digit = True
            end = index + 1
        elif char == "." and not seen_point:
            seen_point = True
        elif char in "+-" and index == 0:
            continue
        else:
            break
    return text[:end] if seen_digit else ""


def _concat(parts: list[Value]) -> Value:
    """Binary when any part is; text otherwise."""
    if any(isinstance(part, bytes) for part in parts):
        return b"".join(text_bytes(part) or b"" for part in parts)
    return "".join(_text(part) or "" for part in parts)


def _fn_concat_ws(args: list[Value]) -> Value:
    separator, rest = args[0], [arg for arg in args[1:] if arg is not None]
    if separator is None:
        return None
    joined: list[Value] = []
    for index, part in enumerate(rest):
        if index:
            joined.append(separator)
        joined.append(part)
    return _concat(joined) if joined else ("" if not isinstance(separator, bytes) else b"")


def _fn_concat(args: list[Value]) -> Value:
    return None if any(arg is None for arg in args) else _concat(args)


def _fn_crc32(args: list[Value]) -> Value:
    data = text_bytes(args[-1])
    if data is None or (len(args) == 2 and args[0] is None):
        return None
    start = _integer(args[0]) if len(args) == 2 else 0
    return zlib.crc32(data, (start or 0) & 0xFFFFFFFF)


def _fn_conv(args: list[Value]) -> Value:
    """CONV(n, from, to) for the bases 2 to 36 (negative ``to``: signed), as MariaDB's
    longlong2str: an unsigned 64-bit value in upper-case digits."""
    number, source, target = args
    if number is None or source is None or target is None:
        return None
    from_base, to_base = _integer(source), _integer(target)
    text = (_text(number) or "").strip()
    try:
        base_from = _signed(from_base)
        base_to = _signed(to_base)
        if not (2 <= abs(base_from) <= 36 and 2 <= abs(base_to) <= 36):
            return None
        negative = text.startswith("-")
        value = _saturated(_digits_prefix(text.lstrip("+-"), abs(base_from)), abs(base_from))
    except ValueError:
        return None
    if negative:
        value = (-value) & _UINT64
    if base_to < 0 and value >> 63:
        return "-" + _in_base((-value) & _UINT64, -base_to)
    return _in_base(value, abs(base_to))


def _signed(value: int | None) -> int:
    if value is None:
        raise ValueError("NULL base")
    return value - (1 << 64) if value >> 63 else value


def _saturated(digits: str, base: int) -> int:
    """The digits' value, saturated at 2^64 - 1 as MariaDB's strntoull does on overflow (linear
    in the digits, however many)."""
    value = 0
    for char in digits:
        value = value * base + int(char, 36)
        if value > _UINT64:
            return _UINT64
    return value


def _digits_prefix(text: str, base: int) -> str:
    end = 0
    for char in text:
        if not char.isalnum() or int(char, 36) >= base:
            break
        end += 1
    return text[:end]


def _in_base(value: int, base: int) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if value == 0:
        return "0"
    out = []
    while value:
        value, digit = divmod(value, base)
        out.append(alphabet[digit])
    return "".join(reversed(out))


def _fn_lower(args: list[Value]) -> Value:
    value = args[0]
    if isinstance(value, bytes) or value is None:
        return value  # a binary string has no case
    return str(value).lower()


def _fn_coalesce(args: list[Value]) -> Value:
    return next((arg for arg in args if arg is not None), None)


def _fn_isnull(args: list[Value]) -> Value:
    return int(args[0] is None)


def _fn_convert_using(args: list[Value]) -> Value:
    value, charset = args
    if value is None:
        return None
    if str(charset).upper() == "BINARY":
        return text_bytes(value)
    return _text(value)


def _fn_cast(args: list[Value]) -> Value:
    value, kind = args
    if str(kind).startswith(("UNSIGNED", "SIGNED")):
        number = _integer(value)
        if number is not None and str(kind).startswith("SIGNED") and number >> 63:
            return number - (1 << 64)
        return number
    if str(kind).startswith("BINARY"):
        return text_bytes(value)
    if str(kind).startswith(("CHAR", "VARCHAR")):
        return _text(value)
    raise sql_error(ER_SP_DOES_NOT_EXIST, "FUNCTION", "cast")


def _fn_plus(args: list[Value]) -> Value:
    """``value + number``: a temporal text as its number (``2020-01-02 03:04:05.5`` is
    20200102030405.5), a number's text as its value."""
    value, other = args
    if value is None or other is None:
        return None
    text = (_text(value) or "").strip()
    if text[:1].isdigit() and any(sep in text for sep in "-:"):
        text = "".join(char for char in text if char.isdigit() or char == ".")
    try:
        total = Decimal(_number_prefix(text) or "0") + Decimal(str(other))
    except InvalidOperation:
        return None
    return (
        int(total) if total == total.to_integral_value() and "." not in str(total) else str(total)
    )


# name -> (its function, the argument counts it takes; None: one or more)
_FUNCTIONS: dict[str, tuple[Callable[[list[Value]], Value], tuple[int, ...] | None]] = {
    "CONCAT_WS": (_fn_concat_ws, None),
    "CONCAT": (_fn_concat, None),
    "CRC32": (_fn_crc32, (1, 2)),
    "CONV": (_fn_conv, (3,)),
    "LOWER": (_fn_lower, (1,)),
    "LCASE": (_fn_lower, (1,)),
    "COALESCE": (_fn_coalesce, None),
    "ISNULL": (_fn_isnull, (1,)),
    "CONVERT_USING": (_fn_convert_using, (2,)),
    "CAST": (_fn_cast, (2,)),
    "PLUS": (_fn_plus, (2,)),
}


def _unix_timestamp(value: Value, offset: int) -> Value:
    """UNIX_TIMESTAMP of a moment's text in the session's time zone (``offset`` seconds east of
    UTC): its seconds, with the fraction it is written with; 0 for the zero moment."""
    text = _text(value)
    if text is None:
        return None
    match = _MOMENT.fullmatch(text.strip())
    if match is None:
        return 0
    whole, fraction = match.group(1), match.group(2) or ""
    try:
        moment = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return "0" + fraction if fraction else 0  # the zero moment, or no valid moment
    seconds = int(moment.timestamp()) - offset
    return f"{seconds}{fraction}" if fraction else seconds


_MOMENT = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?")


def _call(call: FunctionCall, value_of: Callable[[Expr], Value], scope: RowScope) -> Value:
    found = _FUNCTIONS.get(call.name)
    if found is None:
        qualified = f"{scope.database}.{call.name}" if scope.database else call.name
        raise sql_error(ER_SP_DOES_NOT_EXIST, "FUNCTION", qualified)
    function, counts = found
    if counts is None:
        if not call.args or (call.name == "CONCAT_WS" and len(call.args) < 2):
            raise sql_error(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, call.name)
    else:
        _arguments(call, *counts)
    return function([value_of(arg) for arg in call.args])
