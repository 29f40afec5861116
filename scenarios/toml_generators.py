"""Row generators of the TOML form: thousands of rows described in one line, the same on every
run. ::

    generate = { count = 1000, seed = 7, columns = { id = { sequence = 1 }, note = ... } }

with, for each column (TOML keeps an inline table on one line)::

    id = { sequence = 1 }                  # 1, 2, 3... (step = 10: 1, 11, 21...)
    note = { pattern = "order {n:05}" }    # "order 00001"... ({n} the 1-based row number)
    qty = { random = [1, 10] }             # whole numbers from 1 to 10 (floats if a bound is)
    status = { choice = ["new", "paid"] }  # one of them at random
    shop = { cycle = ["a", "b", "c"] }     # a, b, c, a, b...
    paid = 0                               # the same value in every row

Random draws come from ``random.Random(seed)`` (seed 0 when none is given), column by column
in the order written, row after row: a file always describes the same rows.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from fakemaster.vocabulary.inputs import finite_number

__all__ = ["MAX_GENERATED_ROWS", "GeneratorError", "generated_rows"]

MAX_GENERATED_ROWS = 1_000_000
_KEYS = {"count", "seed", "columns"}
_KINDS = ("sequence", "pattern", "random", "choice", "cycle")
_PLACEHOLDER = re.compile(r"\{n(?::([0-9<>^=+\- ]{0,8}[dxXob]?))?\}")


class GeneratorError(ValueError):
    """A ``generate`` table that does not describe rows (the TOML form adds where it is)."""


def generated_rows(spec: Any) -> list[dict[str, Any]]:
    """The rows a ``generate`` table describes."""
    if not isinstance(spec, Mapping):
        raise GeneratorError("generate is an inline table { count = N, columns = { ... } }")
    unknown = sorted(set(spec) - _KEYS)
    if unknown:
        raise GeneratorError(
            f"generate: unknown key(s) {', '.join(unknown)} (known: count, seed, columns)"
        )
    count = spec.get("count")
    if (
        isinstance(count, bool)
        or not isinstance(count, int)
        or not 1 <= count <= MAX_GENERATED_ROWS
    ):
        raise GeneratorError(f"generate: count is a whole number from 1 to {MAX_GENERATED_ROWS:,}")
    seed = spec.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise GeneratorError("generate: seed is a whole number")
    columns = spec.get("columns")
    if not isinstance(columns, Mapping) or not columns:
        raise GeneratorError("generate: columns is an inline table of column = generator")
    makers = {name: _column(name, rule) for name, rule in columns.items()}
    draw = random.Random(seed)
    return [
        {name: make(number, draw) for name, make in makers.items()}
        for number in range(1, count + 1)
    ]


def _column(name: str, rule: Any) -> Any:
    """A function of (row number, random source) for one column."""
    if not isinstance(rule, Mapping) or set(rule) in ({"null"}, {"hex"}):
        return lambda number, draw: rule  # a constant (plain or NULL / hex value)
    kinds = [kind for kind in _KINDS if kind in rule]
    if len(kinds) != 1:
        raise GeneratorError(
            f"generate: column {name}: give one of {', '.join(_KINDS)} (or a constant value)"
        )
    kind = kinds[0]
    allowed = {kind, "step"} if kind == "sequence" else {kind}
    if set(rule) - allowed:
        raise GeneratorError(
            f"generate: column {name}: unknown key(s) {', '.join(sorted(set(rule) - allowed))}"
        )
    return _BUILDERS[kind](name, rule)


def _sequence(name: str, rule: Mapping[str, Any]) -> Any:
    start, step = rule["sequence"], rule.get("step", 1)
    for value in (start, step):
        if isinstance(value, bool) or not isinstance(value, int):
            raise GeneratorError(f"generate: column {name}: sequence and step are whole numbers")
    return lambda number, draw: start + (number - 1) * step


def _pattern(name: str, rule: Mapping[str, Any]) -> Any:
    text = rule["pattern"]
    if not isinstance(text, str):
        raise GeneratorError(f"generate: column {name}: pattern is a text with {{n}} in it")
    leftover = _PLACEHOLDER.sub("", text)
    if "{" in leftover or "}" in leftover:
        raise GeneratorError(
            f"generate: column {name}: a pattern's only placeholder is {{n}} or {{n:FORMAT}}"
            " (write no other braces)"
        )
    return lambda number, draw: _PLACEHOLDER.sub(
        lambda found: format(number, found.group(1) or ""), text
    )


def _random(name: str, rule: Mapping[str, Any]) -> Any:
    bounds = rule["random"]
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise GeneratorError(f"generate: column {name}: random = [low, high]")
    try:
        low, high = (finite_number(b, name=f"column {name}: random") for b in bounds)
    except ValueError as exc:
        raise GeneratorError(f"generate: {exc}") from None
    if low > high:
        raise GeneratorError(f"generate: column {name}: random's low bound is above its high")
    if all(isinstance(b, int) for b in bounds):
        first, last = int(bounds[0]), int(bounds[1])
        return lambda number, draw: draw.randint(first, last)
    return lambda number, draw: draw.uniform(low, high)


def _choice(name: str, rule: Mapping[str, Any]) -> Any:
    values = _values(name, rule, "choice")
    return lambda number, draw: draw.choice(values)


def _cycle(name: str, rule: Mapping[str, Any]) -> Any:
    values = _values(name, rule, "cycle")
    return lambda number, draw: values[(number - 1) % len(values)]


def _values(name: str, rule: Mapping[str, Any], kind: str) -> list[Any]:
    values = rule[kind]
    if not isinstance(values, list) or not values:
        raise GeneratorError(f"generate: column {name}: {kind} is a non-empty list of values")
    return values


_BUILDERS = {
    "sequence": _sequence,
    "pattern": _pattern,
    "random": _random,
    "choice": _choice,
    "cycle": _cycle,
}
