"""UUID, INET4 and INET6 over SQL: the snapshot statements a dump tool sends (SELECT, SHOW CREATE
TABLE, SHOW COLUMNS, information_schema), answered by fakemaster byte for byte as a real MariaDB
10.11 holding the same tables answers them, under three ``character_set_results``."""

from __future__ import annotations

import pytest

from scenarios.history import Settings
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_mariadb_types import network
from tests.support.snapshot_statements import (
    load_scenario,
    snapshot_differences,
    statements,
)

pytestmark = pytest.mark.mariadb


real = module_mariadb(server_id=8)


# Ordered by value, not text (9.x before 10.x; a version 1 UUID by its reversed segments).
EXTRA = [
    "SELECT id, v6 FROM hosts WHERE v6 = '::1'",
    "SELECT * FROM links ORDER BY b DESC, a",
    "SELECT u, a FROM links ORDER BY u, a DESC",
    "SELECT v4, v6 FROM hosts ORDER BY v4, v6",
    # compared by value: a literal in another spelling, ranges, chunked reads on a UUID key
    "SELECT id FROM hosts WHERE v6 = '0:0::0001'",
    "SELECT * FROM links WHERE b > '9.255.0.1' ORDER BY a, b",
    "SELECT * FROM links WHERE a BETWEEN '::1' AND 'fe80::' ORDER BY a, b",
    "SELECT id FROM hosts WHERE id > '12345678-9abc-0ef0-0123-456789abcdef' ORDER BY id LIMIT 2",
    "SELECT id, v4 FROM hosts WHERE v4 IN ('127.0.0.1', '10.0.0.0') ORDER BY id",
]


@pytest.mark.parametrize("results", ["utf8mb4", "binary", "latin1"])
def test_snapshot_statements_answer_byte_for_byte(real: MariaDBServer, results: str) -> None:
    scenario = network(Settings())
    load_scenario(real, scenario, "net")
    cases = statements(scenario) + [("net", sql, True) for sql in EXTRA]
    problems = snapshot_differences(real, scenario, cases, results)
    assert not problems, "\n".join(problems)
