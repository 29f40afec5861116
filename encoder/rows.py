"""TABLE_MAP and ROWS events (mirror of decoder/rows.py, which describes the typed optional
metadata values; raw ``bytes`` values are written as they are)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from encoder.compression import compress_record
from encoder.primitives import U16, name_bytes, packed_int
from encoder.values import table_encoder
from fakemaster.vocabulary.columns import (
    METADATA_FORMS,
    METADATA_SIZE,
    NUMERIC_TYPES,
    MetadataForm,
    column_names,
    member_counts,
    schema_precisions,
    type_name,
)
from fakemaster.vocabulary.constants import OptionalMetadata
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.values import ABSENT

__all__ = [
    "ENCODERS",
    "encode_optional_metadata",
    "encode_rows",
    "encode_table_map",
    "metadata_value_bytes",
    "present_bitmap",
    "rows_body",
]

# --- TABLE_MAP ----------------------------------------------------------------------------


def _table_id(table_id: int, ctx: BinlogContext) -> bytes:
    try:
        return table_id.to_bytes(ctx.table_id_size, "little")
    except (OverflowError, AttributeError):
        raise EncodeError(
            f"table_id {table_id!r} does not fit in the stream's {ctx.table_id_size} bytes",
            field="table_id",
            value=table_id,
        ) from None


def _name(text: str, what: str) -> bytes:
    raw = name_bytes(text)
    if len(raw) > 255:
        raise EncodeError(f"{what} is {len(raw)} bytes, at most 255 fit", field=what)
    return bytes((len(raw),)) + raw + b"\x00"


def encode_table_map(event: TableMapEvent, ctx: BinlogContext) -> bytes:
    count = len(event.column_types)
    for name in ("column_meta", "nullable"):
        given = len(getattr(event, name))
        if given != count:
            raise EncodeError(
                f"{name} has {given} values for {count} column_types "
                f"({count} column types, {len(event.column_meta)} metadata values, "
                f"{len(event.nullable)} NULL-able flags)",
                field=name,
            )
    metadata = bytearray()
    for index, (column_type, meta) in enumerate(
        zip(event.column_types, event.column_meta, strict=True)
    ):
        size = METADATA_SIZE.get(column_type)
        if size is None:
            raise EncodeError(
                f"column_types[{index}]: column {index} has unknown type {column_type!r}",
                field=f"column_types[{index}]",
            )
        try:
            metadata += meta.to_bytes(size, "little")
        except (OverflowError, AttributeError):
            raise EncodeError(
                f"column_meta[{index}] ({type_name(column_type)}): metadata {meta!r} "
                f"does not fit in {size} bytes",
                field=f"column_meta[{index}]",
                value=meta,
            ) from None
    nulls = 0
    for column, nullable in enumerate(event.nullable):
        if nullable:
            nulls |= 1 << column
    flags = U16.pack(event.table_flags)  # a u16 (encoder/fields.py)
    return b"".join(
        (
            _table_id(event.table_id, ctx),
            flags,
            _name(event.database, "database name"),
            _name(event.table, "table name"),
            packed_int(count),
            bytes(event.column_types),
            packed_int(len(metadata)),
            bytes(metadata),
            nulls.to_bytes((count + 7) >> 3, "little"),
            encode_optional_metadata(event.optional_metadata, event.column_types),
        )
    )


def _ints(values: Sequence[int]) -> bytes:
    return b"".join(packed_int(value) for value in values)


def _default_charset(value: tuple[int, Sequence[tuple[int, int]]]) -> bytes:
    default, pairs = value
    return packed_int(default) + b"".join(
        packed_int(index) + packed_int(collation) for index, collation in pairs
    )


def _int_pairs(pairs: Sequence[tuple[int, int]]) -> bytes:
    return b"".join(packed_int(first) + packed_int(second) for first, second in pairs)


def _string(value: bytes) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise EncodeError(f"expected bytes, got {value!r}")
    return packed_int(len(value)) + bytes(value)


def _strings(values: Sequence[bytes]) -> bytes:
    return b"".join(_string(value) for value in values)


def _string_lists(columns: Sequence[Sequence[bytes]]) -> bytes:
    return b"".join(packed_int(len(members)) + _strings(members) for members in columns)


def _signedness(bits: Sequence[bool], numeric_count: int) -> bytes:
    if len(bits) != numeric_count:
        raise EncodeError(
            f"SIGNEDNESS has {len(bits)} flags for {numeric_count} numeric columns "
            "(give raw bytes for a deliberately different bitmap)"
        )
    value = 0
    for bit in bits:
        if bit not in (0, 1) or not isinstance(bit, int):  # read back as bools
            raise EncodeError(f"SIGNEDNESS flag {bit!r} is not a bool")
        value = value << 1 | bit
    size = (numeric_count + 7) >> 3
    return (value << (size * 8 - numeric_count)).to_bytes(size, "big")


_FORM_WRITERS: dict[MetadataForm, Callable[[Any], bytes]] = {
    MetadataForm.INTS: _ints,
    MetadataForm.INT_PAIRS: _int_pairs,
    MetadataForm.DEFAULT_CHARSET: _default_charset,
    MetadataForm.STRINGS: _strings,
    MetadataForm.STRING_LISTS: _string_lists,
}
_TYPED = {kind: _FORM_WRITERS[form] for kind, form in METADATA_FORMS.items()}


def metadata_value_bytes(field: MetadataField, column_types: Sequence[int]) -> bytes:
    """The value bytes of one optional metadata field."""
    value = field.value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    try:
        if field.kind == OptionalMetadata.SIGNEDNESS:
            numeric = sum(1 for column_type in column_types if column_type in NUMERIC_TYPES)
            return _signedness(value, numeric)
        encode = _TYPED.get(field.kind)
        if encode is None:
            raise EncodeError("a field of this kind is written from raw bytes only")
        return encode(value)
    except EncodeError as exc:
        raise EncodeError(f"optional metadata field {field.kind}: {exc}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise EncodeError(f"optional metadata field {field.kind}: bad value {value!r}") from exc


def encode_optional_metadata(fields: Sequence[MetadataField], column_types: Sequence[int]) -> bytes:
    out = []
    for index, field in enumerate(fields):
        where = f"optional_metadata[{index}]"
        if not isinstance(field.kind, int) or not 0 <= field.kind <= 255:
            raise EncodeError(f"{where}: kind {field.kind!r} is not a byte", field=where)
        try:
            value = metadata_value_bytes(field, column_types)
        except EncodeError as exc:
            raise EncodeError(f"{where}: {exc.reason}", field=where, value=field.value) from None
        out.append(bytes((field.kind,)) + packed_int(len(value)) + value)
    return b"".join(out)


# --- ROWS ---------------------------------------------------------------------------------


def present_bitmap(row: Sequence[Any]) -> bytes:
    """The column-present bitmap of an image: 1 for every column that is not ABSENT.

    Padding bits are 0, as MariaDB 10.11 writes them.
    """
    mask = 0
    for column, value in enumerate(row):
        if value is not ABSENT:
            mask |= 1 << column
    return mask.to_bytes((len(row) + 7) >> 3, "little")


def _present_mask(bitmap: bytes, width: int, what: str) -> int:
    if len(bitmap) != (width + 7) >> 3:
        raise EncodeError(
            f"{what} is {len(bitmap)} bytes, a width of {width} needs {(width + 7) >> 3}",
            field=what,
        )
    return int.from_bytes(bitmap, "little") & ((1 << width) - 1)


def encode_rows(event: RowsEvent, ctx: BinlogContext) -> bytes:
    table_map = ctx.table_maps.get(event.table_id)
    if table_map is None:
        raise EncodeError(f"no TABLE_MAP for table_id {event.table_id}", field="table_id")
    width = event.width
    if not isinstance(width, int) or not 0 <= width <= len(table_map.column_types):
        raise EncodeError(
            f"width {width!r}, the TABLE_MAP of table_id {event.table_id} "
            f"has {len(table_map.column_types)} columns",
            field="width",
        )
    if event.version not in (1, 2):
        raise EncodeError(f"version {event.version!r} is not 1 or 2", field="version")
    present = _present_mask(event.columns_present, width, "columns_present")
    present_after = None
    table_id = _table_id(event.table_id, ctx)
    if event.version == 2:
        if len(event.extra_data) > 0xFFFF - 2:
            raise EncodeError(
                f"extra_data is {len(event.extra_data)} bytes, at most 65533 fit",
                field="extra_data",
            )
    elif event.extra_data:
        raise EncodeError("extra_data: only version 2 rows events carry it", field="extra_data")
    if isinstance(event, UpdateRowsEvent):
        present_after = _present_mask(event.columns_present_after, width, "columns_present_after")
    if event.rows and not present and not present_after:
        raise EncodeError(
            f"rows whose images have no columns (width {width}, columns_present "
            f"{bytes(event.columns_present).hex()}) take no bytes: they cannot be told apart",
            field="rows",
        )
    encoder = table_encoder(table_map, schema_precisions(ctx, table_map))
    members = member_counts(table_map)
    if members is not None:
        encoder = encoder.with_members(members)
    try:
        area = encoder.write_rows(width, present, present_after, event.rows)
    except EncodeError as exc:
        names = column_names(table_map)
        if exc.column is None or exc.column >= len(names):
            raise exc.in_field("rows") from None
        raise exc.in_column(exc.column, column_name=names[exc.column]).in_field("rows") from None
    if event.compressed and not area:
        raise EncodeError("rows: a compressed rows event needs at least one row", field="rows")
    return rows_body(event, area, table_id)


def rows_body(event: RowsEvent, area: bytes, table_id: bytes) -> bytes:
    """The body of rows event ``event`` whose rows area (its rows as
    ``TableEncoder.write_rows`` writes them) is ``area`` and whose table id bytes are
    ``table_id``: what :func:`encode_rows` returns once it has checked the event and written its
    rows, for a writer that has its rows area already (the scenario compiler sizes rows events
    by their rows' bytes). The area is compressed here for a compressed event."""
    parts = [table_id, U16.pack(event.rows_flags)]  # a u16 (encoder/fields.py)
    if event.version == 2:
        parts.append(U16.pack(len(event.extra_data) + 2) + bytes(event.extra_data))
    parts.append(packed_int(event.width))
    parts.append(bytes(event.columns_present))
    if isinstance(event, UpdateRowsEvent):
        parts.append(bytes(event.columns_present_after))
    parts.append(compress_record(area) if event.compressed else area)
    return b"".join(parts)


ENCODERS: dict[type[Any], Callable[[Any, BinlogContext], bytes]] = {
    TableMapEvent: encode_table_map,
    WriteRowsEvent: encode_rows,
    UpdateRowsEvent: encode_rows,
    DeleteRowsEvent: encode_rows,
}
