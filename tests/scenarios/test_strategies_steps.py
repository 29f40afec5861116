"""The history strategy draws DDL and settings changed mid-history, and shrinks them to small
readable cases: the simplest history with a DDL statement is a transaction or two of one
change and the statement (a column added at the end, or dropped)."""

from __future__ import annotations

from hypothesis import find, given, settings

from scenarios.ddl import AddColumn, AlterTable, DropColumn
from scenarios.history import Ddl, Scenario, SetSettings
from scenarios.strategies.history import scenarios
from tests.budget import examples


def _kinds(scenario: Scenario) -> list[str]:
    return [type(step).__name__ for step in scenario.steps]


# Deterministic: the same search and shrink on every run.
FIXED = settings(settings.default, derandomize=True, database=None)


def test_the_simplest_history_with_ddl_is_small() -> None:
    found = find(
        scenarios(), lambda s: any(isinstance(step, Ddl) for step in s.steps), settings=FIXED
    )
    # Small (the shrinker does not always drop a leading transaction or a second table): a
    # transaction or two of one change each, then one ALTER of one column, at the end or
    # dropped (no FIRST/AFTER, no re-typing).
    assert _kinds(found) in (["Transaction", "Ddl"], ["Transaction", "Transaction", "Ddl"])
    assert len(found.initial_tables) <= 2
    assert all(len(t.changes) == 1 for t in found.transactions)
    (ddl,) = [step for step in found.steps if isinstance(step, Ddl)]
    assert isinstance(ddl.statement, AlterTable)
    (alteration,) = ddl.statement.alterations
    assert isinstance(alteration, DropColumn) or (
        isinstance(alteration, AddColumn) and not alteration.first and alteration.after is None
    )


def test_the_simplest_history_with_a_setting_changed_is_small() -> None:
    found = find(
        scenarios(),
        lambda s: any(isinstance(step, SetSettings) for step in s.steps),
        settings=FIXED,
    )
    assert _kinds(found) == ["Transaction", "SetSettings"]
    (change,) = [step for step in found.steps if isinstance(step, SetSettings)]
    assert [name for name, _ in change.changes] == ["binlog_row_image"]


# A drawn property rather than a find(): shrinking to exactly three one-change transactions
# took five minutes of CI under the ci profile, and the shrunk forms that matter (DDL, a
# setting changed) are the tests above.
@settings(max_examples=examples(0.5), deadline=None)
@given(scenarios(ddl=False, setting_changes_too=False, rotations=False))
def test_histories_without_ddl_or_setting_changes_can_be_asked_for(scenario: Scenario) -> None:
    assert set(_kinds(scenario)) == {"Transaction"}
    assert 1 <= len(scenario.transactions) <= 5
