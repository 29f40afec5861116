"""Running a client command under a time limit that holds whatever the client does.

The client runs in a session (and process group) of its own, with its stdout and stderr read
through pipes by this process, in bounded memory:

* at the limit the group gets SIGTERM, then SIGKILL :data:`KILL_GRACE` seconds later;
* when the client has exited (by itself or stopped), whatever it left behind is killed: the rest
  of its process group, and every process whose environment holds this run's
  ``FAKEMASTER_RUN_ID`` (inherited by its descendants, even one that called ``setsid``; the way
  Jenkins' ProcessTreeKiller finds a build's processes; Linux, through ``/proc``);
* what the pipes still hold is read for at most :data:`DRAIN` seconds, then they are closed
  (a writer still there gets SIGPIPE);
* each stream goes to a file (its first :data:`KEEP_HEAD` bytes and its last :data:`KEEP_TAIL`
  bytes; the middle of a longer stream is dropped, a line says how much), and the first error
  line of stderr is found as it streams by (:func:`error_line`).

A command that cannot be started (missing, not executable) is a run that failed to start, with
the reason, never an exception.
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "DRAIN",
    "ERROR_LINE",
    "KEEP_HEAD",
    "KEEP_TAIL",
    "KILL_GRACE",
    "LINE_LIMIT",
    "RUN_ID",
    "Finished",
    "StreamKeeper",
    "error_line",
    "kill_marked",
    "printable",
    "run_command",
]

KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL
DRAIN = 2.0  # seconds to read what the pipes hold once the client is gone
KEEP_HEAD = 1 << 20  # the first bytes of a stream kept in its file
KEEP_TAIL = 64 << 10  # the last bytes of a stream kept (in memory, then in its file)
LINE_LIMIT = 4096  # characters of one line looked at for the first error line
RUN_ID = "FAKEMASTER_RUN_ID"  # the environment variable that marks a run's processes

# The first line of stderr that names an error, the way runtimes print one: a line that starts
# (not indented: a traceback's source lines are) with an error's name (``TypeError: ...``,
# ``pymysql.err.OperationalError: ...``, ``Error: ...``, ``ERROR 2003 ...``, ``Exception in
# thread ...``) or with ``panic``/``fatal`` (Go, git-style tools).
ERROR_LINE = re.compile(r"^(?:[\w$]+\.)*\w*(?:error|exception)\b|^(?:panic|fatal)\b", re.IGNORECASE)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")  # colours and cursor moves (CSI sequences)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def printable(line: str) -> str:
    """``line`` as a terminal or a report shows it: colour codes dropped, other control
    characters (NUL, ESC, ...) replaced by U+FFFD."""
    return _CONTROL.sub("\ufffd", _ANSI.sub("", line))


def error_line(lines: Sequence[str]) -> str:
    """The line to show for a failed client: the first that matches :data:`ERROR_LINE`, else
    the last non-empty one (Node ends its report with ``Node.js v20...``, Python with the
    exception: the first error line is right for both)."""
    shown = [printable(line) for line in lines]
    for line in shown:
        if ERROR_LINE.match(line):
            return line.strip()
    return next((line.strip() for line in reversed(shown) if line.strip()), "")


class StreamKeeper:
    """One stream of the client: written to ``path`` (head and tail, bounded), its last
    :data:`KEEP_TAIL` bytes kept in memory, and (``watch``) its first error line found."""

    def __init__(self, path: Path | None, *, watch: bool = False) -> None:
        self._file: IO[bytes] | None = open(path, "wb") if path else None  # noqa: SIM115
        self._written = 0  # bytes of the head written to the file
        self._tail = bytearray()  # the stream's last KEEP_TAIL bytes
        self.total = 0
        self._watch = watch
        self._partial = bytearray()  # the line being read (its first LINE_LIMIT bytes)
        self.first_error = ""
        self.last_line = ""

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if self._file is not None and self._written < KEEP_HEAD:
            taken = data[: KEEP_HEAD - self._written]
            self._file.write(taken)
            self._written += len(taken)
        self._tail += data[-KEEP_TAIL:]
        del self._tail[:-KEEP_TAIL]
        if self._watch and not self.first_error:
            self._scan(data)

    def _scan(self, data: bytes) -> None:
        *complete, rest = data.split(b"\n")
        for piece in complete:
            self._partial += piece[: max(0, LINE_LIMIT - len(self._partial))]
            self._look(bytes(self._partial))
            self._partial.clear()
            if self.first_error:
                return
        self._partial += rest[: max(0, LINE_LIMIT - len(self._partial))]

    def _look(self, raw: bytes) -> None:
        line = printable(raw.decode("utf-8", "replace"))
        if ERROR_LINE.match(line):
            self.first_error = line.strip()
        elif line.strip():
            self.last_line = line.strip()

    @property
    def shown_line(self) -> str:
        """The first error line, else the last non-empty line (:func:`error_line`)."""
        return self.first_error or self.last_line

    def close(self) -> None:
        if self._watch and not self.first_error and self._partial:
            self._look(bytes(self._partial))
        if self._file is None:
            return
        rest = self.total - self._written  # what the head did not take
        kept = min(rest, len(self._tail))
        if rest > kept:
            self._file.write(f"\n[... {rest - kept} bytes not kept ...]\n".encode())
        if kept:
            self._file.write(bytes(self._tail[len(self._tail) - kept :]))
        self._file.close()

    def text(self, limit: int) -> str:
        """The stream's last ``limit`` characters (bytes that are not UTF-8 replaced)."""
        return bytes(self._tail[-4 * limit :]).decode("utf-8", "replace")[-limit:]


@dataclass(frozen=True, slots=True)
class Finished:
    """A command's run: exit status (None: stopped at the limit), seconds, why it did not start
    (``start_error``), and its stderr: the tail and the line to show (:func:`error_line`)."""

    returncode: int | None
    seconds: float
    stderr: str = ""
    error_line: str = ""
    start_error: str = ""


def run_command(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str],
    cwd: str | None = None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    tail: int = 4000,
) -> Finished:
    """Run ``argv`` for at most ``timeout`` seconds (see the module docstring)."""
    token = uuid.uuid4().hex
    out = StreamKeeper(stdout_path)
    err = StreamKeeper(stderr_path, watch=True)
    start = time.monotonic()
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**env, RUN_ID: token},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        out.close()
        err.close()
        reason = f"the client did not start: {error.strerror or error}: {argv[0]!r}"
        code = 127 if isinstance(error, FileNotFoundError) else 126  # as a shell says
        return Finished(code, 0.0, reason, reason, start_error=reason)
    assert process.stdout is not None and process.stderr is not None
    streams = _Pipes({process.stdout.fileno(): out, process.stderr.fileno(): err})
    stopped = False
    try:
        stopped = not _wait(process, streams, start + timeout)
        if stopped:
            _signal_group(process.pid, signal.SIGTERM)
            if not _wait(process, streams, time.monotonic() + KILL_GRACE):
                _signal_group(process.pid, signal.SIGKILL)
                _reap(process)
    finally:
        if process.returncode is None:  # interrupted (KeyboardInterrupt): never leave it running
            _signal_group(process.pid, signal.SIGKILL)
            _reap(process)
        seconds = time.monotonic() - start
        _signal_group(process.pid, signal.SIGKILL)  # what it left in its group
        kill_marked(token)  # and what left the group
        streams.drain(time.monotonic() + DRAIN)
        streams.close()
        process.stdout.close()
        process.stderr.close()
        out.close()
        err.close()
    return Finished(
        None if stopped else process.returncode,
        seconds,
        err.text(tail),
        err.shown_line,
    )


class _Pipes:
    """The client's pipes, read as data comes until each is at its end."""

    def __init__(self, keepers: Mapping[int, StreamKeeper]) -> None:
        self._keepers = dict(keepers)
        self._selector = selectors.DefaultSelector()
        for fd in self._keepers:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ)

    def pump(self, until: float) -> None:
        """One round: wait for data at most 50 ms (never past ``until``), read it."""
        left = max(0.0, min(until - time.monotonic(), 0.05))
        if not self._keepers:
            time.sleep(left)
            return
        for key, _ in self._selector.select(left):
            self._read(key.fd)

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if data:
            self._keepers[fd].feed(data)
        else:
            self._selector.unregister(fd)
            del self._keepers[fd]

    def drain(self, until: float) -> None:
        while self._keepers and time.monotonic() < until:
            self.pump(until)

    def close(self) -> None:
        self._selector.close()


def _wait(process: subprocess.Popen[bytes], pipes: _Pipes, until: float) -> bool:
    """Read the pipes until the process exits (True) or ``until`` passes (False)."""
    while process.poll() is None:
        if time.monotonic() >= until:
            return False
        pipes.pump(until)
    return True


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Wait for ``process`` (killed) and set its exit status, without ``Popen.wait``: a
    KeyboardInterrupt that lands inside ``Popen.poll`` between the acquire of its waitpid lock
    and the ``try`` that releases it (CPython's window; about one interrupt in four during a
    loop of polls) leaves the lock held, and ``Popen.wait`` then blocks for ever. Only this
    thread waits for the client, so waiting past the lock is safe."""
    try:
        _, status = os.waitpid(process.pid, 0)
    except ChildProcessError:  # reaped already (by a poll that set the status)
        return
    process.returncode = os.waitstatus_to_exitcode(status)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(token: str) -> int:
    """SIGKILL every process whose environment has ``FAKEMASTER_RUN_ID=token`` (Linux
    ``/proc``; elsewhere nothing); returns how many."""
    marker = f"{RUN_ID}={token}".encode()
    killed = 0
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environment = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environment.split(b"\0"):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed
