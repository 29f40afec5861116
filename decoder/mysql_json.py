"""MySQL's binary JSON (the bytes of a JSON column written by MySQL) as Python values."""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from decoder.values import column_reader, time_from_hms, value_converter
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.values import DateTime

__all__ = ["JsonOpaque", "parse_mysql_json"]


class JsonOpaque(NamedTuple):
    """A MySQL-typed scalar inside a JSON document that has no JSON form (kept as stored)."""

    column_type: int
    data: bytes


_JSON_MAX_DEPTH = 100  # MySQL's own nesting limit
_JSON_INLINE_SMALL = frozenset({0x04, 0x05, 0x06})
_JSON_INLINE_LARGE = frozenset({0x04, 0x05, 0x06, 0x07, 0x08})
_JSON_SCALARS = {
    0x05: struct.Struct("<h"),
    0x06: struct.Struct("<H"),
    0x07: struct.Struct("<i"),
    0x08: struct.Struct("<I"),
    0x09: struct.Struct("<q"),
    0x0A: struct.Struct("<Q"),
    0x0B: struct.Struct("<d"),
}
_JSON_LITERALS: dict[int, Any] = {0: None, 1: True, 2: False}


def parse_mysql_json(document: bytes) -> Any:
    """The Python value of a MySQL binary JSON document (a JSON column's bytes).

    Objects become dicts, arrays lists, strings str; opaque DECIMAL becomes Decimal, DATE/
    DATETIME/TIMESTAMP DateTime, TIME Time, other opaque values JsonOpaque. An empty document
    (what MySQL stores for a JSON NULL written into a NOT NULL column) is None.

    Values are reached through offsets, and nothing in the format stops two offsets from naming
    the same bytes (MySQL's reader follows them; its writer never shares). Parsing is linear in
    the document: a value read at one offset is read once and the same object returned for
    every reference. The expanded value can still be exponentially larger than the bytes, so
    its size is bounded by what the bytes can hold: a document MySQL writes gives every value
    its own bytes (an entry of 3 or more bytes, and its payload), so the expanded value's
    weight (1 per value, plus the bytes of each string, opaque value and key) never exceeds the
    document's length; a document whose references expand past it raises DecodeError.
    """
    if not document:
        return None
    return _JsonReader(bytes(document)).value(document[0], 1, len(document), 0)


def _json_need(data: bytes, pos: int, size: int, end: int) -> None:
    if size < 0 or pos + size > end:
        raise DecodeError(f"truncated JSON value: {size} bytes needed", offset=pos)


def _json_varlen(data: bytes, pos: int, end: int) -> tuple[int, int]:
    length = 0
    for index in range(5):
        _json_need(data, pos, 1, end)
        byte = data[pos]
        pos += 1
        length |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return length, pos
    raise DecodeError("JSON string length longer than 5 bytes", offset=pos)


class _Parsed(NamedTuple):
    value: Any
    height: int  # container levels in the value (0 for a scalar)
    weight: int  # the size of the value once expanded (see parse_mysql_json)


class _JsonReader:
    """One document's values, each read once per (type, position, enclosing limit)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.budget = len(data)  # expanded weight still allowed
        self.seen: dict[tuple[int, int, int], _Parsed] = {}

    def value(self, kind: int, pos: int, end: int, depth: int) -> Any:
        return self._parsed(kind, pos, end, depth).value

    def _parsed(self, kind: int, pos: int, end: int, depth: int) -> _Parsed:
        key = (kind, pos, end)
        parsed = self.seen.get(key)
        if parsed is None:
            parsed = self._read(kind, pos, end, depth)
            self.seen[key] = parsed
        else:
            # Read before at another depth: its nesting and size count again here.
            self._spend(parsed.weight, pos)
        if depth + parsed.height > _JSON_MAX_DEPTH:
            raise DecodeError("JSON document nested too deeply", offset=pos)
        return parsed

    def _spend(self, weight: int, pos: int) -> None:
        self.budget -= weight
        if self.budget < 0:
            raise DecodeError(
                f"JSON document expands past its {len(self.data)} bytes"
                " (values referenced more than once)",
                offset=pos,
            )

    def _read(self, kind: int, pos: int, end: int, depth: int) -> _Parsed:
        data = self.data
        if kind <= 0x03:
            if depth >= _JSON_MAX_DEPTH:
                raise DecodeError("JSON document nested too deeply", offset=pos)
            return self._container(kind, pos, end, depth + 1)
        if kind == 0x04:
            _json_need(data, pos, 1, end)
            if data[pos] not in _JSON_LITERALS:
                raise DecodeError(f"invalid JSON literal {data[pos]}", offset=pos)
            return self._leaf(_JSON_LITERALS[data[pos]], 1, pos)
        scalar = _JSON_SCALARS.get(kind)
        if scalar is not None:
            _json_need(data, pos, scalar.size, end)
            return self._leaf(scalar.unpack_from(data, pos)[0], 1, pos)
        if kind == 0x0C:
            length, pos = _json_varlen(data, pos, end)
            _json_need(data, pos, length, end)
            text = data[pos : pos + length].decode("utf-8", "surrogateescape")
            return self._leaf(text, 1 + length, pos)
        if kind == 0x0F:
            _json_need(data, pos, 1, end)
            column_type = data[pos]
            length, pos = _json_varlen(data, pos + 1, end)
            _json_need(data, pos, length, end)
            opaque = _json_opaque(column_type, data[pos : pos + length], pos)
            return self._leaf(opaque, 1 + length, pos)
        raise DecodeError(f"invalid JSON value type {kind}", offset=pos - 1)

    def _leaf(self, value: Any, weight: int, pos: int) -> _Parsed:
        self._spend(weight, pos)
        return _Parsed(value, 0, weight)

    def _container(self, kind: int, start: int, end: int, depth: int) -> _Parsed:
        data = self.data
        large = kind in (0x01, 0x03)
        is_object = kind in (0x00, 0x01)
        offset_size = 4 if large else 2
        count_format = "<I" if large else "<H"
        _json_need(data, start, 2 * offset_size, end)
        count = struct.unpack_from(count_format, data, start)[0]
        size = struct.unpack_from(count_format, data, start + offset_size)[0]
        _json_need(data, start, size, end)
        limit = start + size
        key_entry = offset_size + 2
        value_entry = 1 + offset_size
        header = 2 * offset_size + count * (value_entry + (key_entry if is_object else 0))
        if header > size:
            raise DecodeError(
                f"JSON container header of {header} bytes > its size {size}", offset=start
            )
        self._spend(1, start)
        weight = 1
        height = 0
        inline = _JSON_INLINE_LARGE if large else _JSON_INLINE_SMALL
        values_at = start + 2 * offset_size + (count * key_entry if is_object else 0)
        values = []
        for index in range(count):
            entry = values_at + index * value_entry
            value_kind = data[entry]
            if value_kind in inline:
                child = self._read(value_kind, entry + 1, entry + value_entry, depth)
            else:
                offset = struct.unpack_from(count_format, data, entry + 1)[0]
                if offset < header or offset >= size:
                    raise DecodeError(
                        f"JSON value offset {offset} outside its container", offset=entry
                    )
                child = self._parsed(value_kind, start + offset, limit, depth)
            values.append(child.value)
            weight += child.weight
            height = max(height, child.height)
        if not is_object:
            return _Parsed(values, height + 1, weight)
        result = {}
        for index in range(count):
            entry = start + 2 * offset_size + index * key_entry
            key_offset = struct.unpack_from(count_format, data, entry)[0]
            key_length = struct.unpack_from("<H", data, entry + offset_size)[0]
            if key_offset < header:
                raise DecodeError(f"JSON key offset {key_offset} inside the header", offset=entry)
            _json_need(data, start + key_offset, key_length, limit)
            self._spend(key_length, entry)
            weight += key_length
            key = data[start + key_offset : start + key_offset + key_length]
            result[key.decode("utf-8", "surrogateescape")] = values[index]
        return _Parsed(result, height + 1, weight)


def _json_opaque(column_type: int, data: bytes, pos: int) -> Any:
    if column_type == ColumnType.NEWDECIMAL:
        if len(data) < 2:
            raise DecodeError("truncated DECIMAL in JSON", offset=pos)
        reader = column_reader(ColumnType.NEWDECIMAL, data[0] | data[1] << 8)
        if len(data) - 2 != reader.size:
            raise DecodeError("DECIMAL in JSON has the wrong size", offset=pos)
        return value_converter(reader.code)(data[2:])
    if column_type in (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.TIME):
        if len(data) < 8:
            raise DecodeError("truncated temporal value in JSON", offset=pos)
        packed = int.from_bytes(data[:8], "little", signed=True)
        negative = packed < 0
        packed = abs(packed)
        intpart, microsecond = packed >> 24, packed & 0xFFFFFF
        if column_type == ColumnType.TIME:
            return time_from_hms(negative, intpart, microsecond)
        ymd, hms = intpart >> 17, intpart & 0x1FFFF
        return DateTime(
            (ymd >> 5) // 13,
            (ymd >> 5) % 13,
            ymd & 31,
            hms >> 12,
            (hms >> 6) & 63,
            hms & 63,
            microsecond,
        )
    return JsonOpaque(column_type, data)
