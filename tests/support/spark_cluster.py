"""A Spark standalone cluster started from the installed PySpark: one master and N workers
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), bound to
127.0.0.1, in a temporary directory, killed when the test ends (and, through
``setpriv --pdeathsig``, when the test process dies whatever killed it).

The workers are started without the test's ``PYTHONPATH``: their executors find fakemaster only
in what ``spark-submit --py-files`` ships, as on a real cluster.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fakemaster.contract.server_lifetime import death_bound

__all__ = ["StandaloneCluster", "spark_home", "standalone_cluster"]

# How long the daemons get to come up (a loaded 2-core machine needs several seconds each).
START_TIMEOUT = 120.0


def spark_home() -> Path:
    """The installed PySpark's directory: it holds bin/spark-class and the jars."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class StandaloneCluster:
    root: Path
    master_url: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    workers: list[Path] = field(default_factory=list)  # each worker's work directory
    started_in: float = 0.0

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        conf = self.root / "conf"
        conf.mkdir(exist_ok=True)  # no spark-defaults.conf, no spark-env.sh of the machine's
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_CONF_DIR=str(conf),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOCAL_DIRS=str(self.root / "local"),
            SPARK_DAEMON_MEMORY="256m",
            PYSPARK_PYTHON=sys.executable,
        )
        return env

    def _spawn(self, name: str, arguments: list[str]) -> Path:
        log = self.root / f"{name}.log"
        command = [str(spark_home() / "bin" / "spark-class"), *arguments]
        with open(log, "wb") as handle:
            process = subprocess.Popen(
                death_bound(command),
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=self.root,
                start_new_session=True,
            )
        self.processes.append(process)
        self.logs.append(log)
        return log

    def _wait_for(self, log: Path, pattern: str) -> str:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = re.search(pattern, log.read_text(errors="replace"))
            if found:
                return found.group(0)
            if any(p.poll() is not None for p in self.processes):
                break
            time.sleep(0.2)
        raise RuntimeError(f"the cluster did not start: {log}:\n{log.read_text()[-3000:]}")

    def start(self, workers: int) -> StandaloneCluster:
        started = time.monotonic()
        self.root.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        master = self._spawn(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port)]
            + ["--webui-port", str(_free_port())],
        )
        self.master_url = f"spark://127.0.0.1:{port}"
        logs = []  # the workers start with the master: they retry until it listens
        for n in range(workers):
            work = self.root / f"worker{n}"
            work.mkdir()
            self.workers.append(work)
            logs.append(
                self._spawn(
                    f"worker{n}",
                    ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1"]
                    + ["--cores", "1", "--memory", "1g", "--work-dir", str(work)]
                    + ["--webui-port", str(_free_port()), self.master_url],
                )
            )
        self._wait_for(master, r"I have been elected leader")
        for log in logs:
            self._wait_for(log, r"Successfully registered with master")
        self.started_in = time.monotonic() - started
        return self

    def tasks_per_worker(self) -> list[int]:
        """How many tasks the executors of each worker ran (their logs' ``Running task``)."""
        return [
            sum(
                log.read_text(errors="replace").count("Running task")
                for log in work.glob("app-*/*/stderr")
            )
            for work in self.workers
        ]

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def standalone_cluster(root: Path, workers: int = 2) -> Iterator[StandaloneCluster]:
    cluster = StandaloneCluster(root)
    try:
        yield cluster.start(workers)
    finally:
        cluster.stop()
