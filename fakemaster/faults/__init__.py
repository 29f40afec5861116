"""Faults at the wire: fault plans (data), a sans-IO fault engine over one connection's
server->client bytes, and an asyncio TCP proxy that runs the engine in front of any server.

* :mod:`fakemaster.faults.kinds`: one row per :class:`FaultKind` (its parameters, how a seed
  and hypothesis draw them).
* :mod:`fakemaster.faults.plan`: what goes wrong, where: :class:`FaultPlan` of :class:`Fault`
  values, each at a :class:`Point` of the dump stream; JSON and TOML; drawn from a seed.
* :mod:`fakemaster.faults.engine`: :class:`FaultEngine`, which follows packets and events of
  one connection and turns the server's bytes into :class:`Output` instructions.
* :mod:`fakemaster.faults.proxy`: :class:`FaultProxy` (asyncio) and
  :class:`BackgroundFaultProxy` (a thread), listening on 127.0.0.1.

What each kind does, what a real primary or network does in the same case and what a correct
client should do: docs/faults.md.
"""

from __future__ import annotations

from fakemaster.faults.engine import FaultEngine, Output
from fakemaster.faults.plan import (
    CloseMode,
    Fault,
    FaultKind,
    FaultPlan,
    PlanError,
    Point,
    PointKind,
    Where,
    random_plan,
)

__all__ = [
    "CloseMode",
    "Fault",
    "FaultEngine",
    "FaultKind",
    "FaultPlan",
    "Output",
    "PlanError",
    "Point",
    "PointKind",
    "Where",
    "random_plan",
]
