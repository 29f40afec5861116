"""Hypothesis strategies for fault plans, to draw separately from the history they apply to (so
that each shrinks on its own: a failing case shrinks towards fewer faults, simpler points and
default parameters).

``hypothesis`` is imported when this module is (it is a test dependency, not a dependency of
fakemaster): import this module from tests, not from code that serves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st

from fakemaster.faults.plan import (
    ERROR_PRESETS,
    EVENT_KINDS,
    Fault,
    FaultKind,
    FaultPlan,
    Point,
    PointKind,
    Where,
)

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


def _params(kind: FaultKind, max_duration: float) -> st.SearchStrategy[dict[str, Any]]:
    durations = st.one_of(st.none(), st.floats(0.0, max_duration))
    if kind is FaultKind.CUT:
        return st.fixed_dictionaries({"close": st.sampled_from(["fin", "rst"])})
    if kind is FaultKind.STALL:
        return st.fixed_dictionaries({"duration": st.floats(0.0, max_duration)})
    if kind is FaultKind.TRICKLE:
        return st.fixed_dictionaries(
            {"size": st.integers(1, 64)},
            optional={"interval": st.floats(0.0, 0.01), "duration": durations},
        )
    if kind is FaultKind.BANDWIDTH:
        return st.fixed_dictionaries(
            {"rate": st.integers(1, 1 << 20)}, optional={"duration": durations}
        )
    if kind is FaultKind.LATENCY:
        return st.fixed_dictionaries(
            {"delay": st.floats(0.0, max_duration)}, optional={"duration": durations}
        )
    if kind is FaultKind.CORRUPT_CRC:
        return st.one_of(
            st.fixed_dictionaries(
                {"target": st.just("crc")},
                optional={"offset": st.integers(0, 3), "mask": st.integers(1, 255)},
            ),
            st.fixed_dictionaries(
                {"target": st.just("body")},
                optional={"offset": st.integers(0, 300), "mask": st.integers(1, 255)},
            ),
        )
    if kind is FaultKind.TRUNCATE:
        return st.fixed_dictionaries({}, optional={"keep": st.integers(1, 300)})
    if kind is FaultKind.DUPLICATE:
        return st.fixed_dictionaries({}, optional={"count": st.integers(1, 3)})
    if kind is FaultKind.ERROR:
        return st.fixed_dictionaries(
            {},
            optional={
                "preset": st.sampled_from(sorted(ERROR_PRESETS)),
                "close": st.sampled_from(["fin", "rst", "none"]),
            },
        )
    if kind is FaultKind.EOF:
        return st.fixed_dictionaries({}, optional={"close": st.sampled_from(["fin", "rst"])})
    if kind in (FaultKind.WITHHOLD_HEARTBEAT, FaultKind.DROP_ACKS):
        return st.fixed_dictionaries({}, optional={"duration": durations})
    if kind is FaultKind.WRONG_HEARTBEAT:
        return st.one_of(
            st.fixed_dictionaries(
                {"position": st.integers(0, (1 << 32) - 1)},
                optional={"file": st.from_regex(r"mysql-bin\.[0-9]{6}", fullmatch=True)},
            ),
            st.fixed_dictionaries(
                {"file": st.from_regex(r"mysql-bin\.[0-9]{6}", fullmatch=True)},
                optional={"duration": durations},
            ),
        )
    return st.just({})


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
    return Fault(kind, point, session, draw(_params(kind, max_duration)))


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
