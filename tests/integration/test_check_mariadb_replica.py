"""A real MariaDB 10.11 replica as a contract client (fakemaster.contract.adapters.mariadb_replica),
and the replica fixtures of fakemaster.contract.pytest.

The replica ends with the oracle's tables through cuts (FIN and RST, inside a compressed event),
an early EOF, a resent ROWS event and re-sliced bytes; a damaged event stops it (IO thread
error 1595, as docs/faults.md records for 10.11), which the check reports."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fakemaster.contract.adapter import CommandAdapter
from fakemaster.contract.cases import builtin_cases, select_cases

# The fixtures, imported where pytest finds them (a plugin elsewhere: pytest_plugins).
from fakemaster.contract.pytest import (  # noqa: F401
    ReplicaOfFakeMaster,
    fake_master_replica,
    mariadb_replica,
    mariadb_replica_server,
)
from fakemaster.contract.runner import run_case
from fakemaster.vocabulary.events import QueryEvent
from scenarios import Oracle
from scenarios.library import build
from scenarios.oracle import canonical_rows
from scenarios.script import setup_sql
from scenarios.sql import SESSION_SETUP
from tests.peers.fixtures import require_mariadb

pytestmark = pytest.mark.mariadb

REPO = Path(__file__).resolve().parents[2]
CLIENT = (
    f"{sys.executable} -m fakemaster.contract.adapters.mariadb_replica {{host}} {{port}} {{out}}"
)


@pytest.fixture(autouse=True)
def _mariadb_required() -> None:
    """A missing MariaDB fails before the adapter (a subprocess) would meet it."""
    require_mariadb()


PASSING = [
    "every_type/trickle",
    "multi_domain/rst-inside-last",
    "rotation_storm/eof",
    "compressed/cut-in-compressed",
    "no_key_duplicates/duplicate-delete",
    # ddl.kept is created, truncated and renamed mid-stream: not one of the snapshot's tables.
    "ddl_mid_stream/cut-after-alter",
]


@pytest.mark.parametrize("name", PASSING)
def test_a_real_replica_ends_with_the_oracles_tables(name: str) -> None:
    (case,) = select_cases(builtin_cases(), [name])
    result = run_case(case, CommandAdapter(CLIENT, cwd=str(REPO)), timeout=120)
    assert result.passed, [(v.check, v.detail) for v in result.verdicts if v.failed]
    verdicts = {v.check: v.ok for v in result.verdicts}
    assert verdicts["final tables"] is True
    assert verdicts["no loss"] is None  # a replica keeps no change log
    assert result.applied


def test_a_damaged_event_stops_the_real_replica() -> None:
    (case,) = select_cases(builtin_cases(), ["compressed/corrupt-crc"])
    result = run_case(case, CommandAdapter(CLIENT, cwd=str(REPO)), timeout=120)
    failed = {v.check: v.detail for v in result.verdicts if v.failed}
    assert set(failed) == {"caught up", "final tables"}
    assert failed["caught up"] == (
        "exit status 1: the replica's IO thread stopped: Relay log write failure: could not"
        " queue event from master"
    )
    assert result.sessions == 1  # it does not reconnect


def test_the_replica_fixture_runs_the_docs_example(
    fake_master_factory: Any,
    mariadb_replica: Any,  # noqa: F811
) -> None:
    """docs/pytest-plugin.md's semi-sync replica example, with the fixture as its ``replica``."""
    primary = fake_master_factory(semi_sync=True, semi_sync_timeout_ms=60000)
    with mariadb_replica.cursor() as cursor:
        cursor.execute(primary.change_master_sql(connect_retry=1))
        cursor.execute("START SLAVE")
        group = primary.append_transaction([QueryEvent(query=b"CREATE DATABASE shop")])
        assert primary.wait_for_ack(timeout=60)
        cursor.execute("SELECT MASTER_GTID_WAIT(%s, 60)", (str(group.gtid),))
        assert cursor.fetchone() == (0,)
        cursor.execute("SHOW DATABASES LIKE 'shop'")
        assert cursor.fetchall() == (("shop",),)
        cursor.execute("STOP SLAVE")


def test_the_replica_server_fixture(mariadb_replica_server: Any) -> None:  # noqa: F811
    assert mariadb_replica_server.server_id == 2
    assert mariadb_replica_server.query_one("SELECT @@rpl_semi_sync_slave_enabled") == 1


@pytest.mark.fake_master(scenario="primary_key_updates", user="repl", password="pw")
def test_a_replica_of_the_fake_master_fixture_ends_with_the_oracles_tables(
    fake_master_replica: ReplicaOfFakeMaster,  # noqa: F811
) -> None:
    scenario = build("primary_key_updates")
    fake_master_replica.execute([*SESSION_SETUP, *setup_sql(scenario)])
    fake_master_replica.start(log_file="mysql-bin.000001", log_pos=4)
    fake_master_replica.wait_caught_up()
    for name, table in scenario.tables.items():
        want = Counter(canonical_rows(table, Oracle(scenario).final.rows[name]))
        got = Counter(
            tuple(row[column] for column in table.column_names)
            for row in fake_master_replica.rows(name)
        )
        assert got == want, name
