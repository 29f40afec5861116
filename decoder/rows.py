"""TABLE_MAP and ROWS events (mirror of encoder/rows.py).

TABLE_MAP optional metadata TLVs are decoded into typed values by kind:

* SIGNEDNESS: ``tuple[bool, ...]``, one per numeric column (MSB-first bits, 1 = unsigned);
* DEFAULT_CHARSET, ENUM_AND_SET_DEFAULT_CHARSET:
  ``(default_collation, ((index, collation), ...))``;
* COLUMN_CHARSET, ENUM_AND_SET_COLUMN_CHARSET, GEOMETRY_TYPE, SIMPLE_PRIMARY_KEY:
  ``tuple[int, ...]``;
* COLUMN_NAME: ``tuple[bytes, ...]``; SET_STR_VALUE, ENUM_STR_VALUE:
  ``tuple[tuple[bytes, ...], ...]``; PRIMARY_KEY_WITH_PREFIX: ``tuple[tuple[int, int], ...]``.

Any other kind, and any value whose bytes are not what encoding its typed form would give
(non-minimal packed integers, bitmap padding, a wrong bitmap size), is kept as raw ``bytes``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from decoder.builders import event_builder
from decoder.compression import decompress_record
from decoder.primitives import U16, Buffer, name_text, need, read_packed_int
from fakemaster.vocabulary.columns import (
    METADATA_FORMS,
    METADATA_SIZE,
    NUMERIC_TYPES,
    MetadataForm,
    schema_precisions,
    type_name,
)
from fakemaster.vocabulary.constants import ColumnType, EventType, OptionalMetadata
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    ROWS_EVENT_CLASSES,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
)
from fakemaster.vocabulary.header import EventHeader

if TYPE_CHECKING:
    # The row images' readers (and the value decoders under them) are loaded by the first ROWS
    # event: reading the TABLE_MAPs of a binlog (the served-facts scan before ``serve``
    # listens, issue #25) does without them.
    from decoder.row_images import TableDecoder

__all__ = [
    "DECODERS",
    "RowsHeader",
    "decode_rows",
    "decode_table_map",
    "read_row_images",
    "read_rows_header",
]

# --- TABLE_MAP ----------------------------------------------------------------------------


def _read_name(body: Buffer, pos: int, what: str) -> tuple[str, int]:
    need(body, pos, 1, f"{what} length")
    length = body[pos]
    need(body, pos + 1, length + 1, what)
    if body[pos + 1 + length] != 0:
        raise DecodeError(f"{what} is not NUL-terminated", offset=pos + 1 + length)
    return name_text(bytes(body[pos + 1 : pos + 1 + length])), pos + 2 + length


# A server writes the same TABLE_MAP before every statement on a table: decode its body once.
# Sharing the decoded tuples also lets the row decoder be found by identity.
_PARSED: dict[tuple[int, bytes], tuple[Any, ...]] = {}
_TABLE_MAP_FIELDS = ("table_id", "table_flags", "database", "table", "column_types",
                     "column_meta", "nullable", "optional_metadata")  # fmt: skip
_HEADER_FIELDS = ("timestamp", "server_id", "log_pos", "flags")
_new_table_map = event_builder(TableMapEvent, _HEADER_FIELDS + _TABLE_MAP_FIELDS)
_MAX_PARSED = 1024


def decode_table_map(body: Buffer, header: EventHeader, ctx: BinlogContext) -> TableMapEvent:
    key = (ctx.table_id_size, bytes(body))
    fields = _PARSED.get(key)
    if fields is None:
        fields = _parse_table_map(key[1], ctx.table_id_size)
        if len(_PARSED) >= _MAX_PARSED:
            _PARSED.clear()
        _PARSED[key] = fields
    event: TableMapEvent = _new_table_map(header[0], header[2], header[4], header[5], *fields)
    return event


def _parse_table_map(body: bytes, id_size: int) -> tuple[Any, ...]:
    """The TABLE_MAP's fields after the header, in _TABLE_MAP_FIELDS' order."""
    need(body, 0, id_size + 2, "TABLE_MAP post-header")
    table_id = int.from_bytes(body[:id_size], "little")
    table_flags = U16.unpack_from(body, id_size)[0]
    pos = id_size + 2
    database, pos = _read_name(body, pos, "database name")
    table, pos = _read_name(body, pos, "table name")
    count, pos = read_packed_int(body, pos)
    need(body, pos, count, "column types")
    column_types = bytes(body[pos : pos + count])
    pos += count
    meta_length, pos = read_packed_int(body, pos)
    need(body, pos, meta_length, "column metadata")
    meta_end = pos + meta_length
    column_meta = []
    for index, column_type in enumerate(column_types):
        size = METADATA_SIZE.get(column_type)
        if size is None:
            raise DecodeError(f"column {index} has unknown type {column_type}", offset=pos)
        if pos + size > meta_end:
            raise DecodeError(
                f"column metadata is {meta_length} bytes, column {index} "
                f"({type_name(column_type)}) needs more",
                offset=pos,
            )
        column_meta.append(int.from_bytes(body[pos : pos + size], "little"))
        pos += size
    if pos != meta_end:
        used = meta_length - (meta_end - pos)
        raise DecodeError(
            f"column metadata is {meta_length} bytes, the columns use {used}", offset=pos
        )
    null_size = (count + 7) >> 3
    need(body, pos, null_size, "NULL-able bitmap")
    nulls = int.from_bytes(body[pos : pos + null_size], "little")
    nullable = tuple(bool(nulls >> column & 1) for column in range(count))
    pos += null_size
    optional = _decode_optional_metadata(body, pos, column_types)
    return (
        table_id,
        table_flags,
        database,
        table,
        tuple(column_types),
        tuple(column_meta),
        nullable,
        optional,
    )


def _decode_optional_metadata(
    body: Buffer, pos: int, column_types: bytes
) -> tuple[MetadataField, ...]:
    fields = []
    numeric_count = sum(1 for column_type in column_types if column_type in NUMERIC_TYPES)
    end = len(body)
    while pos < end:
        kind = body[pos]
        length, value_pos = read_packed_int(body, pos + 1)
        need(body, value_pos, length, f"optional metadata field {kind}")
        raw = bytes(body[value_pos : value_pos + length])
        fields.append(MetadataField(kind, _typed_metadata(kind, raw, numeric_count)))
        pos = value_pos + length
    return tuple(fields)


class _NotCanonical(Exception):
    """The bytes of a metadata value are not what encoding its typed form would give."""


def _packed(raw: bytes, pos: int) -> tuple[int, int]:
    """A packed integer that must be in its shortest form."""
    if pos >= len(raw):
        raise _NotCanonical
    first = raw[pos]
    if first < 251:
        return first, pos + 1
    if first == 0xFC:
        size, floor = 2, 251
    elif first == 0xFD:
        size, floor = 3, 1 << 16
    elif first == 0xFE:
        size, floor = 8, 1 << 24
    else:
        raise _NotCanonical
    if pos + 1 + size > len(raw):
        raise _NotCanonical
    value = int.from_bytes(raw[pos + 1 : pos + 1 + size], "little")
    if value < floor:
        raise _NotCanonical
    return value, pos + 1 + size


def _packed_string(raw: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = _packed(raw, pos)
    if pos + length > len(raw):
        raise _NotCanonical
    return raw[pos : pos + length], pos + length


def _ints(raw: bytes) -> tuple[int, ...]:
    values = []
    pos = 0
    while pos < len(raw):
        value, pos = _packed(raw, pos)
        values.append(value)
    return tuple(values)


def _int_pairs(raw: bytes) -> tuple[tuple[int, int], ...]:
    values = _ints(raw)
    if len(values) % 2:
        raise _NotCanonical
    return tuple(zip(values[::2], values[1::2], strict=True))


def _default_charset(raw: bytes) -> tuple[int, tuple[tuple[int, int], ...]]:
    values = _ints(raw)
    if not values or len(values) % 2 != 1:
        raise _NotCanonical
    return values[0], tuple(zip(values[1::2], values[2::2], strict=True))


def _strings(raw: bytes) -> tuple[bytes, ...]:
    values = []
    pos = 0
    while pos < len(raw):
        value, pos = _packed_string(raw, pos)
        values.append(value)
    return tuple(values)


def _string_lists(raw: bytes) -> tuple[tuple[bytes, ...], ...]:
    columns = []
    pos = 0
    while pos < len(raw):
        count, pos = _packed(raw, pos)
        members = []
        for _ in range(count):
            member, pos = _packed_string(raw, pos)
            members.append(member)
        columns.append(tuple(members))
    return tuple(columns)


def _signedness(raw: bytes, numeric_count: int) -> tuple[bool, ...]:
    if len(raw) != (numeric_count + 7) >> 3:
        raise _NotCanonical
    bits = int.from_bytes(raw, "big")
    padding = len(raw) * 8 - numeric_count
    if bits & ((1 << padding) - 1):
        raise _NotCanonical
    bits >>= padding
    return tuple(bool(bits >> (numeric_count - 1 - k) & 1) for k in range(numeric_count))


_FORM_READERS: dict[MetadataForm, Callable[[bytes], Any]] = {
    MetadataForm.INTS: _ints,
    MetadataForm.INT_PAIRS: _int_pairs,
    MetadataForm.DEFAULT_CHARSET: _default_charset,
    MetadataForm.STRINGS: _strings,
    MetadataForm.STRING_LISTS: _string_lists,
}
_TYPED = {kind: _FORM_READERS[form] for kind, form in METADATA_FORMS.items()}


def _typed_metadata(kind: int, raw: bytes, numeric_count: int) -> Any:
    try:
        if kind == OptionalMetadata.SIGNEDNESS:
            return _signedness(raw, numeric_count)
        parse = _TYPED.get(kind)
        return raw if parse is None else parse(raw)
    except _NotCanonical:
        return raw


# --- ROWS ---------------------------------------------------------------------------------


class RowsHeader(NamedTuple):
    """What a ROWS event says before its row images (the post-header and the bitmaps)."""

    cls: type[RowsEvent]
    version: int
    compressed: bool
    table_map: TableMapEvent
    table_id: int
    rows_flags: int
    extra_data: bytes
    width: int
    columns_present: bytes
    columns_present_after: bytes  # b"" unless UPDATE
    present: int  # the bitmap as an integer, cut to ``width`` bits
    present_after: int | None  # None unless UPDATE
    images_start: int  # where the row images start in the body


def read_rows_header(body: Buffer, type_code: int, ctx: BinlogContext) -> RowsHeader:
    """The post-header and bitmaps of a ROWS event body (of type ``type_code``)."""
    cls, version, compressed = ROWS_EVENT_CLASSES[type_code]
    id_size = ctx.table_id_size
    need(body, 0, id_size + 2, "ROWS post-header")
    table_id = int.from_bytes(body[:id_size], "little")
    rows_flags = U16.unpack_from(body, id_size)[0]
    pos = id_size + 2
    extra_data = b""
    if version == 2:
        need(body, pos, 2, "ROWS extra data length")
        extra_length = U16.unpack_from(body, pos)[0]
        if extra_length < 2:
            raise DecodeError(
                f"ROWS extra data length {extra_length} is less than its own 2 bytes", offset=pos
            )
        need(body, pos + 2, extra_length - 2, "ROWS extra data")
        extra_data = bytes(body[pos + 2 : pos + extra_length])
        pos += extra_length
    table_map = ctx.table_maps.get(table_id)
    if table_map is None:
        raise DecodeError(f"no TABLE_MAP for table id {table_id}", offset=0)
    width, pos = read_packed_int(body, pos)
    if width > len(table_map.column_types):
        raise DecodeError(
            f"rows event has {width} columns, the TABLE_MAP of table id {table_id} "
            f"has {len(table_map.column_types)}",
            offset=pos - 1,
        )
    bitmap_size = (width + 7) >> 3
    need(body, pos, bitmap_size, "columns-present bitmap")
    columns_present = bytes(body[pos : pos + bitmap_size])
    pos += bitmap_size
    is_update = cls is UpdateRowsEvent
    columns_present_after = b""
    if is_update:
        need(body, pos, bitmap_size, "columns-present bitmap of the after image")
        columns_present_after = bytes(body[pos : pos + bitmap_size])
        pos += bitmap_size
    all_columns = (1 << width) - 1
    present = int.from_bytes(columns_present, "little") & all_columns
    present_after = (
        int.from_bytes(columns_present_after, "little") & all_columns if is_update else None
    )
    return RowsHeader(
        cls,
        version,
        compressed,
        table_map,
        table_id,
        rows_flags,
        extra_data,
        width,
        columns_present,
        columns_present_after,
        present,
        present_after,
        pos,
    )


def read_row_images(
    body: Buffer, rows_header: RowsHeader, ctx: BinlogContext, decoder: TableDecoder
) -> list[Any]:
    """The row images of a ROWS event body read by ``decoder``'s reader for its bitmaps (a
    TableDecoder of the event's table, or one giving other column readers)."""
    table_map, width, pos = rows_header.table_map, rows_header.width, rows_header.images_start
    try:
        reader = decoder.rows_reader(width, rows_header.present, rows_header.present_after)
    except DecodeError as exc:
        raise DecodeError(f"table id {rows_header.table_id}: {exc.reason}", offset=pos) from None
    if rows_header.compressed:
        data = decompress_record(body, pos, ctx.max_uncompressed_length)
        try:
            return reader(data, 0, len(data))
        except DecodeError as exc:
            raise DecodeError(
                f"{exc.reason} (at {exc.offset} in the uncompressed rows)"
                + _hires_hint(table_map, width),
                offset=pos,
            ) from None
    data = bytes(body[pos:])
    try:
        return reader(data, 0, len(data))
    except DecodeError as exc:
        raise DecodeError(
            exc.reason + _hires_hint(table_map, width), offset=exc.offset + pos
        ) from None


# A server writes the same post-header and bitmaps before the rows of every statement on a
# table: the last ones parsed per (type code, table id), with the table's row decoder.
_TEMPLATES: dict[tuple[int, bytes], tuple[bytes, RowsHeader, TableDecoder]] = {}


def _rows_header(
    body: Buffer, type_code: int, ctx: BinlogContext
) -> tuple[RowsHeader, TableDecoder]:
    """read_rows_header and the table's decoder, found again without parsing for a post-header
    seen before with the same TABLE_MAP (the same object in ``ctx``)."""
    key = (type_code, bytes(body[: ctx.table_id_size]))
    template = _TEMPLATES.get(key)
    if template is not None and not ctx.temporal_precisions:
        prefix, rows_header, decoder = template
        table_map = ctx.table_maps.get(rows_header.table_id)
        known = rows_header.table_map
        # The TABLE_MAP repeated before every statement is a new event each time, but one
        # decoded from the same body shares its column tuples (decode_table_map): what the
        # header and the row decoder depend on is the same when those are the same objects.
        if (
            table_map is not None
            and (
                table_map is known
                or (
                    table_map.column_types is known.column_types
                    and table_map.column_meta is known.column_meta
                    and table_map.optional_metadata is known.optional_metadata
                    and table_map.database == known.database
                    and table_map.table == known.table
                )
            )
            and body[: len(prefix)] == prefix
        ):
            return rows_header, decoder
    from decoder.row_images import table_decoder

    rows_header = read_rows_header(body, type_code, ctx)
    table_map = rows_header.table_map
    try:
        decoder = table_decoder(table_map, schema_precisions(ctx, table_map))
    except DecodeError as exc:
        raise DecodeError(
            f"table id {rows_header.table_id}: {exc.reason}", offset=rows_header.images_start
        ) from None
    if not ctx.temporal_precisions:
        if len(_TEMPLATES) >= 1024:
            _TEMPLATES.clear()
        _TEMPLATES[key] = (bytes(body[: rows_header.images_start]), rows_header, decoder)
    return rows_header, decoder


_READ_FAILURES = (DecodeError, struct.error, IndexError, ValueError, OverflowError)
_ROWS_FIELDS = (*_HEADER_FIELDS, "table_id", "rows_flags", "version", "extra_data",
                "compressed", "width", "columns_present", "rows")  # fmt: skip
_ROWS_BUILDERS = {
    cls: event_builder(cls, _ROWS_FIELDS)
    for cls in {cls for cls, _, _ in ROWS_EVENT_CLASSES.values()}
    if cls is not UpdateRowsEvent
}
_new_update_rows = event_builder(UpdateRowsEvent, (*_ROWS_FIELDS, "columns_present_after"))


def decode_rows(body: Buffer, header: EventHeader, ctx: BinlogContext) -> RowsEvent:
    rows_header, decoder = _rows_header(body, header[1], ctx)
    rows: tuple[Any, ...] | None = None
    if not rows_header.compressed and type(body) is bytes:
        # Read in place (no copy of the images); anything wrong is read again below, which
        # says what and where.
        try:
            reader = decoder.rows_reader(
                rows_header.width, rows_header.present, rows_header.present_after
            )
            rows = tuple(reader(body, rows_header.images_start, len(body)))
        except _READ_FAILURES:
            rows = None
    if rows is None:
        rows = tuple(read_row_images(body, rows_header, ctx, decoder))
    event: RowsEvent
    if rows_header.present_after is not None:
        event = _new_update_rows(
            header[0], header[2], header[4], header[5], rows_header.table_id,
            rows_header.rows_flags, rows_header.version, rows_header.extra_data,
            rows_header.compressed, rows_header.width, rows_header.columns_present, rows,
            rows_header.columns_present_after,
        )  # fmt: skip
    else:
        event = _ROWS_BUILDERS[rows_header.cls](
            header[0], header[2], header[4], header[5], rows_header.table_id,
            rows_header.rows_flags, rows_header.version, rows_header.extra_data,
            rows_header.compressed, rows_header.width, rows_header.columns_present, rows,
        )  # fmt: skip
    return event


_OLD_TEMPORAL = frozenset({ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP})


def _hires_hint(table_map: TableMapEvent, width: int) -> str:
    # MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n) (still written with
    # mysql56_temporal_format=OFF) keep the old type codes, no metadata and longer values:
    # their length is only in the table's schema (mariadb-binlog cannot read them either).
    if _OLD_TEMPORAL.intersection(table_map.column_types[:width]):
        return (
            f"; `{table_map.database}`.`{table_map.table}` has old TIME/DATETIME/TIMESTAMP"
            " columns, whose fractional-second precision (MariaDB 5.3 format) is not in the"
            " binlog: give it per column in BinlogContext.temporal_precisions (command line:"
            f" --temporal-precision {table_map.database}.{table_map.table}=P1,P2,...)"
        )
    return ""


DECODERS: dict[int, Callable[[Buffer, EventHeader, BinlogContext], Any]] = {
    EventType.TABLE_MAP: decode_table_map,
    **{code: decode_rows for code in ROWS_EVENT_CLASSES},
}
