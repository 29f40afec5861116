"""UUID, INET4 and INET6 over SQL: the snapshot statements a dump tool sends (SELECT, SHOW CREATE
TABLE, SHOW COLUMNS, information_schema), answered by fakemaster byte for byte as a real MariaDB
10.11 holding the same tables answers them, under three ``character_set_results``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.history import Settings
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_mariadb_types import network
from tests.support.snapshot_statements import describe_payload, statements
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=8)
    try:
        yield instance.start()
    finally:
        instance.close()


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
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            "DROP DATABASE IF EXISTS net",
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    cases = statements(scenario) + [("net", sql, True) for sql in EXTRA]
    store = ScenarioStore(scenario)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        problems: list[str] = []
        for database, sql, rows in cases:
            answers = []
            for host, port in ((real.host, real.port), (master.host, master.port)):
                with RawClient(host, port, "root", "", database=database) as client:
                    client.query(f"SET SESSION character_set_results = '{results}'")
                    answers.append(client.query(sql))
            want, got = answers
            if not rows:
                count = want[0][0] if want[0][:1] not in (b"\x00", b"\xff") else 0
                want, got = want[: 1 + count], got[: 1 + count]
            if want != got:
                lines = [f"{sql}:"] + [
                    f"  [{i}] real {describe_payload(a)}\n  [{i}] fake {describe_payload(b)}"
                    for i, (a, b) in enumerate(zip(want, got, strict=False))
                    if a != b
                ]
                problems.append("\n".join(lines[:7]))
        assert master.errors == []
    assert not problems, "\n".join(problems)
