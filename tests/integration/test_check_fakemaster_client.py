"""``fakemaster check`` against the project's own replica client (the example adapter
fakemaster.contract.adapters.fakemaster_client): every case passes, by file/position and by GTID
(from the snapshot's GTID position), and drawn histories under drawn fault plans round-trip
(histories of every column type and row image, cuts, stalls, resends, damaged events, EOFs)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import settings

from fakemaster.contract.adapter import CommandAdapter
from fakemaster.contract.cases import Case, generated_case
from fakemaster.contract.roundtrip import histories, plans, roundtrip_test
from fakemaster.contract.runner import run_case
from scenarios.compiler import compile_scenario
from scenarios.history import Scenario, Settings
from tests.budget import examples

REPO = Path(__file__).resolve().parents[2]
CLIENT = (
    f"{sys.executable} -m fakemaster.contract.adapters.fakemaster_client {{host}} {{port}} {{out}}"
)


def check(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", "check", *words],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_every_case_passes_by_file_and_position(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    done = check("--client", CLIENT, "--seed", "50", "--generated", "3", "--junit-xml", str(junit))
    assert done.returncode == 0, done.stdout
    suite = ET.parse(junit).getroot()
    assert suite.get("failures") == "0"
    assert int(suite.get("tests") or 0) == len(list(suite.iter("testcase"))) > 25


def test_every_case_passes_by_gtid() -> None:
    done = check("--client", CLIENT + " --gtid", "--generated", "2")
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].endswith(" passed, 0 failed")


test_the_client_round_trips = settings(max_examples=examples(0.1))(
    roundtrip_test(
        CommandAdapter(CLIENT, name="fakemaster.client", cwd=str(REPO)),
        history_strategy=histories(max_transactions=6),
        plan_strategy=plans(max_transaction=6),
    )
)


@pytest.mark.parametrize("gtid", [False, True])
def test_a_history_whose_only_transaction_changes_nothing_is_caught_up(gtid: bool) -> None:
    # MariaDB 10.11 logs no group for an UPDATE that changes no row (the compiler agrees:
    # tests/scenarios/test_differential.py's hand-written history has one), so the binlog ends
    # after its FORMAT_DESCRIPTION, GTID_LIST and BINLOG_CHECKPOINT: the client's position
    # must move past those to reach the end.
    def build() -> Scenario:
        scenario = Scenario(Settings(binlog_row_metadata="FULL"))
        scenario.create_table(
            "CREATE TABLE r.t (id INT PRIMARY KEY, v INT)", rows=[{"id": 1, "v": 1}]
        )
        scenario.update("r.t", {"id": 1}, {"v": 1})
        return scenario

    assert not any(item.gtid for item in compile_scenario(build()))
    adapter = CommandAdapter(CLIENT + (" --gtid" if gtid else ""), cwd=str(REPO))
    result = run_case(Case("unchanged/clean", build), adapter, timeout=60)
    assert [v.check for v in result.verdicts if not v.ok] == [], result.verdicts


@pytest.mark.parametrize("seed", [3, 9, 13])
def test_a_generated_two_fault_case_applies_both_faults(seed: int) -> None:
    # Odd seeds draw two faults (fakemaster.contract.cases.generated_case); these three put
    # neither after a fault that ends the dump session, so both must be applied, and the
    # correct client still passes.
    case = generated_case(seed)
    assert len(case.plan.faults) == 2
    result = run_case(case, CommandAdapter(CLIENT, cwd=str(REPO)), timeout=60)
    assert len(result.applied) == 2, result.applied
    assert [v.check for v in result.verdicts if not v.ok] == [], result.verdicts
