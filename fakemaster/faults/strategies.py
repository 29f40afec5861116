"""Hypothesis strategies for fault plans, to draw separately from the history they apply to (so
that each shrinks on its own: a failing case shrinks towards fewer faults, simpler points and
default parameters). Each kind's parameters are drawn as its row in
:mod:`fakemaster.faults.kinds` says.

``hypothesis`` is imported when this module is (it is a test dependency, not a dependency of
fakemaster): import this module from tests, not from code that serves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st

from fakemaster.faults.kinds import EVENT_KINDS, KINDS, FaultKind
from fakemaster.faults.plan import Fault, FaultPlan, Point, PointKind, Where

__all__ = ["fault_plans", "faults", "points"]


@st.composite
def points(
    draw: st.DrawFn,
    kind: FaultKind = FaultKind.CUT,
    *,
    max_event: int = 40,
    max_transaction: int = 8,
    max_byte: int = 4096,
    max_time: float = 2.0,
    gtids: Iterable[str] = (),
) -> Point:
    """A point a fault of ``kind`` can take (event faults: event, transaction or gtid points)."""
    gtid_texts = list(gtids)
    choices = [PointKind.EVENT, PointKind.TRANSACTION]
    if gtid_texts:
        choices.append(PointKind.GTID)
    if kind not in EVENT_KINDS:
        choices += [PointKind.BYTE, PointKind.TIME]
    point_kind = draw(st.sampled_from(choices))
    if point_kind is PointKind.BYTE:
        return Point(point_kind, draw(st.integers(0, max_byte)))
    if point_kind is PointKind.TIME:
        return Point(point_kind, draw(st.floats(0.0, max_time)))
    if point_kind is PointKind.EVENT:
        value = draw(st.integers(0, max_event))
        if kind in EVENT_KINDS:
            return Point(point_kind, value)
        where = draw(st.sampled_from(list(Where)))
        offset = draw(st.integers(1, 256)) if where is Where.INSIDE else 0
        return Point(point_kind, value, where, offset)
    group: int | str = (
        draw(st.integers(0, max_transaction))
        if point_kind is PointKind.TRANSACTION
        else draw(st.sampled_from(gtid_texts))
    )
    where = draw(st.sampled_from(list(Where)))
    offset = draw(st.integers(1, 8)) if where is Where.INSIDE else 0
    into = 0
    if kind not in EVENT_KINDS and where is not Where.AFTER and draw(st.booleans()):
        into = draw(st.integers(1, 256))
    return Point(point_kind, group, where, offset, into)


@st.composite
def faults(
    draw: st.DrawFn,
    /,
    *,
    kinds: Iterable[FaultKind | str] | None = None,
    sessions: int = 1,
    max_duration: float = 1.0,
    **point_bounds: Any,
) -> Fault:
    """One fault of one of ``kinds`` (every kind by default) for one of the first ``sessions``
    dump sessions; ``point_bounds`` go to :func:`points`."""
    chosen = sorted(FaultKind(kind) for kind in (kinds if kinds is not None else FaultKind))
    kind = draw(st.sampled_from(chosen))
    point = draw(points(kind, **point_bounds))
    session = draw(st.integers(0, sessions - 1))
    return Fault(kind, point, session, draw(KINDS[kind].hypothesis_params(st, max_duration)))


def fault_plans(
    *,
    max_faults: int = 3,
    kinds: Iterable[FaultKind | str] | None = None,
    sessions: int = 1,
    max_duration: float = 1.0,
    **point_bounds: Any,
) -> st.SearchStrategy[FaultPlan]:
    """Plans of up to ``max_faults`` faults (shrinking towards none)."""
    chosen = None if kinds is None else tuple(kinds)
    return st.lists(
        faults(kinds=chosen, sessions=sessions, max_duration=max_duration, **point_bounds),
        max_size=max_faults,
    ).map(lambda items: FaultPlan(tuple(items)))
