"""Must-show 3 of issue #22: the pipeline on a Spark standalone cluster as users have one.

A master and two workers started with ``spark-class`` from the installed PySpark (bound to
127.0.0.1, temporary directories, killed with the test); ``spark-submit`` run the way
docs/spark.md says, with the ``--py-files`` zip and entry point ``pipeline submit-files`` prints
(no checkout path) and binlog and output paths relative to the submitting directory; the tables
equal the scenario's oracle (``pipeline compare``) and both workers' executors ran tasks.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakemaster.cli import main
from scenarios.compiler import binlog_files, to_store
from scenarios.toml_form import read_scenario
from tests.peers.policy import require_module, require_peer
from tests.support.spark_cluster import spark_home, standalone_cluster

# Four binlog files (four decoding tasks), a keyed and a keyless table, an update of a key.
SCENARIO = """
[settings]
binlog_row_metadata = "FULL"
[[tables]]
create = "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20), total DECIMAL(8,2))"
rows = [{ id = 1, note = "first", total = "1.50" }]
[[tables]]
create = "CREATE TABLE shop.log (line VARCHAR(40))"
[[steps]]
changes = [{ insert = "shop.orders", rows = [{ id = 2, note = "second", total = "20.00" }] },
           { insert = "shop.log", rows = [{ line = "two" }, { line = "two" }] }]
[[steps]]
rotate = true
[[steps]]
changes = [{ update = "shop.orders", where = { id = 1 }, set = { id = 10, note = "moved" } }]
[[steps]]
rotate = true
[[steps]]
changes = [{ delete = "shop.orders", where = { id = 2 } },
           { insert = "shop.log", rows = [{ line = "three" }] }]
[[steps]]
rotate = true
[[steps]]
changes = [{ insert = "shop.orders", rows = [{ id = 3, note = "third", total = "0.01" }] }]
"""


def test_spark_submit_on_a_standalone_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_module("pyspark", "pip install 'fakemaster[spark]' (PySpark 4.x; Java 17)")
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    require_peer("a Java runtime", shutil.which("java") is not None, "scripts/install-deps.sh")
    job = tmp_path / "job"
    (job / "binlogs").mkdir(parents=True)
    (tmp_path / "scenario.toml").write_text(SCENARIO)
    files = binlog_files(to_store(read_scenario(tmp_path / "scenario.toml")))
    assert len(files) == 4
    for name, data in files.items():
        (job / "binlogs" / name).write_bytes(data)

    assert main(["pipeline", "submit-files", "--dir", str(tmp_path / "cache")]) == 0
    submit_files = shlex.split(capsys.readouterr().out)
    assert submit_files[0] == "--py-files" and submit_files[1].endswith(".zip")

    with standalone_cluster(tmp_path / "cluster", workers=2) as cluster:
        started = time.monotonic()
        command = [str(spark_home() / "bin" / "spark-submit"), "--master", cluster.master_url]
        command += ["--conf", "spark.cores.max=2", "--conf", "spark.executor.cores=1"]
        command += ["--conf", "spark.executor.memory=512m", "--driver-memory", "1g"]
        command += ["--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0"]
        command += ["--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s"]
        command += ["--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.ui.enabled=false"]
        command += [*submit_files, "batch", "binlogs", "--out", "out"]
        env = cluster.environment()
        env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")  # the driver runs this tree
        result = subprocess.run(command, cwd=job, env=env, capture_output=True, timeout=600)
        submitted_in = time.monotonic() - started
        tasks = cluster.tasks_per_worker()
    err = result.stderr.decode(errors="replace")
    errors = [line for line in err.splitlines() if line.startswith("error:") or "Error:" in line]
    out = result.stdout.decode(errors="replace")
    assert result.returncode == 0, "\n".join([out[-2000:], *errors[:5], "...", err[-3000:]])
    print(
        f"cluster up in {cluster.started_in:.1f} s, spark-submit {submitted_in:.1f} s,"
        f" tasks per worker {tasks}",
        file=sys.stderr,
    )
    assert all(count > 0 for count in tasks), (tasks, err[-3000:])
    reference = str(tmp_path / "scenario.toml")
    assert main(["pipeline", "compare", str(job / "out"), reference]) == 0, capsys.readouterr().out
