"""The compiler's rows events without a server, for what mutation testing found unpinned by
the fast tests (docs/mutation.md): where statements split into rows events and which event
ends a statement. The scenario is test_differential's ``big_rows``, which
``test_statements_split_into_rows_events_where_the_server_splits_them`` compares event for
event with MariaDB 10.11 under each row image; here the split that comparison verified, with
no server."""

from __future__ import annotations

import pytest

from fakemaster.vocabulary.constants import RowsFlag
from fakemaster.vocabulary.events import UpdateRowsEvent, WriteRowsEvent
from scenarios.compiler import compile_scenario
from scenarios.history import Settings
from tests.scenarios.test_differential import big_rows

STMT_END = int(RowsFlag.STMT_END)
# (event, rows, flags) of every rows event, in order: 13 statements, each one's last event
# with STMT_END.
SPLIT = [
    ("write", 4, 0), ("write", 4, 0), ("write", 3, 0), ("write", 1, STMT_END),
    ("write", 1, STMT_END),
    *[("update", 1, STMT_END)] * 7,
    ("write", 2, 0), ("write", 1, STMT_END),
    ("write", 1, 0), ("write", 2, STMT_END),
]  # fmt: skip


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_statements_split_into_rows_events_each_ended_by_stmt_end(image: str) -> None:
    compiled = compile_scenario(big_rows(Settings(binlog_row_image=image)))
    events = [e for item in compiled for e in item.events]
    found = [
        ("write" if isinstance(e, WriteRowsEvent) else "update", len(e.rows), int(e.rows_flags))
        for e in events
        if isinstance(e, WriteRowsEvent | UpdateRowsEvent)
    ]
    assert found == SPLIT
