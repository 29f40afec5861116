"""For generated histories, the oracle and the decoded stream applied as a replica applies it
agree, under every binlog setting."""

from __future__ import annotations

import io

from hypothesis import given, settings

from decoder.binlog_file import read_binlog
from scenarios.apply import apply_events
from scenarios.compiler import binlog_files, to_store
from scenarios.history import Scenario
from scenarios.oracle import Oracle, canonical_rows
from scenarios.strategies.history import scenarios
from tests.budget import examples


def decoded_events(scenario: Scenario) -> list[object]:
    store = to_store(scenario)
    events = []
    for data in binlog_files(store).values():
        events += [event for _, event in read_binlog(io.BytesIO(data))]
    return events


def assert_replay_agrees(scenario: Scenario) -> None:
    """The scenario's decoded binlog applied as a replica applies it ends with the oracle's
    final tables."""
    replayed = apply_events(scenario.initial_tables, scenario.initial, decoded_events(scenario))  # type: ignore[arg-type]
    oracle = Oracle(scenario)
    for name, table in scenario.tables.items():
        assert canonical_rows(table, replayed.rows[name]) == canonical_rows(
            table, oracle.final.rows[name]
        ), name


@settings(max_examples=examples(1))
@given(scenarios())
def test_the_oracle_and_the_replayed_stream_agree(scenario: Scenario) -> None:
    assert_replay_agrees(scenario)
