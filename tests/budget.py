"""Hypothesis budgets as a scale of the active profile's (tests/conftest.py registers ci, dev
and deep), so that selecting a profile bounds every property test of the suite.

A test that is cheap and worth exploring more (a fuzz target), or slow (each example starts
connections or builds wide tables), says so relatively::

    @settings(max_examples=examples(4))     # four times the profile's budget
    @settings(max_examples=examples(0.25))  # a quarter of it

The profile must be loaded before test modules are imported: tests/conftest.py does it.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]


def examples(scale: float) -> int:
    """``scale`` times the active profile's ``max_examples``, rounded, at least 1."""
    if scale <= 0:
        raise ValueError(f"a budget scale must be positive, not {scale!r}")
    return max(1, round(settings.default.max_examples * scale))
