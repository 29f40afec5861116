"""The verdicts on what a client reconstructed, for small histories whose changes are written
out by hand here (GTIDs 0-1-1.. in commit order, rows counted in each transaction). Every
verdict has, for each way a client can be wrong, an output broken in exactly that way (a value
replaced by NULL, a key change out of order on its old or its new key, a lost last change, a
duplicate under exactly-once, a partial image claimed full, a DDL not followed, XA applied
early), asserted to fail with the verdict's reason, next to the correct output passing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakemaster.contract.adapter import AdapterRun, parse_output
from fakemaster.contract.checks import Verdict, check_run, judge
from scenarios.history import Scenario, Settings


def history(row_image: str = "FULL") -> Scenario:
    scenario = Scenario(Settings(binlog_row_image=row_image))
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
    scenario.update("shop.t", {"id": 3}, {"v": "a3"})  # 0-1-4: the new key only
    return scenario


ROW1 = {"id": "1", "v": "a", "b": "0xFF"}
ROW2 = {"id": "2", "v": "b", "b": None}
ROW1B = {"id": "1", "v": "a2", "b": "0xFF"}
ROW3 = {"id": "3", "v": "a2", "b": "0xFF"}
ROW3B = {"id": "3", "v": "a3", "b": "0xFF"}
# What a perfect client reports: (op, gtid, row, before, after).
CHANGES: list[tuple[str, str, int, Any, Any]] = [
    ("insert", "0-1-1", 0, None, ROW1),
    ("insert", "0-1-1", 1, None, ROW2),
    ("update", "0-1-2", 0, ROW1, ROW1B),
    ("delete", "0-1-2", 1, ROW2, None),
    ("update", "0-1-3", 0, ROW1B, ROW3),
    ("update", "0-1-4", 0, ROW3, ROW3B),
]
FINAL = [{"id": "9", "v": "old", "b": "0x00"}, ROW3B]


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


def verdicts(
    text: str, run: AdapterRun = OK_RUN, scenario: Scenario | None = None
) -> dict[str, Verdict]:
    found = judge(scenario or history(), parse_output(text), run, 60.0)
    return {v.check: v for v in found}


def failed(found: dict[str, Verdict]) -> dict[str, str]:
    return {name: v.detail for name, v in found.items() if v.failed}


def test_a_perfect_client_passes_every_check() -> None:
    found = verdicts(output_text())
    assert failed(found) == {}
    assert found["no loss"].detail == "6 changes delivered"
    assert found["final tables"].detail == "1 tables, 2 rows"


def test_a_lost_change_is_named() -> None:
    found = failed(verdicts(output_text(changes=CHANGES[:3] + CHANGES[4:])))
    assert set(found) == {"no loss"}
    assert found["no loss"] == (
        "1 of 6 changes never delivered, first: delete shop.t {id='2', v='b', b=NULL}"
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
    swapped = [CHANGES[0], CHANGES[2], CHANGES[1], CHANGES[4], CHANGES[3], CHANGES[5]]
    assert failed(verdicts(output_text(changes=swapped))) == {}  # other keys: any order
    wrong = [CHANGES[0], CHANGES[1], CHANGES[4], CHANGES[2], CHANGES[3], CHANGES[5]]
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
    phantom = [*CHANGES, ("delete", "0-1-9", 0, ROW3B, None)]
    found = failed(verdicts(output_text(changes=phantom)))
    assert found["changes as served"].endswith(
        "line 8: delete shop.t gtid 0-1-9 row 0 was never served"
    )


def test_final_tables_against_the_oracle() -> None:
    found = failed(verdicts(output_text(tables=[ROW3B])))
    assert found == {"final tables": "shop.t: missing {id='9', v='old', b='0x00'}"}
    found = failed(verdicts(output_text(tables=[*FINAL, ROW3])))
    assert found == {"final tables": "shop.t: unexpected {id='3', v='a2', b='0xFF'}"}
    verdict = verdicts(output_text(tables=[FINAL[0], {"id": "3", "v": "a3"}]))["final tables"]
    assert verdict.failed
    assert verdict.lines == (
        "shop.t: 1 row(s) missing, 1 unexpected",
        "  - {id='3', v='a3', b='0xFF'}",
        "  + {id='3', v='a3', b='<absent>'}",
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


# --- each way a client can be wrong, one at a time ---------------------------------------------


def test_a_value_replaced_by_null_is_a_difference() -> None:
    after_null = list(CHANGES)
    after_null[0] = ("insert", "0-1-1", 0, None, {**ROW1, "v": None})
    found = failed(verdicts(output_text(changes=after_null)))
    assert found == {
        "changes as served": "1 difference(s), first: line 2: insert shop.t (gtid 0-1-1 row 0):"
        " after v=None, served 'a'"
    }
    before_null = list(CHANGES)
    before_null[3] = ("delete", "0-1-2", 1, {**ROW2, "v": None}, None)
    found = failed(verdicts(output_text(changes=before_null)))
    assert found == {
        "changes as served": "1 difference(s), first: line 5: delete shop.t (gtid 0-1-2 row 1):"
        " before v=None, served 'b'"
    }
    # ... and the other way round: a value where NULL was served.
    not_null = list(CHANGES)
    not_null[1] = ("insert", "0-1-1", 1, None, {**ROW2, "b": "null"})
    found = failed(verdicts(output_text(changes=not_null)))
    assert found["changes as served"].endswith("after b='null', served None")


def test_the_new_key_of_a_key_changing_update_is_ordered_too() -> None:
    # 0-1-4 touches key 3 only; 0-1-3 moves key 1 to 3. Delivered the other way round, only
    # the new key (3) shows the disorder.
    wrong = [*CHANGES[:4], CHANGES[5], CHANGES[4]]
    found = failed(verdicts(output_text(changes=wrong)))
    assert found == {
        "per-key order": "1 out of order, first: line 7: update shop.t {id='3', v='a2',"
        " b='0xFF'} (gtid 0-1-3 row 0) delivered after update shop.t {id='3', v='a3',"
        " b='0xFF'} (gtid 0-1-4 row 0), which commits later"
    }


def test_the_last_served_change_lost_is_named() -> None:
    found = failed(verdicts(output_text(changes=CHANGES[:-1], tables=FINAL)))
    assert found == {
        "no loss": "1 of 6 changes never delivered, first: update shop.t {id='3', v='a3',"
        " b='0xFF'} (gtid 0-1-4 row 0)"
    }
    found = failed(verdicts(output_text(changes=[])))
    assert found["no loss"].startswith("6 of 6 changes never delivered, first: insert shop.t")


def test_a_duplicate_of_the_last_change_fails_unless_at_least_once_is_declared() -> None:
    twice = [*CHANGES, CHANGES[-1]]
    found = failed(verdicts(output_text(changes=twice)))
    assert found == {
        "no duplicates": "1 duplicate deliveries under exactly-once, first: update shop.t"
        " {id='3', v='a3', b='0xFF'} (gtid 0-1-4 row 0) delivered 2 times"
    }
    assert failed(verdicts(output_text(changes=twice, guarantee="at-least-once"))) == {}


def test_a_partial_image_under_full_row_images_is_a_difference() -> None:
    partial = list(CHANGES)
    partial[3] = ("delete", "0-1-2", 1, {"id": "2"}, None)
    found = failed(verdicts(output_text(changes=partial)))
    assert found == {
        "changes as served": "2 difference(s), first: line 5: delete shop.t (gtid 0-1-2 row 1):"
        " before image lacks column 'v', served 'b'"
    }
    partial_after = list(CHANGES)
    partial_after[5] = ("update", "0-1-4", 0, ROW3, {"id": "3", "v": "a3"})
    found = failed(verdicts(output_text(changes=partial_after)))
    assert found["changes as served"].endswith("after image lacks column 'b', served '0xFF'")


def test_a_partial_image_is_compared_where_the_binlog_left_columns_out() -> None:
    # binlog_row_image MINIMAL: the key in before images, the columns set in after images.
    minimal: list[tuple[str, str, int, Any, Any]] = [
        ("insert", "0-1-1", 0, None, ROW1),
        ("insert", "0-1-1", 1, None, ROW2),
        ("update", "0-1-2", 0, {"id": "1"}, {"v": "a2"}),
        ("delete", "0-1-2", 1, {"id": "2"}, None),
        ("update", "0-1-3", 0, {"id": "1"}, {"id": "3"}),
        ("update", "0-1-4", 0, {"id": "3"}, {"v": "a3"}),
    ]
    scenario = history("MINIMAL")
    assert failed(verdicts(output_text(changes=minimal), scenario=scenario)) == {}
    wrong = list(minimal)
    wrong[5] = ("update", "0-1-4", 0, {"id": "3"}, {"v": None})
    found = failed(verdicts(output_text(changes=wrong), scenario=scenario))
    assert found["changes as served"].endswith("after v=None, served 'a3'")
    # An insert's image is every column the statement named: none may be left out.
    short = list(minimal)
    short[0] = ("insert", "0-1-1", 0, None, {"id": "1", "v": "a"})
    found = failed(verdicts(output_text(changes=short), scenario=scenario))
    assert found["changes as served"].endswith("after image lacks column 'b', served '0xFF'")


def ddl_history() -> Scenario:
    scenario = Scenario()
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY, a INT)")
    scenario.insert("d.t", {"id": 1, "a": 1})  # 0-1-1
    scenario.alter_table("d.t", "ADD COLUMN b INT NULL DEFAULT 7")  # 0-1-2 (no row change)
    scenario.insert("d.t", {"id": 2, "a": 2, "b": 3})  # 0-1-3
    return scenario


def ddl_output(new_rows: bool) -> str:
    b = {"b": "3"} if new_rows else {}
    lines: list[dict[str, Any]] = [
        {"kind": "header"},
        {"kind": "change", "op": "insert", "table": "d.t", "gtid": "0-1-1", "row": 0,
         "after": {"id": "1", "a": "1"}},
        {"kind": "change", "op": "insert", "table": "d.t", "gtid": "0-1-3", "row": 0,
         "after": {"id": "2", "a": "2", **b}},
        {"kind": "row", "table": "d.t",
         "values": {"id": "1", "a": "1", **({"b": "7"} if new_rows else {})}},
        {"kind": "row", "table": "d.t", "values": {"id": "2", "a": "2", **b}},
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_a_ddl_not_followed() -> None:
    assert failed(verdicts(ddl_output(True), scenario=ddl_history())) == {}
    found = failed(verdicts(ddl_output(False), scenario=ddl_history()))
    assert found == {
        "changes as served": "1 difference(s), first: line 3: insert d.t (gtid 0-1-3 row 0):"
        " after image lacks column 'b', served '3'",
        "final tables": "d.t: missing {id='1', a='1', b='7'}",
    }


def xa_history() -> Scenario:
    scenario = Scenario()
    scenario.create_table("CREATE TABLE x.acct (id INT PRIMARY KEY, n INT)")
    scenario.create_table("CREATE TABLE x.log (id INT PRIMARY KEY)")
    scenario.insert("x.acct", {"id": 1, "n": 1})  # 0-1-1
    with scenario.xa_transaction("t") as tx:  # 0-1-2: XA PREPARE
        tx.update("x.acct", {"id": 1}, {"n": 2})
    scenario.insert("x.log", {"id": 1})  # 0-1-3
    scenario.xa_commit("t")  # 0-1-4: the update takes effect
    return scenario


def xa_output(update_gtid: str) -> str:
    update = {"kind": "change", "op": "update", "table": "x.acct", "gtid": update_gtid, "row": 0,
              "before": {"id": "1", "n": "1"}, "after": {"id": "1", "n": "2"}}  # fmt: skip
    log = {"kind": "change", "op": "insert", "table": "x.log", "gtid": "0-1-3", "row": 0,
           "after": {"id": "1"}}  # fmt: skip
    lines: list[dict[str, Any]] = [
        {"kind": "header"},
        {"kind": "change", "op": "insert", "table": "x.acct", "gtid": "0-1-1", "row": 0,
         "after": {"id": "1", "n": "1"}},
        *([update, log] if update_gtid == "0-1-2" else [log, update]),
        {"kind": "row", "table": "x.acct", "values": {"id": "1", "n": "2"}},
        {"kind": "row", "table": "x.log", "values": {"id": "1"}},
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_xa_applied_at_its_prepare() -> None:
    assert failed(verdicts(xa_output("0-1-4"), scenario=xa_history())) == {}
    found = failed(verdicts(xa_output("0-1-2"), scenario=xa_history()))
    assert found == {
        "no loss": "1 of 3 changes never delivered, first: update x.acct {id='1', n='2'}"
        " (gtid 0-1-4 row 0)",
        "changes as served": "1 difference(s), first: line 3: update x.acct gtid 0-1-2 row 0"
        " was never served",
    }


def test_the_images_carried_follow_binlog_row_image_as_it_changes() -> None:
    def build(minimal_first: bool) -> Scenario:
        scenario = Scenario()
        scenario.create_table("CREATE TABLE s.t (id INT PRIMARY KEY, v INT)")
        scenario.insert("s.t", {"id": 1, "v": 1})  # 0-1-1
        if minimal_first:
            scenario.set(binlog_row_image="MINIMAL")
        scenario.update("s.t", {"id": 1}, {"v": 2})  # 0-1-2
        scenario.set(binlog_row_image="MINIMAL" if not minimal_first else "FULL")
        scenario.delete("s.t", {"id": 1})  # 0-1-3
        return scenario

    def text(update_before: dict[str, str], delete_before: dict[str, str]) -> str:
        lines: list[dict[str, Any]] = [
            {"kind": "header", "tables": True},
            {"kind": "change", "op": "insert", "table": "s.t", "gtid": "0-1-1", "row": 0,
             "after": {"id": "1", "v": "1"}},
            {"kind": "change", "op": "update", "table": "s.t", "gtid": "0-1-2", "row": 0,
             "before": update_before, "after": {"id": "1", "v": "2"}},
            {"kind": "change", "op": "delete", "table": "s.t", "gtid": "0-1-3", "row": 0,
             "before": delete_before},
        ]  # fmt: skip
        return "".join(json.dumps(line) + "\n" for line in lines)

    key, full = {"id": "1"}, {"id": "1", "v": "2"}
    # SET binlog_row_image=MINIMAL before the update: its before image is the key ...
    assert failed(verdicts(text(key, full), scenario=build(True))) == {}
    # ... and after it, the delete's: the update's must be whole.
    assert failed(verdicts(text({"id": "1", "v": "1"}, key), scenario=build(False))) == {}
    found = failed(verdicts(text(key, key), scenario=build(False)))
    assert found == {
        "changes as served": "1 difference(s), first: line 3: update s.t (gtid 0-1-2 row 0):"
        " before image lacks column 'v', served '1'"
    }


# --- what mutation testing found unpinned (docs/mutation.md) -----------------------------------


def test_an_image_with_a_column_the_table_lacks() -> None:
    wrong = list(CHANGES)
    wrong[0] = ("insert", "0-1-1", 0, None, {**ROW1, "zz": "1"})
    found = failed(verdicts(output_text(changes=wrong)))
    assert found == {
        "changes as served": "1 difference(s), first: line 2: insert shop.t (gtid 0-1-1 row 0):"
        " after image has column 'zz', which the table lacks"
    }


def test_a_long_image_is_cut_where_it_is_shown() -> None:
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(200))")
    scenario.insert("shop.t", {"id": 1, "v": "x" * 200})
    text = '{"kind": "header", "changes": true, "tables": false}\n'
    found = failed(verdicts(text, scenario=scenario))
    shown = "{id='1', v='" + "x" * (157 - len("id='1', v='")) + "...}"
    assert found == {
        "no loss": f"1 of 1 changes never delivered, first: insert shop.t {shown}"
        " (gtid 0-1-1 row 0)"
    }


def test_a_table_the_scenario_does_not_have() -> None:
    text = output_text() + json.dumps({"kind": "row", "table": "shop.zz", "values": {}}) + "\n"
    verdict = verdicts(text)["final tables"]
    assert verdict.failed
    assert verdict.detail == "shop.zz: a table the scenario does not have (1 rows)"
    assert verdict.lines == (verdict.detail,)


def test_statements_on_a_non_transactional_table_and_rows_after_a_delete() -> None:
    """Each statement on a MyISAM table is a group of its own, logged before the transaction's
    own group (as tests/scenarios/test_non_transactional.py checks against a real server);
    rows are counted in each group, across deletes."""
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10))")
    scenario.create_table("CREATE TABLE shop.m (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM")
    with scenario.transaction() as tx:
        tx.insert("shop.t", {"id": 1, "v": "a"})
        tx.insert("shop.m", {"id": 1, "v": "m1"})
        tx.delete("shop.t", {"id": 1})
        tx.insert("shop.t", {"id": 2, "v": "b"})
        tx.insert("shop.m", {"id": 2, "v": "m2"})
    changes = [
        ("insert", "shop.m", "0-1-1", 0, None, {"id": "1", "v": "m1"}),
        ("insert", "shop.m", "0-1-2", 0, None, {"id": "2", "v": "m2"}),
        ("insert", "shop.t", "0-1-3", 0, None, {"id": "1", "v": "a"}),
        ("delete", "shop.t", "0-1-3", 1, {"id": "1", "v": "a"}, None),
        ("insert", "shop.t", "0-1-3", 2, None, {"id": "2", "v": "b"}),
    ]
    lines: list[dict[str, Any]] = [{"kind": "header", "changes": True, "tables": False}]
    for op, table, gtid, row, before, after in changes:
        item = {"kind": "change", "op": op, "table": table, "gtid": gtid, "row": row}
        item.update({"before": before} if before else {})
        item.update({"after": after} if after else {})
        lines.append(item)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    found = verdicts(text, scenario=scenario)
    assert failed(found) == {}
    assert found["no loss"].detail == "5 changes delivered"


@pytest.mark.parametrize(("width", "cut"), [(148, False), (149, True)])
def test_an_image_is_cut_beyond_160_characters(width: int, cut: bool) -> None:
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(200))")
    scenario.insert("shop.t", {"id": 1, "v": "x" * width})
    text = '{"kind": "header", "changes": true, "tables": false}\n'
    detail = failed(verdicts(text, scenario=scenario))["no loss"]
    whole = "id='1', v='" + "x" * width + "'"  # 160 characters, then 161
    shown = "{" + (whole[:157] + "..." if cut else whole) + "}"
    assert (
        detail == f"1 of 1 changes never delivered, first: insert shop.t {shown} (gtid 0-1-1 row 0)"
    )


def test_rows_of_a_table_without_a_key_are_ordered_per_row() -> None:
    # Without a key, a row is identified by all its columns: two different rows' changes may
    # arrive in any order.
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE shop.k (a INT, b VARCHAR(5))")
    scenario.insert("shop.k", {"a": 1, "b": "x"})  # 0-1-1
    scenario.insert("shop.k", {"a": 2, "b": "y"})  # 0-1-2
    lines: list[dict[str, Any]] = [{"kind": "header", "changes": True, "tables": False}]
    for gtid, after in (("0-1-2", {"a": "2", "b": "y"}), ("0-1-1", {"a": "1", "b": "x"})):
        lines.append(
            {"kind": "change", "op": "insert", "table": "shop.k", "gtid": gtid, "row": 0}
            | {"after": after}
        )
    found = verdicts("".join(json.dumps(line) + "\n" for line in lines), scenario=scenario)
    assert failed(found) == {}


def test_every_verdict_is_reported_when_it_passes() -> None:
    found = judge(history(), parse_output(output_text()), OK_RUN, 60.0)
    assert [(v.check, v.ok) for v in found] == [
        ("caught up", True),
        ("no loss", True),
        ("no duplicates", True),
        ("changes as served", True),
        ("per-key order", True),
        ("final tables", True),
    ]


def test_a_change_of_another_kind_at_a_served_position() -> None:
    wrong = list(CHANGES)
    wrong[3] = ("update", "0-1-2", 1, ROW2, ROW2)  # the delete reported as an update
    found = failed(verdicts(output_text(changes=wrong)))
    assert found == {
        "changes as served": "1 difference(s), first: line 5: update shop.t, served delete"
        " shop.t {id='2', v='b', b=NULL} (gtid 0-1-2 row 1)"
    }


def test_a_late_redelivery_is_no_disorder_under_at_least_once() -> None:
    # Order is judged on first deliveries: a change sent again after later ones is a duplicate.
    again = [*CHANGES, CHANGES[2]]
    found = verdicts(output_text(changes=again, guarantee="at-least-once"))
    assert failed(found) == {}
    assert found["no duplicates"].detail == "1 redelivered (at-least-once declared)"
