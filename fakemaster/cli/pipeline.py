"""``python -m fakemaster pipeline batch FILES... --out DIR`` and ``pipeline stream --host HOST
--port PORT --out DIR --checkpoint DIR``: binlog files, or a primary read as a replica, to change
events and materialised tables on Spark (the extra ``fakemaster[spark]``).

The CLI registers it with ``add_parser(subparsers)``; PySpark is imported only when the command
runs. Under ``spark-submit`` the session it submits with is used (``--master`` is then
ignored). Progress goes to stderr: bytes and events of each file as its task decodes it
(``fakemaster.spark.progress``), each table as it is written, the rows per second and the
position reached, and a summary; an error is one line at the end (a file that cannot be read
named with the offset). Exit status 3: tables were skipped (docs/spark.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from fakemaster.cli import pipeline_compare, pipeline_submit
from fakemaster.cli.options import (
    add_client_compress_option,
    add_client_tls_options,
    add_connection_options,
)
from fakemaster.cli.pipeline_stop import STOPPED, StreamStop, error_line, stopped_line

__all__ = ["TABLES_SKIPPED", "add_parser", "apply_batch", "change_events", "run"]

TABLES_SKIPPED = 3
"""The exit status of a batch that wrote every table it could but skipped some (each named
on stdout with what could not be done, and in OUT/report.json)."""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pipeline",
        help="binlogs to change events and Parquet tables on Spark (needs fakemaster[spark])",
        description=(
            "Read binlog files on Spark as change events and materialise the current state of "
            "every table as Parquet: OUT/changes (the events), OUT/tables/<database>.<table>/ "
            "and OUT/position.json (docs/spark.md)."
        ),
    )
    modes = parser.add_subparsers(
        dest="pipeline_mode", metavar="batch|stream|compare|submit-files", required=True
    )
    batch = modes.add_parser("batch", help="read binlog files once")
    batch.add_argument(
        "files", nargs="+", metavar="FILE", help="binlog files, directories or glob patterns"
    )
    batch.add_argument("--out", required=True, metavar="DIR", help="the output directory")
    batch.add_argument(
        "--catalogue",
        "--catalog",
        dest="catalogue",
        metavar="JSON|FILE",
        help="a schema catalogue: column names, keys, charsets, defaults per table",
    )
    batch.add_argument(
        "--snapshot",
        metavar="DIR",
        help="<database>.<table>.jsonl rows that exist before the files",
    )
    batch.add_argument(
        "--batch-id",
        type=int,
        default=0,
        metavar="N",
        help="the batch these files are (default 0; the same id again rewrites that batch)",
    )
    _add_spark_options(batch)
    stream = modes.add_parser(
        "stream", help="read a primary as a replica, micro-batch by micro-batch"
    )
    add_connection_options(stream, listening=False, host="127.0.0.1", port=3306, user="root")
    add_client_tls_options(stream)
    add_client_compress_option(stream)
    stream.add_argument("--out", required=True, metavar="DIR", help="the output directory")
    stream.add_argument(
        "--checkpoint", required=True, metavar="DIR", help="the streaming query's checkpoint"
    )
    stream.add_argument(
        "--catalogue",
        "--catalog",
        dest="catalogue",
        metavar="JSON|FILE",
        help="a schema catalogue: column names, keys, charsets, defaults per table",
    )
    stream.add_argument(
        "--max-rows-per-batch",
        type=int,
        default=None,
        metavar="N",
        help="admission control (Spark 4.2+; ignored on 4.0/4.1)",
    )
    stream.add_argument(
        "--start-gtid",
        default=None,
        metavar="GTIDS",
        help="resume by GTID from this GTID list (D-S-N,...)",
    )
    stream.add_argument(
        "--available-now",
        action="store_true",
        help="process what the primary has now, then stop (default: run until interrupted)",
    )
    stream.add_argument(
        "--connect-retry",
        type=_positive(float),
        default=60.0,
        metavar="SECONDS",
        help="seconds between attempts to reach a lost primary, as MASTER_CONNECT_RETRY"
        " (default: %(default)s)",
    )
    stream.add_argument(
        "--retry-count",
        type=_positive(int),
        default=100_000,
        metavar="N",
        help="attempts in a row before giving up, as master_retry_count (default: %(default)s)",
    )
    _add_spark_options(stream)
    pipeline_compare.add_parser(modes)
    pipeline_submit.add_parser(modes)
    parser.set_defaults(handler=run)


def _positive(kind: type[float] | type[int]) -> Any:
    """An argparse type: a number above 0 (a zero wait would spin, zero attempts never
    connect)."""

    def parse(text: str) -> float | int:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _add_spark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--master",
        default="local[*]",
        metavar="URL",
        help="Spark master when not under spark-submit (default: %(default)s)",
    )
    parser.add_argument(
        "--shuffle-partitions",
        type=int,
        default=None,
        metavar="N",
        help="spark.sql.shuffle.partitions (default: Spark's)",
    )


def _progress(
    listener: Any, files: list[str], err: TextIO, done: threading.Event, started: float
) -> None:
    """Every 2 s while decoding, the files' progress as their tasks report it (a line when
    more is decoded), then one line when every file is."""
    from fakemaster.spark.progress import progress_line

    total_bytes = sum(os.path.getsize(f) for f in files if "://" not in f and os.path.isfile(f))
    last = None
    while not done.wait(2.0):
        reported = listener.files()
        decoded = sum(p.done for p in reported.values())
        state = (decoded, sum(p.pos for p in reported.values()))
        if state == last:
            continue
        last = state
        elapsed = time.monotonic() - started
        if decoded >= len(files):
            events = sum(p.events for p in reported.values())
            print(
                f"[pipeline] decoded {decoded} files ({events:,} events) in {elapsed:.0f} s;"
                " materialising tables",
                file=err,
                flush=True,
            )
        else:
            print(progress_line(reported, len(files), total_bytes, elapsed), file=err, flush=True)


def _table_written(err: TextIO) -> Any:
    def report(result: Any, number: int, total: int) -> None:
        from fakemaster.spark.table_report import table_line

        print(f"[pipeline] table {number}/{total}: {table_line(result)}", file=err, flush=True)

    return report


def run(args: argparse.Namespace, err: TextIO | None = None) -> int:
    err = err if err is not None else sys.stderr
    if args.pipeline_mode == "compare":
        return pipeline_compare.run(args, err)
    if args.pipeline_mode == "submit-files":
        return pipeline_submit.run(args, err)
    if args.pipeline_mode == "stream":
        return run_stream(args, err)
    try:
        from fakemaster.spark import FORMAT_NAME
        from fakemaster.spark.columns import load_catalogue
        from fakemaster.spark.materialiser import Materialiser
        from fakemaster.spark.progress import ProgressListener
        from fakemaster.spark.read_errors import error_line
        from fakemaster.spark.source import expand_paths, register
        from fakemaster.spark.table_report import summary_line, table_line
    except ImportError as exc:
        print(f"error: the pipeline command needs fakemaster[spark] ({exc})", file=err)
        return 1
    files = expand_paths(list(args.files))
    if not files:
        print("error: no binlog files", file=err)
        return 1
    spark = _session(args)
    register(spark)
    listener = ProgressListener(_driver_host(spark))
    reader = spark.read.format(FORMAT_NAME).option("progress", listener.address)
    if args.catalogue:
        reader = reader.option("catalog", args.catalogue)
    if args.snapshot:
        reader = reader.option("snapshot", args.snapshot)
    started = time.monotonic()
    done = threading.Event()
    watcher = threading.Thread(
        target=_progress, args=(listener, files, err, done, started), daemon=True
    )
    watcher.start()
    try:
        catalogue = load_catalogue(args.catalogue)
        materialiser = Materialiser(spark, args.out, catalogue, _table_written(err))
        results = materialiser.apply_files(reader, files, args.batch_id)
    except Exception as exc:  # noqa: BLE001 - one error line, as every command
        done.set()
        watcher.join()
        print(f"error: {error_line(exc)}", file=err)
        return 1
    finally:
        done.set()
        listener.close()
    elapsed = time.monotonic() - started
    events = change_events(spark, materialiser, args.batch_id)
    with open(materialiser.position_path.removeprefix("file://"), encoding="utf-8") as handle:
        position = json.load(handle)
    print(
        f"[pipeline] {events} change events from {len(files)} files in {elapsed:.1f} s"
        f" ({events / elapsed if elapsed else 0:,.0f} rows/s); position {position['file']}:"
        f"{position['pos']} gtid {position['gtid_binlog_pos'] or '-'}",
        file=err,
    )
    for result in results:
        print(table_line(result))
    print(summary_line(results), file=err)
    return TABLES_SKIPPED if any(r.status == "skipped" for r in results) else 0


def _session(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("fakemaster pipeline")
    if not _under_submit():
        # Spark's defaults are a cluster's: 200 shuffle partitions (each a task of its own
        # cost, bench/README.md) and a web UI; under spark-submit the user's settings stand.
        builder = (
            builder.master(args.master)
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.ui.enabled", "false")
        )
        cores = _local_cores(args.master)
        if cores is not None:
            builder = builder.config("spark.sql.shuffle.partitions", str(cores))
    spark = builder.getOrCreate()
    if not _under_submit():
        # A failed task's Python traceback is logged at ERROR, thousands of lines: the command
        # ends with the one line that names the error (and its file and offset) instead.
        spark.sparkContext.setLogLevel("FATAL")
    if args.shuffle_partitions:
        spark.conf.set("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
    return spark


def _local_cores(master: str) -> int | None:
    """The task slots of a local master (``local``, ``local[N]``, ``local[*]``): shuffle
    partitions beyond them only queue; None for a cluster's master."""
    if master == "local":
        return 1
    found = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", master)
    if found is None:
        return None
    if found.group(1) != "*":
        return max(1, int(found.group(1)))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _tls_options(args: argparse.Namespace) -> dict[str, str]:
    """The source's TLS options from the mariadb-client-style ones (files made absolute: the
    client may run in another working directory), and ``compress`` from ``--compress``."""
    options = {"compress": "true"} if args.compress else {}
    if args.ssl:
        options["ssl"] = "true"
    if args.ssl_verify_server_cert:
        options["sslVerifyServerCert"] = "true"
    for name, path in (
        ("sslCa", args.ssl_ca),
        ("sslCert", args.ssl_cert),
        ("sslKey", args.ssl_key),
    ):
        if path is not None:
            options[name] = str(Path(path).resolve())
    return options


def run_stream(args: argparse.Namespace, err: TextIO) -> int:
    try:
        from fakemaster.spark import FORMAT_NAME
        from fakemaster.spark.columns import load_catalogue
        from fakemaster.spark.materialiser import Materialiser
        from fakemaster.spark.source import register
        from fakemaster.spark.table_report import table_line
    except ImportError as exc:
        print(f"error: the pipeline command needs fakemaster[spark] ({exc})", file=err)
        return 1
    spark = _session(args)
    register(spark)
    reader = (
        spark.readStream.format(FORMAT_NAME)
        .option("host", args.host)
        .option("port", str(args.port))
        .option("user", args.user)
        .option("password", args.password)
        .option("connectRetry", str(args.connect_retry))
        .option("retryCount", str(args.retry_count))
    )
    for name, value in _tls_options(args).items():
        reader = reader.option(name, value)
    if args.catalogue:
        reader = reader.option("catalog", args.catalogue)
    if args.max_rows_per_batch:
        from fakemaster.spark.stream import ADMISSION_CONTROL

        if not ADMISSION_CONTROL:
            print(
                "note: maxRowsPerBatch is ignored: this PySpark has no admission control for"
                " Python streaming sources (4.2+); each batch reads to the end of the binlog",
                file=err,
            )
        reader = reader.option("maxRowsPerBatch", str(args.max_rows_per_batch))
    if args.start_gtid:
        reader = reader.option("gtidMode", "true").option("startGtid", args.start_gtid)
    materialiser = Materialiser(spark, args.out, load_catalogue(args.catalogue))
    stop = StreamStop(quiet=lambda: spark.sparkContext.setLogLevel("OFF"))

    def apply(frame: Any, batch_id: int) -> None:
        with stop.batch():
            _apply(frame, batch_id)

    def _apply(frame: Any, batch_id: int) -> None:
        started = time.monotonic()
        rows, results = apply_batch(materialiser, frame, batch_id)
        for result in results:
            if result.status == "skipped":
                print(f"[pipeline] batch {batch_id}: {table_line(result)}", file=err, flush=True)
        with open(materialiser.position_path.removeprefix("file://"), encoding="utf-8") as handle:
            position = json.load(handle)
        elapsed = time.monotonic() - started
        print(
            f"[pipeline] batch {batch_id}: {rows} change events in {elapsed:.1f} s"
            f" ({rows / elapsed if elapsed else 0:,.0f} rows/s); position {position['file']}:"
            f"{position['pos']} gtid {position['gtid_binlog_pos'] or '-'}",
            file=err,
            flush=True,
        )

    writer = (
        reader.load().writeStream.foreachBatch(apply).option("checkpointLocation", args.checkpoint)
    )
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    query = writer.start()
    if stop.run(query):
        resume = f"the same command (--out {args.out} --checkpoint {args.checkpoint})"
        print(
            stopped_line(query, materialiser.position_path, stop.requested or "", resume), file=err
        )
        return STOPPED
    failure = query.exception()
    if failure is not None:
        print(error_line(failure), file=err)
        return 1
    return 0


def apply_batch(materialiser: Any, frame: Any, batch_id: int) -> tuple[int, list[Any]]:
    """The stream's batch function: ``frame`` (micro-batch ``batch_id``) applied; its change
    events and the tables' results. The events are counted from the change log written, not
    by ``frame.count()``: a count of a streaming source's batch reads it from the primary and
    decodes it all again."""
    results = materialiser.apply(frame, batch_id)
    return change_events(materialiser.spark, materialiser, batch_id), results


def change_events(spark: Any, materialiser: Any, batch_id: int) -> int:
    """The change events of batch ``batch_id`` in the change log: from the Parquet footers
    when it is local (no Spark job), else by Spark."""
    path = f"{materialiser.changes_path}/batch_id={batch_id}"
    if "://" in path and not path.startswith("file://"):
        return int(spark.read.parquet(path).count())
    local = path.removeprefix("file://")
    if not os.path.isdir(local):  # an empty batch writes no file
        return 0
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    return sum(
        pq.ParquetFile(os.path.join(local, name)).metadata.num_rows
        for name in os.listdir(local)
        if name.endswith(".parquet")
    )


def _driver_host(spark: Any) -> str:
    """The address the executors reach the driver at (progress datagrams go there)."""
    host = spark.conf.get("spark.driver.host", None)
    return "127.0.0.1" if not host or spark.sparkContext.master.startswith("local") else host


def _under_submit() -> bool:
    return "SPARK_SUBMIT_OPTS" in os.environ or os.environ.get("PYSPARK_GATEWAY_PORT") is not None
