"""UUID, INET4 and INET6 (and system-versioned tables) through the pipeline: the binlog logs
them as BINARY(16)/BINARY(4), so the schema catalogue says which columns they are
(``mariadb_types``, or the entry's ``create``); the change events then carry the server's text
and the materialised tables equal the primary's."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark.columns import table_info
from fakemaster.vocabulary.events import TableMapEvent
from scenarios.compiler import compile_scenario
from scenarios.history import Settings
from scenarios.oracle import Oracle
from scenarios.sql import create_table_sql
from tests.fakemaster.spark.test_batch_scenarios import run_batch
from tests.scenarios.test_mariadb_types import network
from tests.scenarios.test_table_kinds import kinds
from tests.support.spark_tables import read_tables


def _catalogue() -> dict[str, Any]:
    scenario = network(Settings())
    return {
        # one table by its types, the other by its CREATE statement
        "net.hosts": {"mariadb_types": {"id": "uuid", "v4": "INET4", "v6": "inet6"}},
        "net.links": {"create": create_table_sql(scenario.tables["net.links"])},
    }


GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "table_kinds"


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime.datetime):  # as UNIX_TIMESTAMP(...) printed it
        return f"{value.timestamp():.6f}"
    return str(value)


def test_a_real_capture_materialises_to_the_primarys_tables(spark: Any, tmp_path: Path) -> None:
    """The golden binlog of a real MariaDB 10.11 (tests/golden/table_kinds), its UUID/INET table
    declared by its SHOW CREATE TABLE in the catalogue: the UUID/INET table holds the server's
    text, a system-versioned table its history rows (row_end is part of its key)."""
    from fakemaster.spark import FORMAT_NAME, materialise

    expected = json.loads((GOLDEN / "expected.json").read_text())
    catalogue = {"kinds.t_types": {"create": expected["tables"]["t_types"]["create"]}}
    files = [str(GOLDEN / name) for name in expected["binlog_files"]]
    events = spark.read.format(FORMAT_NAME).option("catalog", json.dumps(catalogue)).load(files)
    materialise(spark, events, str(tmp_path / "out"), catalogue=catalogue)
    tables = read_tables(tmp_path / "out")
    for name in ("t_types", "v", "v2", "s1", "s2"):  # a sequence: its row as last logged
        got = sorted(
            ([_cell(v) for v in row.values()] for row in tables[f"kinds.{name}"]), key=repr
        )
        assert got == sorted(expected["tables"][name]["rows"], key=repr), name
    first = events.where("op = 'c' AND `table` = 't_types'").orderBy("seq").first()
    assert list(first["column_types"]) == ["int", "string", "string", "string"]


def _hosts_map() -> TableMapEvent:
    scenario = network(Settings(binlog_row_metadata="FULL"))
    for transaction in compile_scenario(scenario):
        for event in transaction.events:
            if isinstance(event, TableMapEvent) and event.table == "hosts":
                return event
    raise AssertionError("no TABLE_MAP of net.hosts")


def test_without_a_catalogue_they_are_the_binary_the_binlog_says() -> None:
    info = table_info(_hosts_map())
    assert info.spark_types == ("binary", "binary", "binary", "string")
    assert info.columns[2].to_text(b"\x00\x01") == "0x" + "0001".ljust(32, "0")


def test_a_catalogue_that_contradicts_the_table_map_is_an_error_naming_the_column() -> None:
    wrong = {"net.hosts": {"mariadb_types": {"v4": "inet6"}}}  # a BINARY(4) column
    with pytest.raises(ValueError, match=r"net\.hosts\.v4: the catalogue says INET6"):
        table_info(_hosts_map(), wrong)
    with pytest.raises(ValueError, match="'ipv6' is not one of uuid, inet4, inet6"):
        table_info(_hosts_map(), {"net.hosts": {"mariadb_types": {"v6": "ipv6"}}})
    typed = table_info(_hosts_map(), {"net.hosts": {"mariadb_types": {"v4": "inet4"}}})
    assert typed.columns[1].to_text(b"\x0a") == "10.0.0.0"  # trailing zero bytes not logged


def test_the_change_events_carry_the_servers_text() -> None:
    info = table_info(_hosts_map(), _catalogue())
    assert info.spark_types == ("string", "string", "string", "string")
    uuid = bytes.fromhex("01890a5dac96774bbcceb302099a8057")
    assert info.columns[0].to_text(uuid) == "01890a5d-ac96-774b-bcce-b302099a8057"
    assert info.columns[2].to_text(bytes.fromhex("00000000000000000000ffffc0000201")) == (
        "::ffff:192.0.2.1"
    )


def test_a_scenario_with_a_sequence_and_versioned_tables_materialises_to_its_oracle(
    spark: Any, tmp_path: Path
) -> None:
    """The history of tests/scenarios/test_table_kinds.py (compiled, its events equal to a real
    server's): each sequence's table holds its one row as last logged, each versioned table
    every version (row_end is part of its key, as the oracle and FOR SYSTEM_TIME ALL have them),
    the UUID/INET columns the server's text."""
    scenario = kinds(Settings(binlog_row_metadata="FULL"))
    types = {"id": "uuid", "v4": "inet4", "v6": "inet6"}
    catalogue = {
        "tk.hosts": {"mariadb_types": types},
        "tk.prices": {"mariadb_types": {"ip": "inet6"}},
    }
    tables = run_batch(spark, scenario, tmp_path, {"catalog": json.dumps(catalogue)})
    Oracle(scenario).assert_matches(tables)


def test_the_tables_create_sequence_makes_are_found_and_a_broken_one_is_not() -> None:
    from fakemaster.spark.materialiser import sequence_tables

    statements = [
        ("CREATE SEQUENCE s1", "kinds"),
        ("create or replace sequence `other`.`s2` CACHE 5", "kinds"),
        ("CREATE SEQUENCE s3 BOGUS 1", "kinds"),  # not a statement the model reads
        ("CREATE SEQUENCE s4", None),  # no database: unknown
        ("CREATE TABLE s5 (sequence INT)", "kinds"),
    ]
    assert sequence_tables(statements) == {("kinds", "s1"), ("other", "s2")}
