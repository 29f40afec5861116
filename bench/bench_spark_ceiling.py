"""Spark's own cost of the change-event tables (issue #10 must-show 6, the generic form's
ceiling): the files' change-event tables are built once (``read_changes_fast``) and stored as
Arrow IPC files, then a trivial Python data source yields them (memory-mapped, no decoding) to
``spark.read.format(...).load().write.format("noop")``, pinned to N CPUs as bench_spark.py runs.
What is left is Spark's: its fixed cost per job (a source of no rows) and its cost per row of
each form (generic: images as text MAPs; typed: structs of typed columns).

    python3 bench/bench_spark_ceiling.py                 # bench_spark's generated archive
    python3 bench/bench_spark_ceiling.py --cores 1 --repeat 5
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

__all__ = ["main"]


def build_tables(files: list[str], out: Path, table: str) -> dict[str, Any]:
    """The generic and typed tables of ``files`` as IPC files under ``out``; their DDLs."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import (
        CHANGE_EVENT_DDL,
        file_index,
        find_table,
        typed_schema_ddl,
    )
    from fakemaster.spark.changes_columnar import read_changes_fast

    info = find_table(files[:1], table, None)
    ddls = {"generic": CHANGE_EVENT_DDL, "typed": typed_schema_ddl(info)}
    for form, typed in (("generic", None), ("typed", info)):
        (out / form).mkdir(parents=True, exist_ok=True)
        for i, path in enumerate(files):
            batches = list(
                read_changes_fast(path, Path(path).name, file_index(path, i), table=typed)
            )
            with pa.OSFile(str(out / form / f"{i:03d}.arrow"), "wb") as sink:
                with pa.ipc.new_file(sink, batches[0].schema) as writer:
                    for b in batches:
                        writer.write_batch(b)
    return ddls


def spark_worker(
    cores: int, root: str, ddls: dict[str, str], repeat: int, tiny: str
) -> dict[str, float]:
    from bench_spark import local_spark

    spark = local_spark(cores, ROOT / "bench")
    spark.dataSource.register(_source())
    from fakemaster.spark import FORMAT_NAME, register

    register(spark)
    out: dict[str, float] = {}
    for form, typed in (("tiny_generic", None), ("tiny_typed", "bench.t")):
        reader = spark.read.format(FORMAT_NAME)
        if typed:
            reader = reader.option("table", typed)
        reader.load([tiny]).count()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            reader.load([tiny]).write.format("noop").mode("overwrite").save()
            times.append(time.perf_counter() - start)
        out[form] = statistics.median(times)
    for form in ("empty", "generic", "typed"):
        directory = os.path.join(root, "generic" if form == "empty" else form)
        reader = (
            spark.read.format("arrow_files")
            .option("dir", directory)
            .option("ddl", ddls["generic" if form == "empty" else form])
            .option("empty", str(form == "empty"))
        )
        rows = reader.load().count()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            reader.load().write.format("noop").mode("overwrite").save()
            times.append(time.perf_counter() - start)
        out[form] = statistics.median(times)
        out[f"{form}_rows"] = rows
    spark.stop()
    return out


def _source() -> Any:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class ArrowFile(InputPartition):
        def __init__(self, path: str) -> None:
            self.path = path

    class Reader(DataSourceReader):
        def __init__(self, options: dict[str, str]) -> None:
            self.directory = options["dir"]
            self.empty = options.get("empty") == "True"

        def partitions(self) -> list[Any]:
            names = sorted(os.listdir(self.directory))
            return [ArrowFile(os.path.join(self.directory, n)) for n in names]

        def read(self, partition: Any) -> Iterator[Any]:
            import pyarrow as pa

            if self.empty:
                return
            with pa.memory_map(partition.path) as source:
                reader = pa.ipc.open_file(source)
                for k in range(reader.num_record_batches):
                    yield reader.get_batch(k)

    class Source(DataSource):
        @classmethod
        def name(cls) -> str:
            return "arrow_files"

        def schema(self) -> str:
            return str(self.options["ddl"])

        def reader(self, schema: Any) -> Any:
            return Reader(dict(self.options))

    return Source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--transactions", type=int, default=2500, help="per generated file")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--spark-worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--ddls", help=argparse.SUPPRESS)
    parser.add_argument("--tiny", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spark_worker:
        result = spark_worker(
            args.spark_worker, args.root, json.loads(args.ddls), args.repeat, args.tiny
        )
        print(json.dumps(result))
        return 0
    from bench_codec import write_generated

    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for n in range(1, args.files + 1):
            path = Path(tmp) / f"bench-bin.{n:06d}"
            write_generated(path, args.transactions)
            files.append(str(path))
        ddls = build_tables(files, Path(tmp) / "tables", "bench.t")
        tiny = Path(tmp) / "tiny-bin.000001"
        write_generated(tiny, 1)  # one transaction: fakemaster_binlog's own cost per job
        for cores in [int(c) for c in args.cores.split(",")]:
            done = subprocess.run(
                [sys.executable, __file__, "--spark-worker", str(cores), "--repeat",
                 str(args.repeat), "--root", str(Path(tmp) / "tables"), "--ddls", json.dumps(ddls), "--tiny", str(tiny)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            r = json.loads(done.stdout.strip().splitlines()[-1])
            fixed = r["empty"]
            line = [
                f"{cores} CPU(s): a job of no rows {fixed:.3f} s, fakemaster_binlog on a file of"
                f" 50 rows {r['tiny_generic']:.3f} s (typed {r['tiny_typed']:.3f} s)"
            ]
            for form in ("generic", "typed"):
                rows = r[f"{form}_rows"]
                per_row = (r[form] - fixed) / rows * 1e6
                line.append(
                    f"{form} {rows} rows {r[form]:.3f} s = {rows / r[form]:,.0f} rows/s"
                    f" ({per_row:.2f} us/row beyond the fixed cost)"
                )
            print("; ".join(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
