"""The per-column literal and WHERE-condition writers of :mod:`scenarios.sql` (worked out once
per table for the ANNOTATE_ROWS text) spell every value as :func:`scenarios.sql.literal` and
the plain per-value condition do, and fail where they fail: values of the column and values of
other types (ints, bools, decimals, bytes, out-of-range ENUM indexes)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.schema import Column
from scenarios.sql import _condition, condition_writer, literal, literal_writer
from scenarios.strategies.history import columns, nullable_values_for
from tests.budget import examples

__all__: list[str] = []

# Values no column expects (or not all): each goes to literal() itself, which must decide.
_STRANGERS = st.one_of(
    st.integers(-3, 70),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.binary(max_size=4),
    st.floats(allow_nan=False),
    st.text(max_size=3),
)


def _outcome(spell: Any, *args: Any) -> tuple[str, str]:
    try:
        return ("text", spell(*args))
    except Exception as exc:  # noqa: BLE001 - the same failure, by type, is the property
        return ("error", type(exc).__name__)


@st.composite
def _column_and_values(draw: st.DrawFn) -> tuple[Column, list[Any]]:
    column = draw(columns())
    values = draw(st.lists(st.one_of(nullable_values_for(column), _STRANGERS), max_size=6))
    return column, values


@settings(max_examples=examples(1))
@given(_column_and_values())
def test_literal_writer_spells_as_literal(case: tuple[Column, list[Any]]) -> None:
    column, values = case
    write = literal_writer(column)
    condition = condition_writer(column, "`c`")
    for value in values:
        assert _outcome(write, value) == _outcome(literal, column, value), value
        assert _outcome(condition, value) == _outcome(_condition, column, value, "`c`"), value


def test_enum_index_outside_the_members_is_literal_s() -> None:
    # literal() indexes members[value - 1]: 0 is the last member, past the end an IndexError.
    column = Column("e", "enum", members=("a", "b"), collation="utf8mb4_general_ci")
    write = literal_writer(column)
    assert [write(1), write(2), write(0)] == ["'a'", "'b'", "'b'"]
    assert _outcome(write, 3) == ("error", "IndexError")
    assert write(Decimal("1.5")) == "1.5"
