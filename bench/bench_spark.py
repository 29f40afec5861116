"""Change rows per second of the Spark batch read (``fakemaster_binlog``) on a multi-file binlog
archive with 1 and 2 cores, next to a baseline reader built on python-mysql-replication (one
process per core, files split between them) on the same files, in one run (issue #10
must-show 6, first half).

    python3 bench/bench_spark.py                      # generated archive (bench_codec's rows)
    python3 bench/bench_spark.py --files 8 --transactions 500
    python3 bench/bench_spark.py FILE [FILE...]       # real binlog files

Spark: one local session per core count (``local[N]``, in its own process), the archive read
once to warm the JVM and Python workers (``--warmup N``: N times), then the median of
``--repeat`` runs of
``spark.read.format("fakemaster_binlog").load(files).write.format("noop")`` (every change event
built as Arrow and handed to Spark), in two forms: the generic change-event table (images as
text maps, any number of tables) and the typed one of the archive's table (``.option("table",
...)``: images as structs of typed columns; generated archives only), each also with
``filesPerPartition`` set to give one partition per core ("grouped": each partition is a task
with a cost of its own, see bench_spark_ceiling.py). Baseline:
python-mysql-replication's packet wrapper on each raw event, every row materialised
(``bench_codec.pmr_decode``), files split over N processes (median of ``--repeat`` runs). Also
the change-event table without Spark on 1 core: the reference path and the columnar one.

"N cores" means N CPUs: each side runs pinned to the first N CPUs of the machine
(``sched_setaffinity``, inherited by the JVM and Spark's Python workers), since ``local[N]``
alone bounds Spark's task threads, not the CPUs its JVM and Python workers use at once. The
default archive (8 files of 125,000 change rows) is large enough that Spark's fixed cost per
job (about 0.4 s here) does not dominate.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_codec import pmr_decode, write_generated  # noqa: E402


def pin(cores: int) -> None:
    """Run this process (and what it starts) on the first ``cores`` CPUs."""
    available = sorted(os.sched_getaffinity(0))
    if len(available) < cores:
        raise SystemExit(f"{cores} cores asked, {len(available)} available")
    os.sched_setaffinity(0, set(available[:cores]))


def local_spark(cores: int, *paths: Path) -> Any:
    """A local SparkSession on the first ``cores`` CPUs whose Python workers import from
    ``paths`` and the repository."""
    pin(cores)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [
            *(str(path) for path in paths),
            str(ROOT),
            *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)),
        ]
    )
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_worker(
    cores: int, files: list[str], repeat: int, table: str | None, warmup: int = 1
) -> dict[str, float]:
    spark = local_spark(cores)
    from fakemaster.spark import FORMAT_NAME, register

    register(spark)
    out: dict[str, float] = {}
    grouped = -(-len(files) // cores)  # files per partition: one partition per core
    for label, typed, per_partition in (
        ("generic", None, 1),
        ("typed", table, 1),
        ("generic_grouped", None, grouped),
        ("typed_grouped", table, grouped),
    ):
        if label.startswith("typed") and typed is None:
            continue
        reader = spark.read.format(FORMAT_NAME).option("filesPerPartition", per_partition)
        if typed is not None:
            reader = reader.option("table", typed)
        rows = reader.load(files).count()  # warm-up
        for _ in range(warmup - 1):  # (the JVM keeps compiling for many jobs)
            reader.load(files).write.format("noop").mode("overwrite").save()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            reader.load(files).write.format("noop").mode("overwrite").save()
            times.append(time.perf_counter() - start)
        out[f"{label}_rows"] = rows
        out[label] = statistics.median(times)
    spark.stop()
    return out


def _pmr_files(paths: list[str]) -> int:
    return pmr_decode([Path(p) for p in paths])


def baseline(cores: int, files: list[str], repeat: int) -> dict[str, float]:
    shares = [files[i::cores] for i in range(cores)]
    times = []
    rows = 0
    with ProcessPoolExecutor(cores, initializer=pin, initargs=(cores,)) as pool:
        list(pool.map(_pmr_files, [[]] * cores))  # start the processes
        for _ in range(repeat):
            start = time.perf_counter()
            rows = sum(pool.map(_pmr_files, shares))
            times.append(time.perf_counter() - start)
    return {"rows": rows, "seconds": statistics.median(times)}


def without_spark(files: list[str], repeat: int, table: str | None) -> dict[str, float]:
    """Change rows/s of the change-event table alone (no Spark), 1 core: the reference path
    (``fakemaster.spark.changes.read_changes``), the columnar one (``...fast``) and, with
    ``table``, the columnar one's typed form."""
    from functools import partial

    from fakemaster.spark.changes import file_index, find_table, read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast

    readers: list[tuple[str, Any]] = [("reference", read_changes), ("columnar", read_changes_fast)]
    if table is not None:
        info = find_table(files[:1], table, None)
        readers.append(("typed", partial(read_changes_fast, table=info)))
    out = {}
    for label, read in readers:
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
    parser.add_argument("--transactions", type=int, default=2500, help="per generated file")
    parser.add_argument(
        "--table", help="the typed read's table (default: the generated archive's bench.t)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--warmup", type=int, default=1,
        help="untimed reads of each form before the timed ones (the first one a count)",
    )  # fmt: skip
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--spark-worker", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spark_worker:
        print(
            json.dumps(
                spark_worker(args.spark_worker, args.paths, args.repeat, args.table, args.warmup)
            )
        )
        return 0
    cores = [int(c) for c in args.cores.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        files = list(args.paths)
        table = args.table
        if not files:
            table = table or "bench.t"
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
                    "--warmup",
                    str(args.warmup),
                    *(["--table", table] if table else []),
                    *files,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            spark = json.loads(out.stdout.strip().splitlines()[-1])
            base = baseline(n, files, args.repeat)
            if spark["generic_rows"] != base["rows"]:
                print(f"row counts differ: spark {spark['generic_rows']}, baseline {base['rows']}")
                return 1
            base_rate = base["rows"] / base["seconds"]
            results[n] = {"baseline": base_rate}
            for label in ("generic", "typed", "generic_grouped", "typed_grouped"):
                if label in spark:
                    rate = spark[f"{label}_rows"] / spark[label]
                    results[n][label] = rate
                    print(
                        f"{n} core(s): spark {label:15s} {rate:12,.0f} rows/s"
                        f"  python-mysql-replication {base_rate:12,.0f} rows/s"
                        f"  ratio {rate / base_rate:.2f}x  ({spark[f'{label}_rows']} rows)"
                    )
        alone = without_spark(files, args.repeat, table)
        print(
            "without Spark, 1 core: "
            + ", ".join(f"{label} path {rate:12,.0f} rows/s" for label, rate in alone.items())
        )
    if 1 in results and 2 in results:
        print(
            "scaling 1 -> 2 cores: "
            + ", ".join(
                f"{label} {results[2][label] / results[1][label]:.2f}x"
                for label in results[1]
                if label in results[2]
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
