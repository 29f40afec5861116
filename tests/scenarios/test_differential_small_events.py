"""The differential with ``binlog_row_event_max_size=256`` (the smallest the server takes, a
command-line option): generated statements split into many rows events."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.history import ROW_IMAGES, ROW_METADATA, Scenario, Settings
from scenarios.strategies.history import scenarios
from tests.budget import examples
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

pytestmark = pytest.mark.mariadb

SMALL = 256


@pytest.fixture(scope="module")
def server() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer({"binlog_row_event_max_size": SMALL})
    try:
        yield instance.start()
    finally:
        instance.close()


small_events = st.builds(
    Settings,
    binlog_row_image=st.sampled_from(ROW_IMAGES),
    binlog_row_metadata=st.sampled_from(ROW_METADATA),
    binlog_row_event_max_size=st.just(SMALL),
)


@settings(max_examples=examples(0.5))
@given(scenario=scenarios(max_changes=6, max_insert_rows=5, settings_strategy=small_events))
def test_generated_histories_with_small_rows_events(
    server: MariaDBServer, scenario: Scenario
) -> None:
    assert compare_with_server(server, scenario) == []
