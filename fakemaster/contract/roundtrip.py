"""Property-based round trips: a history and a fault plan drawn separately (so that each shrinks
on its own), the history served through a fault proxy, any client run on it, and the Jepsen-style
checks of :mod:`fakemaster.contract.checks` on what it reconstructed.

``hypothesis`` is imported with this module (a test dependency)::

    from hypothesis import settings
    from fakemaster.contract.roundtrip import roundtrip_test

    test_my_client = settings(max_examples=20)(
        roundtrip_test("python my_cdc.py {host} {port} {out}")
    )

On failure the AssertionError holds the (shrunk) history as the SQL that makes it, the fault
plan as TOML (with the seed it was drawn from, for a seeded plan) and the report of the case: each
failed check with its first differences, the faults the proxy applied and the client's stderr;
hypothesis adds the falsifying example and, with ``print_blob``, the blob that replays it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st

from fakemaster.contract.adapter import adapter_from_spec
from fakemaster.contract.cases import Case
from fakemaster.faults.plan import FaultKind, FaultPlan, random_plan
from scenarios.history import ROW_IMAGES, Scenario, Settings

if TYPE_CHECKING:
    from fakemaster.contract.adapter import Adapter, Endpoint
    from fakemaster.contract.runner import CaseResult

__all__ = [
    "ROUNDTRIP_KINDS",
    "RoundTripFailure",
    "check_roundtrip",
    "histories",
    "plans",
    "roundtrip_settings",
    "roundtrip_test",
    "seeded_plans",
]

# Faults a correct client survives and that cost little time (no read timeouts to wait out).
ROUNDTRIP_KINDS = (
    FaultKind.CUT,
    FaultKind.STALL,
    FaultKind.DUPLICATE,
    FaultKind.CORRUPT_CRC,
    FaultKind.EOF,
)

Client = Any  # a command line, argv words, an Adapter, or a callable fn(endpoint, out)


class RoundTripFailure(AssertionError):
    """A round trip whose client did not end as the oracle says; the message is the report."""


def roundtrip_settings() -> st.SearchStrategy[Settings]:
    """Binlog settings every client can be held to: CRC32 checksums (a damaged event is
    detectable), ``binlog_row_metadata=FULL`` (column names), no compression; any row image."""
    return st.builds(
        Settings,
        binlog_checksum=st.just(True),
        binlog_row_image=st.sampled_from(ROW_IMAGES),
        binlog_row_metadata=st.just("FULL"),
        binlog_annotate_row_events=st.booleans(),
    )


def histories(**bounds: Any) -> st.SearchStrategy[Scenario]:
    """Histories of :func:`scenarios.strategies.history.scenarios` under
    :func:`roundtrip_settings` (``bounds``: its ``max_tables``, ``max_transactions``...), of
    row changes only unless ``bounds`` say otherwise (``ddl=True``,
    ``setting_changes_too=True``: a client must then follow DDL and settings mid-stream)."""
    from scenarios.strategies.history import scenarios

    bounds.setdefault("settings_strategy", roundtrip_settings())
    bounds.setdefault("ddl", False)
    bounds.setdefault("setting_changes_too", False)
    return scenarios(**bounds)


def plans(
    *, max_faults: int = 2, kinds: Sequence[FaultKind] = ROUNDTRIP_KINDS, **bounds: Any
) -> st.SearchStrategy[FaultPlan]:
    """Fault plans for the first dump session, shrinking towards no fault
    (:func:`fakemaster.faults.strategies.fault_plans`; stalls of at most 0.3 s)."""
    from fakemaster.faults.strategies import fault_plans

    bounds.setdefault("max_duration", 0.3)
    return fault_plans(max_faults=max_faults, kinds=kinds, sessions=1, **bounds)


def seeded_plans(
    *, count: int = 1, kinds: Sequence[FaultKind] = ROUNDTRIP_KINDS
) -> st.SearchStrategy[FaultPlan]:
    """Plans drawn by :func:`fakemaster.faults.plan.random_plan` from a drawn seed (printed
    with the plan: the same seed gives the same plan anywhere)."""
    return st.integers(0, 2**31 - 1).map(
        lambda seed: random_plan(seed, count=count, kinds=kinds, max_duration=0.3)
    )


def check_roundtrip(
    client: Client | Adapter | Callable[[Endpoint, Path], object],
    history: Scenario,
    plan: FaultPlan,
    *,
    timeout: float | None = None,
    workdir: str | Path | None = None,
) -> CaseResult:
    """Serve ``history`` under ``plan`` to ``client`` and check it; RoundTripFailure with the
    history, the plan and the report when a check fails."""
    from fakemaster.contract.report import table
    from fakemaster.contract.runner import DEFAULT_TIMEOUT, run_case

    adapter = adapter_from_spec(client)
    case = Case("roundtrip", lambda: history, plan, "a drawn history under a drawn plan", plan.seed)
    result = run_case(
        case, adapter, timeout=DEFAULT_TIMEOUT if timeout is None else timeout, workdir=workdir
    )
    if not result.passed:
        seed = f"seed: {plan.seed} (random_plan)\n" if plan.seed is not None else ""
        raise RoundTripFailure(
            f"round trip of {adapter.name} failed\n"
            f"history:\n{history.describe()}\n"
            f"fault plan:\n{plan.to_toml()}{seed}"
            f"{table([result])}"
        )
    return result


def roundtrip_test(
    client: Client | Adapter | Callable[[Endpoint, Path], object],
    *,
    history_strategy: st.SearchStrategy[Scenario] | None = None,
    plan_strategy: st.SearchStrategy[FaultPlan] | None = None,
    timeout: float | None = None,
) -> Callable[..., None]:
    """A hypothesis test (apply ``settings`` to it for the budget) that draws a history and a
    plan (each from its own strategy) and runs :func:`check_roundtrip`."""
    adapter = adapter_from_spec(client)

    @given(
        history=history_strategy if history_strategy is not None else histories(),
        plan=plan_strategy if plan_strategy is not None else plans(),
    )
    def test_roundtrip(history: Scenario, plan: FaultPlan) -> None:
        check_roundtrip(adapter, history, plan, timeout=timeout)

    return test_roundtrip
