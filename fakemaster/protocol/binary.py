"""The binary protocol of prepared statements, sans-IO: the COM_STMT_PREPARE answer, the
parameters of a COM_STMT_EXECUTE, and result rows in the binary row format.

The layouts are MariaDB 10.11's (sql/sql_prepare.cc, sql/protocol.cc), checked byte for byte
against a real server (tests/integration/test_prepared_statements_differential.py):

* prepare OK: 0x00 | statement id u32 | columns u16 | params u16 | 0x00 | warnings u16, then a
  definition per parameter (named ``?``, type NULL) and per column, each list closed by an EOF
  unless the client asked for CLIENT_DEPRECATE_EOF;
* execute: statement id u32 | flags u8 | iteration count u32, then for a statement with
  parameters a NULL bitmap, the new-params-bound flag and (when set) a type u16 per parameter
  (its high byte 0x80 = unsigned), then the values of the parameters that are not NULL and were
  not sent with COM_STMT_SEND_LONG_DATA;
* a binary row: 0x00, a NULL bitmap with an offset of 2 bits, then each value in the format of
  its column's type (integers fixed-width little-endian, FLOAT/DOUBLE IEEE, temporal values
  length-prefixed, the rest length-encoded strings).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from decoder.primitives import read_packed_int
from encoder.packets import encode_eof, encode_ok
from encoder.primitives import packed_int
from fakemaster.protocol.resultset import (
    NOT_FIXED_DEC,
    Cell,
    ClientProtocol,
    Column,
    ColumnDefinition,
    ColumnFlag,
    text_column,
)
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import EOF_HEADER, EofPacket, OkPacket

__all__ = [
    "CURSOR_TYPE_READ_ONLY",
    "PARAMETER_DEFINITION",
    "BoundParam",
    "ExecuteRequest",
    "binary_row",
    "column_count_payload",
    "definition_payloads",
    "end_of_rows",
    "param_column",
    "param_literal",
    "prepare_ok_payload",
]

# COM_STMT_EXECUTE flags: the client asks for a read-only cursor (rows come with COM_STMT_FETCH).
CURSOR_TYPE_READ_ONLY = 0x01
_UNSIGNED_PARAM = 0x8000  # the high byte of a parameter's type: 0x80 = unsigned
_EXECUTE_HEAD = struct.Struct("<IBI")

# What MariaDB says about each parameter of a prepared statement: named "?", type NULL, binary.
PARAMETER_DEFINITION = ColumnDefinition(
    name="?", type=ColumnType.NULL, length=0, flags=ColumnFlag.BINARY
)

_INTEGER_WIDTHS: dict[int, int] = {
    ColumnType.TINY: 1,
    ColumnType.SHORT: 2,
    ColumnType.YEAR: 2,
    ColumnType.LONG: 4,
    ColumnType.INT24: 4,
    ColumnType.LONGLONG: 8,
}
_TEMPORAL_TYPES = (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP)
# Parameter types whose value is a length-encoded string (MariaDB's setup_one_conversion_function).
_STRING_TYPES = frozenset(
    {
        ColumnType.DECIMAL,
        ColumnType.NEWDECIMAL,
        ColumnType.VARCHAR,
        ColumnType.BIT,
        ColumnType.JSON,
        ColumnType.ENUM,
        ColumnType.SET,
        ColumnType.TINY_BLOB,
        ColumnType.MEDIUM_BLOB,
        ColumnType.LONG_BLOB,
        ColumnType.BLOB,
        ColumnType.VAR_STRING,
        ColumnType.STRING,
        ColumnType.GEOMETRY,
    }
)


@dataclass(frozen=True, slots=True)
class BoundParam:
    """One parameter of an execute: its wire type, signedness and raw value (None: NULL)."""

    type: int
    unsigned: bool
    value: bytes | None


@dataclass(frozen=True, slots=True)
class ExecuteRequest:
    statement_id: int
    flags: int
    params: tuple[BoundParam, ...]
    # The types the parameters were bound with (sent now, or kept from an earlier execute).
    types: tuple[tuple[int, bool], ...]

    @staticmethod
    def statement_id_of(body: bytes) -> int:
        """The statement id at the start of a COM_STMT_* body (MariaDB reads 4 bytes whether
        or not they are there: missing ones read as zero here)."""
        return int(struct.unpack("<I", body[:4].ljust(4, b"\0"))[0])

    @classmethod
    def parse(
        cls,
        body: bytes,
        param_count: int,
        bound_types: tuple[tuple[int, bool], ...] | None,
        long_data: Mapping[int, bytes],
    ) -> ExecuteRequest:
        """The body after the command byte (at least the 9-byte head: the caller answers
        ER_MALFORMED_PACKET for less). DecodeError when the parameters cannot be read: no
        types ever bound, a type MariaDB does not take, a value cut short."""
        statement_id, flags, _iterations = _EXECUTE_HEAD.unpack_from(body, 0)
        pos = _EXECUTE_HEAD.size
        if param_count == 0:
            return cls(statement_id, flags, (), ())
        bitmap_size = (param_count + 7) // 8
        if len(body) < pos + bitmap_size + 1:
            raise DecodeError("parameters missing", offset=len(body))
        bitmap = body[pos : pos + bitmap_size]
        pos += bitmap_size
        new_types = body[pos]
        pos += 1
        if new_types:
            if len(body) < pos + 2 * param_count:
                raise DecodeError("parameter types cut short", offset=len(body))
            types = tuple(
                (code & 0xFF, bool(code & _UNSIGNED_PARAM))
                for code in struct.unpack_from(f"<{param_count}H", body, pos)
            )
            pos += 2 * param_count
        elif bound_types is None:
            raise DecodeError("parameters never bound", offset=pos)
        else:
            types = bound_types
        params: list[BoundParam] = []
        for index, (kind, unsigned) in enumerate(types):
            if index in long_data:  # sent in pieces: a string value whatever the type
                data = long_data[index]
                params.append(BoundParam(ColumnType.BLOB, False, packed_int(len(data)) + data))
            elif bitmap[index // 8] & (1 << (index % 8)) or kind == ColumnType.NULL:
                params.append(BoundParam(kind, unsigned, None))
            else:
                value, pos = _param_value(body, pos, kind)
                params.append(BoundParam(kind, unsigned, value))
        return cls(statement_id, flags, tuple(params), types)


def _param_value(body: bytes, pos: int, kind: int) -> tuple[bytes, int]:
    """The raw value of a parameter of type ``kind`` at ``pos``, and where the next one starts."""
    if kind in _INTEGER_WIDTHS:
        size = _INTEGER_WIDTHS[kind]
    elif kind == ColumnType.FLOAT:
        size = 4
    elif kind == ColumnType.DOUBLE:
        size = 8
    elif kind in _TEMPORAL_TYPES or kind == ColumnType.TIME:
        if pos >= len(body):
            raise DecodeError("temporal parameter cut short", offset=pos)
        size = body[pos] + 1
    elif kind in _STRING_TYPES:
        if pos >= len(body):
            raise DecodeError("string parameter cut short", offset=pos)
        length, start = read_packed_int(body, pos)
        size = start - pos + length
    else:
        raise DecodeError(f"parameter type {kind} not taken", offset=pos)
    if pos + size > len(body):
        raise DecodeError("parameter value cut short", offset=len(body))
    return body[pos : pos + size], pos + size


# --- parameters as SQL ---------------------------------------------------------------------


def param_literal(param: BoundParam) -> str:
    """The SQL literal the parameter's value stands for in the statement's text."""
    raw = param.value
    if raw is None:
        return "NULL"
    kind = param.type
    if kind in _INTEGER_WIDTHS:
        return str(int.from_bytes(raw, "little", signed=not param.unsigned))
    if kind in (ColumnType.FLOAT, ColumnType.DOUBLE):
        number = struct.unpack("<f" if kind == ColumnType.FLOAT else "<d", raw)[0]
        if not math.isfinite(number):
            return "NULL"
        text = repr(number)
        return text if "e" in text else text + "e0"
    if kind in _TEMPORAL_TYPES:
        return "'" + _datetime_text(raw[1:], date_only=kind == ColumnType.DATE) + "'"
    if kind == ColumnType.TIME:
        return "'" + _time_text(raw[1:]) + "'"
    length, start = read_packed_int(raw, 0) if kind in _STRING_TYPES and raw else (0, 0)
    data = raw[start : start + length] if kind in _STRING_TYPES else raw
    return _quoted(data)


def _quoted(data: bytes) -> str:
    text = data.decode("utf-8", "surrogateescape")
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _datetime_text(fields: bytes, *, date_only: bool) -> str:
    padded = fields.ljust(11, b"\0")
    year, month, day, hour, minute, second, micro = struct.unpack("<HBBBBBI", padded)
    date = f"{year:04d}-{month:02d}-{day:02d}"
    if date_only:
        return date
    text = f"{date} {hour:02d}:{minute:02d}:{second:02d}"
    return text + _fraction(micro) if len(fields) > 7 else text


def _fraction(micro: int) -> str:
    """Microseconds as the shortest fraction (".678" for 678000): the served tables compare
    temporal values as their text, written with the column's own precision."""
    return f".{micro:06d}".rstrip("0").rstrip(".")


def _time_text(fields: bytes) -> str:
    negative, days, hour, minute, second, micro = struct.unpack("<BIBBBI", fields.ljust(12, b"\0"))
    text = f"{'-' if negative else ''}{days * 24 + hour:02d}:{minute:02d}:{second:02d}"
    return text + _fraction(micro) if len(fields) > 8 else text


def param_column(param: BoundParam) -> Column:
    """The column a select item that is just ``?`` has, for the value bound to it (MariaDB
    describes the parameter's value, not a literal's: an integer is a BIGINT of 21, ...)."""
    kind = param.type
    fixed = ColumnFlag.NOT_NULL | ColumnFlag.BINARY
    if param.value is None:
        return Column("?", ColumnType.NULL, flags=ColumnFlag.BINARY)
    if kind in _INTEGER_WIDTHS:
        unsigned = ColumnFlag.UNSIGNED if param.unsigned else 0
        return Column("?", ColumnType.LONGLONG, length=21 - bool(unsigned), flags=fixed | unsigned)
    if kind in (ColumnType.FLOAT, ColumnType.DOUBLE):
        return Column("?", ColumnType.DOUBLE, length=23, flags=fixed, decimals=31)
    if kind in _TEMPORAL_TYPES:
        micro = len(param.value) > 8
        if kind == ColumnType.DATE:
            return Column("?", ColumnType.DATE, length=10, flags=fixed)
        return Column("?", ColumnType.DATETIME, length=19, flags=fixed, decimals=6 if micro else 0)
    if kind == ColumnType.TIME:
        micro = len(param.value) > 9
        return Column("?", ColumnType.TIME, length=10, flags=fixed, decimals=6 if micro else 0)
    literal = param_literal(param)
    chars = len(literal) - 2 - literal.count("''") - literal.count("\\\\")
    return text_column("?", chars, flags=ColumnFlag.NOT_NULL, decimals=NOT_FIXED_DEC)


# --- responses -----------------------------------------------------------------------------


def prepare_ok_payload(statement_id: int, columns: int, params: int, warnings: int = 0) -> bytes:
    return struct.pack("<BIHHBH", 0, statement_id, columns, params, 0, warnings)


def definition_payloads(
    definitions: Sequence[ColumnDefinition], protocol: ClientProtocol, *, status: int
) -> list[bytes]:
    """Definitions then (without CLIENT_DEPRECATE_EOF) the EOF that closes them."""
    payloads = [
        definition.encode(extended_metadata=protocol.extended_metadata)
        for definition in definitions
    ]
    if definitions and not protocol.deprecate_eof:
        payloads.append(encode_eof(EofPacket(status_flags=status)))
    return payloads


def end_of_rows(protocol: ClientProtocol, *, status: int, warnings: int = 0) -> bytes:
    """The packet after the last row: an EOF, or an OK with header 0xFE (DEPRECATE_EOF)."""
    if protocol.deprecate_eof:
        return encode_ok(OkPacket(status_flags=status, warnings=warnings, header=EOF_HEADER))
    return encode_eof(EofPacket(warnings=warnings, status_flags=status))


def column_count_payload(count: int, protocol: ClientProtocol) -> bytes:
    head = packed_int(count)
    return head + b"\x01" if protocol.cache_metadata else head


def binary_row(definitions: Sequence[ColumnDefinition], cells: Sequence[Cell]) -> bytes:
    """A row in the binary format, from the text form of its cells."""
    bitmap = bytearray((len(definitions) + 9) // 8)
    values: list[bytes] = []
    for index, (definition, cell) in enumerate(zip(definitions, cells, strict=True)):
        if cell is None or definition.type == ColumnType.NULL:
            bit = index + 2
            bitmap[bit // 8] |= 1 << (bit % 8)
            continue
        values.append(_binary_value(definition, cell))
    return b"\x00" + bytes(bitmap) + b"".join(values)


def _binary_value(definition: ColumnDefinition, cell: bytes) -> bytes:
    kind = definition.type
    if kind in _INTEGER_WIDTHS:
        width = _INTEGER_WIDTHS[kind]
        number = int(cell or b"0")
        return (number & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
    if kind == ColumnType.FLOAT:
        return struct.pack("<f", float(cell))
    if kind == ColumnType.DOUBLE:
        return struct.pack("<d", float(cell))
    if kind in _TEMPORAL_TYPES:
        return _binary_datetime(cell.decode("ascii"), date_only=kind == ColumnType.DATE)
    if kind == ColumnType.TIME:
        return _binary_time(cell.decode("ascii"))
    return packed_int(len(cell)) + cell


def _binary_datetime(text: str, *, date_only: bool) -> bytes:
    date, _, clock = text.partition(" ")
    year, month, day = (int(part) for part in date.split("-"))
    hour = minute = second = micro = 0
    if clock and not date_only:
        hms, _, fraction = clock.partition(".")
        hour, minute, second = (int(part) for part in hms.split(":"))
        micro = int(fraction.ljust(6, "0")[:6]) if fraction else 0
    if micro:
        fields = struct.pack("<HBBBBBI", year, month, day, hour, minute, second, micro)
    elif hour or minute or second:
        fields = struct.pack("<HBBBBB", year, month, day, hour, minute, second)
    elif year or month or day:
        fields = struct.pack("<HBB", year, month, day)
    else:
        fields = b""
    return bytes((len(fields),)) + fields


def _binary_time(text: str) -> bytes:
    negative = text.startswith("-")
    hms, _, fraction = text.lstrip("-").partition(".")
    hours, minute, second = (int(part) for part in hms.split(":"))
    micro = int(fraction.ljust(6, "0")[:6]) if fraction else 0
    days, hour = divmod(hours, 24)
    if micro:
        fields = struct.pack("<BIBBBI", negative, days, hour, minute, second, micro)
    elif days or hour or minute or second:
        fields = struct.pack("<BIBBB", negative, days, hour, minute, second)
    else:
        fields = b""
    return bytes((len(fields),)) + fields
