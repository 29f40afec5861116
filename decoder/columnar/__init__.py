"""Rows events decoded straight into Arrow columns, per table (the Spark pipeline's hot path)."""

from __future__ import annotations

from decoder.columnar.batches import (
    DDL_EVENT_TYPES,
    ChangeBatch,
    ColumnarDecoder,
    arrow_type,
    read_changes,
)

__all__ = [
    "DDL_EVENT_TYPES",
    "ChangeBatch",
    "ColumnarDecoder",
    "arrow_type",
    "read_changes",
]
