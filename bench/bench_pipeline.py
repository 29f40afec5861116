"""The CDC pipeline as users run it, side by side with its own read, on the same archive, in one
run (issue #22 must-show 1).

    python3 bench/bench_pipeline.py                       # ~10 MB and ~100 MB, 3 rounds
    python3 bench/bench_pipeline.py --sizes 10 --rounds 2 --cache ~/.cache/fm-bench
    python3 bench/bench_pipeline.py --sizes 10 --cases read,batch --no-profile --no-micro

Archives: generated binlog files (bench_codec's eight column types, a keyed table ``bench.t``:
each transaction inserts 50 rows and updates 10 of the transaction before; with ``--tables N``,
transaction K writes ``bench.t<K mod N>``), about ``--sizes``
MB each (4 files up to 50 MB, 8 above), and a tiny one (1 file, 2 transactions: the fixed cost);
kept under ``--cache`` when given. Each round runs every case on every archive, interleaved
(case after case, archive after archive), each case a fresh process as a user starts it:

* ``read``: a Python process that makes the session the command makes (``pipeline._session``),
  registers the data source and runs ``spark.read.format("fakemaster_binlog").load(FILES)`` to
  a ``noop`` write; its wall time, and the read job alone inside it;
* ``batch``: ``python -m fakemaster pipeline batch FILES --out DIR`` (a new DIR each time);
* ``stream``: ``python -m fakemaster pipeline stream --available-now`` from ``fakemaster serve
  --binlog-dir`` on the same files (started before the round, outside the timing) until caught
  up.

Medians over rounds; rows/s are change events over the process's wall time; ratios batch/read
and stream/read of the medians. Then, once each (not in the medians): what a batch run is made
of (``--profile``: the command's own code run in one instrumented process: the session's start,
and every Spark action it makes, named by the fakemaster function that asks for it, with its
time and its Spark jobs from the status tracker), and the stream's micro-batch fixed cost
(``--micro``: a stream from an in-process fake master, one-row transactions appended one at a
time; each micro-batch's ``durationMs`` parts as Spark reports them and the actions inside the
batch function). No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import dataclasses
import decimal
import inspect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_codec import (  # noqa: E402
    COLUMNS,
    ROWS_PER_EVENT,
    generated_table_map,
    write_events,
)

__all__ = ["main"]

UPDATES_PER_TRANSACTION = 10
_EVENTS = re.compile(r"\[pipeline\] (\d+) change events")
_BATCH = re.compile(r"\[pipeline\] batch \d+: (\d+) change events")


# --- archives ------------------------------------------------------------------------------


def _row(row_id: int, version: int = 0) -> tuple[Any, ...]:
    from fakemaster.vocabulary.values import DateTime

    return (
        row_id,
        row_id * 1_000_003 + version,
        (row_id + version) % 100,
        f"customer-{row_id}-{version}".encode(),
        decimal.Decimal(row_id % 100000) / 100,
        row_id / 7.0,
        DateTime(2024, 1 + row_id % 12, 1 + row_id % 28, 12, 30, row_id % 60),
        b"x" * (row_id % 40),
    )


def _events(transactions: int, first_seq: int, first_row: int, tables: int = 1) -> Iterator[Any]:
    from fakemaster.vocabulary.constants import OptionalMetadata
    from fakemaster.vocabulary.events import (
        FormatDescriptionEvent,
        GtidEvent,
        MetadataField,
        UpdateRowsEvent,
        WriteRowsEvent,
        XidEvent,
    )

    first = generated_table_map(MetadataField(OptionalMetadata.SIMPLE_PRIMARY_KEY, (0,)))
    # With several tables (``--tables``): transaction N writes table t<N mod tables> (bench.t,
    # table id 42, alone), its updates the rows of the transaction before, in that one's table.
    maps = (
        [first]
        if tables == 1
        else [dataclasses.replace(first, table_id=42 + k, table=f"t{k}") for k in range(tables)]
    )
    yield FormatDescriptionEvent(server_id=1)
    row_id = first_row
    for seq in range(first_seq, first_seq + transactions):
        table_map = maps[seq % tables]
        yield GtidEvent(seq_no=seq, flags2=0x0C)
        yield table_map
        start = row_id
        rows = tuple(_row(r) for r in range(start + 1, start + ROWS_PER_EVENT + 1))
        row_id += ROWS_PER_EVENT
        yield WriteRowsEvent(
            table_id=table_map.table_id,
            rows_flags=1,
            width=len(COLUMNS),
            columns_present=b"\xff",
            rows=rows,
        )
        if start > first_row:  # 10 rows of the transaction before, updated
            pairs = tuple(
                (_row(r), _row(r, seq))
                for r in range(start - ROWS_PER_EVENT + 1, start - ROWS_PER_EVENT + 11)
            )
            before = maps[(seq - 1) % tables]
            yield before
            yield UpdateRowsEvent(
                table_id=before.table_id,
                rows_flags=1,
                width=len(COLUMNS),
                columns_present=b"\xff",
                columns_present_after=b"\xff",
                rows=pairs,
            )
        yield XidEvent(xid=seq)


def archive(directory: Path, files: int, transactions: int, tables: int = 1) -> list[Path]:
    """``files`` binlog files of ``transactions`` each (and their index) in ``directory``,
    written once (a ``done`` marker), over ``tables`` tables."""
    paths = [directory / f"mysql-bin.{n:06d}" for n in range(1, files + 1)]
    if (directory / "done").exists():
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    for n, path in enumerate(paths):
        write_events(
            path,
            _events(transactions, n * transactions + 1, n * transactions * ROWS_PER_EVENT, tables),
        )
    (directory / "mysql-bin.index").write_text("".join(f"./{p.name}\n" for p in paths))
    (directory / "done").write_text("")
    return paths


def change_events(transactions: int, files: int) -> int:
    """The change events (rows) of an archive, from the generator's counts."""
    updates = (transactions - 1) * UPDATES_PER_TRANSACTION
    return files * (transactions * ROWS_PER_EVENT + updates)


# --- workers (one process each) ------------------------------------------------------------


def _session(master: str) -> Any:
    from fakemaster.cli import pipeline

    return pipeline._session(argparse.Namespace(master=master, shuffle_partitions=None))


def read_worker(master: str, files: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    spark = _session(master)
    from fakemaster.spark import FORMAT_NAME, register

    register(spark)
    session = time.perf_counter() - started
    start = time.perf_counter()
    spark.read.format(FORMAT_NAME).load(files).write.format("noop").mode("overwrite").save()
    return {"session": session, "read": time.perf_counter() - start}


class Actions:
    """Every Spark action (collect, first, count, toLocalIterator, a write) timed, with its
    jobs, under the name of the fakemaster function that asked for it."""

    def __init__(self, spark: Any) -> None:
        self.tracker = spark.sparkContext.statusTracker()
        self.records: list[tuple[str, float, int]] = []
        self.depth = 0

    def jobs(self) -> int:
        return len(self.tracker.getJobIdsForGroup())

    def install(self) -> None:
        from pyspark.sql import DataFrameWriter

        try:  # Spark 4: the methods live on the classic (non-Connect) class
            from pyspark.sql.classic.dataframe import DataFrame
        except ImportError:
            from pyspark.sql import DataFrame
        for cls, name in (
            (DataFrame, "collect"),
            (DataFrame, "first"),
            (DataFrame, "count"),
            (DataFrame, "toLocalIterator"),
            (DataFrame, "toArrow"),
            (DataFrame, "toPandas"),
            (DataFrameWriter, "parquet"),
            (DataFrameWriter, "save"),
        ):
            if hasattr(cls, name):
                setattr(cls, name, self._timed(getattr(cls, name), name))

    def _timed(self, method: Callable[..., Any], action: str) -> Callable[..., Any]:
        actions = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if actions.depth:
                return method(*args, **kwargs)
            caller = next(
                (
                    f"{Path(f.filename).stem}.{f.function}"
                    for f in inspect.stack()[1:]
                    if "fakemaster" in f.filename and "bench" not in f.filename
                ),
                "bench",
            )
            if action == "parquet" and args[1:]:
                caller += f" -> {_kind_of_path(str(args[1]))}"
            before = actions.jobs()
            start = time.perf_counter()
            actions.depth += 1
            try:
                return method(*args, **kwargs)
            finally:
                actions.depth -= 1
                actions.records.append(
                    (f"{caller} [{action}]", time.perf_counter() - start, actions.jobs() - before)
                )

        return timed

    def summary(self) -> list[dict[str, Any]]:
        grouped: dict[str, list[float]] = {}
        jobs: dict[str, int] = {}
        for name, seconds, n in self.records:
            grouped.setdefault(name, []).append(seconds)
            jobs[name] = jobs.get(name, 0) + n
        return [
            {"action": name, "calls": len(t), "seconds": sum(t), "jobs": jobs[name]}
            for name, t in grouped.items()
        ]


def _kind_of_path(path: str) -> str:
    for part in ("changes", "state", "tables"):
        if f"/{part}" in path:
            return f"{part}/"
    return "other"


def profile_worker(master: str, files: list[str], out: str) -> dict[str, Any]:
    """The command's ``run`` in this process, instrumented (see the module docstring)."""
    from fakemaster.cli import pipeline

    started = time.perf_counter()
    made: dict[str, Any] = {}
    session = pipeline._session

    def timed_session(args: argparse.Namespace) -> Any:
        spark = session(args)
        made["spark"] = spark
        made["session"] = time.perf_counter() - started
        made["actions"] = Actions(spark)
        made["actions"].install()
        return spark

    pipeline._session = timed_session  # type: ignore[assignment]
    args = argparse.Namespace(
        pipeline_mode="batch",
        files=files,
        out=out,
        catalogue=None,
        snapshot=None,
        batch_id=0,
        master=master,
        shuffle_partitions=None,
    )
    with open(os.devnull, "w") as quiet:
        status = pipeline.run(args, quiet)
    total = time.perf_counter() - started
    actions: Actions = made["actions"]
    return {
        "status": status,
        "total": total,
        "session": made["session"],
        "jobs": actions.jobs(),
        "actions": actions.summary(),
    }


def micro_worker(master: str, out: str, batches: int) -> dict[str, Any]:
    """A stream from an in-process fake master, then ``batches`` one-row transactions each
    in a micro-batch of its own."""
    from fakemaster.testing.factories import FakeMasterFactory
    from fakemaster.vocabulary.events import WriteRowsEvent

    events = list(_events(1, 1, 0))
    table_map, write = events[2], events[3]
    factory = FakeMasterFactory({})
    handle = factory()
    try:
        spark = _session(master)
        from fakemaster.spark import FORMAT_NAME, register
        from fakemaster.spark.materialiser import Materialiser

        register(spark)
        actions = Actions(spark)
        actions.install()
        handle.append_transaction([table_map, write])
        materialiser = Materialiser(spark, f"{out}/out")
        seen: list[tuple[int, float, int, int]] = []  # batch, seconds, jobs, first record

        def apply(frame: Any, batch_id: int) -> None:
            first = len(actions.records)
            before = actions.jobs()
            start = time.perf_counter()
            from fakemaster.cli import pipeline

            if hasattr(pipeline, "apply_batch"):
                pipeline.apply_batch(materialiser, frame, batch_id)
            else:  # the command before it had one (what it did)
                frame.count()
                materialiser.apply(frame, batch_id)
            seen.append((batch_id, time.perf_counter() - start, actions.jobs() - before, first))

        query = (
            spark.readStream.format(FORMAT_NAME)
            .option("host", "127.0.0.1")
            .option("port", str(handle.port))
            .option("user", "root")
            .load()
            .writeStream.foreachBatch(apply)
            .option("checkpointLocation", f"{out}/checkpoint")
            .start()
        )
        _wait(lambda: len(seen) >= 1, query)
        for n in range(batches):
            row_id = 1000 + n
            handle.append_transaction(
                [
                    table_map,
                    WriteRowsEvent(
                        table_id=42,
                        rows_flags=1,
                        width=write.width,
                        columns_present=b"\xff",
                        rows=(_row(row_id),),
                    ),
                ]
            )
            _wait(lambda n=n: len(seen) >= n + 2, query)
            # the progress of the batch just run is published after the batch function
            _wait(lambda n=n: len(query.recentProgress) >= n + 2, query)
        progress = [p for p in query.recentProgress if p["numInputRows"]]
        query.stop()
        per_batch = []
        for index, (batch_id, seconds, jobs, first) in enumerate(seen[1:], start=1):
            end = seen[index + 1][3] if index + 1 < len(seen) else len(actions.records)
            parts = next((p["durationMs"] for p in progress if p["batchId"] == batch_id), {})
            per_batch.append(
                {
                    "batch": batch_id,
                    "function": seconds,
                    "jobs": jobs,
                    "duration_ms": parts,
                    "actions": [
                        {"action": a, "seconds": s, "jobs": j}
                        for a, s, j in actions.records[first:end]
                    ],
                }
            )
        return {"batches": per_batch}
    finally:
        handle.stop()


def _wait(done: Callable[[], bool], query: Any, timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        if time.monotonic() > deadline:
            raise TimeoutError("the stream did not advance")
        time.sleep(0.05)


# --- the run -------------------------------------------------------------------------------


def _worker(*argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, *argv], capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode:
        raise RuntimeError(f"worker {argv[:2]} failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _command(argv: list[str], pattern: re.Pattern[str]) -> tuple[float, int]:
    """Wall time of ``python -m fakemaster ARGV`` and the change events it reports. A run
    whose Python worker did not connect back to the JVM in time (Spark's fixed 10 s: a
    starved machine) is run again, said on stdout, and only the last run counts."""
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "fakemaster", *argv], capture_output=True, text=True, cwd=ROOT
        )
        seconds = time.perf_counter() - start
        if "Python worker failed to connect back" not in done.stderr:
            break
        print(f"  ({argv[:2]}: a Python worker did not connect back in time; run again)")
    if done.returncode:
        raise RuntimeError(f"{argv[:2]} exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, sum(int(m.group(1)) for m in pattern.finditer(done.stderr))


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _case(case: str, files: list[str], rows: int, out: Path, master: str, port: int) -> float:
    """Wall time of one case's process (see the module docstring)."""
    if case == "read":  # the process's wall: Python's and the JVM's start too
        start = time.perf_counter()
        found = _worker("--worker", "read", "--master", master, *files)
        seconds = time.perf_counter() - start
        print(
            f"  (read process: session {found['session']:.2f} s, read job {found['read']:.2f} s)",
            flush=True,
        )
        return seconds
    if case == "batch":
        argv = ["pipeline", "batch", *files, "--out", str(out)]
        pattern = _EVENTS
    else:
        argv = ["pipeline", "stream", "--port", str(port), "--out", str(out / "out")]
        argv += ["--checkpoint", str(out / "checkpoint"), "--available-now"]
        pattern = _BATCH
    seconds, events = _command([*argv, "--master", master], pattern)
    if events != rows:
        raise RuntimeError(f"{case} read {events} of {rows} change events")
    return seconds


def _archives(sizes: str, cache: Path, tables: int = 1) -> dict[str, tuple[list[Path], int]]:
    # ~4.1 KB per generated transaction (60 change events)
    archives = {"tiny": (archive(cache / "pipeline-1x2", 1, 2), change_events(2, 1))}
    suffix = "" if tables == 1 else f"-{tables}t"
    for size in (int(s) for s in sizes.split(",") if s):
        files = 4 if size <= 50 else 8
        transactions = max(1, size * 1_000_000 // files // 4_100)
        name = f"pipeline-{files}x{transactions}{suffix}"
        paths = archive(cache / name, files, transactions, tables)
        archives[f"{size} MB"] = (paths, change_events(transactions, files))
    for label, (paths, rows) in archives.items():
        megabytes = sum(p.stat().st_size for p in paths) / 1e6
        print(f"archive {label}: {len(paths)} files, {megabytes:.1f} MB, {rows:,} change events")
    return archives


def _rounds(
    args: argparse.Namespace, archives: dict[str, tuple[list[Path], int]], scratch: Path
) -> dict[tuple[str, str], list[float]]:
    from bench_stream import ServeProcess

    cases = [c for c in args.cases.split(",") if c]
    servers = {
        label: ServeProcess(paths[0].parent)
        for label, (paths, _) in archives.items()
        if "stream" in cases
    }
    times: dict[tuple[str, str], list[float]] = {}
    loads = []
    try:
        for round_ in range(args.rounds):
            for label, (paths, rows) in archives.items():
                port = servers[label].port if servers else 0
                for case in cases:
                    out = scratch / f"out-{round_}-{label.replace(' ', '')}-{case}"
                    try:
                        seconds = _case(case, [str(p) for p in paths], rows, out, args.master, port)
                    except RuntimeError as exc:  # said, and left out of the medians
                        print(f"round {round_ + 1} {label} {case}: FAILED {str(exc)[-300:]}")
                        continue
                    times.setdefault((label, case), []).append(seconds)
                    shutil.rmtree(out, ignore_errors=True)
                    print(f"round {round_ + 1} {label} {case}: {seconds:.2f} s", flush=True)
            loads.append(_load())
    finally:
        for server in servers.values():
            server.stop()
    print(f"\nmedians of {args.rounds} rounds; load average after each round: {loads}")
    for label, (_, rows) in archives.items():
        medians = {c: statistics.median(times[(label, c)]) for c in cases if (label, c) in times}
        line = [f"{label:>7}:"]
        for case, median in medians.items():
            line.append(f"{case} {median:.2f} s ({rows / median:,.0f} rows/s)")
        print("  ".join(line))
        if "read" in medians:
            ratios = [
                f"{c}/read {m / medians['read']:.2f}x" for c, m in medians.items() if c != "read"
            ]
            print(f"{'':>8} " + ", ".join(ratios))
    return times


def _profiles(
    args: argparse.Namespace, archives: dict[str, tuple[list[Path], int]], scratch: Path
) -> None:
    for label, (paths, _) in archives.items():
        found = _worker(
            "--worker", "profile", "--master", args.master,
            "--out", str(scratch / f"profile-{label.replace(' ', '')}"),
            *map(str, paths),
        )  # fmt: skip
        print(
            f"\nbatch {label}, one instrumented run: {found['total']:.2f} s,"
            f" session start {found['session']:.2f} s, {found['jobs']} Spark jobs"
        )
        for action in sorted(found["actions"], key=lambda a: -a["seconds"]):
            print(
                f"  {action['seconds']:7.2f} s {action['jobs']:3d} jobs"
                f" {action['calls']:3d}x {action['action']}"
            )


def _micro(args: argparse.Namespace, scratch: Path) -> None:
    found = _worker(
        "--worker", "micro", "--master", args.master,
        "--micro-batches", str(args.micro_batches), "--out", str(scratch / "micro"),
    )  # fmt: skip
    print("\nstream micro-batches of one change event each:")
    for batch in found["batches"]:
        parts = ", ".join(f"{k} {v}" for k, v in batch["duration_ms"].items() if v)
        print(
            f"  batch {batch['batch']}: batch function {batch['function']:.2f} s,"
            f" {batch['jobs']} jobs; Spark durationMs: {parts}"
        )
        for action in batch["actions"]:
            print(f"      {action['seconds']:6.2f} s {action['jobs']:2d} jobs {action['action']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="10,100", help="archive sizes in MB (default 10,100)")
    parser.add_argument(
        "--tables", type=int, default=1, help="tables the archives' transactions write (1)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default="read,batch,stream")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--cache", type=Path, help="keep the generated archives there")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--no-micro", action="store_true")
    parser.add_argument("--micro-batches", type=int, default=5)
    parser.add_argument("--worker", choices=("read", "profile", "micro"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker == "read":
        print(json.dumps(read_worker(args.master, args.paths)))
        return 0
    if args.worker == "profile":
        print(json.dumps(profile_worker(args.master, args.paths, args.out)))
        return 0
    if args.worker == "micro":
        print(json.dumps(micro_worker(args.master, args.out, args.micro_batches)))
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="fm-bench-pipeline-"))
    try:
        archives = _archives(args.sizes, args.cache or scratch, args.tables)
        print(f"load average before: {_load()}", flush=True)
        if args.cases:
            _rounds(args, archives, scratch)
        if not args.no_profile:
            _profiles(args, archives, scratch)
        if not args.no_micro:
            _micro(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
