"""The compatibility matrix's verdicts and page (fakemaster/contract/matrix.py), from
hand-written results.json records: a passing case, a failure a client declared as a known
limit, an unexpected one, and a client that is not installed."""

from __future__ import annotations

import re

from fakemaster.contract.adapters.limits import KNOWN_LIMITS, known_limit
from fakemaster.contract.matrix import CLIENTS, Cell, ClientRow, MatrixClient, classify, render

LOST = {"check": "no loss", "ok": False, "detail": "1 of 3 changes never delivered"}
OK = {"check": "caught up", "ok": True, "detail": ""}


def by_id(client_id: str) -> MatrixClient:
    return next(c for c in CLIENTS if c.id == client_id)


def test_every_client_declares_its_limits_and_the_ids_match() -> None:
    assert {c.id for c in CLIENTS} == set(KNOWN_LIMITS)
    assert len(CLIENTS) >= 6


def test_a_failure_is_a_known_limit_only_where_the_client_declared_one() -> None:
    failed = {"name": "xa/clean", "passed": False, "verdicts": [OK, LOST]}
    cell = classify("python-mysql-replication", failed)
    assert cell.verdict == "limit"
    assert "XA" in cell.reason and cell.failure == "no loss: 1 of 3 changes never delivered"
    cell = classify("fakemaster-client", failed)
    assert (cell.verdict, cell.reason) == ("FAIL", "no loss: 1 of 3 changes never delivered")
    assert classify("fakemaster-client", {"name": "xa/clean", "passed": True}) == Cell("pass")


def test_limit_patterns_match_as_check_only_does() -> None:
    assert known_limit("mariadb-replica", "compressed/corrupt-crc") is not None
    assert known_limit("mariadb-replica", "compressed/clean") is None
    assert known_limit("powersync-zongji", "generated/3") is not None  # "*"
    assert known_limit("no-such-client", "xa/clean") is None


def test_the_page_has_every_client_and_a_verdict_in_every_cell() -> None:
    cases = ["multi_domain/clean", "xa/clean"]
    pmr, own, node = (by_id(i) for i in ("python-mysql-replication", "fakemaster-client", "zongji"))
    rows = [
        ClientRow(own, "fakemaster", {c: Cell("pass") for c in cases}),
        ClientRow(
            pmr,
            "mysql-replication 1.0.17",
            {
                cases[0]: Cell("FAIL", "caught up: exit status 1: x|y"),
                cases[1]: Cell("limit", "why"),
            },
        ),
        ClientRow(node, None, {}, "not installed (npm ci in tests/node)"),
    ]
    page = render(rows, cases, "python scripts/compatibility-matrix.py --only x")
    header = next(line for line in page.splitlines() if line.startswith("| Case |"))
    assert header == "| Case | `fakemaster-client` | `python-mysql-replication` | `zongji` |"
    cells = {
        line.split("|")[1].strip(" `"): [c.strip() for c in line.split("|")[2:-1]]
        for line in page.splitlines()
        if re.match(r"\| `(multi_domain|xa)/", line)
    }
    assert cells == {cases[0]: ["pass", "FAIL", "n/a"], cases[1]: ["pass", "limit", "n/a"]}
    assert "* `multi_domain/clean` (unexpected): caught up: exit status 1: x\\|y" in page
    assert "* `xa/clean` (known limit): why" in page
    assert "No verdicts: not installed (npm ci in tests/node)." in page
    assert (
        "| `fakemaster-client`: the project's own client (fakemaster.client) | fakemaster |" in page
    )
