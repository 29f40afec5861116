"""A sequence, system-versioned tables and UUID/INET columns over SQL: the SELECTs a snapshot
reader sends, answered by fakemaster serving the scenario byte for byte as a real MariaDB 10.11
that ran the same statements answers them."""

from __future__ import annotations

import pytest

from scenarios.history import Settings
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_table_kinds import kinds
from tests.support.snapshot_statements import load_scenario, snapshot_differences

pytestmark = pytest.mark.mariadb


real = module_mariadb(server_id=9)


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
    load_scenario(real, scenario, "tk")
    problems = snapshot_differences(real, scenario, [("tk", sql, True) for sql in SELECTS], results)
    assert not problems, "\n".join(problems)
