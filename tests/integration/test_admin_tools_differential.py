"""Issue #21, must-show 1 (the mariadb-dump part this covers): ``mariadb-dump`` with the options
that talk to a primary's admin surface (``--flush-logs``: COM_REFRESH; ``--dump-slave``: SHOW
SLAVE STATUS; ``--master-data``; together with ``--single-transaction``), run with the same
options against fakemaster serving a scenario and against a real MariaDB 10.11 holding the same
tables: the same exit code, the same error text and the same dump, once the lines a server
writes about itself are masked (the header comments, binlog coordinates, the completion date).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import keyed

pytestmark = pytest.mark.mariadb

OPTIONS = [
    ["--flush-logs"],
    ["--dump-slave=2"],
    ["--dump-slave=1"],
    ["--master-data=2"],
    ["--single-transaction", "--flush-logs", "--master-data=2"],
    ["--flush-logs", "--master-data=1", "--dump-slave=2"],
]

# What differs between two servers however alike: their own description and coordinates.
_MASKS = [
    (
        re.compile(rb"^-- (Host|Server version|Dump completed|MariaDB dump).*$", re.M),
        b"-- <masked>",
    ),
    (re.compile(rb"MASTER_LOG_FILE='[^']*', MASTER_LOG_POS=\d+"), b"MASTER_LOG_FILE=?, POS=?"),
    (re.compile(rb"gtid_slave_pos='[^']*'"), b"gtid_slave_pos=?"),
]


def _masked(dump: bytes) -> bytes:
    for pattern, replacement in _MASKS:
        dump = pattern.sub(replacement, dump)
    return dump


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=7)
    try:
        yield instance.start()
    finally:
        instance.close()


def _dump(host: str, port: int, options: list[str]) -> subprocess.CompletedProcess[bytes]:
    command = [
        "mariadb-dump",
        f"--host={host}",
        f"--port={port}",
        "--user=root",
        "--protocol=tcp",
        *options,
        "--databases",
        "keys",
    ]
    return subprocess.run(command, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("options", OPTIONS, ids=" ".join)
def test_mariadb_dump_admin_options_behave_as_against_a_real_primary(
    real: MariaDBServer, options: list[str]
) -> None:
    scenario = keyed()
    real.execute(
        [
            "SET SESSION sql_log_bin = 0",
            *SESSION_SETUP,
            "DROP DATABASE IF EXISTS `keys`",
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master:
        want = _dump(real.host, real.port, options)
        got = _dump(master.host, master.port, options)
        assert master.errors == []
    assert (got.returncode, got.stderr) == (want.returncode, want.stderr)
    assert _masked(got.stdout) == _masked(want.stdout)
