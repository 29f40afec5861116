"""python-mysql-replication's ``BinLogStreamReader`` reads a stream served by the fake master.

The stream (``tests/support/streams.py``) has TABLE_MAPs with FULL optional metadata and the
fake master answers ``SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA'`` with FULL, which is what the
library needs to name the columns (without it every column is ``UNKNOWN_COL<n>``). It spans
three files: a ROTATE, then a primary restart (STOP event).

The reader starts by GTID (``auto_position``, ``is_mariadb=True``) or by file and position
(``log_file``/``log_pos`` with ``resume_stream=True``; the library sends those only with
``is_mariadb=False``, which MariaDB primaries serve as well), blocking (events appended while it
reads must arrive) or not (the dump ends with EOF at the end of the binlog). Every ROWS event it
returns must carry exactly the rows served, in order, with the values converted as the library
documents; the GTIDs, statements, rotations and restarts must be the served ones.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import (
    MariadbGtidEvent,
    NotImplementedEvent,
    QueryEvent,
    RotateEvent,
    StopEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.columns import STRING_REAL_ENUM, STRING_REAL_SET
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from tests.support.streams import Column, ServedGroup, TypedStream, table_by_name

USER, PASSWORD = "repl", "pw"
SERVER_ID = 100
READ_TIMEOUT = 60.0  # bounds a hang: a slow machine only makes the reader slower
KINDS = {WriteRowsEvent: "write", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}


@pytest.fixture
def served() -> Iterator[tuple[TypedStream, BackgroundFakeMaster]]:
    store = MemoryBinlogStore(server_id=SERVER_ID)
    # python-mysql-replication 1.0.17 misreads negative TIME2 values that have a fraction
    # (-12:34:56.78 comes back as -12:34:56.22: its __read_time2 negates the whole seconds and
    # adds the fraction bytes as they are), so the negative times here are whole seconds.
    stream = TypedStream(store, full_metadata=True, negative_time_fractions=False)
    stream.create_schema()
    stream.add_batches(4)
    stream.rotate()
    stream.add_batches(2)
    stream.restart()
    stream.add_batch()
    config = ServerConfig(
        server_id=SERVER_ID,
        user=USER,
        password=PASSWORD,
        variables={"binlog_row_metadata": "FULL"},
    )
    with BackgroundFakeMaster(config, store) as master:
        yield stream, master
        assert master.errors == []


# --- the library's value conversions ------------------------------------------------------


def pmr_value(column: Column, value: Any) -> Any:
    """What python-mysql-replication returns for a value the encoder wrote."""
    if value is None:
        return None
    spec = column.spec
    kind = spec.column_type
    if kind == ColumnType.DATETIME2:
        assert isinstance(value, DateTime)
        return value.to_datetime()
    if kind == ColumnType.DATE:
        assert isinstance(value, Date)
        return value.to_date()
    if kind == ColumnType.TIMESTAMP2:
        assert isinstance(value, Timestamp)
        return value.to_datetime().replace(tzinfo=None)  # naive UTC
    if kind == ColumnType.TIME2:
        assert isinstance(value, Time)
        return value.to_timedelta()
    if kind == ColumnType.BIT:
        bits = (spec.meta >> 8) * 8 + (spec.meta & 0xFF)
        return format(value, f"0{bits}b")
    if kind == ColumnType.STRING and spec.meta & 0xFF == STRING_REAL_ENUM:
        return spec.members[value - 1].decode() if value else ""
    if kind == ColumnType.STRING and spec.meta & 0xFF == STRING_REAL_SET:
        labels = {m.decode() for i, m in enumerate(spec.members) if value >> i & 1}
        return labels or None  # the library's empty SET is None
    if kind in (ColumnType.STRING, ColumnType.VARCHAR):
        return value.decode("latin1" if spec.collation == 8 else "utf-8")
    return value


def pmr_row(table: str, row: tuple[Any, ...]) -> dict[str, Any]:
    columns = table_by_name(table).columns
    return {c.name: pmr_value(c, v) for c, v in zip(columns, row, strict=True)}


def expected_rows(groups: list[ServedGroup]) -> list[tuple[str, str, list[Any]]]:
    out = []
    for group in groups:
        for served in group.rows:
            rows: list[Any]
            if served.kind == "update":
                rows = [
                    (pmr_row(served.table, b), pmr_row(served.table, a)) for b, a in served.rows
                ]
            else:
                rows = [pmr_row(served.table, row) for row in served.rows]
            out.append((served.kind, served.table, rows))
    return out


def returned_rows(events: list[Any]) -> list[tuple[str, str, list[Any]]]:
    out = []
    for event in events:
        if isinstance(event, RowsEvent):
            kind = KINDS[type(event)]
            rows: list[Any]
            if kind == "update":
                rows = [(r["before_values"], r["after_values"]) for r in event.rows]
            else:
                rows = [r["values"] for r in event.rows]
            out.append((kind, event.table, rows))
    return out


# --- reading ------------------------------------------------------------------------------


@dataclass
class Reader:
    """Reads a BinLogStreamReader in a thread, so that a reader stuck waiting for an event that
    never comes fails the test (after ``READ_TIMEOUT``) instead of hanging it."""

    stream: BinLogStreamReader
    master: BackgroundFakeMaster

    def __post_init__(self) -> None:
        self.events: list[Any] = []

    def read_until(self, file_name: str | None, position: int | None) -> None:
        """Events until the reader is at (file_name, position), or until the dump's EOF when
        that is None."""
        failure: list[BaseException] = []

        def read() -> None:
            try:
                while True:
                    event = self.stream.fetchone()
                    if event is None:
                        return
                    self.events.append(event)
                    if file_name is not None and (
                        self.stream.log_file,
                        self.stream.log_pos,
                    ) == (file_name, position):
                        return
            except BaseException as error:  # handed to the test thread
                failure.append(error)

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        thread.join(READ_TIMEOUT)
        if failure:
            raise failure[0]
        assert not thread.is_alive(), (
            f"no event at {file_name}:{position} within {READ_TIMEOUT}s; the reader is at"
            f" {self.stream.log_file}:{self.stream.log_pos} after {len(self.events)} events;"
            f" fake master errors: {self.master.errors!r}"
        )


@pytest.mark.parametrize("blocking", [False, True], ids=["non_blocking", "blocking"])
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_binlog_stream_reader_reads_every_event(
    mode: str, blocking: bool, served: tuple[TypedStream, BackgroundFakeMaster]
) -> None:
    stream, master = served
    store = stream.store
    # Start after the schema and the first batch: at the GTID position after it, or at the
    # position of the next group's GTID event.
    first = 5
    assert stream.groups[first].file_name == store.first_file()
    position: dict[str, Any]
    if mode == "gtid":
        position = {"auto_position": str(stream.groups[first - 1].gtid), "is_mariadb": True}
    else:
        position = {
            "log_file": stream.groups[first].file_name,
            "log_pos": stream.groups[first].start,
            "resume_stream": True,
            "is_mariadb": False,
        }
    reader = Reader(
        BinLogStreamReader(
            connection_settings={
                "host": master.host,
                "port": master.port,
                "user": USER,
                "password": PASSWORD,
            },
            server_id=7,
            blocking=blocking,
            **position,
        ),
        master,
    )
    try:
        last = stream.last
        reader.read_until(last.file_name if blocking else None, last.end if blocking else None)
        if blocking:  # and it follows what is appended while it waits
            stream.add_batches(2)
            stream.rotate()
            stream.add_batch()
            last = stream.last
            reader.read_until(last.file_name, last.end)
    finally:
        reader.stream.close()
    events = reader.events
    groups = stream.groups[first:]

    assert not [e for e in events if isinstance(e, NotImplementedEvent)]
    assert returned_rows(events) == expected_rows(groups)
    assert sum(len(rows) for _, _, rows in returned_rows(events)) > 20
    assert [e.gtid for e in events if isinstance(e, MariadbGtidEvent)] == [
        str(g.gtid) for g in groups
    ]
    statements = [e.query for e in events if isinstance(e, QueryEvent)]
    assert statements == [s.decode() for g in groups for s in g.statements]
    table_maps = [e for e in events if isinstance(e, TableMapEvent)]
    assert len(table_maps) == len(returned_rows(events))
    # Each file starts with a fake ROTATE (timestamp 0) naming it; real ROTATEs end files.
    rotates = [e for e in events if isinstance(e, RotateEvent)]
    assert [e.next_binlog for e in rotates if e.timestamp == 0] == store.file_names()
    assert [e.next_binlog for e in rotates if e.timestamp != 0] == stream.rotations
    assert len([e for e in events if isinstance(e, StopEvent)]) == len(stream.restarts)
    # Non-blocking, it reads to the end (past the BINLOG_CHECKPOINT after a new file's first
    # group); blocking, it stopped reading at the last group.
    at_end = store.master_status() if not blocking else (last.file_name, last.end)
    assert (reader.stream.log_file, reader.stream.log_pos) == at_end
