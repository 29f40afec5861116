"""The errors of the scenario layer: a schema that cannot be, a value that does not fit its
column, a history that cannot happen."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches
from typing import Any

__all__ = [
    "ScenarioError",
    "SchemaError",
    "ValueDoesNotFit",
    "HistoryError",
    "describe",
    "did_you_mean",
]


class ScenarioError(ValueError):
    """Base of every error of ``scenarios``."""


class SchemaError(ScenarioError):
    """A table definition that cannot be (unknown type, bad length, CREATE TABLE text that does
    not parse, a key over an unknown column...)."""


def describe(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (long bytes say their length)."""
    text = repr(value)
    if len(text) > limit:
        size = f", {len(value)} bytes" if isinstance(value, bytes | bytearray) else ""
        text = f"{text[: limit - 15]}...{text[-8:]} ({type(value).__name__}{size})"
    return text


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a misspelt ``name`` (case
    ignored), or an empty text when none is close."""
    spelled = {item.lower(): item for item in known}
    close = get_close_matches(name.lower(), list(spelled), n=1, cutoff=0.6)
    return f" (did you mean {spelled[close[0]]!r}?)" if close else ""


class ValueDoesNotFit(ScenarioError):
    """A value its column cannot hold (too long, out of range, fractional seconds beyond the
    column's precision, not a member of the ENUM...): never truncated, always this error."""

    def __init__(self, table: str, column: str, value: Any, why: str) -> None:
        self.table = table
        self.column = column
        self.value = value
        self.why = why
        super().__init__(f"{table}.{column}: {describe(value)} does not fit: {why}")


class HistoryError(ScenarioError):
    """A change that cannot happen to the tables as they are (a duplicate key, an update or
    delete of a row that is not there, an unknown table or column...)."""
