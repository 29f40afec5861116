"""System-versioned tables: the model's TABLE_MAP and rows events equal what a real MariaDB 10.11
logged for the same statements (tests/golden/table_kinds: an implicit-period table ``v`` and one
declaring its ``st``/``en`` columns, ``v2``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.events import TableMapEvent, UpdateRowsEvent, WriteRowsEvent
from fakemaster.vocabulary.values import Timestamp
from scenarios.compiler import table_map_event
from scenarios.create_table import parse_create_table
from scenarios.history import Settings
from scenarios.versioning import ROW_END_CURRENT, deleted, inserted, updated, versioned_table

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "table_kinds"
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())


def _logged(name: str) -> tuple[TableMapEvent, list[tuple[str, tuple[Any, ...]]]]:
    maps: dict[int, TableMapEvent] = {}
    events: list[tuple[str, tuple[Any, ...]]] = []
    for _, event in read_binlog(str(GOLDEN / EXPECTED["binlog_files"][0])):
        if isinstance(event, TableMapEvent):
            maps[event.table_id] = event
        elif isinstance(event, WriteRowsEvent | UpdateRowsEvent):
            if maps[event.table_id].table == name:
                kind = "write" if isinstance(event, WriteRowsEvent) else "update"
                events.append((kind, event.rows))
    table_map = next(m for m in maps.values() if m.table == name)
    return table_map, events


def test_an_implicit_period_table_logs_as_the_server() -> None:
    declared = parse_create_table("CREATE TABLE v (pk INT PRIMARY KEY, x INT)", "kinds")
    table = versioned_table(declared)
    golden_map, golden = _logged("v")
    ours = table_map_event(table, golden_map.table_id, Settings(binlog_row_metadata="FULL"))
    for field in ("column_types", "column_meta", "nullable", "optional_metadata"):
        assert getattr(ours, field) == getattr(golden_map, field), field
    t1, t2, t3 = Timestamp(1700000100, 250000), Timestamp(1700000200, 500000), Timestamp(1700000300)
    rows = inserted(table, [(1, 10, None, None), (2, 20, None, None)], t1)
    current = list(rows[0][1])
    pairs = [(row, (row[0], row[1] + 1, None, None)) for row in current]
    events = rows + updated(table, pairs, t2)
    current = [after for kind, changes in events[1:] if kind == "update" for _, after in changes]
    events += deleted(table, [current[1]], t3)
    assert events == golden
    assert current[0][2:] == (t2, ROW_END_CURRENT)


def test_declared_period_columns_log_as_the_server() -> None:
    table = versioned_table(
        parse_create_table(
            "CREATE TABLE v2 (x INT, st TIMESTAMP(6) NOT NULL, en TIMESTAMP(6) NOT NULL)", "kinds"
        ),
        "st",
        "en",
    )
    golden_map, golden = _logged("v2")
    ours = table_map_event(table, golden_map.table_id, Settings(binlog_row_metadata="FULL"))
    assert (ours.column_types, ours.column_meta) == (
        golden_map.column_types,
        golden_map.column_meta,
    )
    first = inserted(table, [(1, None, None)], Timestamp(1700000400), "st", "en")
    row = first[0][1][0]
    events = first + updated(table, [(row, (2, None, None))], Timestamp(1700000500), "st", "en")
    assert events == golden


def test_a_period_column_that_is_not_timestamp6_is_refused() -> None:
    table = parse_create_table("CREATE TABLE d.t (x INT, st TIMESTAMP(3) NOT NULL, en INT)")
    with pytest.raises(ValueError, match=r"d\.t\.st: a period column is TIMESTAMP\(6\)"):
        versioned_table(table, "st", "en")
