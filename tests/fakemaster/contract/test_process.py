"""fakemaster.contract.process: the error line a failed client's verdict shows, its streams kept
in bounded memory, what a client leaves in its process group killed; and the output file read
within its limits (fakemaster.contract.adapter.read_output)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakemaster.contract.adapter import OutputError, read_output
from fakemaster.contract.process import (
    KEEP_HEAD,
    KEEP_TAIL,
    StreamKeeper,
    error_line,
    printable,
    run_command,
)

NODE = """\
/app/client.js:4
const zongji = new ZongJi({ host: process.env.FAKEMASTER_HOST });
               ^

TypeError: ZongJi is not a constructor
    at Object.<anonymous> (/app/client.js:4:16)
    at Module._compile (node:internal/modules/cjs/loader:1364:14)

Node.js v20.20.2
"""

PYTHON = """\
Traceback (most recent call last):
  File "/app/cdc.py", line 9, in <module>
    raise ValueError("no binlog")
ValueError: no binlog
"""


@pytest.mark.parametrize(
    ("stderr", "shown"),
    [
        (NODE, "TypeError: ZongJi is not a constructor"),
        (PYTHON, "ValueError: no binlog"),  # not the indented source line naming ValueError
        ("connecting\npymysql.err.OperationalError: (2003, 'refused')\n", "pymysql.err.OperationalError: (2003, 'refused')"),
        ("ERROR 2013 (HY000): Lost connection\nretrying\n", "ERROR 2013 (HY000): Lost connection"),
        ("goroutine 1\npanic: runtime error: index out of range\n", "panic: runtime error: index out of range"),
        ("\x1b[31mError: connect ECONNREFUSED\x1b[0m\n", "Error: connect ECONNREFUSED"),
        ("Errors: none so far\nconnection 50: timed out\ngave up after 50 connections\n\n", "gave up after 50 connections"),
        ("", ""),
    ],
)  # fmt: skip
def test_the_error_line(stderr: str, shown: str) -> None:
    assert error_line(stderr.splitlines()) == shown
    keeper = StreamKeeper(None, watch=True)
    for piece in (stderr.encode()[i : i + 7] for i in range(0, len(stderr.encode()), 7)):
        keeper.feed(piece)  # as it streams, in pieces that split lines
    keeper.close()
    assert keeper.shown_line == shown


def test_printable() -> None:
    assert printable("\x1b[1;31mred\x1b[0m \x00\x07tab\there") == "red \ufffd\ufffdtab\there"


def test_a_stream_keeps_its_head_and_tail(tmp_path: Path) -> None:
    path = tmp_path / "err"
    keeper = StreamKeeper(path, watch=True)
    keeper.feed(b"Error: first\n")
    for _ in range(40):
        keeper.feed(b"x" * (1 << 16))
    keeper.feed(b"\nlast\n")
    keeper.close()
    total = 13 + 40 * (1 << 16) + 6
    kept = path.read_bytes()
    dropped = total - KEEP_HEAD - KEEP_TAIL
    assert kept == (
        b"Error: first\n" + b"x" * (KEEP_HEAD - 13)
        + f"\n[... {dropped} bytes not kept ...]\n".encode()
        + b"x" * (KEEP_TAIL - 6) + b"\nlast\n"
    )  # fmt: skip
    assert keeper.total == total and keeper.shown_line == "Error: first"
    assert keeper.text(5) == "last\n"


def test_a_short_stream_is_kept_whole(tmp_path: Path) -> None:
    keeper = StreamKeeper(tmp_path / "err")
    keeper.feed(b"one\n")
    keeper.feed(b"two\n")
    keeper.close()
    assert (tmp_path / "err").read_bytes() == b"one\ntwo\n" and keeper.text(100) == "one\ntwo\n"


def test_what_a_client_leaves_in_its_group_is_killed(tmp_path: Path) -> None:
    # The shell exits at once; its background child keeps stderr open, in the same group.
    pid_file = tmp_path / "pid"
    script = f"sleep 600 & echo $! > {pid_file}; echo 'Error: gone' >&2; exit 3"
    finished = run_command(
        ["sh", "-c", script], timeout=60, env=dict(os.environ), stderr_path=tmp_path / "err"
    )
    assert (finished.returncode, finished.error_line) == (3, "Error: gone")
    assert (tmp_path / "err").read_text() == "Error: gone\n"
    # SIGKILL sent: the child may still be in its exit (state R, its stderr already closed) on
    # a busy machine; it must end without being told again. The deadline only bounds a failure
    # (an untouched ``sleep 600`` stays asleep).
    stat = Path(f"/proc/{pid_file.read_text().strip()}/stat")
    deadline = time.monotonic() + 60
    while _alive_sleep(stat) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive_sleep(stat)


def _alive_sleep(stat: Path) -> bool:
    """Whether ``stat`` (``/proc/PID/stat``) is of a ``sleep`` neither dead nor a zombie (a PID
    taken again by another process is not the ``sleep``)."""
    try:
        text = stat.read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    name, _, rest = text.partition(" (")[2].rpartition(")")
    return name == "sleep" and rest.split()[0] not in "ZX"


def test_a_command_that_does_not_start() -> None:
    finished = run_command(["/nonexistent/client"], timeout=5, env={})
    assert finished.returncode == 127
    assert finished.start_error == (
        "the client did not start: No such file or directory: '/nonexistent/client'"
    )


def test_the_output_is_read_within_its_limits(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text(
        '{"kind": "header", "tables": true}\n'
        + '{"kind": "row", "table": "t", "values": {"a": "1"}}\n'
    )
    assert read_output(out).tables == {"t": ({"a": "1"},)}
    with pytest.raises(
        OutputError, match=r"^the output is 87 bytes, more than the 80 check reads$"
    ):
        read_output(out, limit=80)
    with pytest.raises(OutputError, match=r"^line 2: longer than the 40 bytes check reads$"):
        read_output(out, line_limit=40)
    out.write_bytes(b'{"kind": "header"}\n{"kind": "row", "table": "\xff"}\n')
    with pytest.raises(OutputError, match=r"^line 2: not UTF-8 \(byte 0xff at column 27\)$"):
        read_output(out)


def test_an_interpreter_that_prints_its_error_first() -> None:
    finished = run_command(
        [sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); raise KeyError('k')"],
        timeout=30,
        env=dict(os.environ),
    )
    assert (finished.returncode, finished.error_line) == (1, "KeyError: 'k'")


@pytest.mark.timeout(60)
def test_a_grandchild_that_hides_does_not_hold_the_run(tmp_path: Path) -> None:
    # A new session and an empty environment: neither the group nor FAKEMASTER_RUN_ID finds it;
    # it holds stderr open, and the run ends DRAIN seconds after the client exits anyway.
    pid_file = tmp_path / "pid"
    script = f"setsid env -i sleep 600 & echo $! > {pid_file}; echo 'done' >&2; exit 0"
    finished = run_command(["sh", "-c", script], timeout=60, env=dict(os.environ))
    hidden = int(pid_file.read_text())
    try:
        assert (finished.returncode, finished.error_line) == (0, "done")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(hidden, signal.SIGKILL)


@pytest.mark.timeout(60)
def test_ctrl_c_inside_popen_poll_still_stops_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    # CPython's window: a KeyboardInterrupt raised inside Popen.poll after it took its waitpid
    # lock and before the try that releases it leaves the lock held (one interrupt in four
    # during a loop of polls); Popen.wait then blocked for ever and check never exited.
    polls = 0
    real_poll = subprocess.Popen.poll

    def poll_interrupted_holding_the_lock(process: subprocess.Popen[bytes]) -> int | None:
        nonlocal polls
        polls += 1
        if polls == 3:
            process._waitpid_lock.acquire()  # type: ignore[attr-defined]
            raise KeyboardInterrupt
        return real_poll(process)

    monkeypatch.setattr(subprocess.Popen, "poll", poll_interrupted_holding_the_lock)
    started: list[subprocess.Popen[bytes]] = []
    real_init = subprocess.Popen.__init__

    def remember(process: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
        real_init(process, *args, **kwargs)  # type: ignore[arg-type]
        started.append(process)

    monkeypatch.setattr(subprocess.Popen, "__init__", remember)
    with pytest.raises(KeyboardInterrupt):
        run_command(["sleep", "600"], timeout=300, env=dict(os.environ))
    (client,) = started
    assert client.returncode == -signal.SIGKILL  # killed and reaped
    assert not Path(f"/proc/{client.pid}").exists()
