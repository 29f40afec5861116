"""``pipeline stream`` as users run it, in two driver processes on one checkpoint (issue #22,
must-show 4 and the clean stop): the first is killed with SIGKILL (its whole process group:
the driver, its JVM and Python workers) once its first batch is committed, in the middle of
the next; the second resumes from the checkpoint, and SIGTERM, once it has materialised the
whole binlog, stops it after its batch with one line saying where and how to resume, exit
status 0 and no Python or Java stack trace. The tables then equal the scenario's oracle.

The waits poll files (the checkpoint's commits, the materialised position) with a bound only
against hanging; no verdict depends on the clock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.position import Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Oracle
from scenarios.compiler import to_store
from scenarios.library import build
from tests.peers.policy import require_module
from tests.support.spark_tables import read_tables

REPO = Path(__file__).resolve().parents[3]
_HANG = 300.0  # seconds: a bound against a hung driver, not a measured verdict


def _driver(port: int, out: Path, checkpoint: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "fakemaster", "pipeline", "stream", "--master", "local[1]"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--max-rows-per-batch", "20"]
    command += ["--out", str(out), "--checkpoint", str(checkpoint), "--connect-retry", "0.05"]
    with log.open("wb") as handle:
        return subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def _wait_for(process: subprocess.Popen[bytes], log: Path, ready: object) -> None:
    deadline = time.monotonic() + _HANG
    while not ready():  # type: ignore[operator]
        if process.poll() is not None:
            raise AssertionError(
                f"the driver ended early ({process.returncode}):\n{log.read_text()}"
            )
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"the driver hung:\n{log.read_text()}")
        time.sleep(0.2)


def _last_group_end(port: int) -> tuple[str, int]:
    """Where a replica stands after the binlog's last transaction (trailing events such as a
    STOP are not a group: the stream's position stays before them)."""
    with BlockingReplica(
        "127.0.0.1",
        port,
        ClientConfig(non_blocking=True, gtid_mode=False),
        start=Position().at("mysql-bin.000001", 4),
    ) as replica:
        for _ in replica.groups():
            pass
        return replica.position.file, replica.position.position


def test_killed_driver_resumes_and_sigterm_stops_cleanly(tmp_path: Path) -> None:
    require_module("pyspark", "pip install 'fakemaster[spark]' (PySpark 4.x; Java 17)")
    scenario = build("multi_domain")
    store = to_store(scenario)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        end_file, end_pos = _last_group_end(master.port)
        first = _driver(master.port, out, checkpoint, tmp_path / "first.log")
        _wait_for(first, tmp_path / "first.log", lambda: (checkpoint / "commits" / "0").exists())
        os.killpg(first.pid, signal.SIGKILL)
        assert first.wait() == -signal.SIGKILL

        def caught_up() -> bool:
            """A committed batch ends at the binlog's last transaction (the checkpoint's
            offsets file: a header, then the source's offset as JSON)."""
            for commit in (checkpoint / "commits").iterdir():
                try:
                    lines = (checkpoint / "offsets" / commit.name).read_text().splitlines()
                    offset = json.loads(lines[-1])
                except (OSError, ValueError, IndexError):
                    continue
                if (offset.get("file"), offset.get("pos")) == (end_file, end_pos):
                    return True
            return False

        log = tmp_path / "second.log"
        second = _driver(master.port, out, checkpoint, log)
        _wait_for(second, log, caught_up)
        second.send_signal(signal.SIGTERM)
        status = second.wait(_HANG)
    text = log.read_text()
    assert status == 0, text
    lines = text.splitlines()
    stop = [line for line in lines if line.startswith("[pipeline] stopped")]
    assert stop == [lines[-1]], text
    assert f"stopped on SIGTERM at {end_file}:{end_pos} gtid " in stop[0], stop
    assert f"resume with: the same command (--out {out} --checkpoint {checkpoint})" in stop[0]
    assert "Traceback" not in text and "\tat " not in text and "Exception" not in text, text
    Oracle(scenario).assert_matches(read_tables(out))
