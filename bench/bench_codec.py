"""Rows per second of fakemaster's decoder and encoder next to python-mysql-replication's
decoder, on the same binlog bytes, in one run; the result is reported as ratios.

    python3 bench/bench_codec.py                 # a generated binlog (mixed column types)
    python3 bench/bench_codec.py FILE [FILE...]  # real binlog files (e.g. tests/golden/binlogs)

python-mysql-replication reads from a connection; here each raw event is handed to its own
packet wrapper in-process (what its BinLogStreamReader does after reading a packet), with the
TABLE_MAP's optional metadata giving the column names so that no control queries are needed.
Every row is materialised by both decoders (its ``rows`` property is read).
"""

from __future__ import annotations

import argparse
import decimal
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoder.binlog_file import iter_raw_events, read_binlog  # noqa: E402
from encoder import encode_event  # noqa: E402
from encoder.binlog_file import BinlogWriter  # noqa: E402
from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata  # noqa: E402
from fakemaster.vocabulary.context import BinlogContext  # noqa: E402
from fakemaster.vocabulary.events import (  # noqa: E402
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    MetadataField,
    RowsEvent,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.vocabulary.values import DateTime  # noqa: E402

COLUMNS = [  # (name, type, metadata)
    ("id", ColumnType.LONG, 0),
    ("big", ColumnType.LONGLONG, 0),
    ("small", ColumnType.TINY, 0),
    ("name", ColumnType.VARCHAR, 256),
    ("price", ColumnType.NEWDECIMAL, 10 | 2 << 8),
    ("ratio", ColumnType.DOUBLE, 8),
    ("created", ColumnType.DATETIME2, 0),
    ("note", ColumnType.BLOB, 2),
]
ROWS_PER_EVENT = 50


def generated_table_map(*extra: MetadataField) -> TableMapEvent:
    """The TABLE_MAP of the generated table ``bench.t`` (table id 42, ``COLUMNS``, their names
    in its optional metadata), ``extra`` optional metadata fields after the others."""
    names = tuple(name.encode() for name, _, _ in COLUMNS)
    return TableMapEvent(
        table_id=42,
        database="bench",
        table="t",
        column_types=tuple(t for _, t, _ in COLUMNS),
        column_meta=tuple(m for _, _, m in COLUMNS),
        nullable=tuple(True for _ in COLUMNS),
        optional_metadata=(
            MetadataField(OptionalMetadata.SIGNEDNESS, (False,) * 5),
            MetadataField(OptionalMetadata.DEFAULT_CHARSET, (45, ())),
            MetadataField(OptionalMetadata.COLUMN_NAME, names),
            *extra,
        ),
    )


def generated_events(transactions: int) -> Iterator[Event]:
    table_map = generated_table_map()
    yield FormatDescriptionEvent(server_id=1)
    row_id = 0
    for seq in range(1, transactions + 1):
        yield GtidEvent(seq_no=seq, flags2=0x0C)
        yield table_map
        rows = []
        for _ in range(ROWS_PER_EVENT):
            row_id += 1
            rows.append(
                (
                    row_id,
                    row_id * 1_000_003,
                    row_id % 100,
                    f"customer-{row_id}".encode(),
                    decimal.Decimal(row_id % 100000) / 100,
                    row_id / 7.0,
                    DateTime(2024, 1 + row_id % 12, 1 + row_id % 28, 12, 30, row_id % 60),
                    b"x" * (row_id % 40),
                )
            )
        yield WriteRowsEvent(
            table_id=42,
            rows_flags=1,
            width=len(COLUMNS),
            columns_present=b"\xff",
            rows=tuple(rows),
        )
        yield XidEvent(xid=seq)


def write_events(path: Path, events: Iterable[Event]) -> None:
    """A binlog file of ``events``, their positions set as they are written."""
    with BinlogWriter(path, fix_positions=True) as writer:
        for event in events:
            writer.write(event)


def write_generated(path: Path, transactions: int) -> None:
    write_events(path, generated_events(transactions))


def count_rows(event: Event) -> int:
    return len(event.rows) if isinstance(event, RowsEvent) else 0


def fakemaster_decode(paths: list[Path]) -> int:
    return sum(count_rows(event) for path in paths for _, event in read_binlog(path))


def fakemaster_encode(events: list[Event]) -> int:
    ctx = BinlogContext()
    for event in events:
        encode_event(event, ctx)
    return sum(count_rows(event) for event in events)


def pmr_decode(paths: list[Path]) -> int:
    from pymysql.protocol import MysqlPacket
    from pymysqlreplication.binlogstream import BinLogStreamReader
    from pymysqlreplication.packet import BinLogPacketWrapper
    from pymysqlreplication.row_event import RowsEvent as PmrRowsEvent

    class ControlConnection:  # what the wrapper reads from its control connection
        charset = "utf8mb4"

        def _get_dbms(self) -> str:
            return "mariadb"

    allowed = BinLogStreamReader._allowed_event_list(None, None, None, False)  # type: ignore[arg-type]
    rows = 0
    for path in paths:
        table_map: dict = {}
        use_checksum = True
        for _, raw in iter_raw_events(open(path, "rb")):
            if raw[4] == 15:  # the FDE tells whether the file's events carry a CRC
                use_checksum = raw[-5] == 1
            packet = BinLogPacketWrapper(
                MysqlPacket(b"\x00" + raw, "utf8"),
                table_map,
                ControlConnection(),
                (10, 11),
                use_checksum,
                allowed,
                None,
                None,
                None,
                None,
                False,
                False,
                False,
                True,
                False,
            )
            if isinstance(packet.event, PmrRowsEvent):
                rows += len(packet.event.rows)
    return rows


def timed(label: str, work: Callable[[], int], repeat: int) -> tuple[float, int]:
    best = float("inf")
    rows = 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = work()
        best = min(best, time.perf_counter() - start)
    print(f"{label:34s} {rows:9d} rows in {best:7.3f} s  = {rows / best:12,.0f} rows/s")
    return rows / best, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--transactions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = args.files
        if not paths:
            paths = [Path(tmp) / "bench-bin.000001"]
            write_generated(paths[0], args.transactions)
        size = sum(os.path.getsize(p) for p in paths)
        print(f"binlog: {len(paths)} file(s), {size:,} bytes")
        events = [event for path in paths for _, event in read_binlog(path)]
        ours, ours_rows = timed("fakemaster decode", lambda: fakemaster_decode(paths), args.repeat)
        enc, _ = timed("fakemaster encode", lambda: fakemaster_encode(events), args.repeat)
        theirs, their_rows = timed(
            "python-mysql-replication decode", lambda: pmr_decode(paths), args.repeat
        )
    if ours_rows != their_rows:
        print(f"row counts differ: fakemaster {ours_rows}, python-mysql-replication {their_rows}")
        return 1
    print(f"decode ratio fakemaster / python-mysql-replication: {ours / theirs:.1f}x")
    print(f"encode ratio fakemaster encode / python-mysql-replication decode: {enc / theirs:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
