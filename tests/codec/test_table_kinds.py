"""A sequence, system-versioned tables and UUID/INET4/INET6 columns through the codec, on the
golden binlog of a real MariaDB 10.11 (tests/golden/table_kinds, made by
scripts/capture-golden-table-kinds.py, binlog_row_metadata=FULL).

Every event decodes and encodes back to the server's bytes. Replayed as a replica applies them,
the rows events give the tables the server printed (``expected.json``): the sequence's last
logged row is its one row, a versioned table's rows events hold its history rows with their
``row_start``/``row_end``, and the typed UUID/INET values print as the server printed them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from decoder.binlog_file import iter_raw_events
from decoder.core import decode_event
from encoder.core import encode_event
from fakemaster.vocabulary.constants import GtidFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    Event,
    GtidEvent,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.mariadb_types import fixed_binary_value
from fakemaster.vocabulary.values import Timestamp

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "table_kinds"
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())
TYPES = {"u": "uuid", "a": "inet4", "b": "inet6"}  # t_types, as its CREATE TABLE says


def _events() -> list[tuple[TableMapEvent | None, Event]]:
    """Every event with the TABLE_MAP of a rows event, checked to encode back byte for byte."""
    decode_ctx, encode_ctx = BinlogContext(), BinlogContext()
    out: list[tuple[TableMapEvent | None, Event]] = []
    for name in EXPECTED["binlog_files"]:
        for offset, raw in iter_raw_events(str(GOLDEN / name)):
            event = decode_event(raw, decode_ctx, offset)
            assert encode_event(event, encode_ctx) == raw, (name, offset, event)
            table = decode_ctx.table_maps[event.table_id] if isinstance(event, RowsEvent) else None
            out.append((table, event))
    return out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Timestamp):
        return f"{value.seconds}.{value.microsecond:06d}"
    return str(value)


def _replayed() -> dict[str, list[list[Any]]]:
    """The tables as a replica's rows events leave them (a sequence: its last row)."""
    tables: dict[str, list[list[Any]]] = {}
    for table, event in _events():
        if table is None:
            continue
        rows = tables.setdefault(table.table, [])
        names = [n.decode() for n in _names(table)]
        if isinstance(event, WriteRowsEvent):
            for image in event.rows:
                if table.table.startswith("s"):
                    rows.clear()  # a sequence table holds one row: the write replaces it
                rows.append(_typed(names, image))
        elif isinstance(event, UpdateRowsEvent):
            for before, after in event.rows:
                rows[rows.index(_typed(names, before))] = _typed(names, after)
        elif isinstance(event, DeleteRowsEvent):
            for image in event.rows:
                rows.remove(_typed(names, image))
    return tables


def _names(table: TableMapEvent) -> tuple[bytes, ...]:
    for field in table.optional_metadata:
        if field.kind == 4:  # COLUMN_NAME
            return tuple(field.value)
    raise AssertionError(f"{table.table}: no column names (FULL metadata expected)")


def _typed(names: list[str], image: Any) -> list[Any]:
    return [
        fixed_binary_value(TYPES[name], value) if name in TYPES and value is not None else value
        for name, value in zip(names, image, strict=True)
    ]


def test_every_event_encodes_back_and_the_tables_are_the_servers() -> None:
    replayed = _replayed()
    for name, printed in EXPECTED["tables"].items():
        got = sorted(([_text(v) for v in row] for row in replayed[name]), key=repr)
        assert got == sorted(printed["rows"], key=repr), name


def test_nextval_logs_the_sequence_row_in_a_non_transactional_group() -> None:
    events = [event for _, event in _events()]
    groups: list[list[Event]] = []
    for event in events:
        if isinstance(event, GtidEvent):
            groups.append([])
        if groups:
            groups[-1].append(event)
    sequence_groups = [
        g
        for g in groups
        if any(isinstance(e, TableMapEvent) and e.table in ("s1", "s2") for e in g)
    ]
    # NEXTVAL past the cache (s1 once; s2 on each refill, at its end, after its cycle),
    # SETVAL, and the NEXTVAL after ALTER SEQUENCE RESTART.
    assert len(sequence_groups) == 6
    for group in sequence_groups:
        gtid, *_, last = group
        assert isinstance(gtid, GtidEvent) and not gtid.flags2 & GtidFlag.TRANSACTIONAL
        assert isinstance(last, QueryEvent) and last.query == b"COMMIT"
    first = next(e for e in sequence_groups[0] if isinstance(e, WriteRowsEvent))
    assert first.rows == ((1001, 1, 9223372036854775806, 1, 1, 1000, 0, 0),)


def test_a_versioned_update_logs_the_new_row_and_the_history_row_per_row() -> None:
    updates = [
        (table.table, type(event).__name__)
        for table, event in _events()
        if table is not None and table.table == "v" and isinstance(event, RowsEvent)
    ]
    # INSERT of two rows; UPDATE of two rows: per row an update then the history row's write;
    # DELETE: an update of row_end.
    assert updates == [
        ("v", "WriteRowsEvent"),
        ("v", "UpdateRowsEvent"),
        ("v", "WriteRowsEvent"),
        ("v", "UpdateRowsEvent"),
        ("v", "WriteRowsEvent"),
        ("v", "UpdateRowsEvent"),
    ]
