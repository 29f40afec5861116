"""The decoder alone next to python-mysql-replication, on the same binlog bytes, in one run:
three shapes, fakemaster's row decoder and its Arrow path (decoder/columnar/); medians of
interleaved rounds, reported as ratios.

    python3 bench/bench_decoder.py                     # all three shapes
    python3 bench/bench_decoder.py --shapes wide single --rounds 5
    python3 bench/bench_decoder.py --cache DIR         # keep the captured real corpus

Shapes:

* ``wide``: generated rows (bench_codec.py's table: INT, BIGINT, TINYINT, VARCHAR, DECIMAL(10,2),
  DOUBLE, DATETIME, BLOB), 50 rows per WRITE_ROWS event, written by the encoder;
* ``single``: single-row transactions written by the encoder (GTID, ANNOTATE_ROWS, TABLE_MAP,
  WRITE_ROWS of one row of an INT, an INT and 260 characters, XID), the shape of corpus.py's
  ``small``;
* ``real``: a corpus captured from a real MariaDB 10.11 (binlog_row_metadata=FULL) running the
  codec workload's every-type tables (tests/peers/workload.py CODEC_TABLES: every integer
  width signed and unsigned, FLOAT/DOUBLE, DECIMALs up to (65,30), BIT, YEAR, DATE, TIME,
  DATETIME, TIMESTAMP with every fsp, MariaDB 5.3 temporal columns, CHAR/VARCHAR/TEXT in
  several charsets, BLOBs, ENUM, SET, JSON, GEOMETRY, INET6, UUID...): each round of the
  capture deletes, re-inserts and updates every row, so the file has WRITE, UPDATE and DELETE
  rows events of every type.

What is timed, per shape and round, over the same files: ``fakemaster`` is
``decoder.read_binlog`` (every event decoded, rows materialised as tuples of typed values);
``arrow`` is ``decoder.columnar.read_changes`` (every rows event decoded into Arrow record
batches, every other event decoded as by read_binlog); ``pmr`` is python-mysql-replication's
``BinLogPacketWrapper`` on each raw event (what its BinLogStreamReader does after reading a
packet), with every event's ``rows`` read. The files are read from the page cache by all three.
Times are the process's CPU time (``time.process_time``: every reader runs on one thread), so
that other jobs on a shared machine move them less than wall time; the rounds interleave the
readers and the ratios are of medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT, REPO_ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench_codec import generated_events  # noqa: E402

from decoder.binlog_file import read_binlog  # noqa: E402
from encoder.binlog_file import BinlogWriter  # noqa: E402
from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata  # noqa: E402
from fakemaster.vocabulary.context import BinlogContext  # noqa: E402
from fakemaster.vocabulary.events import (  # noqa: E402
    AnnotateRowsEvent,
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)

__all__ = ["main"]

Precisions = dict[tuple[str, str], tuple[int, ...]]
# python-mysql-replication misreads MariaDB 5.3-format temporal columns (a DATETIME's bytes as
# a year beyond 9999: ValueError), so the every-type corpus leaves that table out.
PMR_UNREADABLE = frozenset({"t_temporal_old"})


# --- corpora --------------------------------------------------------------------------------


def single_row_events(transactions: int) -> Iterator[Event]:
    table_map = TableMapEvent(
        table_id=70,
        database="bench",
        table="t",
        column_types=(ColumnType.LONG, ColumnType.LONG, ColumnType.VARCHAR),
        column_meta=(0, 0, 1200),
        nullable=(False, True, True),
        optional_metadata=(
            MetadataField(OptionalMetadata.SIGNEDNESS, (False, False)),
            MetadataField(OptionalMetadata.DEFAULT_CHARSET, (45, ())),
            MetadataField(OptionalMetadata.COLUMN_NAME, (b"id", b"a", b"b")),
        ),
    )
    yield FormatDescriptionEvent(server_id=1)
    text = b"s" * 260
    for seq in range(1, transactions + 1):
        yield GtidEvent(seq_no=seq, flags2=0x0C, timestamp=1_700_000_000 + seq // 100)
        yield AnnotateRowsEvent(query=b"INSERT INTO t (a, b) VALUES (start + i, REPEAT('s', 260))")
        yield table_map
        yield WriteRowsEvent(
            table_id=70, rows_flags=1, width=3, columns_present=b"\x07", rows=((seq, seq, text),)
        )
        yield XidEvent(xid=seq)


def write_events(path: Path, events: Iterator[Event]) -> list[Path]:
    with BinlogWriter(path, fix_positions=True) as writer:
        for event in events:
            writer.write(event)
    return [path]


def capture_real(directory: Path, rounds: int) -> tuple[list[Path], Precisions]:
    """The every-type corpus, written by a real MariaDB 10.11 into ``directory`` (reused when
    its ``done`` file exists): the binlog files and the 5.3-format temporal precisions."""
    import json
    import shutil

    done = directory / "done"
    if done.exists():
        meta = json.loads(done.read_text())
        precisions = {tuple(k.split(".", 1)): tuple(v) for k, v in meta["precisions"].items()}
        return [directory / name for name in meta["files"]], precisions  # type: ignore[misc]
    from tests.peers.mariadb import MariaDBServer
    from tests.peers.workload import (
        CODEC_TABLES,
        DATABASE,
        SESSION_SETUP,
        collect_result,
        workload_statements,
    )

    if directory.exists():
        shutil.rmtree(directory)
    started = time.perf_counter()
    with MariaDBServer({"binlog_row_metadata": "FULL"}) as server:
        tables = [t for t in CODEC_TABLES if t.rows and t.name not in PMR_UNREADABLE]
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                for stmt in SESSION_SETUP:
                    cur.execute(stmt)
                for step, stmts in workload_statements(tables, ()):
                    if not step.startswith("insert "):
                        for stmt in stmts:
                            cur.execute(stmt)
                for _ in range(rounds):
                    for table in tables:
                        name = f"{DATABASE}.{table.name}"
                        cur.execute(f"UPDATE {name} SET pk = pk + 1000000")
                        cur.execute(f"DELETE FROM {name}")
                        cur.execute(f"INSERT INTO {name} VALUES\n  " + ",\n  ".join(table.rows))
        finally:
            conn.close()
        result = collect_result(server, variant="bench", steps=[])
        server.stop()
        files = server.binlog_files()
        directory.mkdir(parents=True)
        for path in files:
            shutil.copyfile(path, directory / path.name)
    precisions = result.temporal_precisions()
    done.write_text(
        json.dumps(
            {
                "files": [p.name for p in files],
                "precisions": {f"{db}.{t}": list(v) for (db, t), v in precisions.items()},
            }
        )
    )
    size = sum((directory / p.name).stat().st_size for p in files)
    print(
        f"  captured the every-type corpus: {len(files)} files, {size / 1e6:.1f} MB, in "
        f"{time.perf_counter() - started:.1f} s"
    )
    return [directory / p.name for p in files], precisions


# --- readers --------------------------------------------------------------------------------


def pmr_rows(paths: list[Path], precisions: Precisions) -> int:
    """bench_codec.py's python-mysql-replication reader, with ``ignore_decode_errors`` (the
    every-type corpus has UTF-32 and UCS-2 values its charset table cannot decode)."""
    from pymysql.protocol import MysqlPacket
    from pymysqlreplication.binlogstream import BinLogStreamReader
    from pymysqlreplication.packet import BinLogPacketWrapper
    from pymysqlreplication.row_event import RowsEvent as PmrRowsEvent

    from decoder.binlog_file import iter_raw_events

    class ControlConnection:  # what the wrapper reads from its control connection
        charset = "utf8mb4"

        def _get_dbms(self) -> str:
            return "mariadb"

    allowed = BinLogStreamReader._allowed_event_list(None, None, None, False)  # type: ignore[arg-type]
    rows = 0
    for path in paths:
        table_map: dict[int, Any] = {}
        use_checksum = True
        for _, raw in iter_raw_events(path):
            if raw[4] == 15:  # the FDE tells whether the file's events carry a CRC
                use_checksum = raw[-5] == 1
            packet = BinLogPacketWrapper(
                MysqlPacket(b"\x00" + raw, "utf8"), table_map, ControlConnection(),
                (10, 11), use_checksum, allowed, None, None, None, None, False, True,
                False, True, False,
            )  # fmt: skip
            if isinstance(packet.event, PmrRowsEvent):
                rows += len(packet.event.rows)
    return rows


def fakemaster_rows(paths: list[Path], precisions: Precisions) -> int:
    rows = 0
    for path in paths:
        ctx = BinlogContext(temporal_precisions=dict(precisions))
        for _, event in read_binlog(path, ctx=ctx):
            if isinstance(event, RowsEvent):
                rows += len(event.rows)
    return rows


def arrow_rows(paths: list[Path], precisions: Precisions) -> int:
    from decoder.columnar import read_changes

    rows = 0
    for path in paths:
        ctx = BinlogContext(temporal_precisions=dict(precisions))
        for batch in read_changes(path, ctx=ctx):
            rows += batch.num_rows
    return rows


READERS: dict[str, Callable[[list[Path], Precisions], int]] = {
    "fakemaster": fakemaster_rows,
    "arrow": arrow_rows,
    "pmr": pmr_rows,
}


def measure(
    shape: str, paths: list[Path], precisions: Precisions, rounds: int, names: list[str]
) -> dict[str, Any]:
    size = sum(p.stat().st_size for p in paths)
    readers = {name: READERS[name] for name in names}
    times: dict[str, list[float]] = {name: [] for name in readers}
    counts: dict[str, int] = {}
    for _ in range(rounds):
        for name, reader in readers.items():
            start = time.process_time()
            counts[name] = reader(paths, precisions)
            times[name].append(time.process_time() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    first = "pmr" if "pmr" in counts else next(iter(counts))
    print(f"{shape}: {len(paths)} file(s), {size:,} bytes, {counts[first]:,} rows ({first})")
    for name in readers:
        rate = counts[name] / medians[name]
        print(
            f"  {name:11s} {counts[name]:9,d} rows  median {medians[name]:8.3f} s CPU  "
            f"{rate:12,.0f} rows/s"
        )
    result: dict[str, Any] = {"rows": counts, "medians": medians}
    if "pmr" in medians:
        ratios = {name: medians["pmr"] / medians[name] for name in medians if name != "pmr"}
        result.update(ratios)
        print(
            "  ratio to python-mysql-replication: "
            + ", ".join(f"{name} {ratio:.1f}x" for name, ratio in ratios.items())
        )
    if "fakemaster" in medians and "arrow" in medians:
        print(f"  arrow / fakemaster: {medians['fakemaster'] / medians['arrow']:.1f}x")
    if len(set(counts.values())) != 1:
        print(f"  ROW COUNTS DIFFER: {counts}")
        result["mismatch"] = True
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--shapes", nargs="+", default=["wide", "single", "real"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wide-transactions", type=int, default=2000)
    parser.add_argument("--single-transactions", type=int, default=50000)
    parser.add_argument("--real-rounds", type=int, default=60, help="capture rounds")
    parser.add_argument("--cache", type=Path, help="keep the captured corpus here")
    parser.add_argument(
        "--readers", nargs="+", default=list(READERS), choices=list(READERS),
        help="(fakemaster alone measures a checkout without decoder/columnar/)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            precisions: Precisions = {}
            if shape == "wide":
                paths = write_events(
                    Path(tmp) / "wide-bin.000001", generated_events(args.wide_transactions)
                )
            elif shape == "single":
                paths = write_events(
                    Path(tmp) / "single-bin.000001", single_row_events(args.single_transactions)
                )
            elif shape == "real":
                cache = args.cache if args.cache is not None else Path(tmp)
                paths, precisions = capture_real(
                    cache / f"everytype-{args.real_rounds}", args.real_rounds
                )
            else:
                parser.error(f"unknown shape {shape!r}")
            result = measure(shape, paths, precisions, args.rounds, args.readers)
            failed |= bool(result.get("mismatch"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
