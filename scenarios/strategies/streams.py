"""Whole binlog streams mixing every event family, for tests that look at sequences.

A stream starts with a FORMAT_DESCRIPTION (checksums on or off), then draws from the control,
GTID, statement and row strategies; every rows event follows the TABLE_MAP of its table.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fakemaster.vocabulary.events import Event, FormatDescriptionEvent
from scenarios.strategies.control import control_events
from scenarios.strategies.rows import table_maps_with_rows
from scenarios.strategies.statements import gtid_side_events, statement_events

_mapped_rows = table_maps_with_rows(max_columns=6).map(list)
_single = st.one_of(control_events(), gtid_side_events(), statement_events()).map(
    lambda event: [event]
)


@st.composite
def event_streams(draw: st.DrawFn, max_groups: int = 8) -> list[Event]:
    """An FDE, then up to ``max_groups`` single events or (TABLE_MAP, rows) pairs."""
    fde = FormatDescriptionEvent(checksum_alg=draw(st.sampled_from([0, 1])))
    groups = draw(st.lists(st.one_of(_single, _mapped_rows), max_size=max_groups))
    return [fde] + [event for group in groups for event in group]
