"""A mariadbd started by the harness dies with the test process that started it (issue #24:
a test run stopped by a timeout left its servers running). Each test starts a child Python
process that starts a server through the harness, kills the child, and waits (bounded) for
the server's pid to be gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakemaster.contract.server_lifetime import reap_stale_instances
from tests.peers.fixtures import require_mariadb

REPO = Path(__file__).resolve().parents[2]
# How long a dead process's server may take to go: a liveness bound, not a measured time.
GONE_WITHIN = 60.0

# The child: start a server (from the main thread, or from a worker thread that stays alive,
# so that only the reaper can clean up after it), print its pid, wait to be killed.
CHILD = """
import sys, threading, time
from tests.peers.mariadb import MariaDBServer

def start():
    server = MariaDBServer(base_dir=sys.argv[1]).start()
    print(server.pid, flush=True)

if sys.argv[2] == "thread":
    threading.Thread(target=start).start()
else:
    start()
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has died: only its exit status is left


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _child_server(tmp_path: Path, how: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), how],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip().isdigit(), line
    return child, int(line)


@pytest.mark.mariadb
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_server_dies_with_its_test_process(tmp_path: Path, signum: int) -> None:
    require_mariadb()
    child, server = _child_server(tmp_path, "main")
    try:
        assert _alive(server)
        child.send_signal(signum)
        child.wait(timeout=GONE_WITHIN)
        assert _gone(server), f"mariadbd {server} outlived its test process"
    finally:
        if child.poll() is None:
            child.kill()
        if _alive(server):
            os.kill(server, signal.SIGKILL)


@pytest.mark.mariadb
def test_the_next_start_reaps_a_server_whose_owner_died(tmp_path: Path) -> None:
    """Started from a worker thread, the server has no parent-death signal (it would die with
    the thread): the reaper, run by the next start, kills it once its owner is gone."""
    require_mariadb()
    child, server = _child_server(tmp_path, "thread")
    try:
        assert reap_stale_instances(tmp_path, "fm-mariadb-") == []  # its owner still runs
        assert _alive(server)
        child.kill()
        child.wait(timeout=GONE_WITHIN)
        assert reap_stale_instances(tmp_path, "fm-mariadb-") == [server]
        assert _gone(server)
        assert not [path for path in tmp_path.iterdir() if path.name.startswith("fm-mariadb-")]
    finally:
        if child.poll() is None:
            child.kill()
        if _alive(server):
            os.kill(server, signal.SIGKILL)
