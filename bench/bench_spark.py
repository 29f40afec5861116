"""Change rows per second of the Spark batch read (``fakemaster_binlog``) on a multi-file binlog
archive with 1 and 2 cores, next to a baseline reader built on python-mysql-replication (one
process per core, files split between them) on the same files, in one run (issue #10
must-show 6, first half).

    python3 bench/bench_spark.py                      # generated archive (bench_codec's rows)
    python3 bench/bench_spark.py --files 8 --transactions 1000
    python3 bench/bench_spark.py FILE [FILE...]       # real binlog files

Spark: one local session per core count (``local[N]``, in its own process), the archive read
once to warm the JVM and Python workers, then the median of ``--repeat`` runs of
``spark.read.format("fakemaster_binlog").load(files).write.format("noop")`` (every change event
built as Arrow and handed to Spark). Baseline: python-mysql-replication's packet wrapper on each
raw event, every row materialised (``bench_codec.pmr_decode``), files split over N processes (median of ``--repeat`` runs). Also the change-event table
without Spark on 1 core: the reference path and the columnar one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_codec import pmr_decode, write_generated  # noqa: E402


def spark_worker(cores: int, files: list[str], repeat: int) -> dict[str, float]:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    )
    from pyspark.sql import SparkSession

    from fakemaster.spark import FORMAT_NAME, register

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    rows = spark.read.format(FORMAT_NAME).load(files).count()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        spark.read.format(FORMAT_NAME).load(files).write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - start)
    spark.stop()
    return {"rows": rows, "seconds": statistics.median(times)}


def _pmr_files(paths: list[str]) -> int:
    return pmr_decode([Path(p) for p in paths])


def baseline(cores: int, files: list[str], repeat: int) -> dict[str, float]:
    shares = [files[i::cores] for i in range(cores)]
    times = []
    rows = 0
    with ProcessPoolExecutor(cores) as pool:
        list(pool.map(_pmr_files, [[]] * cores))  # start the processes
        for _ in range(repeat):
            start = time.perf_counter()
            rows = sum(pool.map(_pmr_files, shares))
            times.append(time.perf_counter() - start)
    return {"rows": rows, "seconds": statistics.median(times)}


def without_spark(files: list[str], repeat: int) -> dict[str, float]:
    """Change rows/s of the change-event table alone (no Spark), 1 core: the reference path
    (``fakemaster.spark.changes.read_changes``) and the columnar one (``...fast``)."""
    from fakemaster.spark.changes import file_index, read_changes
    from fakemaster.spark.fast import read_changes_fast

    out = {}
    for label, read in (("reference", read_changes), ("columnar", read_changes_fast)):
        times = []
        rows = 0
        for _ in range(repeat):
            start = time.perf_counter()
            rows = sum(
                b.num_rows
                for i, p in enumerate(files)
                for b in read(p, Path(p).name, file_index(p, i))
            )
            times.append(time.perf_counter() - start)
        out[label] = rows / statistics.median(times)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--transactions", type=int, default=500, help="per generated file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--spark-worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spark_worker:
        print(json.dumps(spark_worker(args.spark_worker, args.paths, args.repeat)))
        return 0
    cores = [int(c) for c in args.cores.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        files = list(args.paths)
        if not files:
            for n in range(1, args.files + 1):
                path = Path(tmp) / f"bench-bin.{n:06d}"
                write_generated(path, args.transactions)
                files.append(str(path))
        size = sum(os.path.getsize(p) for p in files)
        print(f"archive: {len(files)} files, {size:,} bytes")
        results = {}
        for n in cores:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--spark-worker",
                    str(n),
                    "--repeat",
                    str(args.repeat),
                    *files,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            spark = json.loads(out.stdout.strip().splitlines()[-1])
            base = baseline(n, files, args.repeat)
            if spark["rows"] != base["rows"]:
                print(f"row counts differ: spark {spark['rows']}, baseline {base['rows']}")
                return 1
            results[n] = (spark["rows"] / spark["seconds"], base["rows"] / base["seconds"])
            print(
                f"{n} core(s): spark {results[n][0]:12,.0f} rows/s  python-mysql-replication"
                f" {results[n][1]:12,.0f} rows/s  ratio {results[n][0] / results[n][1]:.2f}x"
                f"  ({spark['rows']} rows)"
            )
        alone = without_spark(files, args.repeat)
        print(
            f"without Spark, 1 core: reference path {alone['reference']:12,.0f} rows/s,"
            f" columnar path {alone['columnar']:12,.0f} rows/s"
        )
    if 1 in results and 2 in results:
        print(
            f"scaling 1 -> 2 cores: spark {results[2][0] / results[1][0]:.2f}x,"
            f" python-mysql-replication {results[2][1] / results[1][1]:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
