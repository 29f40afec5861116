"""``fakemaster check`` reports each deliberately broken client failing, on which case and why:
the client that drops the first rows event after a reconnect loses changes; the one that resumes
one transaction early applies it twice (duplicates under exactly-once, an extra row). Both pass
the cases without a reconnect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers.policy import require_module

require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")

REPO = Path(__file__).resolve().parents[2]
ONLY = ("multi_domain/*", "primary_key_updates/*", "rotation_storm/cut-at-rotations")


def check(adapter: str) -> subprocess.CompletedProcess[str]:
    client = f"{sys.executable} -m fakemaster.contract.adapters.{adapter} {{host}} {{port}} {{out}}"
    words = [sys.executable, "-m", "fakemaster", "check", "--client", client, "--generated", "0"]
    for pattern in ONLY:
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
