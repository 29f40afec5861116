"""``fakemaster check`` against clients that misbehave on purpose (hostile_clients/): a Node
client failing as the issue's did, a missing command, one not executable, one that hangs
ignoring SIGTERM (also interrupted by Ctrl-C), one that leaves a ``setsid`` grandchild holding
stderr, one that writes non-UTF-8 bytes, one that writes a line no JSON parser can nest, one
that floods 1 GiB of stderr and a 1 GiB output. Each ends (pytest-timeout is the safety net; no
timing is asserted) with a verdict and its reason in the table and in JUnit, exit status 1, and
the flood in bounded memory (the peak RSS of check and its client)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.peers.policy import require_peer

REPO = Path(__file__).resolve().parents[3]
CLIENTS = Path(__file__).resolve().parent / "hostile_clients"
CASE = "compressed/clean"
STEM = "compressed--clean"

# Runs check as its child and prints the peak RSS (KiB) of check and its descendants last.
MEASURED = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(done.returncode)\n"
)


@dataclass
class Checked:
    returncode: int
    stdout: str
    stderr: str
    junit: ET.Element
    workdir: Path
    max_rss_kib: int

    @property
    def verdicts(self) -> list[str]:
        """The failing case's failed checks, as the details list them (``check: detail``)."""
        details = self.stdout.split(f"--- {CASE}: ", 1)[1].splitlines()[1:]
        return [
            line.strip()
            for line in details
            if line.startswith("    ") and ": " in line and not line.startswith("      ")
        ]

    def failure(self) -> ET.Element:
        (case,) = self.junit.iter("testcase")
        assert case.get("name") == CASE
        found = case.find("failure")
        assert found is not None
        return found


def check(tmp_path: Path, client: str, *, timeout: float = 30) -> Checked:
    junit, workdir = tmp_path / "check.xml", tmp_path / "work"
    words = [
        sys.executable, "-m", "fakemaster", "check", "--client", client,
        "--generated", "0", "--only", CASE, "--timeout", str(timeout),
        "--junit-xml", str(junit), "--workdir", str(workdir),
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *words],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    *table, rss = done.stdout.splitlines()
    return Checked(
        done.returncode, "\n".join(table), done.stderr, ET.parse(junit).getroot(), workdir, int(rss)
    )


def client(name: str) -> str:
    return f"{sys.executable} {CLIENTS / name}.py {{out}}"


def test_a_node_client_shows_its_typeerror_not_the_node_version(tmp_path: Path) -> None:
    node = shutil.which("node")
    require_peer("node", node is not None, "apt-get install nodejs")
    done = check(tmp_path, f"{node} {CLIENTS / 'not_a_constructor.js'}")
    assert done.returncode == 1
    reason = "caught up: exit status 1: TypeError: ZongJi is not a constructor"
    assert done.verdicts[0] == reason
    assert done.failure().get("message") == reason
    kept = (done.workdir / f"{STEM}.stderr").read_text()
    assert kept.rstrip().splitlines()[-1].startswith("Node.js v")  # what was shown before


def test_a_missing_command(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-client"
    done = check(tmp_path, f"{missing} {{host}} {{port}} {{out}}")
    assert done.returncode == 1
    reason = f"caught up: the client did not start: No such file or directory: '{missing}'"
    assert done.verdicts[0] == reason
    assert done.verdicts[1] == "no loss: the client wrote no output"
    assert done.failure().get("message") == reason


def test_a_command_that_is_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "client.sh"
    script.write_text("#!/bin/sh\nexit 0\n")  # no x bit
    done = check(tmp_path, f"{script} {{out}}")
    assert done.returncode == 1
    assert done.verdicts[0] == f"caught up: the client did not start: Permission denied: '{script}'"


@pytest.mark.timeout(120)
def test_a_client_that_hangs_and_ignores_sigterm(tmp_path: Path) -> None:
    done = check(tmp_path, client("hangs"), timeout=2)
    assert done.returncode == 1
    reason = (
        "caught up: timeout: still running after 2s (stopped); waiting for events that never come"
    )
    assert done.verdicts[0] == reason
    assert done.failure().get("message") == reason
    assert (done.workdir / f"{STEM}.stderr").read_text() == "waiting for events that never come\n"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("started_with", ["SIGINT handled", "SIGINT ignored"])
def test_ctrl_c_reports_what_ran_and_stops_the_client(tmp_path: Path, started_with: str) -> None:
    """Also when check starts with SIGINT ignored, as a shell without job control starts a
    background job (and as CI once ran this test: check went on to its 600 s limit)."""
    workdir = tmp_path / "work"
    words = [
        sys.executable, "-m", "fakemaster", "check", "--client", client("hangs"),
        "--generated", "0", "--only", CASE, "--timeout", "600", "--workdir", str(workdir),
    ]  # fmt: skip
    # The child inherits SIG_IGN across exec; a handler of this process's becomes SIG_DFL.
    inherited = signal.SIG_IGN if started_with == "SIGINT ignored" else signal.default_int_handler
    previous = signal.signal(signal.SIGINT, inherited)
    try:
        running = subprocess.Popen(
            words, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    pid_file = workdir / f"{STEM}.out.jsonl.pid"
    while not pid_file.exists():  # the client runs (pytest-timeout bounds the wait)
        assert running.poll() is None, running.communicate()
        time.sleep(0.05)
    running.send_signal(signal.SIGINT)
    stdout, stderr = running.communicate()
    assert running.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1] == "interrupted after 0 of 1 cases"
    assert stdout.splitlines()[-1] == "0 cases: 0 passed, 0 failed"
    assert not alive(int(pid_file.read_text()))


@pytest.mark.timeout(120)
def test_a_client_that_leaves_a_setsid_grandchild_holding_stderr(tmp_path: Path) -> None:
    # Before: check waited for the grandchild's stderr to close (its 600 s sleep).
    done = check(tmp_path, client("grandchild"))
    assert done.returncode == 1
    # The first error line, not the last line ("bye").
    assert done.verdicts[0] == "caught up: exit status 1: RuntimeError: cannot reach the primary"
    assert (done.workdir / f"{STEM}.stderr").read_text() == (
        "starting\nRuntimeError: cannot reach the primary\nbye\n"
    )
    # The grandchild is gone (its own session: found by FAKEMASTER_RUN_ID).
    pid = int((done.workdir / f"{STEM}.out.jsonl.grandchild-pid").read_text())
    assert not alive(pid)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie waits for init to reap it


def test_non_utf8_output_and_stderr(tmp_path: Path) -> None:
    done = check(tmp_path, client("non_utf8"))
    assert done.returncode == 1
    reason = "unreadable output: line 2: not UTF-8 (byte 0xe9 at column 58)"
    assert done.verdicts == [
        f"{name}: {reason}"
        for name in (
            "no loss",
            "no duplicates",
            "changes as served",
            "per-key order",
            "final tables",
        )
    ]
    assert done.failure().get("message") == f"no loss: {reason}"
    # The JUnit file parsed (check() parsed it): NUL and ESC replaced, the rest as printed.
    (case,) = done.junit.iter("testcase")
    assert case.findtext("system-err") == "\ufffd\ufffd[31m\ufffd\ufffd not text \ufffd\n"
    # Kept as printed, byte for byte.
    assert (done.workdir / f"{STEM}.stderr").read_bytes() == b"\x00\x1b[31m\xff\xfe not text \xc3\n"


def test_a_line_nested_too_deep(tmp_path: Path) -> None:
    done = check(tmp_path, client("malformed"))
    assert done.returncode == 1
    assert done.verdicts[0] == "no loss: unreadable output: line 2: nested more than 64 deep"


@pytest.mark.timeout(300)
def test_a_flood_of_output_in_bounded_memory(tmp_path: Path) -> None:
    done = check(tmp_path, client("floods"))
    assert done.returncode == 1
    assert done.verdicts[0] == "caught up: exit status 1: Error: flooding"
    assert done.verdicts[1] == (
        "no loss: unreadable output: the output is 1073741824 bytes, more than the 268435456"
        " check reads"
    )
    assert done.failure() is not None
    # 1 GiB went through stderr and 1 GiB is in the output file: check (and its client) never
    # held more than a fraction of it (before: the whole stderr, then the whole output, 2 GB).
    assert done.max_rss_kib < 300 * 1024, done.max_rss_kib
    kept = (done.workdir / f"{STEM}.stderr").read_bytes()
    assert kept.startswith(b"Error: flooding\n\x00\x00")
    assert b"\n[... 1072627728 bytes not kept ...]\n" in kept  # 1 GiB + 16 - 1 MiB - 64 KiB
    assert len(kept) < 2 << 20
