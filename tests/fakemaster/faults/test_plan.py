"""Fault plans: drawn from a seed and replayed exactly, saved and loaded as JSON and TOML,
validated with errors that name the part at fault."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.faults.plan import (
    ERROR_PRESETS,
    PARAMETERS,
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
from tests.budget import examples

seeds = st.integers(0, 1 << 64)


@settings(max_examples=examples(1))
@given(seeds, st.integers(0, 12), st.integers(1, 3))
def test_a_seed_gives_the_same_plan_and_files_give_it_back(
    seed: int, count: int, sessions: int
) -> None:
    plan = random_plan(seed, count=count, sessions=sessions)
    assert plan == random_plan(seed, count=count, sessions=sessions)
    assert len(plan) == count and plan.seed == seed
    assert all(fault.session is not None and fault.session < sessions for fault in plan.faults)
    assert FaultPlan.from_json(plan.to_json()) == plan
    assert FaultPlan.from_toml(plan.to_toml()) == plan
    # The TOML written is what a TOML reader reads as the JSON form.
    assert tomllib.loads(plan.to_toml()) == json.loads(plan.to_json())


def test_seeds_draw_different_plans_of_every_kind() -> None:
    plans = [random_plan(seed, count=4) for seed in range(40)]
    assert len({plan.faults for plan in plans}) == 40
    kinds = {fault.kind for plan in plans for fault in plan.faults}
    assert kinds == set(FaultKind)
    only = random_plan(5, count=10, kinds=["cut"])
    assert {fault.kind for fault in only.faults} == {FaultKind.CUT}


def test_a_plan_file_in_toml_and_json(tmp_path: Path) -> None:
    text = """
seed = 3

[[faults]]
kind = "cut"
at = { event = 12, where = "inside", offset = 30 }
close = "rst"

[[faults]]
kind = "error"
at = { gtid = "0-1-5", where = "after" }
preset = "crc"
session = "all"

[[faults]]
kind = "trickle"
at = { byte = 0 }
size = 1
session = 1
"""
    path = tmp_path / "plan.toml"
    path.write_text(text)
    plan = FaultPlan.load(path)
    assert plan.seed == 3
    cut, error, trickle = plan.faults
    assert cut == Fault(
        FaultKind.CUT, Point(PointKind.EVENT, 12, Where.INSIDE, 30), 0, {"close": "rst"}
    )
    assert cut.params["close"] == CloseMode.RST
    assert error.session is None and error.applies_to(7)
    assert error.at.gtid == (0, 1, 5)
    assert error.error_packet() == ERROR_PRESETS["crc"]
    assert trickle.params == {"size": 1, "interval": 0.0, "duration": None}
    assert plan.for_session(1) == (error, trickle)
    saved = tmp_path / "again.json"
    plan.save(saved)
    assert FaultPlan.load(saved) == plan
    data = json.loads(saved.read_text())
    assert data["faults"][1]["session"] == "all"
    # JSON may say null for every session.
    data["faults"][1]["session"] = None
    assert FaultPlan.from_json(json.dumps(data)) == plan


BAD: list[tuple[Any, str]] = [
    ({"faults": [{"kind": "explode", "at": {"event": 1}}]}, "unknown fault kind 'explode'"),
    ({"faults": [{"kind": "cut"}]}, "needs 'kind' and 'at'"),
    ({"faults": [{"kind": "cut", "at": {"event": -1}}]}, "integer >= 0"),
    ({"faults": [{"kind": "cut", "at": {"event": 1, "byte": 2}}]}, "exactly one of"),
    ({"faults": [{"kind": "cut", "at": {"event": 1, "where": "inside"}}]}, "offset >= 1"),
    ({"faults": [{"kind": "cut", "at": {"event": 1, "offset": 3}}]}, "only for points 'inside'"),
    ({"faults": [{"kind": "cut", "at": {"byte": 1, "where": "after"}}]}, "takes no where"),
    ({"faults": [{"kind": "cut", "at": {"event": 1, "into": 2}}]}, "'into' is only for"),
    (
        {"faults": [{"kind": "truncate", "at": {"transaction": 1, "into": 2}}]},
        "'into' is not for it",
    ),
    ({"faults": [{"kind": "cut", "at": {"gtid": "0-1"}}]}, "'domain-server-seq'"),
    ({"faults": [{"kind": "cut", "at": {"time": "soon"}}]}, "number of seconds"),
    ({"faults": [{"kind": "cut", "at": {"event": 1}, "close": "slam"}]}, "one of ['fin', 'rst']"),
    ({"faults": [{"kind": "cut", "at": {"event": 1}, "size": 3}]}, "takes no parameters"),
    ({"faults": [{"kind": "latency", "at": {"event": 1}}]}, "'delay' is required"),
    ({"faults": [{"kind": "bandwidth", "at": {"event": 1}, "rate": 0}]}, "at least 1"),
    ({"faults": [{"kind": "duplicate", "at": {"byte": 10}}]}, "needs an event"),
    ({"faults": [{"kind": "truncate", "at": {"event": 3, "where": "after"}}]}, "whole event"),
    (
        {"faults": [{"kind": "corrupt_crc", "at": {"event": 3}, "offset": 4}]},
        "offset must be 0..3",
    ),
    ({"faults": [{"kind": "error", "at": {"event": 3}, "sqlstate": "HY0"}]}, "5 ASCII"),
    ({"faults": [{"kind": "cut", "at": {"event": 1}, "session": -1}]}, "session must be"),
    ({"faults": {}}, "'faults' must be a list"),
    ({"fault": []}, "unknown keys"),
    ({"seed": "x", "faults": []}, "seed must be an integer"),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_invalid_plans_are_rejected_with_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(PlanError) as raised:
        FaultPlan.from_dict(data)
    assert message in str(raised.value)
    # The same error from the JSON text.
    with pytest.raises(PlanError):
        FaultPlan.from_json(json.dumps(data))


def test_texts_that_are_not_plans() -> None:
    with pytest.raises(PlanError, match="not JSON"):
        FaultPlan.from_json("{")
    with pytest.raises(PlanError, match="not TOML"):
        FaultPlan.from_toml("[[faults]")
    with pytest.raises(PlanError, match="ends with .json or .toml"):
        FaultPlan().save("plan.yaml")


def test_every_kind_has_its_parameters_documented() -> None:
    assert set(PARAMETERS) == set(FaultKind)
    docs = (Path(__file__).resolve().parents[3] / "docs" / "faults.md").read_text()
    for kind in FaultKind:
        assert f"`{kind.value}`" in docs, kind
        for name in PARAMETERS[kind]:
            assert f"`{name}`" in docs, (kind, name)
