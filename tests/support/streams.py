"""Binlog streams with known content, built with the encoder into a ``MemoryBinlogStore``, for
the tests that point real peers (a MariaDB replica, ``mariadb-binlog``, python-mysql-replication)
at a fake master.

:class:`TypedStream` writes, into database ``fmr``:

* ``typed``: one column of each of many types (integers signed and unsigned, DECIMAL, DOUBLE,
  DATETIME(6), DATE, TIMESTAMP(3), TIME(2), YEAR, VARCHAR utf8mb4, CHAR latin1, BLOB, ENUM, SET,
  BIT), written, updated and deleted by ROWS events;
* ``items``: rows only ever inserted, under a primary key: an event group applied twice makes
  the replica stop with a duplicate-key error, a lost group leaves ids missing;
* ``counter``: one row incremented by a statement (``UPDATE ... SET n = n + 1``) in every batch:
  applied twice, ``n`` shows it.

Every batch is one InnoDB-style transaction (GTID, TABLE_MAP + ROWS events, the statement, XID).
The builder keeps a ledger of what it served (the GTID and the ROWS events of every batch, the
rotations) and the rows each table must end with.

The TABLE_MAP events are what MariaDB 10.11 writes for the same CREATE TABLE (checked against a
real server: column types, metadata, nullability, and the optional metadata of
``binlog_row_metadata`` MINIMAL or FULL, in the server's order).

Also here: bounded waits on a real replica that fail with its errors and the fake master's
(:func:`wait_for_replica`, :func:`wait_caught_up`), a replica's table as text-protocol bytes and
expected values rendered the same way (:func:`replica_table`, :func:`rendered_rows`), and the
served files as bytes (:func:`store_file_bytes`, :func:`as_sent`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pymysql

from fakemaster.store import AppendedGroup, BinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.columns import (
    STRING_REAL_CHAR,
    STRING_REAL_ENUM,
    STRING_REAL_SET,
    string_meta_value,
)
from fakemaster.vocabulary.constants import ColumnType, EventFlag, OptionalMetadata, RowsFlag
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    Event,
    Gtid,
    MetadataField,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.strategies.rows import ColumnSpec, optional_metadata_for
from tests.peers.workload import (
    ColumnInfo,
    TableResult,
    fetch_columns,
    fetch_raw_rows,
    raw_connection,
)
from tests.support.sql_text import render

if TYPE_CHECKING:
    from tests.peers.mariadb import MariaDBServer

DATABASE = "fmr"
UTF8MB4_GENERAL_CI = 45
LATIN1_SWEDISH_CI = 8
BINARY = 63


@dataclass(frozen=True)
class Column:
    name: str
    sql: str  # the type in CREATE TABLE
    spec: ColumnSpec  # what the TABLE_MAP says of it


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    table_id: int

    @property
    def width(self) -> int:
        return len(self.columns)

    @property
    def column_names(self) -> list[str]:
        return [column.name for column in self.columns]

    def ddl(self, database: str = DATABASE) -> bytes:
        parts = [f"{c.name} {c.sql}" for c in self.columns]
        parts[0] += " PRIMARY KEY"
        return f"CREATE TABLE {database}.{self.name} ({', '.join(parts)}) ENGINE=InnoDB".encode()

    def table_map(self, full_metadata: bool, database: str = DATABASE) -> TableMapEvent:
        specs = [column.spec for column in self.columns]
        optional = optional_metadata_for(specs, full=full_metadata)
        if full_metadata:  # the first column is the primary key
            optional += (MetadataField(OptionalMetadata.SIMPLE_PRIMARY_KEY, (0,)),)
        return TableMapEvent(
            table_id=self.table_id,
            table_flags=1,
            database=database,
            table=self.name,
            column_types=tuple(spec.column_type for spec in specs),
            column_meta=tuple(spec.meta for spec in specs),
            nullable=tuple(spec.nullable for spec in specs),
            optional_metadata=optional,
        )

    @property
    def present(self) -> bytes:
        """The columns-present bitmap of a full row image."""
        bits = (1 << self.width) - 1
        return bits.to_bytes((self.width + 7) // 8, "little")


def _column(name: str, sql: str, column_type: int, meta: int = 0, **spec: Any) -> Column:
    nullable = "NOT NULL" not in sql
    return Column(
        name, sql, ColumnSpec(column_type, meta, nullable=nullable, name=name.encode(), **spec)
    )


TYPED = Table(
    "typed",
    (
        _column("pk", "INT NOT NULL", ColumnType.LONG),
        _column("ti", "TINYINT NULL", ColumnType.TINY),
        _column("ui", "INT UNSIGNED NULL", ColumnType.LONG, unsigned=True),
        _column("bi", "BIGINT NULL", ColumnType.LONGLONG),
        _column("dc", "DECIMAL(12,3) NULL", ColumnType.NEWDECIMAL, 12 | 3 << 8),
        _column("fl", "DOUBLE NULL", ColumnType.DOUBLE, 8),
        _column("dt", "DATETIME(6) NULL", ColumnType.DATETIME2, 6),
        _column("da", "DATE NULL", ColumnType.DATE),
        _column("ts", "TIMESTAMP(3) NULL DEFAULT NULL", ColumnType.TIMESTAMP2, 3),
        _column("tm", "TIME(2) NULL", ColumnType.TIME2, 2),
        _column("yr", "YEAR NULL", ColumnType.YEAR, unsigned=True),
        _column(
            "vc",
            "VARCHAR(40) CHARACTER SET utf8mb4 NULL",
            ColumnType.VARCHAR,
            160,
            collation=UTF8MB4_GENERAL_CI,
        ),
        _column(
            "ch",
            "CHAR(8) CHARACTER SET latin1 NULL",
            ColumnType.STRING,
            string_meta_value(STRING_REAL_CHAR, 8),
            collation=LATIN1_SWEDISH_CI,
        ),
        _column("bl", "BLOB NULL", ColumnType.BLOB, 2, collation=BINARY),
        _column(
            "en",
            "ENUM('red','green','blue') NULL",
            ColumnType.STRING,
            STRING_REAL_ENUM | 1 << 8,
            members=(b"red", b"green", b"blue"),
            collation=UTF8MB4_GENERAL_CI,
        ),
        _column(
            "st",
            "SET('a','b','c') NULL",
            ColumnType.STRING,
            STRING_REAL_SET | 1 << 8,
            members=(b"a", b"b", b"c"),
            collation=UTF8MB4_GENERAL_CI,
        ),
        _column("bt", "BIT(10) NULL", ColumnType.BIT, 2 | 1 << 8),
    ),
    table_id=18,
)

ITEMS = Table(
    "items",
    (
        _column("id", "INT NOT NULL", ColumnType.LONG),
        _column("batch", "INT NOT NULL", ColumnType.LONG),
        _column(
            "note",
            "VARCHAR(64) CHARACTER SET utf8mb4 NULL",
            ColumnType.VARCHAR,
            256,
            collation=UTF8MB4_GENERAL_CI,
        ),
    ),
    table_id=22,
)

COUNTER = Table(
    "counter",
    (
        _column("id", "INT NOT NULL", ColumnType.LONG),
        _column("n", "INT NOT NULL", ColumnType.LONG),
        _column("last_batch", "INT NOT NULL", ColumnType.LONG),
    ),
    table_id=23,
)

TABLES = (TYPED, ITEMS, COUNTER)
ITEMS_PER_BATCH = 3


def typed_row(batch: int, negative_time_fractions: bool = True) -> tuple[Any, ...]:
    """The ``typed`` row a batch inserts (every fourth one with NULLs in half its columns);
    odd batches have a negative TIME, with a fraction unless ``negative_time_fractions`` is
    False."""
    negative = batch % 2 == 1
    row: list[Any] = [
        batch,
        -batch if batch % 2 else batch,
        4_000_000_000 + batch,
        -9_000_000_000_000 * batch,
        Decimal("-12345.678") + batch,
        batch + 0.25,
        DateTime(2024, 2, 29, 13, 14, batch % 60, 123456),
        Date(2024, 2, batch % 28 + 1),
        Timestamp(1_704_067_200 + batch, 500_000),
        Time(negative, 12, 34, 56, 780_000 if negative_time_fractions or not negative else 0),
        2000 + batch,
        f"héllo ☃ {batch}".encode(),
        b"abc%d" % batch,
        bytes((0, 255, batch & 0xFF)),
        1 + batch % 3,
        batch % 8,
        (513 + batch) & 0x3FF,
    ]
    if batch % 4 == 0:
        for index in range(1, len(row), 2):
            row[index] = None
    return tuple(row)


def _updated(row: tuple[Any, ...], batch: int) -> tuple[Any, ...]:
    values = list(row)
    values[TYPED.column_names.index("vc")] = f"updated by batch {batch}".encode()
    values[TYPED.column_names.index("fl")] = -(batch + 0.5)
    values[TYPED.column_names.index("ts")] = None
    return tuple(values)


@dataclass
class ServedRows:
    """One ROWS event as served: its kind, table and rows (UPDATE rows are (before, after))."""

    kind: str
    table: str
    rows: tuple[Any, ...]


@dataclass
class ServedGroup:
    gtid: Gtid
    file_name: str
    start: int
    end: int
    rows: list[ServedRows] = field(default_factory=list)
    statements: list[bytes] = field(default_factory=list)


class TypedStream:
    """Writes the ``fmr`` schema and batches into ``store`` (see the module docstring)."""

    def __init__(
        self,
        store: MemoryBinlogStore,
        *,
        full_metadata: bool = False,
        negative_time_fractions: bool = True,
    ) -> None:
        self.store = store
        self.full_metadata = full_metadata
        self.negative_time_fractions = negative_time_fractions
        self.groups: list[ServedGroup] = []
        self.rotations: list[str] = []  # names of the files ROTATE events lead to
        self.restarts: list[str] = []  # names of the files started after a STOP event
        self.batches = 0
        # Rows each table must end with, by primary key.
        self.expected: dict[str, dict[int, tuple[Any, ...]]] = {t.name: {} for t in TABLES}

    # -- writing -------------------------------------------------------------------------

    def create_schema(self) -> None:
        self._group(
            [QueryEvent(query=f"CREATE DATABASE {DATABASE}".encode(), database="")], rows=[]
        )
        for table in TABLES:
            self._group([QueryEvent(query=table.ddl(), database=DATABASE)], rows=[])
        self._transaction([ServedRows("write", COUNTER.name, ((1, 0, 0),))], statements=[])

    def add_batches(self, count: int) -> list[ServedGroup]:
        return [self.add_batch() for _ in range(count)]

    def add_batch(self) -> ServedGroup:
        """One transaction: a ``typed`` row written (and older ones updated and deleted),
        ``ITEMS_PER_BATCH`` items, and the counter statement."""
        self.batches += 1
        batch = self.batches
        changes = [
            ServedRows("write", TYPED.name, (typed_row(batch, self.negative_time_fractions),))
        ]
        typed = self.expected[TYPED.name]
        if batch - 1 in typed:
            before = typed[batch - 1]
            changes.append(ServedRows("update", TYPED.name, ((before, _updated(before, batch)),)))
        if batch % 3 == 0 and batch - 2 in typed:
            changes.append(ServedRows("delete", TYPED.name, (typed[batch - 2],)))
        items = tuple(
            (batch * 10 + i, batch, f"item {batch}.{i}".encode())
            for i in range(1, ITEMS_PER_BATCH + 1)
        )
        changes.append(ServedRows("write", ITEMS.name, items))
        statement = (
            f"UPDATE {COUNTER.name} SET n = n + 1, last_batch = {batch} WHERE id = 1".encode()
        )
        return self._transaction(changes, statements=[statement])

    def rotate(self) -> str:
        name = self.store.rotate()
        self.rotations.append(name)
        return name

    def restart(self) -> str:
        """The primary restarts: STOP ends the file, the next one starts."""
        name = self.store.restart()
        self.restarts.append(name)
        return name

    def _transaction(self, changes: list[ServedRows], statements: list[bytes]) -> ServedGroup:
        body: list[Event] = []
        for change in changes:
            # Every statement maps its tables again: a replica forgets the table maps after a
            # ROWS event with STMT_END.
            table = _TABLES_BY_NAME[change.table]
            body.append(table.table_map(self.full_metadata))
            body.append(_rows_event(change, table))
        body.extend(QueryEvent(query=s, database=DATABASE) for s in statements)
        body.append(XidEvent(xid=len(self.groups) + 1))
        group = self._group(body, rows=changes, statements=statements)
        for change in changes:
            self._apply(change)
        if statements:
            self.expected[COUNTER.name][1] = (1, self.batches, self.batches)
        return group

    def _group(
        self, body: Sequence[Event], *, rows: list[ServedRows], statements: Iterable[bytes] = ()
    ) -> ServedGroup:
        appended: AppendedGroup = self.store.append_transaction(body)
        group = ServedGroup(
            appended.gtid, appended.file_name, appended.start, appended.end, rows, list(statements)
        )
        self.groups.append(group)
        return group

    def _apply(self, change: ServedRows) -> None:
        table = self.expected[change.table]
        for row in change.rows:
            if change.kind == "write":
                table[row[0]] = row
            elif change.kind == "delete":
                del table[row[0]]
            else:
                before, after = row
                del table[before[0]]
                table[after[0]] = after

    # -- what was served -----------------------------------------------------------------

    @property
    def last(self) -> ServedGroup:
        return self.groups[-1]

    def expected_rows(self, table: str) -> list[tuple[Any, ...]]:
        """The rows ``table`` must end with, by primary key."""
        return [row for _, row in sorted(self.expected[table].items())]

    def gtid_pos(self) -> str:
        return self.store.gtid_binlog_pos()


_TABLES_BY_NAME = {table.name: table for table in TABLES}


def _rows_event(change: ServedRows, table: Table) -> RowsEvent:
    common: dict[str, Any] = {
        "table_id": table.table_id,
        "rows_flags": RowsFlag.STMT_END,
        "width": table.width,
        "columns_present": table.present,
        "rows": change.rows,
    }
    if change.kind == "write":
        return WriteRowsEvent(**common)
    if change.kind == "delete":
        return DeleteRowsEvent(**common)
    return UpdateRowsEvent(columns_present_after=table.present, **common)


def table_by_name(name: str) -> Table:
    return _TABLES_BY_NAME[name]


# --- watching a real replica ----------------------------------------------------------------


class ReplicaTimeout(AssertionError):
    pass


def replica_problem(replica: MariaDBServer, master: Any = None) -> str:
    """What a replica and a fake master say went wrong: the replica's threads and last errors,
    the exceptions the fake master recorded."""
    status = replica.slave_status()
    keys = (
        "Slave_IO_Running",
        "Slave_SQL_Running",
        "Last_IO_Errno",
        "Last_IO_Error",
        "Last_SQL_Errno",
        "Last_SQL_Error",
        "Master_Log_File",
        "Read_Master_Log_Pos",
        "Relay_Master_Log_File",
        "Exec_Master_Log_Pos",
        "Gtid_IO_Pos",
    )
    text = ", ".join(f"{key}={status.get(key)!r}" for key in keys)
    if master is not None:
        text += f"; fake master errors: {list(master.errors)!r}"
    return text


def wait_for_replica(
    replica: MariaDBServer,
    condition: Callable[[], bool],
    what: str,
    *,
    master: Any = None,
    timeout: float = 60.0,
) -> None:
    """Poll until ``condition()``; fail at once when the replica's SQL thread stopped with an
    error, or after ``timeout`` seconds, with the replica's and the fake master's errors."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        try:
            if condition():
                return
        except pymysql.err.MySQLError:
            pass  # e.g. the table is not replicated yet
        status = replica.slave_status()
        if status.get("Last_SQL_Errno"):
            raise ReplicaTimeout(f"{what}: the replica stopped: {replica_problem(replica, master)}")
        if time.monotonic() > deadline:
            raise ReplicaTimeout(
                f"{what}: not reached within {timeout}s: {replica_problem(replica, master)}"
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


def gtid_slave_pos(replica: MariaDBServer) -> str:
    return str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos"))


def gtid_set(text: str) -> set[str]:
    return {part.strip() for part in text.split(",") if part.strip()}


def wait_caught_up(
    replica: MariaDBServer, gtid_pos: str, *, master: Any = None, timeout: float = 60.0
) -> None:
    """Until the replica applied every group up to ``gtid_pos`` (MariaDB records the GTIDs it
    applies in both GTID and file/pos mode)."""
    wanted = gtid_set(gtid_pos)
    wait_for_replica(
        replica,
        lambda: gtid_set(gtid_slave_pos(replica)) == wanted,
        f"replica at GTID position {gtid_pos}",
        master=master,
        timeout=timeout,
    )


def replica_table(replica: MariaDBServer, database: str, table: str) -> TableResult:
    """A table's rows as the replica's text protocol sends them (see tests/peers/workload.py)."""
    meta = replica.connect()
    raw = raw_connection(replica)
    try:
        columns = fetch_columns(meta, database, table)
        order_by, rows = fetch_raw_rows(raw, database, table, columns)
    finally:
        meta.close()
        raw.close()
    return TableResult(database, table, "", "", columns, order_by, rows)


def rendered_rows(
    rows: Iterable[Sequence[Any]], columns: Sequence[ColumnInfo]
) -> list[tuple[bytes | None, ...]]:
    """Rows of encoder values as the server's text protocol shows them."""
    return [
        tuple(render(value, column) for value, column in zip(row, columns, strict=True))
        for row in rows
    ]


# --- the served files -----------------------------------------------------------------------

BINLOG_IN_USE_OFFSET = 4 + 17  # the FDE's flags byte, right after the magic and its header


def store_file_bytes(store: BinlogStore, name: str) -> bytes:
    """A whole binlog file of ``store`` (magic included), as served."""
    data = bytearray(b"\xfebin")
    while chunk := store.read(name, len(data)):
        data += chunk
    return bytes(data)


def as_sent(data: bytes) -> bytes:
    """A binlog file as a primary's dump sends its FORMAT_DESCRIPTION: with the in-use flag of
    the file being written cleared (a real MariaDB does so too; its CRC is taken with the flag
    clear, so nothing else changes)."""
    out = bytearray(data)
    out[BINLOG_IN_USE_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
    return bytes(out)
