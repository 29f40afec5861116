"""The README's Python examples run as written, in order, from the repository root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text("utf-8"), re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    exec(compile(BLOCKS[index], f"README.md example {index + 1}", "exec"), {})


TOML_BLOCKS = re.findall(r"```toml\n(.*?)```", (REPO / "README.md").read_text("utf-8"), re.DOTALL)


@pytest.mark.parametrize("index", range(len(TOML_BLOCKS)))
def test_readme_scenario_files_load(index: int) -> None:
    """The README's scenario file builds the scenario of the README's Python tutorial."""
    from scenarios import Oracle, Scenario, Settings
    from scenarios.toml_form import load_scenario

    tutorial = Scenario(Settings(binlog_row_metadata="FULL"))
    tutorial.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, status ENUM('new','paid') NOT NULL,"
        " note VARCHAR(40))"
    )
    tutorial.insert("shop.orders", {"id": 1, "status": "new", "note": "first"})
    with tutorial.transaction() as tx:
        tx.update("shop.orders", {"id": 1}, {"status": "paid"})
        tx.insert("shop.orders", {"id": 2, "status": "new", "note": None})
    from_file = Oracle(load_scenario(TOML_BLOCKS[index]))
    assert from_file.rows("shop.orders") == Oracle(tutorial).rows("shop.orders")
    assert len(from_file.rows("shop.orders")) == 2
