"""Time from "start a primary" to the first handshake byte a client reads from it: the fake
master in-process and as a process, next to a real MariaDB 10.11 started the way the tests start
one, in one run; reported as medians and ratios.

    python3 bench/bench_startup.py                   # 20 rounds, 3 cold MariaDB starts
    python3 bench/bench_startup.py --repeat 50 --cold-repeat 5

What is timed, each round (setup such as building the real server's template datadir is not):

* fake, in-process (async): ``FakeMaster(config, MemoryBinlogStore())``, ``await start()``,
  connect, read one byte (an event loop already running, as in an async test);
* fake, in-process (thread): the same with ``BackgroundFakeMaster``, from synchronous code;
* fake, process: spawn ``python -m fakemaster serve --port 0 --binlog-dir DIR``, read its
  "listening on" line, connect, read one byte;
* MariaDB, harness: ``tests.peers.mariadb.MariaDBServer().start()`` (copy of a pre-initialised
  datadir, spawn ``mariadbd``, wait for it as the tests do), then connect and read one byte;
* MariaDB, first byte: the same datadir copy and ``mariadbd`` command, polling the port every
  2 ms until the first handshake byte arrives (what the server itself needs);
* MariaDB, ready datadir: ``mariadbd`` started again on a datadir it has already used (stopped
  cleanly before, nothing copied), to the first byte (polled every 2 ms);
* MariaDB, cold: ``mariadb-install-db`` into an empty directory, then ``mariadbd`` to the
  first byte (a test suite without a template datadir).

CPU time to the first byte (issue #25: on a loaded machine start-up waits for its CPU), printed
first; ``--cpu-only`` prints only this part (no MariaDB needed):

* ``fakemaster serve`` process: spawned as above; once its first handshake byte arrived, the
  CPU time of all its threads so far (``/proc/PID/task/*/schedstat``, nanoseconds); in this
  environment (with ``PYTHONDONTWRITEBYTECODE=1`` every start compiles every project module
  from source) and with the bytecode cached (``PYTHONPYCACHEPREFIX``, written by one start
  first), as an installed package runs;
* bare ``python -c "import asyncio"`` and ``python -c "import asyncio, ssl"``: the CPU time of
  the whole process (``os.wait4``), the floor of any asyncio server in Python on this
  interpreter (whatever ``site`` loads at start-up is in both).

``--reference DIR`` (with ``--cpu-only``) runs the same ``serve`` rows for another checkout of
the project too (e.g. main from ``git archive``), its source first on the path, the two trees'
rounds interleaved so that both see the same load, and prints the ratio of their medians.

Needs MariaDB 10.11 (``mariadbd``, ``mariadb-install-db``; see scripts/install-deps.sh) for the
real-server rows. No timing is asserted anywhere; the figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fakemaster.config.server_config import ServerConfig  # noqa: E402
from fakemaster.server.master import BackgroundFakeMaster, FakeMaster  # noqa: E402
from fakemaster.store import MemoryBinlogStore  # noqa: E402
from tests.peers.mariadb import (  # noqa: E402
    MariaDBServer,
    find_install_db,
    find_mariadbd,
    mariadb_available,
)

HOST = "127.0.0.1"
GOLDEN = REPO_ROOT / "tests" / "golden" / "binlogs" / "default"
POLL = 0.002
TIMEOUT = 60.0


def first_byte(port: int, deadline: float) -> None:
    """Connect (retrying while nothing listens yet) and read the first handshake byte."""
    while True:
        try:
            with socket.create_connection((HOST, port), timeout=TIMEOUT) as sock:
                if sock.recv(1):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"no handshake byte from port {port}")
        time.sleep(POLL)


# --- the fake master -------------------------------------------------------------------------


async def _async_round(config: ServerConfig) -> float:
    start = time.perf_counter()
    master = FakeMaster(config, MemoryBinlogStore())
    await master.start()
    reader, writer = await asyncio.open_connection(HOST, master.port)
    await reader.readexactly(1)
    elapsed = time.perf_counter() - start
    writer.close()
    await master.stop()
    return elapsed


def fake_in_process_async(repeat: int) -> list[float]:
    config = ServerConfig()

    async def run() -> list[float]:
        return [await _async_round(config) for _ in range(repeat)]

    return asyncio.run(run())


def fake_in_process_thread(repeat: int) -> list[float]:
    config = ServerConfig()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        master = BackgroundFakeMaster(config, MemoryBinlogStore()).start()
        with socket.create_connection((HOST, master.port), timeout=TIMEOUT) as sock:
            sock.recv(1)
        times.append(time.perf_counter() - start)
        master.stop()
    return times


def binlog_dir(root: Path) -> Path:
    """A copy of the committed real-server binlogs with the index ``serve`` reads."""
    directory = root / "binlogs"
    directory.mkdir()
    names = sorted(path.name for path in GOLDEN.glob("mysql-bin.[0-9]*"))
    for name in names:
        shutil.copy(GOLDEN / name, directory / name)
    (directory / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in names))
    return directory


def fake_process(repeat: int, directory: Path) -> list[float]:
    command = [sys.executable, "-m", "fakemaster", "serve", "--port", "0"]
    command += ["--binlog-dir", str(directory)]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"listening on \S+:(\d+)", line)
            if found is None:
                raise RuntimeError(f"fakemaster serve said {line!r}: {proc.stderr}")
            first_byte(int(found.group(1)), time.monotonic() + TIMEOUT)
            times.append(time.perf_counter() - start)
        finally:
            proc.terminate()
            proc.communicate(timeout=TIMEOUT)
    return times


def process_cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process ``pid`` so far (Linux schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def serve_cpu(
    repeat: int, directory: Path, env: dict[str, str] | None = None, root: Path = REPO_ROOT
) -> list[float]:
    """CPU seconds `fakemaster serve` of the checkout ``root`` spent until its first handshake
    byte was read."""
    command = [sys.executable, "-m", "fakemaster", "serve", "--port", "0"]
    command += ["--binlog-dir", str(directory)]
    if root != REPO_ROOT:
        env = tree_env(root, env)
    seconds = []
    for _ in range(repeat):
        proc = subprocess.Popen(
            command,
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = re.search(r"listening on \S+:(\d+)", line)
            if found is None:
                raise RuntimeError(f"fakemaster serve said {line!r}: {proc.stderr}")
            first_byte(int(found.group(1)), time.monotonic() + TIMEOUT)
            seconds.append(process_cpu_seconds(proc.pid))
        finally:
            proc.terminate()
            proc.communicate(timeout=TIMEOUT)
    return seconds


def python_cpu(repeat: int, code: str) -> list[float]:
    """CPU seconds of a whole ``python -c CODE`` process."""
    seconds = []
    for _ in range(repeat):
        proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"python -c {code!r} failed")
        seconds.append(usage.ru_utime + usage.ru_stime)
    return seconds


def cached_bytecode_env(prefix: Path) -> dict[str, str]:
    """The environment with bytecode written to and read from ``prefix`` (the project's modules
    compiled once, as an installed package's are), whatever PYTHONDONTWRITEBYTECODE said."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(prefix))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def tree_env(root: Path, env: dict[str, str] | None) -> dict[str, str]:
    """``env`` (default: this one) with the checkout ``root`` first on the path: an editable
    install or a PYTHONPATH naming this tree would otherwise win."""
    tree = dict(os.environ if env is None else env)
    tree["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), tree.get("PYTHONPATH")]))
    return tree


def report_cpu_against(repeat: int, directory: Path, reference: Path) -> None:
    """The serve rows of this tree and of ``reference``, one round of each in turn."""
    print(f"CPU time to the first handshake byte (medians), this tree and {reference}:")
    cached = cached_bytecode_env(directory.parent / "pycache")
    for root in (REPO_ROOT, reference):
        serve_cpu(1, directory, cached, root)  # compiles and writes the bytecode
    writes = "no" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "yes"
    variants: list[tuple[str, Callable[[], list[float]]]] = []
    for environment, env in ((f"writes .pyc: {writes}", None), ("bytecode cached", cached)):
        for tree, root in (("this tree", REPO_ROOT), ("reference", reference)):
            variants.append(
                (
                    f"serve, {environment}, {tree}",
                    lambda env=env, root=root: serve_cpu(1, directory, env, root),
                )
            )
    variants.append(('bare python -c "import asyncio"', lambda: python_cpu(1, "import asyncio")))
    samples: dict[str, list[float]] = {label: [] for label, _ in variants}
    for _ in range(repeat):
        for label, run in variants:
            samples[label] += run()
    medians = [report(label, samples[label]) for label, _ in variants]
    print(
        f"  this tree / reference: {medians[0] / medians[1]:.2f}x (writes .pyc: {writes}), "
        f"{medians[2] / medians[3]:.2f}x (bytecode cached); serve - bare asyncio, bytecode "
        f"cached: {(medians[2] - medians[4]) * 1000:.1f} ms against "
        f"{(medians[3] - medians[4]) * 1000:.1f} ms; load average {os.getloadavg()[0]:.1f}"
    )
    print()


def report_cpu(repeat: int, directory: Path) -> None:
    print("CPU time to the first handshake byte (medians):")
    cached = cached_bytecode_env(directory.parent / "pycache")
    serve_cpu(1, directory, cached)  # compiles and writes the bytecode
    writes = "no" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "yes"
    variants = [
        (f"serve, this environment (writes .pyc: {writes})", lambda: serve_cpu(repeat, directory)),
        ("serve, bytecode cached", lambda: serve_cpu(repeat, directory, cached)),
        ('bare python -c "import asyncio"', lambda: python_cpu(repeat, "import asyncio")),
        ('bare python -c "import asyncio, ssl"', lambda: python_cpu(repeat, "import asyncio, ssl")),
    ]
    medians = [report(label, run()) for label, run in variants]
    print(
        f"  serve / bare asyncio: {medians[0] / medians[2]:.2f}x (this environment), "
        f"{medians[1] / medians[2]:.2f}x (bytecode cached); load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    print()


# --- a real MariaDB ---------------------------------------------------------------------------


class FirstByteMariaDB(MariaDBServer):
    """The harness's server, but ready at its first handshake byte (polled every 2 ms) instead
    of the harness's error-log check and SQL login."""

    def _spawn_and_wait(self) -> None:
        self._proc = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        first_byte(self.port, time.monotonic() + TIMEOUT)


def mariadb_harness(repeat: int) -> list[float]:
    MariaDBServer().start().close()  # the template datadir, made once per process
    times = []
    for _ in range(repeat):
        server = MariaDBServer()
        start = time.perf_counter()
        server.start()
        first_byte(server.port, time.monotonic() + TIMEOUT)
        times.append(time.perf_counter() - start)
        server.close()
    return times


def mariadb_first_byte(repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        server = FirstByteMariaDB()
        start = time.perf_counter()
        server.start()
        times.append(time.perf_counter() - start)
        server.close()
    return times


def mariadb_ready_datadir(repeat: int) -> list[float]:
    """``mariadbd`` restarted on a datadir it already used (nothing copied): the time to its
    first handshake byte, as for a primary that is simply started again."""
    server = FirstByteMariaDB()
    server.start()
    times = []
    try:
        for _ in range(repeat):
            server.stop()
            start = time.perf_counter()
            server.start()
            times.append(time.perf_counter() - start)
    finally:
        server.close()
    return times


def mariadb_cold(repeat: int, root: Path) -> list[float]:
    install_db, mariadbd = find_install_db(), find_mariadbd()
    assert install_db is not None and mariadbd is not None
    as_root = ["--user=root"] if os.geteuid() == 0 else []
    times = []
    for index in range(repeat):
        base = root / f"cold{index}"
        datadir = base / "data"
        base.mkdir()
        port = _free_port()
        start = time.perf_counter()
        subprocess.run(
            [
                install_db,
                "--no-defaults",
                f"--datadir={datadir}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--skip-name-resolve",
                *as_root,
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        proc = subprocess.Popen(
            [
                mariadbd,
                "--no-defaults",
                f"--datadir={datadir}",
                f"--socket={base / 'mysqld.sock'}",
                f"--pid-file={base / 'mysqld.pid'}",
                f"--log-error={base / 'error.log'}",
                f"--port={port}",
                f"--bind-address={HOST}",
                f"--log-bin={base / 'mysql-bin'}",
                "--server-id=1",
                "--binlog-format=ROW",
                *as_root,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            first_byte(port, time.monotonic() + TIMEOUT)
            times.append(time.perf_counter() - start)
        finally:
            proc.terminate()
            proc.wait(timeout=TIMEOUT)
        shutil.rmtree(base, ignore_errors=True)
    return times


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# --- report -------------------------------------------------------------------------------------


def report(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    print(
        f"{label:40s} median {median * 1000:9.2f} ms   "
        f"min {min(times) * 1000:9.2f}   max {max(times) * 1000:9.2f}   (n={len(times)})"
    )
    return median


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="rounds per variant (%(default)s)")
    parser.add_argument(
        "--cold-repeat", type=int, default=3, help="cold MariaDB starts (%(default)s)"
    )
    parser.add_argument(
        "--cpu-only", action="store_true", help="only the CPU time to the first byte"
    )
    parser.add_argument(
        "--reference",
        type=Path,
        metavar="DIR",
        help="with --cpu-only: also another checkout of the project (e.g. main), interleaved",
    )
    args = parser.parse_args(argv)
    if args.reference is not None and not (args.reference / "fakemaster").is_dir():
        parser.error(f"--reference {args.reference}: no fakemaster package there")
    if args.reference is not None and not args.cpu_only:
        parser.error("--reference goes with --cpu-only")
    if args.cpu_only:
        with tempfile.TemporaryDirectory(prefix="fm-bench-startup-") as temporary:
            directory = binlog_dir(Path(temporary))
            if args.reference is not None:
                report_cpu_against(args.repeat, directory, args.reference.resolve())
            else:
                report_cpu(args.repeat, directory)
        return 0
    if not mariadb_available():
        print("MariaDB 10.11 is not installed: run scripts/install-deps.sh", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fm-bench-startup-") as temporary:
        root = Path(temporary)
        directory = binlog_dir(root)
        report_cpu(args.repeat, directory)
        variants: list[tuple[str, Callable[[], list[float]]]] = [
            ("fake master, in-process (async)", lambda: fake_in_process_async(args.repeat)),
            ("fake master, in-process (thread)", lambda: fake_in_process_thread(args.repeat)),
            (
                "fake master, `fakemaster serve` process",
                lambda: fake_process(args.repeat, directory),
            ),
            ("MariaDB, harness start (template)", lambda: mariadb_harness(args.repeat)),
            ("MariaDB, first byte (template)", lambda: mariadb_first_byte(args.repeat)),
            ("MariaDB, ready datadir (restart)", lambda: mariadb_ready_datadir(args.repeat)),
            ("MariaDB, cold (mariadb-install-db)", lambda: mariadb_cold(args.cold_repeat, root)),
        ]
        medians = {label: report(label, run()) for label, run in variants}
    labels = [label for label, _ in variants]
    fake_async, fake_thread, fake_proc, real_harness, real_first, real_ready, real_cold = (
        medians[label] for label in labels
    )
    print()
    print("ratios (MariaDB median / fake master median):")
    for real_label, real in (
        ("harness start", real_harness),
        ("first byte", real_first),
        ("ready datadir", real_ready),
        ("cold", real_cold),
    ):
        print(
            f"  MariaDB {real_label:14s} / in-process async {real / fake_async:8.1f}x   "
            f"/ in-process thread {real / fake_thread:8.1f}x   "
            f"/ serve process {real / fake_proc:6.1f}x"
        )
    print()
    print("readiness, MariaDB time / `fakemaster serve` process time (issue #7 aims in brackets):")
    print(
        f"  mariadbd on a ready datadir (restart) {real_ready / fake_proc:5.2f}x   "
        f"(copied template datadir {real_first / fake_proc:5.2f}x)   [at least 2x]"
    )
    print(f"  a fresh MariaDB (install + start)     {real_cold / fake_proc:5.2f}x   [at least 10x]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
