"""The history model refuses what cannot happen; the oracle's exports have their documented
form; every module of ``scenarios`` declares what it exports and ``import scenarios`` stays
light."""

from __future__ import annotations

import importlib
import json
from decimal import Decimal
from pathlib import Path

import pytest

from fakemaster.vocabulary.events import Gtid
from scenarios import HistoryError, Oracle, Scenario, Settings
from scenarios.compiler import compile_scenario
from scenarios.errors import ScenarioError, ValueDoesNotFit
from scenarios.oracle import export_jsonl, export_tsv
from tests.test_layering import loaded_after_importing, package_modules


def shop() -> Scenario:
    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, code CHAR(2) NOT NULL, note TEXT,"
        " UNIQUE KEY (code))",
        rows=[{"id": 1, "code": "aa"}],
    )
    scenario.create_table("CREATE TABLE shop.log (v INT)")
    return scenario


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda s: s.insert("shop.orders", {"id": 1, "code": "bb"}),
            "Duplicate entry '1' for key 'PRIMARY'",
        ),
        (
            lambda s: s.insert("shop.orders", {"id": 2, "code": "aa"}),
            "Duplicate entry 'aa' for key 'code'",
        ),
        (lambda s: s.insert("shop.orders", {"id": 2}), "leaves out code"),
        (lambda s: s.insert("shop.nope", {"id": 2}), "no table 'shop.nope'"),
        (lambda s: s.update("shop.orders", {"id": 9}, {"note": "x"}), "no row where"),
        (lambda s: s.update("shop.orders", {"code": "aa"}, {"note": "x"}), "named by its key"),
        (lambda s: s.update("shop.orders", {"id": 1}, {}), "sets no column"),
        (lambda s: s.delete("shop.log", {"v": 1}), "no row where"),
        (lambda s: s.delete("shop.log", {}), "every column"),
        (
            lambda s: s.insert(
                "shop.orders", {"id": 2, "code": "b"}, {"id": 3, "code": "c", "note": ""}
            ),
            "the same columns",
        ),
    ],
)
def test_a_change_that_cannot_happen_is_refused(make: object, message: str) -> None:
    scenario = shop()
    with pytest.raises(HistoryError, match=message):
        make(scenario)  # type: ignore[operator]
    assert scenario.transactions == []


def test_a_failed_change_leaves_the_whole_transaction_out() -> None:
    scenario = shop()
    with pytest.raises(ValueDoesNotFit, match="shop.orders.code"):
        with scenario.transaction() as tx:
            tx.insert("shop.orders", {"id": 2, "code": "bb"})
            tx.insert("shop.orders", {"id": 3, "code": "ccc"})
    assert scenario.transactions == []
    assert Oracle(scenario).rows("shop.orders") == [(1, b"aa", None)]


def test_changes_within_a_transaction_see_each_other_and_keys_can_move() -> None:
    scenario = shop()
    with scenario.transaction(domain_id=3, server_id=9) as tx:
        tx.update("shop.orders", {"id": 1}, {"id": 5, "code": "zz"})
        tx.insert("shop.orders", {"id": 1, "code": "aa"})  # the old key and code are free
        tx.insert("shop.log", {"v": 1}, {"v": 1})
        tx.delete("shop.log", {"v": 1})  # one of two identical rows
    oracle = Oracle(scenario)
    assert oracle.rows("shop.orders", after=0) == [(1, b"aa", None)]
    assert sorted(oracle.rows("shop.orders")) == [(1, b"aa", None), (5, b"zz", None)]
    assert oracle.rows("shop.log") == [(1,)]


def test_gtids_continue_each_domains_state_and_empty_transactions_take_none() -> None:
    scenario = Scenario(gtid_state=[Gtid(0, 1, 41), Gtid(2, 7, 9)])
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
    scenario.insert("d.t", {"id": 1, "v": 1})
    scenario.update("d.t", {"id": 1}, {"v": 1})  # changes nothing: nothing is logged
    with scenario.transaction(domain_id=2, server_id=4) as tx:
        tx.update("d.t", {"id": 1}, {"v": 2})
    scenario.delete("d.t", {"id": 1})
    gtids = [item.gtid for item in compile_scenario(scenario)]
    assert gtids == [Gtid(0, 1, 42), None, Gtid(2, 4, 10), Gtid(0, 1, 43)]


def test_settings_refuse_what_the_server_does_not_take() -> None:
    with pytest.raises(ScenarioError, match="binlog_row_image"):
        Settings(binlog_row_image="PARTIAL")
    with pytest.raises(ScenarioError, match="multiple of 256"):
        Settings(binlog_row_event_max_size=1000)


def test_the_exports_have_one_file_per_table_in_the_documented_form(tmp_path: Path) -> None:
    scenario = Scenario()
    table = scenario.create_table(
        "CREATE TABLE d.t (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(4), f FLOAT,"
        " d DECIMAL(4,1), e SET('x','y'), bits BIT(4))",
        rows=[
            {
                "id": 2,
                "s": "tab\there",
                "b": b"\x00\xff",
                "f": 0.5,
                "d": "-1.5",
                "e": "x,y",
                "bits": 5,
            },
            {"id": 1, "s": None, "b": b"", "f": 3.5, "d": Decimal(0), "e": "", "bits": 0},
        ],
    )
    paths = Oracle(scenario).export(tmp_path)
    assert sorted(p.name for p in paths) == ["d.t.jsonl", "d.t.tsv"]
    rows = [json.loads(line) for line in (tmp_path / "d.t.jsonl").read_text().splitlines()]
    assert rows == [
        {"id": "1", "s": None, "b": "0x", "f": "3.5", "d": "0.0", "e": "", "bits": "0"},
        {
            "id": "2",
            "s": "tab\there",
            "b": "0x00FF",
            "f": "0.5",
            "d": "-1.5",
            "e": "x,y",
            "bits": "5",
        },
    ]
    assert (tmp_path / "d.t.tsv").read_text() == (
        "id\ts\tb\tf\td\te\tbits\n1\t\\N\t0x\t3.5\t0.0\t\t0\n2\ttab\\there\t0x00FF\t0.5\t-1.5\tx,y\t5\n"
    )
    assert export_jsonl(table, []) == "" and export_tsv(table, []).count("\n") == 1


SCENARIO_MODULES = sorted(
    name
    for name in package_modules("scenarios")
    if name == "scenarios"
    or not name.startswith("scenarios.strategies.")
    or name == "scenarios.strategies.history"
)


@pytest.mark.parametrize("name", SCENARIO_MODULES)
def test_every_scenarios_module_declares_what_it_exports(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__dict__.get("__all__")
    assert isinstance(exported, list) and exported, f"{name} declares no __all__"
    assert len(set(exported)) == len(exported)
    assert [n for n in exported if not hasattr(module, n)] == []


def test_import_scenarios_loads_nothing_else_of_the_project() -> None:
    loaded = loaded_after_importing(["scenarios"])
    project = [
        n for n in loaded if n.split(".")[0] in ("scenarios", "fakemaster", "encoder", "decoder")
    ]
    # fakemaster itself (its lazy-name helper) loads nothing more (tests/test_public_api.py).
    assert project == ["fakemaster", "scenarios"]


def test_a_scenario_reads_as_its_settings_ddl_and_statements() -> None:
    scenario = shop()
    with scenario.transaction(domain_id=2, server_id=3) as tx:
        tx.update("shop.orders", {"id": 1}, {"note": "x"})
    assert repr(scenario).splitlines()[1:] == [
        "  CREATE TABLE `shop`.`orders` (`id` int NOT NULL, `code` char(2) CHARACTER SET utf8mb4"
        " COLLATE utf8mb4_general_ci NOT NULL, `note` text CHARACTER SET utf8mb4 COLLATE"
        " utf8mb4_general_ci NULL, PRIMARY KEY (`id`), UNIQUE KEY `code` (`code`)) ENGINE=InnoDB",
        "    INSERT INTO `shop`.`orders` (`id`,`code`,`note`) VALUES (1,'aa',NULL)",
        "  CREATE TABLE `shop`.`log` (`v` int NULL) ENGINE=InnoDB",
        "  transaction 1 (domain 2, server 3):",
        "    UPDATE `shop`.`orders` SET `note`='x' WHERE `id` = 1",
    ]


def test_a_change_caught_inside_a_transaction_leaves_no_trace() -> None:
    scenario = shop()
    with scenario.transaction() as tx:
        with pytest.raises(HistoryError):
            tx.insert("shop.orders", {"id": 2, "code": "bb"}, {"id": 3, "code": "bb"})
        tx.insert("shop.orders", {"id": 3, "code": "bb"})
    assert sorted(Oracle(scenario).rows("shop.orders")) == [(1, b"aa", None), (3, b"bb", None)]
