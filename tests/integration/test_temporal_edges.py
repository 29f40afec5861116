"""A real MariaDB 10.11 replica reads temporal bytes as the codec does (the proof for
``fakemaster/vocabulary/columns.py``'s limits and ``tests/support/mariadb_reads.py``).

* The edge values the encoder still accepts -- TIME2 1023:59:59.999999 and -838:59:59, every
  fsp at .9/.99/.../.999999 and at its smallest step, minute and second 59 (and the 63 their
  bits hold), TIMESTAMP2 at 2038-01-19 03:14:07.999999, DATE's and DATETIME2's odd bit
  patterns, YEAR's ends -- are served by the fake master from a ``MemoryBinlogStore``; the
  replica's table values (``CAST(col AS CHAR)``, ``HOUR()`` .. ``MICROSECOND()``,
  ``UNIX_TIMESTAMP()``) equal what the decoder reads from the same served bytes.
* The same for MariaDB 5.3's formats (a replica with ``mysql56_temporal_format=OFF``): old
  TIME/DATETIME/TIMESTAMP, TIME(n)/DATETIME(n)/TIMESTAMP(n) up to their last readable values.
  The binlog does not carry their precisions, so those rows are written with ``BinlogWriter``
  (``BinlogContext.temporal_precisions``) after the store's schema, and served from a directory.
* The bytes the decoder refuses (written raw) are read by the replica as the model says
  (another value than they spell: TIME2 hours modulo 1024, a DATETIME2 fraction read signed,
  ...), or not kept at all (a TIMESTAMP past 2038 or with a fraction of a second or more is
  clamped, or its row refused).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from decoder import read_binlog
from decoder.values import decode_value
from encoder.binlog_file import BinlogWriter
from encoder.core import encode_event
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import BinlogStore, DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.columns import HIRES_DATETIME_BYTES, HIRES_DATETIME_LIMIT
from fakemaster.vocabulary.constants import CHECKSUM_LEN, EventFlag, GtidFlag, RowsFlag
from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    Event,
    GtidEvent,
    QueryEvent,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.vocabulary.header import CRC, LOG_POS_OFFSET, TYPE_CODE_OFFSET, event_crc
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_reads import Reading, read
from tests.support.streams import (
    ReplicaTimeout,
    as_sent,
    gtid_set,
    gtid_slave_pos,
    replica_problem,
    store_file_bytes,
    wait_caught_up,
)

USER, PASSWORD = "repl", "pw"
MASTER_SERVER_ID = 100
DATABASE = "edges"
TABLE = "t"
TABLE_ID = 41
FSPS = range(7)
MARIADB_53 = {"mysql56_temporal_format": "OFF"}
WAIT_SECONDS = 120.0  # generous: the machine may be busy


@dataclass(frozen=True)
class Column:
    name: str
    sql: str
    column_type: int
    fsp: int = 0

    @property
    def kind(self) -> str:
        if self.column_type in (T.TIME, T.TIME2):
            return "time"
        if self.column_type in (T.TIMESTAMP, T.TIMESTAMP2):
            return "timestamp"
        if self.column_type == T.YEAR:
            return "year"
        return "datetime"  # DATE too: its hour .. microsecond are 0

    @property
    def table_map_meta(self) -> int:
        """The TABLE_MAP metadata: the precision of TIME2/DATETIME2/TIMESTAMP2, none for the
        old types (a MariaDB 5.3 precision comes from the schema)."""
        return self.fsp if self.column_type in (T.TIME2, T.DATETIME2, T.TIMESTAMP2) else 0


def modern_columns() -> list[Column]:
    columns = [Column(f"t{fsp}", f"TIME({fsp})", T.TIME2, fsp) for fsp in FSPS]
    columns += [Column(f"d{fsp}", f"DATETIME({fsp})", T.DATETIME2, fsp) for fsp in FSPS]
    columns += [Column(f"s{fsp}", f"TIMESTAMP({fsp})", T.TIMESTAMP2, fsp) for fsp in FSPS]
    return [*columns, Column("da", "DATE", T.DATE), Column("yr", "YEAR", T.YEAR)]


def mariadb_53_columns() -> list[Column]:
    """Made with mysql56_temporal_format=OFF: precision 0 is the pre-5.3 format."""
    columns = [Column(f"t{fsp}", f"TIME({fsp})", T.TIME, fsp) for fsp in FSPS]
    columns += [Column(f"d{fsp}", f"DATETIME({fsp})", T.DATETIME, fsp) for fsp in FSPS]
    columns += [Column(f"s{fsp}", f"TIMESTAMP({fsp})", T.TIMESTAMP, fsp) for fsp in FSPS]
    return columns


def ddl(columns: Sequence[Column]) -> bytes:
    parts = ["pk INT NOT NULL PRIMARY KEY"]
    parts += [
        f"{c.name} {c.sql} NULL" + (" DEFAULT NULL" if c.kind == "timestamp" else "")
        for c in columns
    ]
    return f"CREATE TABLE {DATABASE}.{TABLE} ({', '.join(parts)}) ENGINE=InnoDB".encode()


def table_map(columns: Sequence[Column]) -> TableMapEvent:
    return TableMapEvent(
        table_id=TABLE_ID,
        table_flags=1,
        database=DATABASE,
        table=TABLE,
        column_types=(T.LONG, *(c.column_type for c in columns)),
        column_meta=(0, *(c.table_map_meta for c in columns)),
        nullable=(False, *(True for _ in columns)),
    )


def write_rows(columns: Sequence[Column], row: Sequence[Any]) -> WriteRowsEvent:
    width = len(columns) + 1
    return WriteRowsEvent(
        table_id=TABLE_ID,
        rows_flags=RowsFlag.STMT_END,
        width=width,
        columns_present=((1 << width) - 1).to_bytes((width + 7) // 8, "little"),
        rows=(tuple(row),),
    )


def precisions(columns: Sequence[Column]) -> dict[tuple[str, str], tuple[int, ...]]:
    return {(DATABASE, TABLE): (0, *(c.fsp for c in columns))}


# --- edge values --------------------------------------------------------------------------


def top(fsp: int) -> int:
    """.9, .99, ..., .999999: the largest fraction of a precision."""
    return (10**fsp - 1) * 10 ** (6 - fsp)


def step(fsp: int) -> int:
    """.1, .01, ..., .000001: the smallest (0 without fractional digits)."""
    return 10 ** (6 - fsp) if fsp else 0


def truncated(microsecond: int, fsp: int) -> int:
    return microsecond - microsecond % 10 ** (6 - fsp)


def modern_rows() -> list[list[Any]]:
    """Rows over modern_columns(): TIME2 x7, DATETIME2 x7, TIMESTAMP2 x7, DATE, YEAR."""

    def row(
        time: Callable[[int], Time],
        datetime: Callable[[int], DateTime],
        timestamp: Callable[[int], Timestamp],
        date: Date,
        year: int,
    ) -> list[Any]:
        return [
            *(time(fsp) for fsp in FSPS),
            *(datetime(fsp) for fsp in FSPS),
            *(timestamp(fsp) for fsp in FSPS),
            date,
            year,
        ]

    return [
        row(  # the largest values
            lambda f: Time(False, 1023, 59, 59, top(f)),
            lambda f: DateTime(9999, 12, 31, 23, 59, 59, top(f)),
            lambda f: Timestamp(0x7FFFFFFF, top(f)),
            Date(9999, 12, 31),
            2155,
        ),
        row(  # the most negative TIME; .9 .. .999999 at minute and second 59
            lambda f: Time(True, 1023, 59, 59, top(f)),
            lambda f: DateTime(2024, 2, 29, 0, 59, 59, top(f)),
            lambda f: Timestamp(1_709_164_799, top(f)),
            Date(0, 0, 0),
            0,
        ),
        row(  # TIME's SQL range; zeros
            lambda f: Time(True, 838, 59, 59, 0),
            lambda f: DateTime(0, 0, 0, 0, 0, 0, 0),
            lambda f: Timestamp(0, 0),
            Date(1000, 1, 1),
            1901,
        ),
        row(  # what the bits hold beyond the SQL ranges; the smallest fractions
            lambda f: Time(False, 0, 63, 63, step(f)),
            lambda f: DateTime(10082, 5, 31, 31, 63, 63, step(f)),
            lambda f: Timestamp(0, step(f)),
            Date(32767, 15, 31),
            2000,
        ),
        row(  # .99 / .9999 cut to each precision, a negative TIME just below zero
            lambda f: Time(True, 0, 0, 1 if f == 0 else 0, step(f)),
            lambda f: DateTime(2023, 12, 31, 23, 59, 59, truncated(999_900, f)),
            lambda f: Timestamp(1_704_067_199, truncated(990_000, f)),
            Date(2024, 13, 0),
            2024,
        ),
    ]


def last_hires_datetime(fsp: int) -> DateTime:
    """The last DATETIME(fsp) (MariaDB 5.3 format) MariaDB reads as written: 63 bits of
    microseconds, or all its bytes."""
    size = HIRES_DATETIME_BYTES[fsp]
    number = min(HIRES_DATETIME_LIMIT[fsp], 1 << (8 * size)) - 1
    value, _ = decode_value(T.DATETIME, fsp, number.to_bytes(size, "big"))
    assert isinstance(value, DateTime)
    return value


def mariadb_53_rows() -> list[list[Any]]:
    """Rows over mariadb_53_columns(): TIME x7, DATETIME x7, TIMESTAMP x7 (fsp 0: old)."""
    # TIME(5) has the five bytes of TIME(4) for ten times the units.
    most_hours = {0: 838, 5: 2214}
    return [
        [
            *(Time(False, most_hours.get(f, 9983), 59, 59, top(f)) for f in FSPS),
            *(DateTime(9999, 12, 31, 23, 59, 59, top(f)) for f in FSPS),
            *(Timestamp(0x7FFFFFFF, top(f)) for f in FSPS),
        ],
        [
            *(Time(True, 838, 59, 59, top(f)) for f in FSPS),
            DateTime(429496, 72, 95, 99, 99, 99),  # YYYYMMDD as 32 bits at most
            *(last_hires_datetime(f) for f in FSPS[1:]),
            *(Timestamp(0, step(f)) for f in FSPS),
        ],
        [
            Time(False, 0, 99, 99),  # hhmmss: two decimal digits each
            *(Time(False, 0, 0, 0, step(f)) for f in FSPS[1:]),
            DateTime(2024, 13, 32, 24, 60, 60),
            *(DateTime(0, 0, 0, 0, 0, 0, step(f)) for f in FSPS[1:]),
            *(Timestamp(1, top(f)) for f in FSPS),
        ],
    ]


# --- serving ------------------------------------------------------------------------------


class Raw:
    """A value's bytes to put in a row image as they are (the encoder would refuse the value).
    A row holding one has no other non-NULL value but its primary key."""

    def __init__(self, data: bytes) -> None:
        self.data = data


# A value of each column type the encoder accepts at every precision: stands in for Raw bytes
# (of the same size), which then overwrite it.
PLACEHOLDERS: dict[int, Any] = {
    T.TIME: Time(False, 1, 2, 3),
    T.TIME2: Time(False, 1, 2, 3),
    T.DATETIME: DateTime(2000, 1, 2),
    T.DATETIME2: DateTime(2000, 1, 2),
    T.TIMESTAMP: Timestamp(1),
    T.TIMESTAMP2: Timestamp(1),
}


def raw_rows_event(data: bytes, raw: bytes, end: int) -> bytes:
    """An encoded one-row ROWS event whose last value (right before the CRC) becomes ``raw``,
    with its header's log_pos ``end`` and its CRC made right again."""
    patched = bytearray(data)
    crc_at = len(patched) - CHECKSUM_LEN
    patched[crc_at - len(raw) : crc_at] = raw
    patched[LOG_POS_OFFSET : LOG_POS_OFFSET + 4] = end.to_bytes(4, "little")
    CRC.pack_into(
        patched, crc_at, event_crc(memoryview(patched)[:crc_at], patched[TYPE_CODE_OFFSET])
    )
    return bytes(patched)


def row_values(pk: int, columns: Sequence[Column], row: Sequence[Any]) -> tuple[list[Any], bytes]:
    """The values of a row image (a Raw value's placeholder put in) and the Raw bytes, if any."""
    raws = [value for value in row if isinstance(value, Raw)]
    if not raws:
        return [pk, *row], b""
    assert len(raws) == 1 and sum(value is not None for value in row) == 1, row
    values = [
        PLACEHOLDERS[column.column_type] if isinstance(value, Raw) else None
        for column, value in zip(columns, row, strict=True)
    ]
    return [pk, *values], raws[0].data


def write_group(writer: BinlogWriter, seq_no: int, body: Sequence[Event], raw: bytes) -> None:
    """One transaction as a primary writes it (``raw``: see raw_rows_event)."""
    stamp = {"server_id": MASTER_SERVER_ID, "timestamp": 1_700_000_000}
    flags2 = GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
    writer.write(GtidEvent(seq_no=seq_no, flags2=flags2, flags=EventFlag.SUPPRESS_USE, **stamp))
    for event in body:
        event = dataclasses.replace(event, **stamp)
        if raw and isinstance(event, WriteRowsEvent):
            data = encode_event(event, writer.ctx)
            writer.write_raw(raw_rows_event(data, raw, writer.offset + len(data)))
        else:
            writer.write(event)


def schema_store(columns: Sequence[Column]) -> MemoryBinlogStore:
    store = MemoryBinlogStore(server_id=MASTER_SERVER_ID)
    store.append_transaction([QueryEvent(query=f"CREATE DATABASE {DATABASE}".encode())])
    store.append_transaction([QueryEvent(query=ddl(columns), database=DATABASE)])
    return store


def memory_store(columns: Sequence[Column], rows: Sequence[Sequence[Any]]) -> MemoryBinlogStore:
    """The schema and one transaction per row, all built by the fake master's store."""
    store = schema_store(columns)
    for pk, row in enumerate(rows, 1):
        store.append_transaction(
            [table_map(columns), write_rows(columns, [pk, *row]), XidEvent(xid=pk)]
        )
    return store


def directory_store(
    directory: Path, columns: Sequence[Column], rows: Sequence[Sequence[Any]]
) -> DirectoryBinlogStore:
    """The schema written by the fake master's store, then one transaction per row written with
    BinlogWriter (which knows the columns' precisions and puts Raw bytes in as they are),
    served from ``directory``."""
    prefix = as_sent(store_file_bytes(schema_store(columns), "mysql-bin.000001"))
    seq_no = 2  # the schema's two groups
    with (directory / "mysql-bin.000001").open("wb") as out:
        out.write(prefix)
        ctx = BinlogContext(temporal_precisions=precisions(columns))
        writer = BinlogWriter(
            out, ctx=ctx, write_magic=False, offset=len(prefix), fix_positions=True
        )
        for pk, row in enumerate(rows, 1):
            values, raw = row_values(pk, columns, row)
            seq_no += 1
            body = [table_map(columns), write_rows(columns, values), XidEvent(xid=pk)]
            write_group(writer, seq_no, body, raw)
    (directory / "mysql-bin.index").write_text("./mysql-bin.000001\n")
    return DirectoryBinlogStore(directory)


def served_rows(
    store: BinlogStore, columns: Sequence[Column], scratch: Path
) -> dict[int, tuple[Any, ...]]:
    """What the decoder reads from the served binlog: each row by primary key."""
    path = scratch / "served.bin"
    path.write_bytes(store_file_bytes(store, "mysql-bin.000001"))
    ctx = BinlogContext(temporal_precisions=precisions(columns))
    rows = {}
    for _, event in read_binlog(path, ctx=ctx):
        if isinstance(event, WriteRowsEvent):
            for row in event.rows:
                rows[row[0]] = tuple(row[1:])
    return rows


def wait_applied_skipping_errors(replica: MariaDBServer, gtid_pos: str, master: Any) -> None:
    """Until a replica that skips failing events (slave_skip_errors) applied every group up to
    ``gtid_pos``: its SQL thread keeps running, with the last skipped error in its status."""
    wanted = gtid_set(gtid_pos)
    deadline = time.monotonic() + WAIT_SECONDS
    while gtid_set(gtid_slave_pos(replica)) != wanted:
        if replica.slave_status().get("Slave_SQL_Running") != "Yes" or time.monotonic() > deadline:
            raise ReplicaTimeout(f"replica at {gtid_pos}: {replica_problem(replica, master)}")
        time.sleep(0.05)


def replicate(
    mariadb_factory: MariaDBFactory, store: BinlogStore, options: dict[str, Any]
) -> MariaDBServer:
    """A fresh replica that applied everything ``store`` holds (from the first file)."""
    replica = mariadb_factory(options, server_id=2)
    config = ServerConfig(server_id=MASTER_SERVER_ID, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        replica.change_master(
            master.host, master.port, USER, PASSWORD,
            use_gtid="no", log_file="mysql-bin.000001", log_pos=4,
        )  # fmt: skip
        replica.execute("START SLAVE")
        if "slave_skip_errors" in options:
            wait_applied_skipping_errors(replica, store.gtid_binlog_pos(), master)
        else:
            wait_caught_up(replica, store.gtid_binlog_pos(), master=master, timeout=WAIT_SECONDS)
        replica.execute("STOP SLAVE")
        assert master.errors == []
    return replica


# --- what the replica reads ---------------------------------------------------------------

# Per kind of column, what is asked of the replica: its text and its fields, as the server's
# SQL functions give them (UNIX_TIMESTAMP() gives a TIMESTAMP's stored seconds and fraction).
SELECTS = {
    "time": "CAST({c} AS CHAR), HOUR({c}), MINUTE({c}), SECOND({c}), MICROSECOND({c})",
    "datetime": "CAST({c} AS CHAR), YEAR({c}), MONTH({c}), DAYOFMONTH({c}), HOUR({c}), "
    "MINUTE({c}), SECOND({c}), MICROSECOND({c})",
    "timestamp": "CAST({c} AS CHAR), UNIX_TIMESTAMP({c})",
    "year": "{c} + 0",
}


def replica_rows(
    replica: MariaDBServer, columns: Sequence[Column]
) -> dict[int, list[tuple[Any, ...] | None]]:
    """Per primary key, per column, what the replica reads (None for SQL NULL)."""
    selects = ", ".join(SELECTS[c.kind].format(c=c.name) for c in columns)
    result = replica.execute(
        ["SET time_zone = '+00:00'", f"SELECT pk, {selects} FROM {DATABASE}.{TABLE} ORDER BY pk"]
    )
    rows = {}
    for record in result:
        items = list(record[1:])
        row: list[tuple[Any, ...] | None] = []
        for column in columns:
            width = len(SELECTS[column.kind].split(", "))
            seen, items = tuple(items[:width]), items[width:]
            row.append(None if seen[0] is None else seen)
        rows[record[0]] = row
    return rows


def fraction(microsecond: int, fsp: int) -> str:
    return "." + f"{microsecond:06d}"[:fsp] if fsp else ""


def unix_time(seconds: int, microsecond: int, fsp: int) -> int | Decimal:
    if not fsp:
        return seconds
    return (Decimal(seconds) + Decimal(microsecond).scaleb(-6)).quantize(Decimal(1).scaleb(-fsp))


def expected(column: Column, value: Any) -> tuple[Any, ...] | None:
    """What the replica must read for a decoded ``value`` (None for NULL). A text of None is
    not compared: the server prints a year beyond 9999 with four characters."""
    fsp = column.fsp
    if value is None:
        return None
    if column.kind == "time":
        assert isinstance(value, Time)
        return (value.format(fsp), value.hour, value.minute, value.second, value.microsecond)
    if column.kind == "year":
        return (value,)
    if column.kind == "timestamp":
        assert isinstance(value, Timestamp)
        if value == Timestamp(0):
            text = "0000-00-00 00:00:00" + fraction(0, fsp)
        else:
            moment = dt.datetime.fromtimestamp(value.seconds, dt.UTC)
            text = moment.strftime("%Y-%m-%d %H:%M:%S") + fraction(value.microsecond, fsp)
        return (text, unix_time(value.seconds, value.microsecond, fsp))
    if isinstance(value, Date):
        fields = (value.year, value.month, value.day, 0, 0, 0, 0)
        text = str(value)
    else:
        assert isinstance(value, DateTime)
        fields = tuple(value)
        text = value.format(fsp)
    return (text if value.year <= 9999 else None, *fields)


def same(seen: tuple[Any, ...] | None, want: tuple[Any, ...] | None) -> bool:
    if seen is None or want is None:
        return seen is want
    return len(seen) == len(want) and all(
        w is None or s == w for s, w in zip(seen, want, strict=True)
    )


def check_replica_reads_the_decoded_values(
    replica: MariaDBServer,
    columns: Sequence[Column],
    decoded: dict[int, tuple[Any, ...]],
) -> None:
    seen = replica_rows(replica, columns)
    assert sorted(seen) == sorted(decoded)
    problems = [
        f"row {pk} {column.name} {column.sql}: replica {got!r}, decoder {want!r}"
        for pk, values in decoded.items()
        for column, value, got in zip(columns, values, seen[pk], strict=True)
        if not same(got, want := expected(column, value))
    ]
    assert not problems, "\n".join(problems)


# --- the tests ----------------------------------------------------------------------------


@pytest.mark.mariadb
def test_a_replica_reads_the_edge_values_as_the_decoder(
    mariadb_factory: MariaDBFactory, tmp_path: Path
) -> None:
    columns = modern_columns()
    rows = modern_rows()
    store = memory_store(columns, rows)
    decoded = served_rows(store, columns, tmp_path)
    assert decoded == {pk: tuple(row) for pk, row in enumerate(rows, 1)}
    replica = replicate(mariadb_factory, store, {})
    check_replica_reads_the_decoded_values(replica, columns, decoded)


@pytest.mark.mariadb
def test_a_replica_reads_mariadb_53_edge_values_as_the_decoder(
    mariadb_factory: MariaDBFactory, tmp_path: Path
) -> None:
    columns = mariadb_53_columns()
    rows = mariadb_53_rows()
    served = tmp_path / "served"
    served.mkdir()
    store = directory_store(served, columns, rows)
    decoded = served_rows(store, columns, tmp_path)
    assert decoded == {pk: tuple(row) for pk, row in enumerate(rows, 1)}
    replica = replicate(mariadb_factory, store, MARIADB_53)
    check_replica_reads_the_decoded_values(replica, columns, decoded)


# Bytes the decoder refuses, by column name, and why. Each is read by MariaDB as the model says
# (tests/support/mariadb_reads.py): another value than the bytes spell, or no value kept.
MODERN_REFUSED = [
    ("t0", "c05042"),  # 1029:01:02 spelled: hours are 10 bits
    ("t6", "3fafbe000000"),  # -1029:01:02
    ("t0", "000000"),  # -2048:00:00
    ("t0", "ffffff"),  # 2047:63:63
    ("t2", "800005ff"),  # a fraction of 2.55 s
    ("t2", "7ffffa01"),  # a negative one: -00:00:05 - 2.55 s
    ("d1", "99b2caa51e80"),  # fraction bytes read signed: a second borrowed
    ("d3", "99b2caa500ffff"),
    ("d6", "99b2caa51e800000"),
    ("d6", "99b2caa51e7fffff"),  # a fraction of 8.39 s
    ("d2", "99b2caa51e64"),  # exactly 1 s
    ("s0", "80000000"),  # after 2038-01-19 03:14:07
    ("s6", "ffffffff0f423f"),
    ("s1", "000f4240ff"),  # a fraction of 2.55 s
    ("s3", "000f42408000"),  # fraction bytes read signed
    ("s5", "000f42407fffff"),  # a fraction of 8.39 s
]


def _hires_datetime_limit(fsp: int) -> str:
    return HIRES_DATETIME_LIMIT[fsp].to_bytes(HIRES_DATETIME_BYTES[fsp], "big").hex()


MARIADB_53_REFUSED = [
    ("s0", "00000080"),  # TIMESTAMP after 2038-01-19 03:14:07
    ("s0", "ffffffff"),
    ("d0", "00c42ba140420f00"),  # 429497-00-00: YYYYMMDD beyond 32 bits
    ("d0", "0000000000000080"),  # read as a negative number
    ("d0", "ffffffffffffffff"),
    ("t6", "2373f06ebb83"),  # 9989:01:02.000003: hours modulo 9984
    ("t1", "ffffffff"),
    ("d1", "ffffffffffff"),  # beyond 63 bits of microseconds
    ("d1", _hires_datetime_limit(1)),
    ("d3", "ffffffffffffff"),
    ("d3", _hires_datetime_limit(3)),
    ("d6", "ffffffffffffffff"),
    ("d6", _hires_datetime_limit(6)),
    ("s3", "0000000503e8"),  # a fraction of 1 s
    ("s1", "000000050a"),
    ("s3", "800000000000"),  # after 2038
]


def spelled_unix_time(column: Column, raw: bytes) -> Decimal:
    """A TIMESTAMP's bytes read as they spell: seconds, then an unsigned fraction."""
    old_format = column.column_type == T.TIMESTAMP and not column.fsp  # little-endian
    fraction_bytes = raw[4:]
    seconds = int.from_bytes(raw[:4], "little" if old_format else "big")
    if column.column_type == T.TIMESTAMP2:
        unit = (0, 10000, 100, 1)[len(fraction_bytes)]
    else:
        unit = 10 ** (6 - column.fsp)
    return Decimal(seconds) + Decimal(int.from_bytes(fraction_bytes, "big") * unit).scaleb(-6)


@pytest.mark.mariadb
@pytest.mark.parametrize(
    ("columns", "refused", "options"),
    [
        pytest.param(modern_columns(), MODERN_REFUSED, {}, id="mysql56_temporal_format"),
        pytest.param(mariadb_53_columns(), MARIADB_53_REFUSED, MARIADB_53, id="mariadb_53"),
    ],
)
def test_a_replica_reads_the_refused_bytes_as_another_value(
    columns: list[Column],
    refused: list[tuple[str, str]],
    options: dict[str, Any],
    mariadb_factory: MariaDBFactory,
    tmp_path: Path,
) -> None:
    by_name = {column.name: column for column in columns}
    rows = []
    for name, hex_bytes in refused:
        column = by_name[name]
        with pytest.raises(DecodeError):
            decode_value(column.column_type, column.fsp, bytes.fromhex(hex_bytes))
        rows.append([Raw(bytes.fromhex(hex_bytes)) if c is column else None for c in columns])
    store = directory_store(tmp_path, columns, rows)
    # A replica refuses some TIMESTAMP rows; skipped, they leave no row behind.
    replica = replicate(mariadb_factory, store, {**options, "slave_skip_errors": "all"})
    seen = replica_rows(replica, columns)
    problems = []
    for pk, (name, hex_bytes) in enumerate(refused, 1):
        column = by_name[name]
        raw = bytes.fromhex(hex_bytes)
        got = seen[pk][columns.index(column)] if pk in seen else None
        reading = read(column.column_type, column.fsp, raw)
        if reading is None:  # a TIMESTAMP not kept: clamped, or its row refused
            assert column.kind == "timestamp"
            if got is not None and got[1] == spelled_unix_time(column, raw):
                problems.append(f"{name} {hex_bytes}: the replica kept {got!r}")
            continue
        assert isinstance(reading, Reading), reading
        if column.kind == "time":
            want: tuple[Any, ...] = (*reading[4:],)
            if got is None or (got[0].startswith("-"), *got[1:]) != (reading.negative, *want):
                problems.append(f"{name} {hex_bytes}: replica {got!r}, MariaDB model {reading}")
        elif got is None or got[1:] != tuple(reading[1:]):
            problems.append(f"{name} {hex_bytes}: replica {got!r}, MariaDB model {reading}")
    assert not problems, "\n".join(problems)
