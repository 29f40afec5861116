"""What a TABLE_MAP's optional metadata says about single columns: their names and the number
of members of their ENUM and SET columns (binlog_row_metadata=FULL writes both).

MariaDB 10.11 writes one ENUM_STR_VALUE list per ENUM column and one SET_STR_VALUE list per
SET column, each in table order; an ENUM or SET column is binlogged as STRING with the real
type in byte 0 of its metadata.
"""

from __future__ import annotations

from typing import Any

from fakemaster.constants import ColumnType, OptionalMetadata
from fakemaster.events import TableMapEvent

__all__ = ["column_names", "member_counts"]

# The optional metadata field listing the members of each real column type.
_MEMBER_LISTS: dict[int, int] = {
    ColumnType.ENUM: OptionalMetadata.ENUM_STR_VALUE,
    ColumnType.SET: OptionalMetadata.SET_STR_VALUE,
}
_LIST_KINDS = frozenset(_MEMBER_LISTS.values())


def column_names(table_map: TableMapEvent) -> tuple[str, ...]:
    """The column names the TABLE_MAP lists (COLUMN_NAME), or () when it lists none."""
    for field in table_map.optional_metadata:
        if field.kind == OptionalMetadata.COLUMN_NAME:
            if isinstance(field.value, (bytes, bytearray)):
                return ()  # kept as raw bytes: not a list of names
            try:
                return tuple(
                    name.decode("utf-8", "replace")
                    if isinstance(name, (bytes, bytearray))
                    else str(name)
                    for name in field.value
                )
            except TypeError:
                return ()
    return ()


def member_counts(table_map: TableMapEvent) -> tuple[int | None, ...] | None:
    """Per column, the number of members the TABLE_MAP lists for an ENUM or SET column (None
    for other columns, and for those it has no list for); None when it lists none at all."""
    lists: dict[int, Any] = {}
    for field in table_map.optional_metadata:
        if field.kind in _LIST_KINDS and not isinstance(field.value, (bytes, bytearray)):
            lists[field.kind] = field.value
    if not lists:
        return None
    counts: list[int | None] = []
    seen: dict[int, int] = dict.fromkeys(_MEMBER_LISTS, 0)
    for column_type, meta in zip(table_map.column_types, table_map.column_meta, strict=False):
        real_type = meta & 0xFF if column_type == ColumnType.STRING else column_type
        kind = _MEMBER_LISTS.get(real_type)
        if kind is None:
            counts.append(None)
            continue
        index = seen[real_type]
        seen[real_type] = index + 1
        try:
            counts.append(len(lists[kind][index]))
        except (KeyError, IndexError, TypeError):
            counts.append(None)  # no list for this column: nothing to check against
    return tuple(counts)
