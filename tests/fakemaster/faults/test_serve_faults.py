"""``serve --faults FILE``: the plan's wire faults are applied by a fault proxy on the address
``serve`` listens on, its server faults by the server; a bad plan is one error line."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.peers.policy import require_peer

REPO = Path(__file__).resolve().parents[3]
HANG_BOUND = 60

CUT = """
[[faults]]
kind = "cut"
at = { event = 12, where = "inside", offset = 30 }
close = "rst"
"""


def serve(*options: str) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "fakemaster", "serve", "--port", "0", *options]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    assert found, line + (process.stderr.read() if process.stderr else "")
    return process, int(found.group(1))


def fetch(tool: str, port: int, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool, "--read-from-remote-server", "--host=127.0.0.1", f"--port={port}",
         "--user=root", "--raw", "--to-last-log", f"--result-file={out}/", "mysql-bin.000001"],
        capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip


def test_a_planned_cut_reaches_the_client_and_only_with_the_plan(tmp_path: Path) -> None:
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    plan = tmp_path / "cut.toml"
    plan.write_text(CUT)
    results = {}
    for name, options in (("plain", ()), ("cut", ("--faults", str(plan)))):
        process, port = serve(*options)
        try:
            out = tmp_path / name
            out.mkdir()
            results[name] = fetch(tool, port, out)
        finally:
            process.terminate()
            process.communicate(timeout=HANG_BOUND)
    assert results["plain"].returncode == 0, results["plain"].stderr
    assert results["cut"].returncode != 0
    assert "Lost connection" in results["cut"].stderr


def test_a_bad_plan_is_one_error_line(tmp_path: Path) -> None:
    plan = tmp_path / "bad.toml"
    plan.write_text('[[faults]]\nkind = "no such kind"\n')
    result = subprocess.run(
        [sys.executable, "-m", "fakemaster", "serve", "--port", "0", "--faults", str(plan)],
        cwd=REPO, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "bad.toml" in lines[0]
