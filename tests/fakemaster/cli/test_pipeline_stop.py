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

import pytest

from fakemaster.cli.pipeline_stop import StreamStop, error_line, stopped_line
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
        before_signal = log.stat().st_size  # what the driver printed while it ran
        second.send_signal(signal.SIGTERM)
        status = second.wait(_HANG)
    text = log.read_text()
    assert status == 0, text
    lines = text.splitlines()
    stop = [line for line in lines if line.startswith("[pipeline] stopped")]
    assert stop == [lines[-1]], text
    assert f"stopped on SIGTERM at {end_file}:{end_pos} gtid " in stop[0], stop
    assert f"resume with: the same command (--out {out} --checkpoint {checkpoint})" in stop[0]
    # From the signal on, nothing but the stop: no traceback, no Java stack (warnings Spark
    # printed while starting over a checkpoint a SIGKILL left are the driver's, not the stop's).
    after = log.read_bytes()[before_signal:].decode("utf-8", "replace")
    assert "Traceback" not in after and "\tat " not in after and "Exception" not in after, text
    Oracle(scenario).assert_matches(read_tables(out))


class _Query:
    def __init__(self, progress: object) -> None:
        self.lastProgress = progress


def test_stopped_line_says_the_sources_offset_else_the_materialised_position(
    tmp_path: Path,
) -> None:
    offset = {"gtid": "0-1-7", "file": "mysql-bin.000002", "pos": 345, "event": 0, "row": 0}
    progress = {"sources": [{"endOffset": json.dumps(offset)}]}
    line = stopped_line(_Query(progress), str(tmp_path / "none"), "SIGINT", "again")
    assert (
        line
        == "[pipeline] stopped on SIGINT at mysql-bin.000002:345 gtid 0-1-7; resume with: again"
    )
    position = tmp_path / "position.json"
    position.write_text(json.dumps({"file": "b.000001", "pos": 9, "gtid_binlog_pos": ""}))
    assert " at b.000001:9 gtid -;" in stopped_line(_Query(None), str(position), "SIGTERM", "x")
    position.write_text("{broken")  # a torn file: no crash, no invented position
    assert " at before its first batch;" in stopped_line(_Query({}), str(position), "SIGTERM", "x")


def test_a_batch_planned_after_the_stop_request_is_refused() -> None:
    stop = StreamStop()
    with stop.batch():
        pass
    stop.request(signal.SIGTERM, None)
    with pytest.raises(Exception, match="stopping on SIGTERM"), stop.batch():
        raise AssertionError("applied after the stop request")


def test_error_line_is_the_sources_error_else_sparks_first_line() -> None:
    spark_text = (
        "[STREAM_FAILED] Query terminated with exception: Traceback (most recent call last):\n"
        '  File "x.py", line 1, in y\n'
        "fakemaster.spark.stream.StreamSourceError: the primary refused the stream: 1236\n"
        "\tat org.apache.spark.Foo(Foo.scala:1)\n"
    )
    assert error_line(spark_text) == "error: the primary refused the stream: 1236"
    assert error_line("\n[STREAM_FAILED] boom\n\tat org.x\n") == "error: [STREAM_FAILED] boom"


@pytest.mark.parametrize(
    ("option", "value"),
    [("--connect-retry", "0"), ("--connect-retry", "-1"), ("--retry-count", "0")],
)
def test_retry_options_below_one_are_a_usage_error(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from fakemaster.cli import main

    with pytest.raises(SystemExit) as ended:
        main(["pipeline", "stream", "--out", "o", "--checkpoint", "c", option, value])
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith(f"argument {option}: must be above 0, not {value}"), err
