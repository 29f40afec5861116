"""The oracle's diff always diffs: a client row lacking columns or naming unknown ones is
reported with the columns named (the issue's ``minimal_image`` case raised ScenarioError), and
values are SQL literals by type (numbers bare, strings quoted)."""

from __future__ import annotations

from typing import Any

from scenarios import Oracle, Scenario, Settings
from scenarios.library import build


def _client_tables(oracle: Oracle) -> dict[str, list[dict[str, Any]]]:
    return {
        name: [dict(zip(table.column_names, row, strict=True)) for row in oracle.rows(name)]
        for name, table in oracle.tables().items()
    }


def _diff_text(oracle: Oracle, tables: dict[str, list[dict[str, Any]]]) -> str:
    return "\n".join(line for d in oracle.diff(tables) for line in d.lines())


def test_a_row_lacking_a_column_is_diffed_with_the_column_named() -> None:
    oracle = Oracle(build("minimal_image"))
    tables = _client_tables(oracle)
    assert oracle.diff(tables) == []
    del tables["img.t"][0]["b"]  # as a client that drops columns a MINIMAL insert left out
    text = _diff_text(oracle, tables)
    assert text.splitlines()[0] == "img.t: 1 row(s) missing, 0 unexpected, 1 malformed"
    assert "! a row lacks column(s) b: id=2, a=NULL, b=<missing>," in text
    assert "  - id=2, a=NULL, b='dflt'," in text


def test_a_row_with_an_unknown_column_is_named() -> None:
    oracle = Oracle(build("minimal_image"))
    tables = _client_tables(oracle)
    tables["img.t"][0]["@7"] = 1
    assert "has unknown column(s) @7" in _diff_text(oracle, tables)


def test_a_row_missing_one_column_and_with_an_unrenderable_value() -> None:
    oracle = Oracle(build("minimal_image"))
    tables = _client_tables(oracle)
    tables["img.t"][0].pop("u")
    tables["img.t"][0]["a"] = "not a number"
    text = _diff_text(oracle, tables)
    assert "lacks column(s) u" in text and "a='not a number'" in text


def test_values_are_literals_by_type() -> None:
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE db.t (k0 INT PRIMARY KEY, s VARCHAR(9), b BINARY(3), d DECIMAL(5,2))"
    )
    scenario.insert("db.t", {"k0": 0, "s": "it's", "b": b"", "d": "1.50"})
    oracle = Oracle(scenario)
    tables = {"db.t": [{"k0": 0, "s": "it's", "b": b"", "d": "1.5"}]}
    assert oracle.diff(tables) == []  # BINARY padded, DECIMAL converted: equal
    tables["db.t"][0]["s"] = "its"
    text = _diff_text(oracle, tables)
    assert "  - k0=0, s='it''s', b=0x000000, d=1.50" in text
    assert "  + k0=0, s='its', b=0x000000, d=1.50" in text
