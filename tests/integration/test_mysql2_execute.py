"""Node's mysql2 client using ``execute()`` (server-side prepared statements, the binary
protocol) against fakemaster serving a scenario and against a real MariaDB 10.11 holding the
same tables (issue #21, must-show 1): the same script (tests/node/execute_client.js) runs
against both and prints what the application sees (rows, column names and types, errors); the
two outputs must be equal.

The calls are the ones such clients make: a table read by key with integer, string, NULL,
double, date, boolean, Buffer and BigInt parameters, zongji's column query on information_schema, a statement without
parameters, a SET, and errors (an unknown table, a syntax error).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.contract.peers import require_peer
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.live import ScenarioStore
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import keyed, load_scenario

pytestmark = pytest.mark.mariadb

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
SCRIPT = NODE_DIR / "execute_client.js"
HOW_TO_INSTALL = "bash scripts/install-deps.sh (Node.js, then npm install in tests/node)"

CALLS: list[tuple[str, list[Any]]] = [
    ("SELECT * FROM `people` WHERE `id` = ?", [1]),
    ("SELECT * FROM `people` WHERE `id` = ?", [3]),
    ("SELECT * FROM `people` WHERE `id` = ?", [None]),
    ("SELECT `id`, `email` FROM `people` WHERE `email` = ?", ["B@x"]),
    ("SELECT `id` FROM `people` WHERE `id` > ? ORDER BY `id`", [1.5]),
    ("SELECT `id`, `seen` FROM `people` WHERE `seen` = ?", [{"$date": "2020-01-02T03:04:05.678Z"}]),
    ("SELECT `a`, `b`, `v` FROM `pairs` WHERE `a` = ? AND `b` = ?", [2, "z"]),
    ("SELECT ?, ?, ?", [7, "text", None]),
    ("SELECT `id` FROM `people` WHERE `level` = ?", [True]),
    ("SELECT `id` FROM `people` WHERE `email` = ?", [{"$buffer": "634078"}]),
    ("SELECT `id` FROM `people` WHERE `id` = ?", [{"$bigint": "2"}]),
    ("SELECT `a` FROM `pairs` WHERE `v` = ?", [-1]),
    (
        "SELECT COLUMN_NAME, COLLATION_NAME, CHARACTER_SET_NAME, COLUMN_COMMENT, COLUMN_TYPE "
        "FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
        "ORDER BY ORDINAL_POSITION",
        ["keys", "people"],
    ),
    ("SELECT COUNT(*) FROM `people`", []),
    ("SET @chosen = ?", [5]),
    ("SELECT @chosen", []),
    ("SELECT * FROM `nosuch` WHERE `id` = ?", [1]),
    ("SELEC ?", [1]),
]


def _run(host: str, port: int) -> Any:
    spec = {
        "host": host,
        "port": port,
        "user": "root",
        "password": "",
        "database": "keys",
        "calls": CALLS,
    }
    done = subprocess.run(
        ["node", str(SCRIPT), json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,  # bounds a hang only
        check=False,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "TZ": "UTC"},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_mysql2_execute_sees_the_same_results_as_from_a_real_server(
    mariadb_server: MariaDBServer,
) -> None:
    require_peer("node", shutil.which("node") is not None, HOW_TO_INSTALL)
    require_peer("mysql2", (NODE_DIR / "node_modules" / "mysql2").is_dir(), HOW_TO_INSTALL)
    load_scenario(mariadb_server, keyed(), "keys")
    want = _run(mariadb_server.host, mariadb_server.port)
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(keyed())) as master:
        got = _run(master.host, master.port)
        assert master.errors == []
    assert sum("error" not in call for call in want) >= 10  # the real server answered them
    for expected, actual in zip(want, got, strict=True):
        assert actual == expected, expected["sql"]
