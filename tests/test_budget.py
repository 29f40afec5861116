"""Hypothesis budgets come from the profiles of tests/conftest.py: no test names a number of
examples of its own (so ``HYPOTHESIS_PROFILE=ci`` bounds the whole suite), and the scaling
helper follows the active profile."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import settings

from tests.budget import examples

TESTS = Path(__file__).resolve().parent
CONFTEST = TESTS / "conftest.py"


def _budget_keywords(tree: ast.AST) -> list[tuple[int, ast.expr]]:
    """(line, value) of every ``max_examples=`` keyword argument in a module."""
    return [
        (keyword.lineno, keyword.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "max_examples"
    ]


def _is_scaled(value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == examples.__name__
    )


def test_no_test_names_its_own_number_of_examples() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == CONFTEST:  # where the profiles are registered
            continue
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for line, value in _budget_keywords(tree):
            if not _is_scaled(value):
                offenders.append(f"{path.relative_to(TESTS.parent)}:{line}: {ast.unparse(value)}")
    assert offenders == [], "max_examples must be tests.budget.examples(scale):\n" + "\n".join(
        offenders
    )


def test_the_check_sees_literal_and_computed_budgets() -> None:
    source = (
        "@settings(max_examples=400)\ndef a(): ...\n"
        "FUZZ = settings(deadline=None, max_examples=2 * 50)\n"
        "@settings(max_examples=examples(4))\ndef b(): ...\n"
    )
    found = [(line, _is_scaled(value)) for line, value in _budget_keywords(ast.parse(source))]
    assert sorted(found) == [(1, False), (3, False), (4, True)]


def test_profiles_bound_ci_and_let_deep_explore() -> None:
    ci, dev, deep = (settings.get_profile(name) for name in ("ci", "dev", "deep"))
    assert ci.max_examples <= 60
    assert ci.max_examples < dev.max_examples < deep.max_examples
    assert deep.max_examples >= 5000
    assert deep.deadline is None and ci.deadline is None


def test_examples_scale_the_active_profile() -> None:
    active = settings.default.max_examples
    assert examples(1) == active
    assert examples(4) == 4 * active
    assert examples(0.5) == round(active / 2)
    assert examples(1e-9) == 1  # never zero examples
    with pytest.raises(ValueError, match="positive"):
        examples(0)


def test_the_ci_profile_draws_the_same_examples_on_every_run() -> None:
    """CI's verdict must not depend on a random seed: the ci profile is derandomized and keeps
    no example database (a failure found once is found every time, by every machine)."""
    from hypothesis import settings

    ci = settings.get_profile("ci")
    assert ci.derandomize
    assert ci.database is None
