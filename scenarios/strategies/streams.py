"""Whole binlog streams mixing every event family, for tests that look at sequences, and the
strategy of each event class (:data:`EVENT_STRATEGIES`).

A stream starts with a FORMAT_DESCRIPTION (checksums on or off), then draws from the control,
GTID, statement and row strategies; every rows event follows the TABLE_MAP of its table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    BinlogCheckpointEvent,
    DeleteFileEvent,
    DeleteRowsEvent,
    Event,
    ExecuteLoadQueryEvent,
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    HeartbeatEvent,
    IncidentEvent,
    IntvarEvent,
    QueryEvent,
    RandEvent,
    RotateEvent,
    RowsEvent,
    StartEncryptionEvent,
    StopEvent,
    TableMapEvent,
    UnknownEvent,
    UpdateRowsEvent,
    UserVarEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XidEvent,
)
from scenarios.strategies import control, statements
from scenarios.strategies.rows import table_maps, table_maps_with_rows

__all__ = ["EVENT_STRATEGIES", "event_streams"]


def _rows_of(kind: str) -> Callable[[], st.SearchStrategy[RowsEvent]]:
    """The rows events of one kind (their TABLE_MAP drawn and left out)."""
    return lambda: table_maps_with_rows(max_columns=6, kinds=(kind,)).map(lambda pair: pair[1])


# One strategy per event class (a new event class needs its row: tests/test_checklists.py).
# The classes up to TableMapEvent are drawn alone in a stream, in this order; the FDE (it
# changes the stream's checksum) and the TABLE_MAP and rows events (drawn as pairs) are not.
EVENT_STRATEGIES: dict[type[Event], Callable[[], st.SearchStrategy[Any]]] = {
    RotateEvent: control.rotate_events,
    HeartbeatEvent: control.heartbeat_events,
    StopEvent: control.stop_events,
    StartEncryptionEvent: control.start_encryption_events,
    IncidentEvent: control.incident_events,
    UnknownEvent: control.unknown_events,
    GtidEvent: statements.gtid_events,
    GtidListEvent: statements.gtid_list_events,
    BinlogCheckpointEvent: statements.binlog_checkpoint_events,
    QueryEvent: statements.query_events,
    ExecuteLoadQueryEvent: statements.execute_load_query_events,
    XidEvent: statements.xid_events,
    XaPrepareEvent: statements.xa_prepare_events,
    IntvarEvent: statements.intvar_events,
    RandEvent: statements.rand_events,
    UserVarEvent: statements.user_var_events,
    AnnotateRowsEvent: statements.annotate_rows_events,
    BeginLoadQueryEvent: statements.begin_load_query_events,
    AppendBlockEvent: statements.append_block_events,
    DeleteFileEvent: statements.delete_file_events,
    FormatDescriptionEvent: control.format_description_events,
    TableMapEvent: table_maps,
    WriteRowsEvent: _rows_of("write"),
    UpdateRowsEvent: _rows_of("update"),
    DeleteRowsEvent: _rows_of("delete"),
}
_NOT_ALONE = (FormatDescriptionEvent, TableMapEvent, RowsEvent)

_mapped_rows = table_maps_with_rows(max_columns=6).map(list)
_single = st.one_of(
    *(make() for cls, make in EVENT_STRATEGIES.items() if not issubclass(cls, _NOT_ALONE))
).map(lambda event: [event])


@st.composite
def event_streams(draw: st.DrawFn, max_groups: int = 8) -> list[Event]:
    """An FDE, then up to ``max_groups`` single events or (TABLE_MAP, rows) pairs."""
    fde = FormatDescriptionEvent(checksum_alg=draw(st.sampled_from([0, 1])))
    groups = draw(st.lists(st.one_of(_single, _mapped_rows), max_size=max_groups))
    return [fde] + [event for group in groups for event in group]
