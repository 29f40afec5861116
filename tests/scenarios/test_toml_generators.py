"""Row generators of the TOML form: the rows they describe, computed here independently, the
same on every run, and every misuse refused with where it is."""

from __future__ import annotations

import pytest

from scenarios.toml_form import TomlScenarioError, load_scenario
from scenarios.toml_generators import MAX_GENERATED_ROWS, GeneratorError, generated_rows

TABLE = "[[tables]]\ncreate = 'CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20),"
TABLE += ' qty INT, status ENUM("new","paid"), shop CHAR(1), paid BOOL)\'\n'


def test_every_kind_of_column_generator() -> None:
    rows = generated_rows(
        {
            "count": 5,
            "seed": 7,
            "columns": {
                "id": {"sequence": 10, "step": 5},
                "note": {"pattern": "order {n:03} of {n}"},
                "qty": {"random": [1, 3]},
                "status": {"choice": ["new", "paid"]},
                "shop": {"cycle": ["a", "b"]},
                "paid": False,
            },
        }
    )
    assert [row["id"] for row in rows] == [10, 15, 20, 25, 30]
    assert [row["note"] for row in rows] == [f"order {n:03} of {n}" for n in range(1, 6)]
    assert {row["qty"] for row in rows} <= {1, 2, 3}
    assert {row["status"] for row in rows} <= {"new", "paid"}
    assert [row["shop"] for row in rows] == ["a", "b", "a", "b", "a"]
    assert all(row["paid"] is False for row in rows)


def test_the_same_spec_gives_the_same_rows_and_the_seed_matters() -> None:
    spec = {"count": 200, "seed": 1, "columns": {"v": {"random": [0, 1_000_000]}}}
    assert generated_rows(spec) == generated_rows(dict(spec))
    assert generated_rows(spec) != generated_rows({**spec, "seed": 2})
    floats = generated_rows({"count": 50, "columns": {"v": {"random": [0.5, 1]}}})
    assert all(0.5 <= row["v"] <= 1 and isinstance(row["v"], float) for row in floats)


def test_a_scenario_of_thousands_of_generated_rows() -> None:
    text = TABLE + (
        "generate = { count = 3, columns = { id = { sequence = 1 }, note = 'seed' } }\n"
        "[[steps]]\nchanges = [{ insert = 'shop.orders', generate = { count = 4000, seed = 3,"
        " columns = { id = { sequence = 4 }, note = { pattern = 'n{n}' },"
        " status = { cycle = ['paid', 'new'] } } } }]\n"
    )
    scenario = load_scenario(text)
    rows = scenario.contents.rows["shop.orders"]
    assert len(rows) == 4003
    assert [row[0] for row in rows] == list(range(1, 4004))
    assert rows[3][1] == b"n1" and rows[-1][1] == b"n4000"
    assert [row[3] for row in rows[3:7]] == [2, 1, 2, 1]  # ENUM indexes of paid, new


@pytest.mark.parametrize(
    ("generate", "message"),
    [
        ("{ count = 0, columns = { id = 1 } }", "count is a whole number from 1"),
        (f"{{ count = {MAX_GENERATED_ROWS + 1}, columns = {{ id = 1 }} }}", "count is"),
        ("{ count = 2 }", "columns is an inline table"),
        ("{ count = 2, columns = { id = 1 }, seeds = 3 }", "unknown key(s) seeds"),
        ("{ count = 2, columns = { id = { sequence = 'a' } } }", "whole numbers"),
        ("{ count = 2, columns = { id = { sequence = 1, stride = 2 } } }", "unknown key(s) stride"),
        ("{ count = 2, columns = { note = { pattern = '{0.__class__}' } } }", "only placeholder"),
        ("{ count = 2, columns = { qty = { random = [5, 1] } } }", "low bound is above"),
        ("{ count = 2, columns = { qty = { random = [1, inf] } } }", "finite"),
        ("{ count = 2, columns = { qty = { choice = [] } } }", "non-empty list"),
        ("{ count = 2, columns = { qty = { range = [1, 2] } } }", "give one of sequence"),
        ("{ count = 2, columns = { id = 1 } }", "Duplicate entry '1' for key 'PRIMARY'"),
    ],
)
def test_a_wrong_generator_says_what_and_where(generate: str, message: str) -> None:
    text = TABLE + f"[[steps]]\nchanges = [{{ insert = 'shop.orders', generate = {generate} }}]\n"
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(text, source="gen.toml")
    if message != "finite":  # refused when the file is read, before it is a scenario
        where = "gen.toml:4:12: step 1, change 1 (insert shop.orders)"
        assert caught.value.args[0].startswith(where)
    assert message in caught.value.args[0]


def test_a_generator_that_is_not_a_table() -> None:
    with pytest.raises(GeneratorError, match="inline table"):
        generated_rows(5)
