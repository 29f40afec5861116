"""A decoded binlog value as the exact bytes MariaDB's text protocol returns for its column.

The ground truth of the differential tests is what a real server sends for ``SELECT col``
with ``character_set_results = NULL`` and ``time_zone = '+00:00'`` (see
``tests/peers/workload.py``). :func:`render` turns a value decoded from a ROWS event (the
representations of ``fakemaster/vocabulary/values.py`` and ``decoder/values.py``) into those bytes, using
only what ``information_schema.COLUMNS`` says about the column, so that the two can be compared
byte for byte.

Number formatting (``scenarios/text.py``, where the product's oracle renders with it) follows
the server (``strings/dtoa.c`` ``my_gcvt``/``my_fcvt``):

* DOUBLE: the shortest digits that read back as the same double (dtoa mode 4, with a width of
  341, so in practice the shortest round-trip digits);
* FLOAT: the value widened to double, then at most ``FLT_DIG`` = 6 significant digits, or fewer
  when fewer read back as the same double (dtoa mode 4 with 6 digits), trailing zeros dropped;
* both use ``f`` notation when the decimal exponent is within [-14, 15] (``MAX_DECPT_FOR_F_FORMAT``
  = ``DBL_DIG``), else ``e`` notation without ``+`` or leading exponent zeros (``3.40282e38``);
* ``FLOAT(M,D)``/``DOUBLE(M,D)``: fixed notation with exactly D decimals (``my_fcvt``).
"""

from __future__ import annotations

import datetime as _dt
import re
from decimal import Decimal, localcontext
from typing import Any

from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp
from scenarios.text import RenderError, fcvt, format_double, format_float
from tests.peers.workload import ColumnInfo

__all__ = ["RenderError", "render", "python_codec", "enum_members", "format_double", "format_float"]


# MariaDB character set name -> Python codec (labels of ENUM/SET come back in the column's
# charset; everything else is compared as the stored bytes).
_CODECS: dict[str, str] = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "utf8": "utf-8",
    "latin1": "cp1252",  # MariaDB's latin1 is Windows-1252
    "ascii": "ascii",
    "ucs2": "utf-16-be",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp866": "cp866",
    "cp932": "cp932",
    "sjis": "shift_jis",
    "ujis": "euc_jp",
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gbk": "gbk",
    "gb2312": "gb2312",
    "big5": "big5",
    "koi8r": "koi8_r",
    "koi8u": "koi8_u",
    "latin2": "iso8859_2",
    "latin5": "iso8859_9",
    "latin7": "iso8859_13",
    "greek": "iso8859_7",
    "hebrew": "iso8859_8",
    "tis620": "tis_620",
}

_INT_BYTES = {"tinyint": 1, "smallint": 2, "mediumint": 3, "int": 4, "bigint": 8}
_TEXT_TYPES = frozenset(
    {
        "char",
        "varchar",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
        "json",
        "varbinary",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
    }
)
_GEOMETRY_TYPES = frozenset(
    {
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
    }
)
_FIXED_BINARY_SIZES = {"inet4": 4, "inet6": 16, "uuid": 16}


def python_codec(charset: str | None) -> str | None:
    """The Python codec of a MariaDB character set (None for ``binary`` / no charset)."""
    if charset is None or charset == "binary":
        return None
    try:
        return _CODECS[charset]
    except KeyError:
        raise RenderError(f"no Python codec known for MariaDB charset {charset!r}") from None


def enum_members(column_type: str) -> list[str]:
    """The labels of ``enum('a','b')`` / ``set(...)`` as information_schema spells them."""
    match = re.match(r"(?:enum|set)\((.*)\)\s*$", column_type, re.IGNORECASE | re.DOTALL)
    if match is None:
        raise RenderError(f"not an ENUM/SET column type: {column_type!r}")
    body = match.group(1)
    members: list[str] = []
    pos = 0
    escapes = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "\\": "\\", "'": "'"}
    while pos < len(body):
        if body[pos] != "'":
            raise RenderError(f"cannot parse member list of {column_type!r} at {pos}")
        pos += 1
        label: list[str] = []
        while True:
            if pos >= len(body):
                raise RenderError(f"unterminated member in {column_type!r}")
            ch = body[pos]
            if ch == "\\" and pos + 1 < len(body):
                label.append(escapes.get(body[pos + 1], body[pos + 1]))
                pos += 2
            elif ch == "'":
                if body[pos + 1 : pos + 2] == "'":
                    label.append("'")
                    pos += 2
                else:
                    pos += 1
                    break
            else:
                label.append(ch)
                pos += 1
        members.append("".join(label))
        if pos < len(body):
            if body[pos] != ",":
                raise RenderError(f"cannot parse member list of {column_type!r} at {pos}")
            pos += 1
    return members


# --- the other types ----------------------------------------------------------------------


def _fraction(microsecond: int, fsp: int) -> str:
    if fsp <= 0:
        return ""
    return "." + f"{microsecond:06d}"[:fsp]


def _inet6_text(data: bytes) -> str:
    """Inet6::to_string: the longest run of zero words (the first if several; one word is
    enough) becomes '::'; ::a.b.c.d and ::ffff:a.b.c.d print their IPv4 part dotted."""
    words = [int.from_bytes(data[i : i + 2], "big") for i in range(0, 16, 2)]
    gap_pos, gap_len = -1, -1
    run_pos, run_len = -1, -1
    for i, word in enumerate(words):
        if word != 0:
            if run_pos >= 0:
                if run_len > gap_len:
                    gap_pos, gap_len = run_pos, run_len
                run_pos, run_len = -1, -1
        elif run_pos >= 0:
            run_len += 1
        else:
            run_pos, run_len = i, 1
    if run_pos >= 0 and run_len > gap_len:
        gap_pos, gap_len = run_pos, run_len
    out: list[str] = []
    i = 0
    while i < 8:
        if i == gap_pos:
            out.append("::" if i == 0 else ":")
            i += gap_len
            continue
        if i == 6 and gap_pos == 0 and (gap_len == 6 or (gap_len == 5 and words[5] == 0xFFFF)):
            out.append(".".join(str(b) for b in data[12:16]))
            break
        out.append(f"{words[i]:x}")
        if i + 1 != 8:
            out.append(":")
        i += 1
    return "".join(out)


def _uuid_text(data: bytes) -> str:
    h = data.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _display_width(column: ColumnInfo) -> int | None:
    match = re.match(r"\w+\((\d+)", column.column_type)
    return int(match.group(1)) if match else None


def _need(value: Any, types: type | tuple[type, ...], column: ColumnInfo) -> None:
    if not isinstance(value, types) or isinstance(value, bool):
        raise RenderError(
            f"column {column.name} ({column.column_type}) cannot hold a decoded"
            f" {type(value).__name__} {value!r:.80}"
        )


def _render_integer(value: Any, column: ColumnInfo) -> str:
    _need(value, int, column)
    size = _INT_BYTES[column.data_type]
    bits = 8 * size
    if column.unsigned:
        if value < 0:
            value += 1 << bits
        if not 0 <= value < 1 << bits:
            raise RenderError(f"{value} out of range for {column.column_type}")
    elif not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise RenderError(f"{value} out of range for {column.column_type}")
    text = str(value)
    if "zerofill" in column.column_type:
        width = _display_width(column)
        if width:
            text = text.rjust(width, "0")
    return text


def _render_decimal(value: Any, column: ColumnInfo) -> str:
    _need(value, Decimal, column)
    scale = column.numeric_scale or 0
    with localcontext() as ctx:
        ctx.prec = 200  # DECIMAL(65, 38) needs more than the default 28 digits
        quantized = value.quantize(Decimal(1).scaleb(-scale))
    if quantized != value:
        raise RenderError(f"{value} has more than {scale} fraction digits ({column.column_type})")
    if "zerofill" in column.column_type:
        raise RenderError(f"DECIMAL ZEROFILL rendering is not implemented ({column.name})")
    return format(quantized, "f")


def _render_real(value: Any, column: ColumnInfo) -> str:
    _need(value, float, column)
    if "zerofill" in column.column_type:
        raise RenderError(f"FLOAT/DOUBLE ZEROFILL rendering is not implemented ({column.name})")
    # FLOAT(M,D)/DOUBLE(M,D) have a scale; plain FLOAT/DOUBLE have none.
    if column.numeric_scale is not None:
        return fcvt(value, column.numeric_scale)
    if column.data_type == "float":
        return format_float(value)
    return format_double(value)


def _render_timestamp(value: Any, fsp: int, column: ColumnInfo) -> str:
    _need(value, Timestamp, column)
    if value.seconds == 0 and value.microsecond == 0:
        return "0000-00-00 00:00:00" + _fraction(0, fsp)
    moment = _dt.datetime.fromtimestamp(value.seconds, _dt.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond, fsp)


def _set_text(mask: int, members: list[str]) -> str:
    if mask >> len(members):
        raise RenderError(f"SET mask {mask:#x} has bits beyond its {len(members)} members")
    return ",".join(label for i, label in enumerate(members) if mask >> i & 1)


# The kinds whose text form is ASCII (the rest are sent as their bytes).
_TEXT_KINDS = frozenset(
    {*_INT_BYTES, "decimal", "float", "double", "year", "date", "time", "datetime", "timestamp"}
    | set(_FIXED_BINARY_SIZES)
)


def render(value: Any, column: ColumnInfo) -> bytes | None:
    """The text-protocol bytes of ``value`` (decoded from a row image) in ``column``.

    ``None`` (SQL NULL) renders as None. ``ABSENT`` (not in the image) cannot be rendered.
    Raises RenderError when the value cannot belong to the column.
    """
    if value is None:
        return None
    if value is ABSENT:
        raise RenderError(f"column {column.name} is not in the row image (ABSENT)")
    kind = column.data_type
    if kind in _TEXT_KINDS:
        return _render_as_text(value, column).encode("ascii")
    return _render_bytes(value, column)


def _render_as_text(value: Any, column: ColumnInfo) -> str:
    """A value whose text form is ASCII: numbers, temporal values, INET4/INET6/UUID."""
    kind = column.data_type
    fsp = column.datetime_precision or 0
    if kind in _INT_BYTES:
        return _render_integer(value, column)
    if kind == "decimal":
        return _render_decimal(value, column)
    if kind in ("float", "double"):
        return _render_real(value, column)
    if kind == "year":
        _need(value, int, column)
        return f"{value:04d}"
    if kind == "date":
        _need(value, Date, column)
        return str(value)
    if kind == "time":
        _need(value, Time, column)
        return str(value.format(fsp))
    if kind == "datetime":
        _need(value, DateTime, column)
        return str(value.format(fsp))
    if kind == "timestamp":
        return _render_timestamp(value, fsp, column)
    _need(value, bytes, column)
    size = _FIXED_BINARY_SIZES[kind]
    if len(value) > size:
        raise RenderError(f"{len(value)} bytes do not fit {kind.upper()} ({size} bytes)")
    data = value.ljust(size, b"\x00")
    if kind == "inet4":
        return ".".join(str(b) for b in data)
    if kind == "inet6":
        return _inet6_text(data)
    return _uuid_text(data)


def _render_bytes(value: Any, column: ColumnInfo) -> bytes:
    """A value sent as its bytes: BIT, ENUM and SET labels, binary and character strings."""
    kind = column.data_type
    codec = python_codec(column.character_set_name)
    if kind == "bit":
        _need(value, int, column)
        nbits = column.numeric_precision or 1
        if not 0 <= value < 1 << nbits:
            raise RenderError(f"{value} does not fit {column.column_type}")
        return bytes(value.to_bytes((nbits + 7) // 8, "big"))
    if kind in ("enum", "set"):
        _need(value, int, column)
        members = enum_members(column.column_type)
        if kind == "set":
            text = _set_text(value, members)
        elif not 0 <= value <= len(members):
            raise RenderError(f"ENUM index {value} beyond the {len(members)} members")
        else:
            text = "" if value == 0 else members[value - 1]
        return text.encode(codec) if codec else text.encode("utf-8")
    if kind == "binary":
        _need(value, bytes, column)
        size = column.character_octet_length or 0
        if len(value) > size:
            raise RenderError(f"{len(value)} bytes do not fit {column.column_type}")
        return bytes(value.ljust(size, b"\x00"))
    if kind in _TEXT_TYPES or kind in _GEOMETRY_TYPES:
        _need(value, bytes, column)
        return bytes(value)
    raise RenderError(f"rendering of {column.column_type!r} ({column.name}) is not implemented")
