"""The warm-up ``serve`` runs once it listens: after it, a first login, SET, SELECT, SHOW
VARIABLES and a whole dump of a binlog directory (frame cache and sender threads) import no
module of the project. Run in a fresh interpreter (its ``sys.modules`` is the evidence); no
timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakemaster.server.warm_up import FIRST_CLIENT_MODULES, warm_up
from tests.test_lazy_imports import PROJECT, binlog_dir

REPO = Path(__file__).resolve().parents[3]
WAIT = 120.0  # a bound on a loaded machine, not an assertion about speed

_FIRST_CLIENT = """
import json, sys
import pymysql
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store.directory import DirectoryBinlogStore
from tests.support.rawdump import raw_dump

if sys.argv[2] == "warm":
    from fakemaster.server.warm_up import warm_up
    warm_up()
store = DirectoryBinlogStore(sys.argv[1])
with BackgroundFakeMaster(ServerConfig(port=0), store) as server:
    before = set(sys.modules)
    connection = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="")
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@version_comment")
        cursor.execute("SHOW VARIABLES LIKE 'SERVER_ID'")  # as a replica asks
    connection.close()
    data, how = raw_dump("127.0.0.1", server.port, "root", "")
    after = set(sys.modules)
print(json.dumps({"how": how, "bytes": len(data), "new": sorted(after - before)}))
"""


def first_client(directory: Path, mode: str) -> dict[str, object]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    result = subprocess.run(
        [sys.executable, "-c", _FIRST_CLIENT, str(directory), mode],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=WAIT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outcome: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return outcome


def project(names: object) -> list[str]:
    assert isinstance(names, list)
    return [name for name in names if name.split(".")[0] in PROJECT]


def test_after_the_warm_up_a_first_client_imports_nothing_of_the_project(
    tmp_path: Path,
) -> None:
    directory = binlog_dir(tmp_path)
    cold = first_client(directory, "cold")
    warm = first_client(directory, "warm")
    # The same whole dump either way, and without the warm-up the client did import the
    # modules (so the check below is not empty by construction).
    assert cold["how"] == warm["how"] == "eof"
    assert cold["bytes"] == warm["bytes"]
    assert set(FIRST_CLIENT_MODULES) <= set(project(cold["new"]))
    assert project(warm["new"]) == []


def test_a_module_that_fails_to_import_is_left_to_the_client() -> None:
    """The warm-up logs it and goes on; it never raises into the server."""
    warm_up(("fakemaster.no_such_module", "fakemaster.server.sender"))
    assert "fakemaster.server.sender" in sys.modules
