"""A scenario compiled into a store and served by fakemaster, replicated by a real MariaDB
10.11 replica (which holds the scenario's tables and initial rows, as after a snapshot): the
replica ends with the oracle's tables, read back with SELECT."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Scenario, Settings, to_store
from scenarios.script import setup_sql
from scenarios.sql import SESSION_SETUP, quote_name
from scenarios.strategies.history import scenarios
from tests.budget import examples
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_ddl import reshaped
from tests.scenarios.test_differential import big_rows, compressible, shop
from tests.scenarios.test_non_transactional import mixed
from tests.scenarios.test_restart import restarted
from tests.scenarios.test_settings_mid_history import changing
from tests.scenarios.test_xa import xa
from tests.support.replica_tables import compare_with_oracle
from tests.support.streams import wait_caught_up, wait_for_replica

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "repl", "pw"
REPLICA_SERVER_ID = 50  # not one of the scenarios' server ids (a replica skips its own)


@pytest.fixture(scope="module")
def replica() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=REPLICA_SERVER_ID)
    try:
        yield instance.start()
    finally:
        instance.close()


def prepare(replica: MariaDBServer, scenario: Scenario) -> None:
    """The replica holds the scenario's tables with their initial rows, and no primary."""
    replica.execute(["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL gtid_slave_pos = ''"])
    # An XA transaction a scenario left prepared holds its tables: rolled back first.
    for row in replica.execute("XA RECOVER FORMAT='SQL'"):
        replica.execute(f"XA ROLLBACK {row[3]}")
    databases = scenario.databases
    replica.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            *(f"DROP DATABASE IF EXISTS {quote_name(name)}" for name in databases),
            *setup_sql(scenario),
        ]
    )


def replicate_and_compare(replica: MariaDBServer, scenario: Scenario) -> None:
    prepare(replica, scenario)
    store = to_store(scenario)
    config = ServerConfig(user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        first = store.first_file()
        assert first is not None
        replica.change_master(
            master.host, master.port, USER, PASSWORD, use_gtid="no", log_file=first, log_pos=4
        )
        replica.execute("START SLAVE")
        end = store.master_status()
        wait_for_replica(
            replica,
            lambda: (
                (
                    (s := replica.slave_status())["Relay_Master_Log_File"],
                    s["Exec_Master_Log_Pos"],
                )
                == end
            ),
            f"replica at {end}",
            master=master,
        )
        wait_caught_up(replica, store.gtid_binlog_pos(), master=master)
        replica.execute("STOP SLAVE")
        assert master.errors == []
    compare_with_oracle(replica, scenario)


@pytest.mark.parametrize(
    "make",
    [
        lambda: shop(Settings(binlog_row_image="MINIMAL", binlog_row_metadata="FULL")),
        lambda: shop(Settings(binlog_row_image="NOBLOB", binlog_checksum=False)),
        lambda: big_rows(Settings()),
        lambda: compressible(Settings(log_bin_compress=True, log_bin_compress_min_len=10)),
        lambda: reshaped(Settings(binlog_row_image="MINIMAL")),
        changing,
        lambda: mixed(Settings()),
        lambda: xa(Settings()),
        restarted,
        lambda: shop(Settings(rows_event_version=2, binlog_row_metadata="FULL")),
    ],
    ids=[
        "shop_minimal_full",
        "shop_noblob_no_checksum",
        "big_rows",
        "compressed",
        "ddl",
        "settings_mid_history",
        "non_transactional",
        "xa",
        "restarts",
        "mysql_v2_rows",
    ],
)
def test_a_replica_of_a_served_scenario_ends_with_the_oracles_tables(
    replica: MariaDBServer, make: object
) -> None:
    replicate_and_compare(replica, make())  # type: ignore[operator]


@settings(max_examples=examples(0.2))
@given(scenario=scenarios())
def test_a_replica_of_a_generated_scenario_ends_with_the_oracles_tables(
    replica: MariaDBServer, scenario: Scenario
) -> None:
    replicate_and_compare(replica, scenario)
