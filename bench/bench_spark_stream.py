"""Change rows per second of the Spark streaming source's ``read`` (``BinlogStreamReader.read``,
driven without Spark: one range from the start of the binlog to its end) with the reference path
(each decoded event through ``changes.add_event``, ``rows_to_arrow``) and the columnar one
(``fast.events_table`` over the groups' event bytes), in one run, on a generated binlog
(bench_codec's rows) served by ``python -m fakemaster serve --binlog-dir`` in its own process.

    python3 bench/bench_spark_stream.py                       # 4 files of 500 transactions
    python3 bench/bench_spark_stream.py --files 8 --transactions 1000 --repeat 5

Also the client alone (the groups received and decoded, no change events built): what neither
path can go below. Medians of ``--repeat`` reads after a warm-up read; the two outputs are
checked equal (Arrow tables) before timing. No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_codec import write_generated  # noqa: E402
from bench_stream import ServeProcess  # noqa: E402

__all__ = ["main"]


def _read(port: int, columnar: bool) -> Callable[[], int]:
    from fakemaster.spark.stream import BinlogStreamReader

    options = {"host": "127.0.0.1", "port": str(port), "columnar": str(columnar).lower()}
    reader = BinlogStreamReader(options)
    start = reader.initialOffset()
    ranges = reader.partitions(start, reader.latestOffset(start, None))

    def run() -> int:
        return sum(batch.num_rows for r in ranges for batch in reader.read(r))

    return run


def _table(port: int, columnar: bool) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import arrow_schema
    from fakemaster.spark.stream import BinlogStreamReader

    options = {"host": "127.0.0.1", "port": str(port), "columnar": str(columnar).lower()}
    reader = BinlogStreamReader(options)
    start = reader.initialOffset()
    batches = [
        b
        for r in reader.partitions(start, reader.latestOffset(start, None))
        for b in reader.read(r)
    ]
    return pa.Table.from_batches(batches, schema=arrow_schema()).combine_chunks()


def _client_only(port: int) -> Callable[[], int]:
    from fakemaster.client.blocking import BlockingReplica
    from fakemaster.client.position import Position
    from fakemaster.client.protocol import ClientConfig
    from fakemaster.vocabulary.events import RowsEvent

    def run() -> int:
        config = ClientConfig(gtid_mode=False, non_blocking=True, heartbeat_period=0)
        rows = 0
        with BlockingReplica("127.0.0.1", port, config, start=Position()) as replica:
            for group in replica.groups():
                for received in group.events:
                    if isinstance(received.event, RowsEvent):
                        rows += len(received.event.rows)
        return rows

    return run


def _timed(work: Callable[[], int], repeat: int) -> tuple[float, int]:
    work()  # warm-up
    times = []
    rows = 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = work()
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--transactions", type=int, default=500, help="per file (50 rows each)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fm-bench-spark-stream-") as temporary:
        root = Path(temporary)
        names = [f"mysql-bin.{n:06d}" for n in range(1, args.files + 1)]
        for name in names:
            write_generated(root / name, args.transactions)
        (root / "mysql-bin.index").write_text("".join(f"./{n}\n" for n in names))
        size = sum((root / n).stat().st_size for n in names)
        server = ServeProcess(root)
        try:
            if not _table(server.port, True).equals(_table(server.port, False)):
                print("the columnar and reference outputs differ", file=sys.stderr)
                return 1
            results = {
                "client alone": _timed(_client_only(server.port), args.repeat),
                "reference": _timed(_read(server.port, False), args.repeat),
                "columnar": _timed(_read(server.port, True), args.repeat),
            }
        finally:
            server.stop()
    print(f"{args.files} files, {size / 1e6:.1f} MB; medians of {args.repeat} reads")
    for label, (seconds, rows) in results.items():
        print(f"{label:>13}: {rows:>9,} rows in {seconds:6.2f} s = {rows / seconds:>10,.0f} rows/s")
    ratio = results["reference"][0] / results["columnar"][0]
    print(f"columnar / reference: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
