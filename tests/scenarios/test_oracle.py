"""The oracle's canonical cells, type by type, against what MariaDB 10.11.19 returned for the
same CREATE TABLE and rows (``time_zone = '+00:00'``, each column cast to text, the byte column
as ``CONCAT('0x', HEX(b))``): the fast tests did not pin them (docs/mutation.md), only the
real-server differentials did."""

from __future__ import annotations

import pytest

from scenarios.errors import ScenarioError
from scenarios.history import Scenario
from scenarios.oracle import TableDiff, canonical_rows, client_row, export_jsonl

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
