"""The oracle's canonical cells, type by type, against what MariaDB 10.11.19 returned for the
same CREATE TABLE and rows (``time_zone = '+00:00'``, each column cast to text, the byte column
as ``CONCAT('0x', HEX(b))``): the fast tests did not pin them (docs/mutation.md), only the
real-server differentials did."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.errors import ScenarioError
from scenarios.history import Scenario
from scenarios.oracle import (
    Oracle,
    TableDiff,
    canonical_rows,
    client_row,
    diff_tables,
    export_jsonl,
    sql_literal,
)
from scenarios.state import Contents

CREATE = (
    "CREATE TABLE db.t (id INT PRIMARY KEY, e ENUM('x','y'), st SET('a','b','c'), d DATE,"
    " dt DATETIME(2), tm TIME, ts TIMESTAMP(3) NULL, y YEAR, de DECIMAL(6,2), b VARBINARY(4),"
    " f FLOAT, v VARCHAR(5), n INT)"
)
ROWS = [
    {
        "id": 1,
        "e": "y",
        "st": "a,c",
        "d": "2024-02-29",
        "dt": "2024-02-29 10:11:12.5",
        "tm": "-01:02:03",
        "ts": "2024-02-29 10:11:12.125",
        "y": 2024,
        "de": "1.5",
        "b": b"\x00\xab",
        "f": 1.5,
        "v": "é",
        "n": None,
    },
    {"id": 2, "e": "x", "st": "", "ts": "0000-00-00 00:00:00", "y": 1999},
]
FROM_MARIADB = [
    (
        "1", "y", "a,c", "2024-02-29", "2024-02-29 10:11:12.50", "-01:02:03",
        "2024-02-29 10:11:12.125", "2024", "1.50", "0x00AB", "1.5", "é", None,
    ),
    (
        "2", "x", "", None, None, None, "0000-00-00 00:00:00.000", "1999", None, None, None,
        None, None,
    ),
]  # fmt: skip


def test_canonical_cells_are_mariadbs_text() -> None:
    scenario = Scenario()
    table = scenario.create_table(CREATE)
    for row in ROWS:
        scenario.insert("db.t", row)
    assert canonical_rows(table, scenario.contents.rows["db.t"]) == FROM_MARIADB


def test_rows_of_a_table_without_a_key_sort_by_their_cells_null_first() -> None:
    # NULL first, as MariaDB's ORDER BY puts it; the export keeps non-ASCII text as it is.
    scenario = Scenario()
    table = scenario.create_table("CREATE TABLE db.k (a VARCHAR(5), b INT)")
    for row in ({"a": "é", "b": 1}, {"a": None, "b": 2}, {"a": "b", "b": None}):
        scenario.insert("db.k", row)
    rows = scenario.contents.rows["db.k"]
    assert canonical_rows(table, rows) == [(None, "2"), ("b", None), ("é", "1")]
    assert export_jsonl(table, rows).splitlines() == [
        '{"a": null, "b": "2"}',
        '{"a": "b", "b": null}',
        '{"a": "é", "b": "1"}',
    ]


def test_a_table_diff_cut_at_its_limit() -> None:
    diff = TableDiff(
        "db.t",
        missing=(("x",), (None,), ("z",)),
        unexpected=(),
        column_names=("a",),
        malformed=tuple((f"problem {i}", (f"a={i}",)) for i in range(3)),
    )
    assert diff
    assert not TableDiff("db.t", (), (), ("a",))
    assert TableDiff("db.t", (), (), ("a",), malformed=(("p", ()),))
    assert diff.lines(limit=2) == [
        "db.t: 3 row(s) missing, 0 unexpected, 3 malformed",
        "  ! problem 0: a=0",
        "  ! problem 1: a=1",
        "  ! ... 1 more",
        "  - a='x'",
        "  - a=NULL",
        "  - ... 1 more",
    ]


def test_a_client_row_of_the_wrong_width_is_named() -> None:
    table = Scenario().create_table("CREATE TABLE db.w (a INT, b INT)")
    with pytest.raises(ScenarioError, match=r"^db\.w: a row of 1 values$"):
        client_row(table, (1,))
    with pytest.raises(ScenarioError, match=r"^db\.w: a row of \['a'\] lacks columns$"):
        client_row(table, {"a": 1})
    assert client_row(table, {"b": 2, "a": 1}) == (1, 2)


# The tests below pin what mutation testing found unpinned (docs/mutation.md, oracle): values
# from MariaDB's own text or from the definitions in the docstrings, never from the code.


def test_a_double_is_its_shortest_text() -> None:
    # MariaDB 10.11: SELECT CAST(2.5e0 AS CHAR) returns '2.5'.
    table = Scenario().create_table("CREATE TABLE db.d (id INT PRIMARY KEY, x DOUBLE)")
    assert canonical_rows(table, [(1, 2.5)]) == [("1", "2.5")]


@pytest.mark.parametrize(
    ("kind", "cell", "literal"),
    [
        ("VARBINARY(4)", "0x", "''"),  # empty bytes: 0x alone is no literal
        ("BLOB", "0x00AB", "0x00AB"),
        ("VARCHAR(4)", "0x41", "'0x41'"),  # text that looks like hex stays text
        ("VARCHAR(4)", "it's", "'it''s'"),
        ("INT", "7", "7"),
    ],
)
def test_sql_literal_by_column_type(kind: str, cell: str, literal: str) -> None:
    table = Scenario().create_table(f"CREATE TABLE db.l (id INT PRIMARY KEY, c {kind})")
    assert sql_literal(table.columns[1], cell) == literal


def test_rows_sort_by_key_value_and_keyless_rows_by_every_cell() -> None:
    scenario = Scenario()
    keyed = scenario.create_table("CREATE TABLE db.k (id INT PRIMARY KEY, v INT)")
    keyless = scenario.create_table("CREATE TABLE db.n (a VARCHAR(5), b INT)")
    # By value, not by text ('10' < '2'); keyless: the second cell breaks the first's tie.
    assert canonical_rows(keyed, [(10, 1), (2, 2)]) == [("2", "2"), ("10", "1")]
    assert canonical_rows(keyless, [("b", 1), ("a", 2), ("a", 1)]) == [
        ("a", "1"),
        ("a", "2"),
        ("b", "1"),
    ]


def test_a_diff_shows_twenty_rows_by_default_and_every_duplicate() -> None:
    table = Scenario().create_table("CREATE TABLE db.r (a INT)")
    want = Contents({"db.r": [(i,) for i in range(21)]})
    diff = diff_tables({"db.r": table}, want, {"db.r": [(99,), (99,)]})[0]
    lines = diff.lines()
    assert lines[0] == "db.r: 21 row(s) missing, 2 unexpected"
    # A keyless table's rows in the order of their cells' text: 0, 1, 10, ..., 19, 2, ..., 8.
    assert lines[20:] == ["  - a=8", "  - ... 1 more", "  + a=99", "  + a=99"]
    exactly = diff_tables({"db.r": table}, Contents({"db.r": [(1,), (2,)]}), {"db.r": []})[0]
    assert exactly.lines(limit=2) == ["db.r: 2 row(s) missing, 0 unexpected", "  - a=1", "  - a=2"]
    malformed = TableDiff("db.r", (), (), ("a",), malformed=(("p", ()), ("q", ())))
    assert malformed.lines(limit=2)[1:] == ["  ! p: ", "  ! q: "]


def test_the_state_after_a_point_out_of_range_or_of_a_streamed_history(tmp_path: Path) -> None:
    scenario = Scenario()
    scenario.create_table("CREATE TABLE db.s (id INT PRIMARY KEY)")
    scenario.insert("db.s", {"id": 1})
    scenario.insert("db.s", {"id": 2})
    oracle = Oracle(scenario)
    assert oracle.points == 2
    assert oracle.rows("db.s", after=1) == [(1,)]
    with pytest.raises(
        ScenarioError, match=r"^the scenario has 2 transactions and DDL statements$"
    ):
        oracle.state(after=3)
    written = oracle.export(tmp_path / "new" / "dir", after=1)
    assert [path.name for path in written] == ["db.s.jsonl", "db.s.tsv"]
    assert written[1].read_text() == "id\n1\n"
    with pytest.raises(AssertionError, match=r"^db\.s: 1 row\(s\) missing, 0 unexpected"):
        oracle.assert_matches({"db.s": [(1,)]})
    oracle.assert_matches({"db.s": [(1,), (2,)]})
    scenario.take_steps()  # streamed: the steps are no longer kept
    with pytest.raises(ScenarioError, match=r"^the state after 1 of 2 points: this history"):
        oracle.state(after=1)
    assert oracle.rows("db.s") == [(1,), (2,)]
