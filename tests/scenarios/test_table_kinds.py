"""MariaDB's own table kinds in a scenario history: a sequence (CREATE SEQUENCE, NEXTVAL and
SETVAL) and a system-versioned table (WITH SYSTEM VERSIONING: INSERT, UPDATE, DELETE, history
rows), beside UUID/INET4/INET6 columns. The history compiles to the events a real MariaDB 10.11
logs for the same statements (field for field) and the oracle holds the server's tables (the
versioned table's history rows too, as ``FOR SYSTEM_TIME ALL`` shows them)."""

from __future__ import annotations

import pytest

from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

pytestmark = pytest.mark.mariadb


def kinds(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE tk.hosts (id UUID NOT NULL PRIMARY KEY, v4 INET4, v6 INET6 NOT NULL"
        " DEFAULT '::1', n BIGINT)",
        rows=[{"id": "6ccd780c-baba-1026-9564-5b8c656024db", "v4": "10.0.0.1", "n": 0}],
    )
    scenario.create_sequence("CREATE SEQUENCE tk.ids START WITH 100 INCREMENT BY 10 CACHE 2")
    scenario.create_sequence("CREATE SEQUENCE tk.loop MINVALUE 1 MAXVALUE 3 CACHE 2 CYCLE")
    scenario.create_table(
        "CREATE TABLE tk.prices (sku INT PRIMARY KEY, price DECIMAL(8,2), ip INET6)"
        " WITH SYSTEM VERSIONING"
    )
    scenario.create_table("CREATE TABLE tk.notes (note VARCHAR(20)) WITH SYSTEM VERSIONING")
    first = scenario.nextval("tk.ids")  # logs the row: a block of 2 reserved
    scenario.insert(
        "tk.hosts", {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "v4": "1.2.3.4", "n": first}
    )
    scenario.nextval("tk.ids")  # inside the block: nothing logged
    scenario.nextval("tk.ids")  # a new block
    scenario.setval("tk.ids", 1000)  # past the block: logged
    scenario.setval("tk.ids", 500)  # behind: nothing
    for _ in range(4):
        scenario.nextval("tk.loop")  # 1, 2, 3 then a new cycle
    scenario.insert(
        "tk.prices", {"sku": 1, "price": "9.99", "ip": "::1"}, {"sku": 2, "price": 5, "ip": None}
    )
    scenario.insert("tk.notes", {"note": "a"}, {"note": "a"})
    scenario.idle(1)
    scenario.update("tk.prices", {"sku": 1}, {"price": "10.50"})
    with scenario.transaction() as tx:
        tx.update("tk.prices", {"sku": 2}, {"price": "6", "ip": "fe80::1"})
        tx.update("tk.notes", {"note": "a"}, {"note": "b"})
        tx.insert("tk.prices", {"sku": 3, "price": 1})
    scenario.idle(2)
    scenario.delete("tk.prices", {"sku": 2})
    scenario.delete("tk.notes", {"note": "a"})
    scenario.update("tk.prices", {"sku": 1}, {"price": "10.50"})  # the same values: a version
    # In the second its row started: the row is updated in place, no history row.
    scenario.insert("tk.prices", {"sku": 4, "price": 4, "ip": None})
    scenario.update("tk.prices", {"sku": 4}, {"price": 5})
    scenario.update("tk.prices", {"sku": 4}, {"price": 5})
    scenario.delete("tk.prices", {"sku": 4})  # ended where it started
    scenario.idle(1)
    scenario.update("tk.prices", {"sku": 3}, {"price": 2})
    # Its history row of this second holds the key the ended row would: deleted instead.
    scenario.delete("tk.prices", {"sku": 3})
    scenario.update("tk.hosts", {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479"}, {"v6": "1::"})
    return scenario


@pytest.mark.parametrize(
    ("image", "metadata"), [("FULL", "FULL"), ("FULL", "NO_LOG"), ("NOBLOB", "MINIMAL")]
)
def test_compiled_like_the_servers_binlog_and_the_oracle_holds_its_tables(
    server: MariaDBServer, image: str, metadata: str
) -> None:
    scenario = kinds(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []
