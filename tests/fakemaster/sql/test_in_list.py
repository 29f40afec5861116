"""``x IN (constants)``: looked up in sets, it must say what comparing ``x`` with each constant
one by one says (the reference, the WHERE clause's own comparison), and cost rows + constants,
counted, not timed."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.sql.answers import table_select
from fakemaster.sql.answers.in_list import ConstantList
from fakemaster.sql.answers.table_select import _compare, _number, _Operand, _text
from fakemaster.sql.tables.catalogue import general_ci_key
from tests.budget import examples
from tests.fakemaster.sql.test_statements import make_session, values

# No NaN: ordering one by one raises on it (an ERR 1105 before and after), which a set lookup
# may not reach.
texts = st.sampled_from(["a", "A", "a ", "á", "b", "1", "01", "1.0", "x", "", " 1", "1e0"])
values_ = st.one_of(
    texts,
    texts.map(str.encode),
    st.integers(-3, 3).map(Decimal),
    st.sampled_from([Decimal("1.0"), Decimal("-0")]),
)
constants = st.tuples(values_, st.booleans(), st.booleans())


def one_by_one(left: _Operand, value: object, items: list[tuple[object, bool, bool]]) -> bool:
    return any(
        _compare(left, value, _Operand(lambda row, held=held: held, numeric, folded), held) == 0
        for held, numeric, folded in items
    )


@settings(max_examples=examples(2))
@given(
    value=values_,
    numeric=st.booleans(),
    folded=st.booleans(),
    items=st.lists(constants, max_size=6),
)
def test_set_lookups_say_what_comparing_one_by_one_says(
    value: object, numeric: bool, folded: bool, items: list[tuple[object, bool, bool]]
) -> None:
    left = _Operand(lambda row: value, numeric, folded)
    expected = one_by_one(left, value, items)
    listed = ConstantList(numeric, folded, items, number=_number, text=_text, fold=general_ci_key)

    def compare(v: object, constant: tuple[object, bool, bool]) -> int:
        held, its_numeric, its_folded = constant
        return _compare(left, v, _Operand(lambda row: held, its_numeric, its_folded), held)

    assert listed.holds(value, compare) == expected


def test_in_and_not_in_on_a_table() -> None:
    _, session = make_session()
    assert values(session, "SELECT id FROM shop.t WHERE id IN (10, 2.0, 7)") == [[b"2"], [b"10"]]
    assert values(session, "SELECT id FROM shop.t WHERE id NOT IN (10, 7)") == [[b"1"], [b"2"]]
    assert values(session, "SELECT id FROM shop.t WHERE name IN ('A', 'zoe')") == [[b"1"], [b"10"]]
    # A NULL in the list: unmatched rows are NULL, left out by IN and NOT IN alike.
    assert values(session, "SELECT id FROM shop.t WHERE id IN (1, NULL)") == [[b"1"]]
    assert values(session, "SELECT id FROM shop.t WHERE id NOT IN (1, NULL)") == []


def test_the_work_is_rows_plus_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counted: the _general_ci weight is taken once per constant and once per row, and no
    # row is compared with each constant.
    _, session = make_session()
    folds: list[str] = []
    compares: list[object] = []
    real_fold, real_compare = table_select.general_ci_key, table_select._compare

    def counting_fold(text: str) -> str:
        folds.append(text)
        return real_fold(text)

    def counting_compare(*args: object) -> int:
        compares.append(args)
        return real_compare(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(table_select, "general_ci_key", counting_fold)
    monkeypatch.setattr(table_select, "_compare", counting_compare)
    names = ", ".join(f"'t{i}'" for i in range(5000))
    sql = f"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_NAME IN ({names}, 'T')"
    assert values(session, sql) == [[b"t"]]
    rows = len(values(session, "SELECT TABLE_NAME FROM information_schema.TABLES"))
    assert len(folds) <= 5001 + rows
    assert compares == []
