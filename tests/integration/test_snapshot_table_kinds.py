"""A sequence, system-versioned tables and UUID/INET columns over SQL: the SELECTs a snapshot
reader sends, answered by fakemaster serving the scenario byte for byte as a real MariaDB 10.11
that ran the same statements answers them."""

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
from tests.scenarios.test_table_kinds import kinds
from tests.support.snapshot_statements import describe_payload
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=9)
    try:
        yield instance.start()
    finally:
        instance.close()


SELECTS = [
    "SELECT * FROM ids",
    "SELECT * FROM `loop`",
    "SELECT next_not_cached_value, cycle_count FROM tk.ids",
    "SELECT * FROM prices ORDER BY sku",
    "SELECT * FROM prices",
    "SELECT sku, price, ip FROM prices ORDER BY sku",
    "SELECT * FROM notes",
    "SELECT * FROM hosts ORDER BY id",
    "SELECT id, v4, v6, n FROM hosts ORDER BY id",
    "SELECT * FROM prices WHERE sku = 1",
    "SELECT price FROM prices WHERE sku > 0 ORDER BY sku DESC",
    "SELECT COUNT(*) FROM prices",
    "SELECT * FROM ids WHERE cycle_count = 0",
    "SHOW FULL TABLES",
    "SHOW COLUMNS FROM prices",
    "SHOW COLUMNS FROM ids",
    "SELECT table_name, table_type FROM information_schema.TABLES WHERE table_schema = 'tk' ORDER BY table_name",
    "SHOW CREATE TABLE prices",
    "SHOW CREATE TABLE ids",
]


@pytest.mark.parametrize("results", ["utf8mb4", "binary"])
def test_selects_answer_byte_for_byte(real: MariaDBServer, results: str) -> None:
    scenario = kinds(Settings())
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            "DROP DATABASE IF EXISTS tk",
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    store = ScenarioStore(scenario)
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        problems: list[str] = []
        for sql in SELECTS:
            answers = []
            for host, port in ((real.host, real.port), (master.host, master.port)):
                with RawClient(host, port, "root", "", database="tk") as client:
                    client.query(f"SET SESSION character_set_results = '{results}'")
                    answers.append(client.query(sql))
            want, got = answers
            if want != got:
                lines = [f"{sql}:"] + [
                    f"  [{i}] real {describe_payload(a)}\n  [{i}] fake {describe_payload(b)}"
                    for i, (a, b) in enumerate(zip(want, got, strict=False))
                    if a != b
                ]
                problems.append("\n".join(lines[:7]))
        assert master.errors == []
    assert not problems, "\n".join(problems)
