"""One cache of compiled row codecs per table shape, for the row decoder and encoder alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from fakemaster.vocabulary.columns import unsigned_flags, with_precisions
from fakemaster.vocabulary.events import TableMapEvent

__all__ = ["TableShapeCache"]

T = TypeVar("T")


class TableShapeCache(Generic[T]):
    """Compiled row codecs per table shape (decoder/row_images.py and encoder/values.py each
    keep one: the same lookup serves both sides).

    Keyed by (types, metadata, signedness); repeated TABLE_MAPs of a table share their column
    tuples (decoder/rows.py caches them), so the codec is first looked up by the tuples'
    identities, before hashing their contents.
    """

    MAX_CACHED = 1024

    def __init__(self, build: Callable[[tuple[int, ...], tuple[int, ...], Any], T]) -> None:
        self._build = build
        self._by_shape: dict[tuple[Any, ...], T] = {}
        self._by_identity: dict[tuple[int, int, int], tuple[Any, Any, Any, T]] = {}

    def get(self, table_map: TableMapEvent, precisions: Sequence[int] | None = None) -> T:
        """``precisions``: the schema's fractional-second precision per column, for old
        TIME/DATETIME/TIMESTAMP columns (MariaDB 5.3 format), which the binlog does not
        describe."""
        types, meta, optional = (
            table_map.column_types,
            table_map.column_meta,
            table_map.optional_metadata,
        )
        identity = (id(types), id(meta), id(optional))
        entry = self._by_identity.get(identity)
        if (
            entry is not None
            and entry[0] is types
            and entry[1] is meta
            and entry[2] is optional
            and not precisions
        ):
            return entry[3]
        unsigned = unsigned_flags(table_map)
        if precisions:
            meta = with_precisions(types, meta, precisions)
        key = (tuple(types), tuple(meta), unsigned)
        codec = self._by_shape.get(key)
        if codec is None:
            if len(self._by_shape) >= self.MAX_CACHED:
                self._by_shape.clear()
            codec = self._build(key[0], key[1], unsigned)
            self._by_shape[key] = codec
        if precisions:
            return codec
        if len(self._by_identity) >= self.MAX_CACHED:
            self._by_identity.clear()
        self._by_identity[identity] = (types, meta, optional, codec)
        return codec
