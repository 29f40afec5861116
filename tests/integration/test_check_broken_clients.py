"""``fakemaster check`` reports each deliberately broken client failing, on which case and why:
the client that drops the first rows event after a reconnect loses changes; the one that resumes
one transaction early applies it twice (duplicates under exactly-once, an extra row). Both pass
the cases without a reconnect. The project's own client with one flaw each
(:mod:`fakemaster.contract.adapters.broken_fakemaster_client`) fails the verdict that flaw
breaks, with its reason; the correct client passes the same cases
(tests/integration/test_check_fakemaster_client.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers.policy import require_module

REPO = Path(__file__).resolve().parents[2]
ONLY = ("multi_domain/*", "primary_key_updates/*", "rotation_storm/cut-at-rotations")


def check(adapter: str, only: tuple[str, ...] = ONLY) -> subprocess.CompletedProcess[str]:
    if adapter in ("drops_after_reconnect", "reapplies_transaction"):
        require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")
    client = f"{sys.executable} -m fakemaster.contract.adapters.{adapter} {{host}} {{port}} {{out}}"
    words = [sys.executable, "-m", "fakemaster", "check", "--client", client, "--generated", "0"]
    for pattern in only:
        words += ["--only", pattern]
    return subprocess.run(words, cwd=REPO, capture_output=True, text=True, timeout=300)


def verdicts(stdout: str) -> dict[str, tuple[str, str]]:
    """case -> (pass/FAIL, the first difference) from the table."""
    out = {}
    for line in stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[1] in ("pass", "FAIL") and "/" in parts[0]:
            out[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return out


RECONNECTING = {
    "multi_domain/cut-before-tx",
    "multi_domain/rst-inside-last",
    "primary_key_updates/cut-in-swap",
    "rotation_storm/cut-at-rotations",
}


@pytest.mark.parametrize(
    ("adapter", "reason"),
    [
        ("drops_after_reconnect", "no loss: 1 of "),
        ("reapplies_transaction", "no duplicates: "),
    ],
)
def test_a_broken_client_fails_where_it_reconnects(adapter: str, reason: str) -> None:
    done = check(adapter)
    assert done.returncode == 1, done.stderr
    found = verdicts(done.stdout)
    assert set(found) == {
        "multi_domain/clean",
        "primary_key_updates/clean",
        "primary_key_updates/stall",
        *RECONNECTING,
    }
    assert {name for name, (mark, _) in found.items() if mark == "FAIL"} == RECONNECTING
    for name in RECONNECTING:
        assert found[name][1].startswith(reason), (name, found[name])
        assert f"--- {name}: " in done.stdout  # the details of each failing case
    assert done.stdout.splitlines()[-1] == "7 cases: 3 passed, 4 failed"


def test_what_the_reapplying_client_gets_wrong_in_detail() -> None:
    done = check("reapplies_transaction")
    details = done.stdout.split("--- rotation_storm/cut-at-rotations: ", 1)[1]
    # FIN before transaction 10 (gtid 0-1-11): it resumes before 0-1-10 and applies it again.
    assert "applied: dump session 0: cut at byte" in details
    assert (
        "no duplicates: 1 duplicate deliveries under exactly-once, first: insert storm.t"
        " {id='9', n='0'} (gtid 0-1-10 row 0) delivered 2 times"
    ) in details
    assert "final tables: storm.t: unexpected {id='9', n='0'}" in details


@pytest.mark.parametrize(
    ("flaw", "case", "failing", "reason"),
    [
        (
            "null-value",
            "primary_key_updates/clean",
            {"changes as served", "final tables"},
            "changes as served: 7 difference(s), first: line 2: update pk.t (gtid 0-1-1 row 0):"
            " after v=None, served 'row1'",
        ),
        (
            "key-order",
            "primary_key_updates/clean",
            {"per-key order"},
            "per-key order: 1 out of order, first: line 8: update pk.t {id='100', v='row1'}"
            " (gtid 0-1-1 row 0) delivered after insert pk.t {id='1', v='again'}",
        ),
        (
            "lose-last",
            "multi_domain/clean",
            {"no loss"},
            "no loss: 1 of 26 changes never delivered, first: delete md.b {id='11', v='d2'}"
            " (gtid 1-6-5 row 1)",
        ),
        (
            "duplicate-last",
            "multi_domain/clean",
            {"no duplicates"},
            "no duplicates: 1 duplicate deliveries under exactly-once, first: delete md.b"
            " {id='11', v='d2'} (gtid 1-6-5 row 1) delivered 2 times",
        ),
        (
            "partial-image",
            "primary_key_updates/clean",
            {"changes as served"},
            "changes as served: 6 difference(s), first: line 2: update pk.t (gtid 0-1-1 row 0):"
            " before image lacks column 'v', served 'row1'",
        ),
        (
            "ignore-ddl",
            "ddl_mid_stream/clean",
            {"changes as served", "final tables"},
            "changes as served: 7 difference(s), first: line 3: insert ddl.t (gtid 0-1-3 row 0):"
            " after image lacks column 'b', served '3'",
        ),
        (
            "xa-early",
            "xa/clean",
            {"no loss", "changes as served", "final tables"},
            "no loss: 2 of 7 changes never delivered, first: update xa.acct {id='1',"
            " balance='60'} (gtid 0-1-4 row 0)",
        ),
    ],
)
def test_a_client_broken_in_one_way_fails_that_verdict(
    flaw: str, case: str, failing: set[str], reason: str
) -> None:
    done = check(f"broken_fakemaster_client {flaw}", (case,))
    assert done.returncode == 1, done.stderr
    found_cases = verdicts(done.stdout)
    assert set(found_cases) == {case} and found_cases[case][0] == "FAIL"
    details = done.stdout.split(f"--- {case}: ", 1)[1].splitlines()[1:]
    found = {
        line.split(":", 1)[0].strip()
        for line in details
        if line.startswith("    ") and not line.startswith("      ")
    }
    assert found == failing, details
    assert any(line.strip().startswith(reason) for line in details), details
