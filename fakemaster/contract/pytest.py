"""The contract tests from pytest: the cases as parameters, a helper that runs one case and
fails with the report, and fixtures that start a real MariaDB replica (``mariadbd`` missing
fails the test; it skips only with FAKEMASTER_ALLOW_MISSING_PEERS=1).

Load it as a plugin (it is not loaded by the ``fakemaster`` pytest plugin), in a conftest.py::

    pytest_plugins = ["fakemaster.contract.pytest"]

and parametrise a test with the cases::

    import pytest
    from fakemaster.contract.pytest import contract_cases, check_client

    @pytest.mark.parametrize("case", contract_cases(generated=4, seed=0))
    def test_my_client(case, tmp_path):
        check_client(case, "python my_cdc.py {host} {port} {out}", workdir=tmp_path)

``contract_cases(xfail={"compressed/*": "why"})`` marks cases a client is known to fail
(strict: a case that starts passing fails the run).

Fixtures (with the plugin loaded):

* ``mariadb_replica_server``: a started :class:`~fakemaster.contract.mariadb_server.MariaDBServer`
  (server id 2, ``rpl_semi_sync_slave_enabled=ON``, ``slave_net_timeout`` 3 s) on a temporary
  datadir, shut down and removed at teardown;
* ``mariadb_replica``: a pymysql connection (autocommit) to it, what docs/pytest-plugin.md's
  replica example takes: ``cursor.execute(fake_master.change_master_sql(connect_retry=1))``;
* ``fake_master_replica``: that server as a replica of the ``fake_master`` fixture (the
  ``fakemaster`` plugin's): a :class:`ReplicaOfFakeMaster`, ``execute()`` to prepare it (tables
  the binlog does not create), ``start()`` (CHANGE MASTER TO the fake master, START SLAVE),
  ``wait_caught_up()`` and ``rows(table)`` (canonical text, as the oracle exports it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fakemaster.contract.cases import (
    DEFAULT_GENERATED,
    Case,
    builtin_cases,
    generated_cases,
    select_cases,
)

if TYPE_CHECKING:
    from fakemaster.contract.adapter import Adapter, Endpoint
    from fakemaster.contract.mariadb_server import MariaDBServer
    from fakemaster.contract.runner import CaseResult

__all__ = [
    "REPLICA_OPTIONS",
    "ReplicaOfFakeMaster",
    "REPLICA_SERVER_ID",
    "check_client",
    "contract_cases",
    "fake_master_replica",
    "mariadb_replica",
    "mariadb_replica_server",
]

REPLICA_SERVER_ID = 2
REPLICA_OPTIONS: Mapping[str, Any] = {
    "rpl_semi_sync_slave_enabled": "ON",
    "slave_net_timeout": 3,
}


def contract_cases(
    *,
    seed: int = 0,
    generated: int = DEFAULT_GENERATED,
    only: Sequence[str] = (),
    builtin: bool = True,
    xfail: Mapping[str, str] | None = None,
) -> list[Any]:
    """The cases of ``fakemaster check`` as ``pytest.param`` values (ids: the case names);
    ``xfail`` maps a name or pattern to the reason a client fails those cases."""
    cases: list[Case] = (builtin_cases() if builtin else []) + generated_cases(seed, generated)
    params = []
    for case in select_cases(cases, only):
        reasons = [why for pattern, why in (xfail or {}).items() if fnmatchcase(case.name, pattern)]
        marks = [pytest.mark.xfail(reason=reasons[0], strict=True)] if reasons else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def check_client(
    case: Case,
    client: str | Sequence[str] | Adapter | Callable[[Endpoint, Path], object],
    *,
    timeout: float | None = None,
    workdir: str | Path | None = None,
) -> CaseResult:
    """Run ``case`` against ``client`` (a command line, argv words, an adapter or a callable
    ``fn(endpoint, out)``); fail the test with the case's report unless every check passed."""
    from fakemaster.contract.adapter import adapter_from_spec
    from fakemaster.contract.report import table
    from fakemaster.contract.runner import DEFAULT_TIMEOUT, run_case

    adapter = adapter_from_spec(client)
    result = run_case(
        case, adapter, timeout=DEFAULT_TIMEOUT if timeout is None else timeout, workdir=workdir
    )
    if not result.passed:
        pytest.fail(table([result], client=adapter.name), pytrace=False)
    return result


@pytest.fixture
def mariadb_replica_server() -> Iterator[MariaDBServer]:
    """A real MariaDB server to use as a replica. Missing MariaDB fails the test (skips it only
    with FAKEMASTER_ALLOW_MISSING_PEERS=1: :mod:`fakemaster.contract.peers`)."""
    from fakemaster.contract.mariadb_server import HOW_TO_INSTALL, MariaDBServer, mariadb_available
    from fakemaster.contract.peers import require_peer

    require_peer(
        "MariaDB (mariadbd, mariadb-install-db, pymysql)", mariadb_available(), HOW_TO_INSTALL
    )
    server = MariaDBServer(dict(REPLICA_OPTIONS), server_id=REPLICA_SERVER_ID)
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture
def mariadb_replica(mariadb_replica_server: MariaDBServer) -> Iterator[Any]:
    """A pymysql connection (autocommit) to :func:`mariadb_replica_server`."""
    connection = mariadb_replica_server.connect(autocommit=True)
    try:
        yield connection
    finally:
        connection.close()


@dataclass
class ReplicaOfFakeMaster:
    """A real MariaDB server (``server``) set up as a replica of ``primary`` (a ``fake_master``
    handle)."""

    server: MariaDBServer
    primary: Any

    def execute(self, statements: str | Iterable[str]) -> None:
        """Run SQL on the replica without binlogging it (tables, initial rows)."""
        items = [statements] if isinstance(statements, str) else list(statements)
        self.server.execute(["SET SESSION sql_log_bin = 0", *items])

    def start(self, **change_master: Any) -> None:
        """CHANGE MASTER TO the fake master (``change_master_sql`` options: ``log_file=``,
        ``use_gtid=``...; ``connect_retry=1`` unless given), then START SLAVE."""
        change_master.setdefault("connect_retry", 1)
        self.server.execute([self.primary.change_master_sql(**change_master), "START SLAVE"])

    def wait_caught_up(self, timeout: float = 60.0) -> None:
        """Until the replica executed what the fake master serves now (AssertionError with the
        replica's error if a replication thread stopped, or after ``timeout`` seconds)."""
        from fakemaster.contract.adapters.mariadb_replica import wait_caught_up

        store = self.primary.store
        problem = wait_caught_up(
            self.server, store.master_status(), store.gtid_binlog_pos(), timeout
        )
        if problem:
            raise AssertionError(problem)

    def rows(self, table: str) -> list[dict[str, str | None]]:
        """The rows of ``database.table`` as canonical text (bytes as ``0x`` hex, BIT as
        numbers), in no particular order."""
        from fakemaster.contract.adapters.mariadb_replica import dump_tables

        return dump_tables(self.server, [table])[table]


@pytest.fixture
def fake_master_replica(
    fake_master: Any, mariadb_replica_server: MariaDBServer
) -> Iterator[ReplicaOfFakeMaster]:
    """A real MariaDB replica of the ``fake_master`` fixture, not started yet."""
    replica = ReplicaOfFakeMaster(mariadb_replica_server, fake_master)
    try:
        yield replica
    finally:
        mariadb_replica_server.execute("STOP SLAVE")
