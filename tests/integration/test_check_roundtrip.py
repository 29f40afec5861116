"""Property-based round trips (fakemaster.contract.roundtrip) with python-mysql-replication: drawn
histories under drawn fault plans end as the oracle says; a broken client's failure carries the
history, the plan and the report.

The histories here are those of the generated cases (fakemaster.contract.cases.generated_scenario,
from a drawn seed): the round trip over ``roundtrip.histories()`` finds a limit of the library,
ENUM and SET members that are not UTF-8 (a latin1 column's 'é') read as '' (its
``_read_type_values`` drops what does not decode), which this test is not about.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.peers.policy import require_module

require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")

from fakemaster.contract.adapter import CommandAdapter  # noqa: E402
from fakemaster.contract.cases import generated_scenario  # noqa: E402
from fakemaster.contract.roundtrip import (  # noqa: E402
    RoundTripFailure,
    check_roundtrip,
    plans,
    roundtrip_test,
    seeded_plans,
)
from fakemaster.faults.plan import Fault, FaultKind, FaultPlan, Point, PointKind  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def client(name: str) -> CommandAdapter:
    return CommandAdapter(
        f"{sys.executable} -m fakemaster.contract.adapters.{name} {{host}} {{port}} {{out}}",
        name=name,
        cwd=str(REPO),
    )


test_python_mysql_replication_round_trips = settings(max_examples=examples(0.05))(
    roundtrip_test(
        client("python_mysql_replication"),
        history_strategy=st.integers(0, 2**20).map(generated_scenario),
        plan_strategy=plans(max_transaction=12),
    )
)

test_python_mysql_replication_round_trips_seeded_plans = settings(max_examples=examples(0.03))(
    roundtrip_test(
        client("python_mysql_replication"),
        history_strategy=st.integers(0, 2**20).map(generated_scenario),
        plan_strategy=seeded_plans(count=2),
    )
)


def test_a_failing_round_trip_shows_history_plan_and_report(tmp_path: Path) -> None:
    history = generated_scenario(3)
    plan = FaultPlan((Fault(FaultKind.CUT, Point(PointKind.TRANSACTION, 4), 0),))
    with pytest.raises(RoundTripFailure) as caught:
        check_roundtrip(client("drops_after_reconnect"), history, plan, workdir=tmp_path)
    text = str(caught.value)
    assert text.startswith(
        "round trip of drops_after_reconnect failed\nhistory:\nScenario(Settings("
    )
    assert "  CREATE TABLE `gen`.`k` (" in text
    assert "  transaction 5 (domain 0, server 1):" in text
    assert 'fault plan:\n[[faults]]\nkind = "cut"\nat = { transaction = 4 }\nsession = 0\n' in text
    assert "roundtrip  FAIL     no loss: 1 of " in text
    assert "    applied: dump session 0: cut at byte " in text
    # The same history and plan, the correct client: it passes.
    result = check_roundtrip(client("python_mysql_replication"), history, plan, workdir=tmp_path)
    assert result.passed and result.sessions == 2
