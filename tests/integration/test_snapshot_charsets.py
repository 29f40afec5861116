"""Character columns in utf8mb3, ucs2, utf16, utf16le, utf32, cp1251, gbk and sjis over SQL: the
snapshot statements a dump tool sends (SELECT, SHOW CREATE TABLE, SHOW COLUMNS,
information_schema), answered by fakemaster byte for byte as a real MariaDB 10.11 holding the
same tables answers them, under ``character_set_results`` utf8mb4 and binary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scenarios.history import Settings
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_charsets import charset_table, with_value_edges
from tests.support.snapshot_statements import (
    load_scenario,
    snapshot_differences,
    statements,
)

pytestmark = pytest.mark.mariadb


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=8)
    try:
        yield instance.start()
    finally:
        instance.close()


@pytest.mark.parametrize("results", ["utf8mb4", "binary"])
def test_snapshot_statements_answer_byte_for_byte(real: MariaDBServer, results: str) -> None:
    scenario = with_value_edges(charset_table(Settings()))
    load_scenario(real, scenario, "e")
    cases = statements(scenario)
    problems = snapshot_differences(real, scenario, cases, results)
    assert not problems, "\n".join(problems)
