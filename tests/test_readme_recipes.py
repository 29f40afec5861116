"""The README's client recipe (the pytest plugin's tutorial) run on every built-in scenario it
claims to work for, and on drawn histories; the scenarios it says it cannot handle fail with it.

A scenario added to ``LIBRARY`` is run here at once: the recipe must handle it, or the README
must say it does not (``UNSUPPORTED`` is the README's list).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from scenarios.library import LIBRARY
from tests.budget import examples

README = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
# The README names them: "works on every built-in scenario but five ...", each with why.
UNSUPPORTED = {
    "ddl_mid_stream": "apply the DDL",
    "no_log_metadata": "SHOW COLUMNS",
    "settings_changes": "SHOW COLUMNS",
    "minimal_image": "SHOW CREATE TABLE",
    "noblob_image": "SHOW CREATE TABLE",
}


def _recipe() -> dict[str, Any]:
    found = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    blocks = [block for block in found if "def my_cdc_client" in block]
    assert len(blocks) == 1, "the README's client recipe (def my_cdc_client) is missing"
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "README.md client recipe", "exec"), namespace)
    return namespace


RECIPE = _recipe()
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def test_the_readme_names_what_the_recipe_cannot_handle() -> None:
    start = README.index("This client works on every built-in scenario but")
    said = " ".join(README[start : README.index("\n\n", start)].split())
    assert f"but {_NUMBERS[len(UNSUPPORTED)]} " in said
    for name, why in UNSUPPORTED.items():
        assert f"`{name}`" in said and why in said


def test_the_readme_tests_name_only_supported_scenarios() -> None:
    marks = RECIPE["test_my_cdc_client"].pytestmark
    names = next(mark.args[1] for mark in marks if mark.name == "parametrize")
    assert set(names) <= set(LIBRARY) - set(UNSUPPORTED)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_recipe_on_every_builtin_scenario(fake_master_factory: Any, name: str) -> None:
    if name in UNSUPPORTED:
        # The README says the recipe cannot handle it: it must really fail there.
        master = fake_master_factory(scenario=name)
        master.release_all()
        with pytest.raises((AssertionError, StopIteration, LookupError, ValueError)):
            master.oracle.assert_matches(RECIPE["my_cdc_client"](master))
        return
    RECIPE["test_my_cdc_client"](fake_master_factory, name)


def test_recipe_on_drawn_histories(fake_master_serving: Any) -> None:
    test = RECIPE["test_my_cdc_client_on_any_history"]
    budget = settings(
        max_examples=examples(0.2), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    budget(test)(fake_master_serving)


def test_the_recipe_runs_as_a_test_module(pytester: pytest.Pytester) -> None:
    """As a user pastes it into a test file: the plugin's fixtures, the parametrized test and
    the @given test (no health check refuses the session-scoped fixture)."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    recipe = next(block for block in blocks if "def my_cdc_client" in block)
    (pytester.path / "test_my_client.py").write_text(recipe)
    budget = f"from hypothesis import settings\nsettings.register_profile('inner', max_examples={examples(0.1)}, deadline=None)\nsettings.load_profile('inner')\n"
    (pytester.path / "conftest.py").write_text(budget)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        "-W",
        "ignore::DeprecationWarning",
    )
    result.assert_outcomes(passed=len(RECIPE["test_my_cdc_client"].pytestmark[0].args[1]) + 1)
