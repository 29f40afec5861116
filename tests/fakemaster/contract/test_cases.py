"""The cases of ``fakemaster check``: names, the built-in scenarios all present, generated
cases reproducible from their seed, selection by name and pattern."""

from __future__ import annotations

from collections import Counter

import pytest

from fakemaster.contract.cases import (
    GENERATED_KINDS,
    builtin_cases,
    generated_case,
    generated_cases,
    select_cases,
)
from fakemaster.faults.plan import FaultKind
from scenarios.library import LIBRARY


def test_every_built_in_scenario_runs_clean_and_under_faults() -> None:
    cases = builtin_cases()
    names = [case.name for case in cases]
    assert len(set(names)) == len(names)
    assert {case.scenario_name for case in cases} == set(LIBRARY)
    for scenario in LIBRARY:
        mine = [case for case in cases if case.scenario_name == scenario]
        assert mine[0].name == f"{scenario}/clean" and not mine[0].plan.faults
        assert all(case.plan.faults for case in mine[1:]), scenario
        assert len(mine) >= 2, scenario
    kinds = {fault.kind for case in cases for fault in case.plan.faults}
    assert FaultKind.ERROR in kinds and FaultKind.CUT in kinds
    # Every fault hits the first dump session only: the reconnect is clean.
    assert {fault.session for case in cases for fault in case.plan.faults} == {0}


def test_a_generated_case_is_the_same_for_the_same_seed() -> None:
    first, again, other = generated_case(11), generated_case(11), generated_case(12)
    assert first.name == "generated/11" and first.seed == 11
    assert first.plan == again.plan
    assert first.build().describe() == again.build().describe()
    assert (first.plan, first.build().describe()) != (other.plan, other.build().describe())
    plans = [case.plan for case in generated_cases(100, 30)]
    assert {fault.kind for plan in plans for fault in plan.faults} <= set(GENERATED_KINDS)
    assert [case.name for case in generated_cases(7, 3)] == [
        "generated/7",
        "generated/8",
        "generated/9",
    ]


def test_generated_plans_have_one_or_two_faults_and_both_sizes_occur() -> None:
    # The documented "one or two faults": counted over many seeds (a plan that never combines
    # two faults, or always does, fails here).
    sizes = Counter(len(case.plan.faults) for case in generated_cases(0, 200))
    assert set(sizes) == {1, 2}
    assert min(sizes.values()) >= 50, sizes
    # Two faults are two draws, not one fault twice.
    for case in generated_cases(1, 100):
        if len(case.plan.faults) == 2:
            first, second = case.plan.faults
            assert (first.kind, first.at, first.params) != (second.kind, second.at, second.params)


def test_selection_by_name_and_pattern() -> None:
    cases = builtin_cases() + generated_cases(0, 2)
    assert [c.name for c in select_cases(cases, ["compressed/clean", "generated/*"])] == [
        "compressed/clean",
        "generated/0",
        "generated/1",
    ]
    assert select_cases(cases, []) == cases
    with pytest.raises(ValueError, match="no case matches nothing/\\*"):
        select_cases(cases, ["compressed/clean", "nothing/*"])
