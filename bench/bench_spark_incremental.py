"""Incremental materialisation: the cost of micro-batch N against N (issue #22 must-show 2).

Streams a change log of ``--batches`` micro-batches of ``--rows`` change events each into one
``Materialiser`` (local[2]), after a first batch (not timed) that inserts the tables' rows:
a keyed table of ``--keys`` rows and a keyless one (a multiset) of as many, each batch
updating the next ``--rows / 2`` rows of each in turn (so the tables keep their size while the
change log grows to ``batches x rows``). Prints each batch's wall time, the median of the first
``--window`` batches and of the last ``--window`` (ratio last / first: the goal is <= 1.5x),
and the disk of the change log and states after the last batch next to the tables' own.

    python3 bench/bench_spark_incremental.py --batches 20 --rows 2000 --keys 10000   # quick
    python3 bench/bench_spark_incremental.py          # 100 batches of 10,000: 1 M change events

The events are built by Spark (no binlog is read: the data source is measured by
bench_spark.py); the final tables are checked against the values the generator knows.
No timing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

__all__ = ["main"]


def _events(spark: Any, batch: int, count: int, first: int, keys: int, previous: int) -> Any:
    """``count`` events of one table per kind (keyed ``t``, keyless ``m``): rows ``first``..
    of batch ``batch`` (0: inserts), whose values the batch ``previous`` wrote."""
    from pyspark.sql import functions as F

    from fakemaster.spark.changes import CHANGE_EVENT_DDL

    key = ((F.col("id") + first) % keys).cast("string")

    def image(at: int) -> Any:
        return F.create_map(
            F.lit("id"), key, F.lit("v"), F.concat(key, F.lit(f"-{at}")), F.lit("w"), F.lit(str(at))
        )

    frames = []
    for n, table in enumerate(("t", "m")):
        pos = (F.lit(batch) * 10_000_000 + F.lit(n) * 5_000_000 + F.col("id") * 10).cast("bigint")
        frames.append(
            spark.range(count).select(
                F.lit("c" if batch == 0 else "u").alias("op"),
                F.lit("bench").alias("database"),
                F.lit(table).alias("table"),
                (F.lit(None) if batch == 0 else image(previous)).alias("before"),
                image(batch).alias("after"),
                F.struct(
                    F.lit(1).cast("bigint").alias("server_id"),
                    F.lit(None).cast("string").alias("gtid"),
                    F.lit("mysql-bin.000001").alias("file"),
                    pos.alias("pos"),
                    F.lit(0).alias("row"),
                    F.lit(None).cast("bigint").alias("thread"),
                    F.lit("bench").alias("db"),
                    F.lit(table).alias("table"),
                    F.lit(0).cast("bigint").alias("ts_ms"),
                    F.lit(None).cast("string").alias("query"),
                ).alias("source"),
                F.struct(
                    F.lit(1).cast("bigint").alias("file_index"),
                    pos.alias("pos"),
                    F.lit(0).alias("event"),
                    F.lit(0).alias("row"),
                ).alias("seq"),
                F.lit(None).cast("string").alias("ddl"),
                F.lit(None).cast("string").alias("ddl_kind"),
                F.array(F.lit("id"), F.lit("v"), F.lit("w")).alias("columns"),
                F.array(F.lit("bigint"), F.lit("string"), F.lit("int")).alias("column_types"),
                (F.array(F.lit("id")) if table == "t" else F.lit(None).cast("array<string>")).alias(
                    "primary_key"
                ),
            )
        )
    schema = spark.createDataFrame([], CHANGE_EVENT_DDL).schema
    out = frames[0].unionByName(frames[1])
    return out.select(*[F.col(f.name).cast(f.dataType) for f in schema.fields])


def _reference(path: str) -> Any:
    """The ``Materialiser`` class of the materialiser.py at ``path`` (its imports are this
    tree's: the modules it shares with it must not have changed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_reference_materialiser", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--reference {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.Materialiser


def _jobs(spark: Any) -> int:
    """Spark jobs run so far (without a job group, as the materialiser's)."""
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(None))


def _du(path: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--rows", type=int, default=10_000, help="change events per batch")
    parser.add_argument("--keys", type=int, default=50_000, help="rows of each table")
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument(
        "--reference",
        default=None,
        help="another materialiser.py (e.g. `git show REV:fakemaster/spark/materialiser.py`)"
        " run side by side on the same batches, in alternating order: both times and Spark job"
        " counts per batch",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds: stop after the batch that ends past it (the figures are those of the"
        " batches run, said so)",
    )
    args = parser.parse_args(argv)
    half = args.rows // 2
    if args.keys % half:
        parser.error("--keys must be a multiple of --rows / 2")
    from pyspark.sql import SparkSession

    from fakemaster.spark import Materialiser

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    period = args.keys // half  # batches between two updates of a row
    last_touch: dict[int, int] = {}  # first row of a slice -> batch that last wrote it
    times = []
    reference_times: list[float] = []
    jobs: list[tuple[int, int]] = []
    with tempfile.TemporaryDirectory(prefix="fm-bench-incremental-") as temporary:
        out = Path(temporary) / "out"
        materialiser = Materialiser(spark, str(out))
        materialiser.apply(_events(spark, 0, args.keys, 0, args.keys, 0), 0)
        reference = None
        if args.reference is not None:
            reference = _reference(args.reference)(spark, str(Path(temporary) / "reference"))
            reference.apply(_events(spark, 0, args.keys, 0, args.keys, 0), 0)
        began = time.monotonic()
        for batch in range(1, args.batches + 1):
            if args.budget is not None and time.monotonic() - began > args.budget:
                print(f"budget of {args.budget:.0f} s spent: stopped after batch {batch - 1}")
                break
            first = ((batch - 1) % period) * half
            previous = last_touch.get(first, 0)
            events = _events(spark, batch, half, first, args.keys, previous)
            runs = [(materialiser, times)]
            if reference is not None:  # alternating: neither always runs on a warmer JVM
                runs.insert(batch % 2, (reference, reference_times))
            counts = {}
            for which, into in runs:
                before = _jobs(spark)
                started = time.perf_counter()
                which.apply(events, batch)
                into.append(time.perf_counter() - started)
                counts[id(into)] = _jobs(spark) - before
            last_touch[first] = batch
            line = f"batch {batch:4d}: {times[-1]:6.2f} s"
            if reference is not None:
                jobs.append((counts[id(times)], counts[id(reference_times)]))
                line += (
                    f" ({jobs[-1][0]} Spark jobs); reference {reference_times[-1]:6.2f} s"
                    f" ({jobs[-1][1]} jobs)"
                )
            print(line, flush=True)
        tables = _du(out / "tables")
        log = _du(out / "changes")
        state = _du(out / "state")
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        keyed = pq.read_table(out / "tables" / "bench.t").to_pylist()
        expected = {k: last_touch.get((k // half) * half, 0) for k in range(args.keys)}
        wrong = sum(1 for r in keyed if r["v"] != f"{r['id']}-{expected[r['id']]}")
        rows = len(keyed) + pq.read_table(out / "tables" / "bench.m").num_rows
    spark.stop()
    window = min(args.window, len(times) // 2)
    head = statistics.median(times[:window])
    tail = statistics.median(times[-window:])
    done = len(times)
    total = done * args.rows
    print(
        f"{done} batches of {args.rows:,} change events ({total:,} in all) on 2 tables"
        f" of {args.keys:,} rows; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"first {window} batches: median {head:.2f} s; last {window}: median {tail:.2f} s;"
        f" last / first {tail / head:.2f}x"
    )
    print(
        f"disk after the last batch: change log {log / 1e6:.2f} MB + states {state / 1e6:.2f} MB"
        f" = {(log + state) / (tables or 1):.2f}x the tables' {tables / 1e6:.2f} MB"
    )
    if reference_times:
        ratio = statistics.median(times) / statistics.median(reference_times)
        print(
            f"side by side: median {statistics.median(times):.2f} s against the reference's"
            f" {statistics.median(reference_times):.2f} s ({ratio:.2f}x); Spark jobs per batch"
            f" {statistics.median(j for j, _ in jobs):.0f} against"
            f" {statistics.median(r for _, r in jobs):.0f}"
        )
    print(f"keyed table: {len(keyed):,} rows, {wrong} with a wrong value; rows in all {rows:,}")
    return 1 if wrong or len(keyed) != args.keys else 0


if __name__ == "__main__":
    raise SystemExit(main())
