"""The verdicts on what a client reconstructed, for a small history whose changes are written
out by hand here (GTIDs 0-1-1.. in commit order, rows counted in each transaction)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakemaster.contract.adapter import AdapterRun, parse_output
from fakemaster.contract.checks import Verdict, check_run, judge
from scenarios.history import Scenario


def history() -> Scenario:
    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10), b VARBINARY(4))",
        rows=[{"id": 9, "v": "old", "b": b"\x00"}],
    )
    scenario.insert(
        "shop.t", {"id": 1, "v": "a", "b": b"\xff"}, {"id": 2, "v": "b", "b": None}
    )  # 0-1-1
    with scenario.transaction() as tx:  # 0-1-2
        tx.update("shop.t", {"id": 1}, {"v": "a2"})
        tx.update("shop.t", {"id": 1}, {"v": "a2"})  # changes nothing: no row change
        tx.delete("shop.t", {"id": 2})
    scenario.update("shop.t", {"id": 1}, {"id": 3})  # 0-1-3: the key changes
    return scenario


ROW1 = {"id": "1", "v": "a", "b": "0xFF"}
ROW2 = {"id": "2", "v": "b", "b": None}
ROW1B = {"id": "1", "v": "a2", "b": "0xFF"}
ROW3 = {"id": "3", "v": "a2", "b": "0xFF"}
# What a perfect client reports: (op, gtid, row, before, after).
CHANGES: list[tuple[str, str, int, Any, Any]] = [
    ("insert", "0-1-1", 0, None, ROW1),
    ("insert", "0-1-1", 1, None, ROW2),
    ("update", "0-1-2", 0, ROW1, ROW1B),
    ("delete", "0-1-2", 1, ROW2, None),
    ("update", "0-1-3", 0, ROW1B, ROW3),
]
FINAL = [{"id": "9", "v": "old", "b": "0x00"}, ROW3]


def output_text(
    changes: list[tuple[str, str, int, Any, Any]] | None = None,
    tables: list[dict[str, Any]] | None = None,
    guarantee: str = "exactly-once",
) -> str:
    lines: list[dict[str, Any]] = [
        {"kind": "header", "guarantee": guarantee, "changes": True, "tables": True}
    ]
    for op, gtid, row, before, after in CHANGES if changes is None else changes:
        item = {"kind": "change", "op": op, "table": "shop.t", "gtid": gtid, "row": row}
        if before is not None:
            item["before"] = before
        if after is not None:
            item["after"] = after
        lines.append(item)
    for values in FINAL if tables is None else tables:
        lines.append({"kind": "row", "table": "shop.t", "values": values})
    return "".join(json.dumps(line) + "\n" for line in lines)


OK_RUN = AdapterRun(0, 1.0)


def verdicts(text: str, run: AdapterRun = OK_RUN) -> dict[str, Verdict]:
    return {v.check: v for v in judge(history(), parse_output(text), run, 60.0)}


def failed(found: dict[str, Verdict]) -> dict[str, str]:
    return {name: v.detail for name, v in found.items() if v.failed}


def test_a_perfect_client_passes_every_check() -> None:
    found = verdicts(output_text())
    assert failed(found) == {}
    assert found["no loss"].detail == "5 changes delivered"
    assert found["final tables"].detail == "1 tables, 2 rows"


def test_a_lost_change_is_named() -> None:
    found = failed(verdicts(output_text(changes=CHANGES[:3] + CHANGES[4:])))
    assert set(found) == {"no loss"}
    assert found["no loss"] == (
        "1 of 5 changes never delivered, first: delete shop.t {id='2', v='b', b=NULL}"
        " (gtid 0-1-2 row 1)"
    )


def test_a_duplicate_fails_exactly_once_and_is_counted_under_at_least_once() -> None:
    twice = CHANGES[:3] + CHANGES[2:]
    found = verdicts(output_text(changes=twice))
    assert set(failed(found)) == {"no duplicates"}
    assert "1 duplicate deliveries under exactly-once" in found["no duplicates"].detail
    assert "(gtid 0-1-2 row 0) delivered 2 times" in found["no duplicates"].detail
    relaxed = verdicts(output_text(changes=twice, guarantee="at-least-once"))
    assert failed(relaxed) == {}
    assert relaxed["no duplicates"].detail == "1 redelivered (at-least-once declared)"


def test_changes_of_one_key_out_of_commit_order() -> None:
    swapped = [CHANGES[0], CHANGES[2], CHANGES[1], CHANGES[4], CHANGES[3]]
    assert failed(verdicts(output_text(changes=swapped))) == {}  # other keys: any order
    wrong = [CHANGES[0], CHANGES[1], CHANGES[4], CHANGES[2], CHANGES[3]]
    found = failed(verdicts(output_text(changes=wrong)))
    assert set(found) == {"per-key order"}
    assert found["per-key order"].startswith(
        "1 out of order, first: line 5: update shop.t {id='1', v='a2', b='0xFF'} (gtid 0-1-2"
        " row 0) delivered after update shop.t {id='3', v='a2', b='0xFF'} (gtid 0-1-3 row 0)"
    )


def test_wrong_values_phantoms_and_partial_images() -> None:
    bad_value = list(CHANGES)
    bad_value[0] = ("insert", "0-1-1", 0, None, {**ROW1, "b": "0xff"})
    found = failed(verdicts(output_text(changes=bad_value)))
    assert found == {
        "changes as served": "1 difference(s), first: line 2: insert shop.t (gtid 0-1-1 row 0):"
        " after b='0xff', served '0xFF'"
    }
    phantom = [*CHANGES, ("delete", "0-1-9", 0, ROW3, None)]
    found = failed(verdicts(output_text(changes=phantom)))
    assert found["changes as served"].endswith(
        "line 7: delete shop.t gtid 0-1-9 row 0 was never served"
    )
    # An image without some columns (binlog_row_image MINIMAL) is compared where it has them.
    minimal = list(CHANGES)
    minimal[3] = ("delete", "0-1-2", 1, {"id": "2"}, None)
    assert failed(verdicts(output_text(changes=minimal))) == {}


def test_final_tables_against_the_oracle() -> None:
    found = failed(verdicts(output_text(tables=[ROW3])))
    assert found == {"final tables": "shop.t: missing {id='9', v='old', b='0x00'}"}
    found = failed(verdicts(output_text(tables=[*FINAL, ROW3])))
    assert found == {"final tables": "shop.t: unexpected {id='3', v='a2', b='0xFF'}"}
    verdict = verdicts(output_text(tables=[FINAL[0], {"id": "3", "v": "a2"}]))["final tables"]
    assert verdict.failed
    assert verdict.lines == (
        "shop.t: 1 row(s) missing, 1 unexpected",
        "  - {id='3', v='a2', b='0xFF'}",
        "  + {id='3', v='a2', b='<absent>'}",
    )


@pytest.mark.parametrize(
    ("run", "detail"),
    [
        (
            AdapterRun(None, 61.0, "reading\nstill reading"),
            "timeout: still running after 60s (stopped); still reading",
        ),
        (AdapterRun(3, 2.0, "Traceback\nValueError: bad\n"), "exit status 3: ValueError: bad"),
        (  # the error line the adapter found is shown, not the last line
            AdapterRun(1, 2.0, "TypeError: x\n\nNode.js v20.20.2\n", "TypeError: x"),
            "exit status 1: TypeError: x",
        ),
        (
            AdapterRun(127, 0.0, "", "", "the client did not start: No such file: 'x'"),
            "the client did not start: No such file: 'x'",
        ),
    ],
)
def test_a_client_that_does_not_catch_up(run: AdapterRun, detail: str) -> None:
    verdict = check_run(run, 60.0)
    assert verdict.failed and verdict.detail == detail


def test_no_output_fails_every_check() -> None:
    found = judge(history(), None, OK_RUN, 60.0, output_problem="the client wrote no output")
    assert [(v.check, v.ok, v.detail) for v in found[1:]] == [
        (name, False, "the client wrote no output")
        for name in (
            "no loss",
            "no duplicates",
            "changes as served",
            "per-key order",
            "final tables",
        )
    ]


def test_a_client_without_a_change_log_is_judged_on_its_tables() -> None:
    text = '{"kind": "header", "changes": false}\n' + "".join(
        json.dumps({"kind": "row", "table": "shop.t", "values": v}) + "\n" for v in FINAL
    )
    found = verdicts(text)
    assert [found[name].ok for name in ("no loss", "per-key order", "final tables")] == [
        None,
        None,
        True,
    ]
