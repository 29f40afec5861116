"""UUID, INET4 and INET6 through the codec, on the golden binlogs of a real MariaDB 10.11
(tests/golden/binlogs, table ``t_inet_uuid``: zero, all-ones, v1/v4/v7 UUIDs, IPv4-mapped...).

The rows events decode to the logged bytes; read as the schema's types they are the values the
server printed for the same rows (``expected.json``, the server's own SELECT), and the typed
values encode back to the server's bytes, event for event.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from decoder.binlog_file import iter_raw_events
from decoder.core import decode_event
from encoder.core import encode_event
from encoder.values import encode_value
from fakemaster.vocabulary.columns import string_meta_value
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import TableMapEvent, WriteRowsEvent
from fakemaster.vocabulary.mariadb_types import (
    FIXED_BINARY_TYPES,
    Inet4,
    Inet6,
    Uuid,
    fixed_binary_value,
)
from tests.peers.workload import WorkloadResult

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs"
TABLE = "t_inet_uuid"


def _typed(row: tuple[object, ...], types: list[str]) -> tuple[object, ...]:
    return tuple(
        fixed_binary_value(kind, value)  # type: ignore[arg-type]
        if kind in FIXED_BINARY_TYPES and value is not None
        else value
        for value, kind in zip(row, types, strict=True)
    )


@pytest.mark.parametrize("variant", ["default", "full_metadata"])
def test_golden_rows_read_as_the_servers_values_and_encode_back(variant: str) -> None:
    expected = WorkloadResult.loads((GOLDEN / variant / "expected.json").read_text())
    table = expected.table(TABLE)
    types = [column.data_type for column in table.columns]
    assert types == ["int", "inet4", "inet6", "uuid"]
    precisions = expected.temporal_precisions()
    decode_ctx = BinlogContext(temporal_precisions=precisions)
    encode_ctx = BinlogContext(temporal_precisions=dict(precisions))
    images: dict[object, tuple[object, ...]] = {}
    maps = 0
    for name in expected.binlog_files:
        for offset, raw in iter_raw_events(str(GOLDEN / variant / name)):
            event = decode_event(raw, decode_ctx, offset)
            if isinstance(event, TableMapEvent) and event.table == TABLE:
                maps += 1
                # Logged as fixed STRING columns of 4 and 16 bytes, nothing telling them apart.
                assert event.column_types[1:] == (ColumnType.STRING,) * 3
                assert event.column_meta[1:] == tuple(
                    string_meta_value(0xFE, n) for n in (4, 16, 16)
                )
            if (
                isinstance(event, WriteRowsEvent)
                and decode_ctx.table_maps[event.table_id].table == TABLE
            ):
                typed = tuple(_typed(row, types) for row in event.rows)
                images.update((row[0], row) for row in typed)
                event = dataclasses.replace(event, rows=typed)
            assert encode_event(event, encode_ctx) == raw, (variant, name, offset)
    assert maps
    printed = {
        int(row[0]): tuple(None if v is None else v.decode() for v in row[1:])  # type: ignore[union-attr]
        for row in table.rows
    }
    ours = {pk: tuple(None if v is None else str(v) for v in row[1:]) for pk, row in images.items()}
    assert ours == printed


def test_trailing_zero_bytes_are_not_logged() -> None:
    meta = string_meta_value(0xFE, 16)
    assert encode_value(ColumnType.STRING, meta, Inet6.parse("::")) == b"\x00"
    assert encode_value(ColumnType.STRING, meta, Inet6.parse("1::")) == b"\x02\x00\x01"
    assert encode_value(ColumnType.STRING, string_meta_value(0xFE, 4), Inet4.parse("10.0.0.0")) == (
        b"\x01\x0a"
    )
    uuid = Uuid.parse("6ccd780c-baba-1026-9564-5b8c656024db")
    assert encode_value(ColumnType.STRING, meta, uuid) == b"\x10" + uuid.packed
