"""A table shape's columns: each column's raw-value reader and Arrow conversion (per value and,
with numpy, per column), its scanners and Arrow fields, cached per table shape
(``columnar_shape``).
"""

from __future__ import annotations

from typing import Any

from decoder.columnar.arrow_types import (
    _TEMPORAL_KIND,
    IntConverter,
    ListConverter,
    _Column,
    _date_converter,
    _datetime2_converter,
    _decimal_converter,
    _nulls,
    _objects_converter,
    _timestamp2_converter,
    arrow_type,
)
from decoder.columnar.libraries import _np, _pa
from decoder.columnar.numeric import (
    _by_matrix,
    _date_vector,
    _datetime2_vector,
    _decimal_vector,
    _decimal_words,
    _int_vector,
    _time2_vector,
    _timestamp2_vector,
    _values_vector,
    _wide_decimal_vector,
    _year_vector,
)
from decoder.columnar.scanner import Scanner, compile_scanner
from decoder.row_images import TableDecoder
from decoder.values import ColumnReader, column_reader
from fakemaster.vocabulary.columns import HIRES_TYPES
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.table_shapes import TableShapeCache

__all__ = [
    "ColumnarShape",
    "columnar_shape",
]


# The row decoder's statements for an unsigned 8-byte value read as bytes (BIT(64), SET of 64
# members), and its byte order.
_WORD_CODES = {
    ("{v} = _fb({v}, 'big')",): ">",
    ("{v} = _fb({v}, 'little')",): "<",
}


def _column(column_type: int, meta: int, unsigned: bool) -> tuple[ColumnReader, _Column]:
    """The reader of a column's raw value in a row image and its Arrow conversion."""
    base = column_reader(column_type, meta, unsigned)
    reader, column, integer = _column_parts(base, column_type, meta, unsigned)
    if integer is not None and _np() is not None and 0 < reader.size <= 8:
        column.integer = integer
    return reader, column


def _integer_column(
    arrow: Any,
    convert: ListConverter | None,
    integer: IntConverter,
    order: str,
    size: int,
) -> tuple[_Column, tuple[str, IntConverter]]:
    """A column whose raw values of ``size`` bytes are unsigned integers in byte ``order``,
    converted by ``integer``."""
    matrix = _by_matrix(integer, order)
    return _Column(arrow, convert, False, _values_vector(matrix, size), matrix), (order, integer)


def _column_parts(
    base: ColumnReader, column_type: int, meta: int, unsigned: bool
) -> tuple[ColumnReader, _Column, tuple[str, IntConverter] | None]:
    arrow = arrow_type(column_type, meta, unsigned)
    raw = ColumnReader(base.fmt, base.size)
    size = base.size
    if column_type == ColumnType.NEWDECIMAL:
        precision, scale = meta & 0xFF, meta >> 8
        narrow = _decimal_vector(precision, scale, arrow)
        convert = _decimal_converter(precision, scale)
        if narrow is not None:
            matrix = _by_matrix(narrow, ">")
            column = _Column(arrow, convert, True, _values_vector(matrix, size), matrix)
            return raw, column, (">", narrow)
        matrix = _wide_decimal_vector(precision, scale, arrow)
        return raw, _Column(arrow, convert, True, _values_vector(matrix, size), matrix), None
    if column_type in HIRES_TYPES and meta:  # MariaDB 5.3 formats
        return raw, _Column(arrow, _objects_converter(base.code), False), None
    if column_type == ColumnType.DATETIME2:
        convert = _datetime2_converter(meta, base.code)
        return raw, *_integer_column(arrow, convert, _datetime2_vector(meta, arrow), ">", size)
    if column_type == ColumnType.TIMESTAMP2:
        convert = _timestamp2_converter(meta, base.code)
        return raw, *_integer_column(arrow, convert, _timestamp2_vector(meta, arrow), ">", size)
    if column_type in (ColumnType.DATE, ColumnType.NEWDATE):
        return raw, *_integer_column(arrow, _date_converter, _date_vector(arrow), "<", 3)
    if column_type == ColumnType.TIME2:
        convert = _objects_converter(base.code)
        return raw, *_integer_column(arrow, convert, _time2_vector(meta, arrow), ">", size)
    if column_type in _TEMPORAL_KIND:  # old TIME/DATETIME/TIMESTAMP
        return raw, _Column(arrow, _objects_converter(base.code), False), None
    if column_type == ColumnType.NULL:
        return base, _Column(arrow, _nulls, False), None
    if _pa().types.is_decimal(arrow):  # BIGINT UNSIGNED, BIT(64), SET of 64 members
        code = base.code
        if _np() is not None and base.fmt == "8s" and code in _WORD_CODES:
            word_order = _WORD_CODES[code]
            words = _decimal_words(arrow)
            matrix = _by_matrix(words, word_order)
            return base, _Column(arrow, None, True, None, matrix), (word_order, words)
        return base, _Column(arrow, None, True), None
    if _np() is not None and size:
        integer: IntConverter | None = None
        order = "<"
        if base.code == ("{v} = {v} + 1900 if {v} else 0",):  # YEAR
            integer = _year_vector(arrow)
        elif base.fmt == f"{size}s" and len(base.code) == 1:
            little = base.code[0].startswith("{v} = _fb({v}, 'little'")
            big = base.code[0] == "{v} = _fb({v}, 'big')"
            if little or big:  # MEDIUMINT, BIT, ENUM, SET (int.from_bytes)
                signed = base.code[0].endswith("signed=True)")
                integer = _int_vector(size, signed, arrow)
                order = "<" if little else ">"
        if integer is not None:
            matrix = _by_matrix(integer, order)
            return base, _Column(arrow, None, False, None, matrix), (order, integer)
    return base, _Column(arrow, None, False), None


class ColumnarShape(TableDecoder):
    """A table shape's row-image readers giving raw column values (decimals and temporal
    values as their bytes), and its columns' Arrow conversions."""

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
    ) -> None:
        super().__init__(column_types, column_meta, unsigned)
        self._arrow: list[_Column] | None = None
        self._scanners: dict[tuple[int, int, int | None], Scanner] = {}
        self._fields: dict[tuple[str, ...], tuple[list[Any], Any]] = {}

    def _build(self) -> None:
        readers, columns = [], []
        for index, spec in enumerate(
            zip(self.column_types, self.column_meta, self.unsigned, strict=True)
        ):
            try:
                reader, column = _column(*spec)
            except DecodeError as exc:
                raise DecodeError(f"column {index}: {exc.reason}") from None
            readers.append(reader)
            columns.append(column)
        self._columns, self._arrow = readers, columns

    def columns(self) -> list[ColumnReader]:
        if self._columns is None:
            self._build()
        assert self._columns is not None
        return self._columns

    def scanner(self, width: int, present: int, present_after: int | None) -> Scanner:
        key = (width, present, present_after)
        scanner = self._scanners.get(key)
        if scanner is None:
            if len(self._scanners) >= self.MAX_READERS:
                self._scanners.clear()
            scanner = compile_scanner(self.columns()[:width], width, present, present_after)
            self._scanners[key] = scanner
        return scanner

    def arrow_columns(self) -> list[_Column]:
        if self._arrow is None:
            self._build()
        assert self._arrow is not None
        return self._arrow

    def arrow_fields(self, names: tuple[str, ...]) -> tuple[list[Any], Any]:
        """The Arrow fields of the first ``len(names)`` columns so named, and their struct."""
        found = self._fields.get(names)
        if found is None:
            pa = _pa()
            columns = self.arrow_columns()[: len(names)]
            fields = [pa.field(name, c.arrow) for name, c in zip(names, columns, strict=True)]
            if len(self._fields) >= self.MAX_READERS:
                self._fields.clear()
            found = self._fields[names] = (fields, pa.struct(fields))
        return found


columnar_shape = TableShapeCache(ColumnarShape).get
