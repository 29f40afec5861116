"""Whole row images of ROWS events, read by compiled functions (the column values are read as
decoder/values.py says).

Row images are decoded by a function generated per table shape and column-present bitmap(s):
straight-line code with fixed-size columns fused into one ``struct`` call when the image has no
NULLs, and a per-column path otherwise. A bitmap is compiled the second time it is seen (the
first time an interpreted reader does the same work), and compiled readers are cached per table
shape, so a TABLE_MAP repeated before every statement costs a dictionary look-up.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from decoder.primitives import U32
from decoder.values import (
    CODE_GLOBALS,
    ColumnReader,
    column_reader,
    fill_template,
    value_converter,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.table_shapes import TableShapeCache
from fakemaster.vocabulary.values import ABSENT

__all__ = [
    "RowsReader",
    "TableDecoder",
    "compile_rows_reader",
    "interpreted_rows_reader",
    "table_decoder",
]

_from_bytes = int.from_bytes

RowsReader = Callable[[bytes, int, int], list[Any]]
_StructError = struct.error


def _truncated(offset: int) -> DecodeError:
    return DecodeError("truncated row image", offset=offset)


class _CodeWriter:
    """Source of one generated reader and the objects it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = dict(CODE_GLOBALS)
        self.names.update(
            _ABSENT=ABSENT,
            _StructError=_StructError,
            _DecodeError=DecodeError,
            _truncated=_truncated,
            _u32=U32.unpack_from,
        )
        self._ids: dict[str, str] = {}

    def unpacker(self, fmt: str) -> str:
        found = self._ids.get(fmt)
        if found is None:
            found = f"_s{len(self._ids)}"
            self._ids[fmt] = found
            self.names[found] = struct.Struct(fmt).unpack_from
        return found

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def convert(self, indent: int, reader: ColumnReader, var: str) -> None:
        for line in reader.code:
            self.emit(indent, fill_template(line, var))


def _emit_variable(code: _CodeWriter, indent: int, var: str, prefix: int) -> None:
    if prefix == 1:
        length = "data[pos]"
    elif prefix == 2:
        length = "(data[pos] | data[pos + 1] << 8)"
    elif prefix == 3:
        length = "(data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16)"
    else:
        length = "_u32(data, pos)[0]"
    code.emit(indent, f"e = pos + {prefix} + {length}")
    code.emit(indent, f"{var} = data[pos + {prefix}:e]")
    code.emit(indent, "pos = e")


def _emit_image(
    code: _CodeWriter,
    indent: int,
    readers: Sequence[ColumnReader],
    present: Sequence[int],
    width: int,
    image: str,
) -> None:
    """Statements that read one image at ``pos`` into the tuple variable ``r{image}``."""
    var = [f"{image}{column}" for column in range(width)]
    present_set = set(present)
    null_bytes = (len(present) + 7) >> 3
    if not present:
        code.emit(indent, f"r{image} = ({'_ABSENT, ' * width})")
        return
    if null_bytes == 1:
        code.emit(indent, "nulls = data[pos]")
    else:
        code.emit(indent, f"nulls = _fb(data[pos:pos + {null_bytes}], 'little')")
    code.emit(indent, f"pos += {null_bytes}")

    # No NULLs: consecutive fixed-size values are read by one struct call.
    code.emit(indent, f"if not nulls & {(1 << len(present)) - 1}:")
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        fmt = "<" + "".join(readers[column].fmt for column in run)
        size = sum(readers[column].size for column in run)
        targets = ", ".join(var[column] for column in run) + ","
        code.emit(indent + 1, f"{targets} = {code.unpacker(fmt)}(data, pos)")
        code.emit(indent + 1, f"pos += {size}")
        run.clear()

    for column in present:
        reader = readers[column]
        if reader.fmt:
            run.append(column)
        else:
            flush()
            _emit_variable(code, indent + 1, var[column], reader.size)
    flush()
    for column in present:
        code.convert(indent + 1, readers[column], var[column])
    items = [var[column] if column in present_set else "_ABSENT" for column in range(width)]
    code.emit(indent + 1, f"r{image} = ({', '.join(items)},)")

    code.emit(indent, "else:")
    for bit, column in enumerate(present):
        reader = readers[column]
        code.emit(indent + 1, f"if nulls & {1 << bit}:")
        code.emit(indent + 2, f"{var[column]} = None")
        code.emit(indent + 1, "else:")
        if reader.fmt:
            unpack = code.unpacker("<" + reader.fmt)
            code.emit(indent + 2, f"{var[column]} = {unpack}(data, pos)[0]")
            code.emit(indent + 2, f"pos += {reader.size}")
            code.convert(indent + 2, reader, var[column])
        else:
            _emit_variable(code, indent + 2, var[column], reader.size)
    items = [var[column] if column in present_set else "_ABSENT" for column in range(width)]
    code.emit(indent + 1, f"r{image} = ({', '.join(items)},)")


def _present_columns(mask: int, width: int) -> tuple[int, ...]:
    return tuple(column for column in range(width) if mask >> column & 1)


def compile_rows_reader(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> RowsReader:
    """A function ``(data, pos, end) -> rows`` reading every row image from ``pos`` to ``end``.

    ``present``/``present_after`` are the column-present bitmaps as integers; with
    ``present_after`` each row is a ``(before, after)`` pair. Offsets of its DecodeErrors are
    positions in ``data``.
    """
    before = _present_columns(present, width)
    after = None if present_after is None else _present_columns(present_after, width)
    if not before and not after:
        return _empty_images_reader
    code = _CodeWriter()
    code.emit(0, "def read_rows(data, pos, end):")
    code.emit(1, "rows = []")
    code.emit(1, "append = rows.append")
    code.emit(1, "start = pos")
    code.emit(1, "try:")
    code.emit(2, "while pos < end:")
    code.emit(3, "start = pos")
    _emit_image(code, 3, readers, before, width, "a")
    if after is None:
        code.emit(3, "append(ra)")
    else:
        _emit_image(code, 3, readers, after, width, "b")
        code.emit(3, "append((ra, rb))")
    code.emit(1, "except (IndexError, _StructError):")
    code.emit(2, "raise _truncated(start) from None")
    code.emit(1, "except _DecodeError as exc:")
    code.emit(2, "raise exc.relocated(start) from None")
    code.emit(1, "if pos != end:")
    code.emit(2, "raise _truncated(start)")
    code.emit(1, "return rows")
    source = "\n".join(code.lines) + "\n"
    namespace = code.names
    exec(compile(source, f"<rows reader {width} columns>", "exec"), namespace)
    reader: RowsReader = namespace["read_rows"]
    return reader


def _empty_images_reader(data: bytes, pos: int, end: int) -> list[Any]:
    # Rows without a single column take no bytes: there is no telling how many there are.
    if pos != end:
        raise DecodeError(f"{end - pos} bytes of rows whose images have no columns", offset=pos)
    return []


def interpreted_rows_reader(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> RowsReader:
    """The same function as :func:`compile_rows_reader` gives, without generating code: for
    bitmaps seen once (compiling costs more than reading a few rows)."""
    masks = [present] if present_after is None else [present, present_after]
    images = []
    for mask in masks:
        columns = []
        for column in _present_columns(mask, width):
            reader = readers[column]
            unpack = struct.Struct("<" + reader.fmt).unpack_from if reader.fmt else None
            convert = value_converter(reader.code) if reader.code else None
            columns.append((column, unpack, reader.size, convert))
        images.append((tuple(columns), (len(columns) + 7) >> 3))
    if not any(columns for columns, _ in images):
        return _empty_images_reader

    def read_rows(data: bytes, pos: int, end: int) -> list[Any]:
        rows: list[Any] = []
        start = pos
        try:
            while pos < end:
                start = pos
                values = []
                for columns, null_bytes in images:
                    nulls = _from_bytes(data[pos : pos + null_bytes], "little")
                    pos += null_bytes
                    row: list[Any] = [ABSENT] * width
                    for bit, (column, unpack, size, convert) in enumerate(columns):
                        if nulls >> bit & 1:
                            row[column] = None
                        elif unpack is not None:
                            value = unpack(data, pos)[0]
                            pos += size
                            row[column] = value if convert is None else convert(value)
                        else:
                            value_end = pos + size + _from_bytes(data[pos : pos + size], "little")
                            row[column] = data[pos + size : value_end]
                            pos = value_end
                    values.append(tuple(row))
                rows.append(values[0] if len(values) == 1 else (values[0], values[1]))
        except (IndexError, _StructError):
            raise _truncated(start) from None
        except DecodeError as exc:
            raise exc.relocated(start) from None
        if pos != end:
            raise _truncated(start)
        return rows

    return read_rows


class TableDecoder:
    """Row-image readers of one table shape, per column-present bitmap(s).

    A bitmap seen for the first time is read by the interpreted reader; from the second time on,
    by a compiled one (a MINIMAL-image workload can show many bitmaps once each).
    """

    MAX_READERS = 256

    def __init__(
        self,
        column_types: tuple[int, ...],
        column_meta: tuple[int, ...],
        unsigned: tuple[bool, ...],
    ) -> None:
        self.column_types = column_types
        self.column_meta = column_meta
        self.unsigned = unsigned
        self._columns: list[ColumnReader] | None = None
        self._readers: dict[tuple[int, int, int | None], RowsReader] = {}
        self._seen_once: set[tuple[int, int, int | None]] = set()

    def columns(self) -> list[ColumnReader]:
        if self._columns is None:
            readers = []
            for index, (column_type, meta, unsigned) in enumerate(
                zip(self.column_types, self.column_meta, self.unsigned, strict=True)
            ):
                try:
                    readers.append(column_reader(column_type, meta, unsigned))
                except DecodeError as exc:
                    raise DecodeError(f"column {index}: {exc.reason}") from None
            self._columns = readers
        return self._columns

    def rows_reader(self, width: int, present: int, present_after: int | None) -> RowsReader:
        key = (width, present, present_after)
        reader = self._readers.get(key)
        if reader is not None:
            return reader
        columns = self.columns()[:width]
        if key not in self._seen_once:
            if len(self._seen_once) >= self.MAX_READERS:
                self._seen_once.clear()
            self._seen_once.add(key)
            return interpreted_rows_reader(columns, width, present, present_after)
        if len(self._readers) >= self.MAX_READERS:
            self._readers.clear()
        reader = compile_rows_reader(columns, width, present, present_after)
        self._readers[key] = reader
        return reader


table_decoder = TableShapeCache(TableDecoder).get
