"""Real servers die with the process that started them (issue #24).

Two mechanisms, because neither covers every case alone:

* the parent-death signal: the server is started through ``setpriv --pdeathsig SIGKILL``
  (util-linux), so the kernel kills it when the thread that started it dies, whatever
  killed the test process (SIGTERM from a timeout, SIGKILL, a crash). It is only used from the
  main thread: the signal follows the starting *thread*, and a worker thread ending would
  otherwise take the server with it.
* a reaper at the next start: each instance directory holds an ``owner`` file (the starting
  process's pid and its start time); :func:`reap_stale_instances` kills the server of a
  directory whose owner is gone and deletes the directory. Instance directories without an
  owner file (older harnesses) are reaped when their server was orphaned (its parent is
  init), never a server whose starting process still runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from pathlib import Path

__all__ = ["OWNER_FILE", "death_bound", "reap_stale_instances", "write_owner"]

OWNER_FILE = "owner"
_PID_FILE = "mysqld.pid"


def death_bound(command: list[str]) -> list[str]:
    """``command`` run so that it gets SIGKILL when the calling thread dies (unchanged when
    ``setpriv`` is missing or the caller is not the main thread: the reaper then cleans up)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or threading.current_thread() is not threading.main_thread():
        return command
    return [setpriv, "--pdeathsig", "SIGKILL", "--", *command]


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (field 22 of /proc/PID/stat), None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


def write_owner(root: Path) -> None:
    """Record the calling process as the owner of the instance directory ``root``."""
    pid = os.getpid()
    (root / OWNER_FILE).write_text(f"{pid} {_start_time(pid) or '?'}\n")


def _owner_alive(root: Path) -> bool | None:
    """True/False for a directory with an owner file, None without one."""
    try:
        pid_text, _, started = (root / OWNER_FILE).read_text().strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    return _start_time(pid) == started


def _server_pid(root: Path) -> int | None:
    """The pid of the instance's mariadbd if it runs and is that instance's (its command line
    names the directory): a recycled pid is never killed."""
    try:
        pid = int((root / _PID_FILE).read_text().strip())
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if str(root).encode() in command else None


def reap_stale_instances(parent: Path, prefix: str, *, delete: bool = True) -> list[int]:
    """Kill the servers of the instance directories ``parent/prefix*`` whose owner is gone and
    delete those directories (kept with ``delete=False``); returns the pids killed."""
    killed: list[int] = []
    try:
        roots = [path for path in parent.iterdir() if path.name.startswith(prefix)]
    except OSError:
        return killed
    for root in roots:
        alive = _owner_alive(root)
        pid = _server_pid(root)
        if alive or (alive is None and (pid is None or _parent(pid) != 1)):
            continue
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
        if delete:
            shutil.rmtree(root, ignore_errors=True)
    return killed
