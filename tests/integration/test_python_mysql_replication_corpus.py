"""python-mysql-replication reads a real corpus from the fake master as from the real primary.

A real MariaDB 10.11 started by the harness with ``binlog_row_metadata`` FULL, MINIMAL or
NO_LOG runs the codec workload (``tests/peers/workload.py``: every column type, BIGINT
UNSIGNED, utf8mb4 and latin1 strings, ENUM/SET, JSON, ...). ``BinLogStreamReader``, with the
same options, then reads the whole binlog from the primary and from the fake master serving the
primary's binlog directory (``DirectoryBinlogStore``; once through the real ``python3 -m
fakemaster serve --binlog-dir``). Every event, every decoded row (values and column names) and
every decoding failure must be the same. The library only reads the TABLE_MAP metadata when
``SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA'`` says FULL: with FULL there must be no failure and
the real column names; with the others both sides fail alike (``UNKNOWN_COL<n>`` names, latin1
bytes that are not UTF-8).

The variables clients read must be the primary's too: ``SELECT @@version, @@binlog_checksum,
...`` on both (``max_allowed_packet``: the primary runs with MariaDB's default 16M, which the
fake master's value must equal and which must cover the largest event), and the handshake's
server version.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import (
    FormatDescriptionEvent,
    GtidEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    UserVarEvent,
    XidEvent,
)
from pymysqlreplication.row_event import RowsEvent, TableMapEvent, UpdateRowsEvent

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import DirectoryBinlogStore
from tests.fakemaster.cli.test_serve_cli import serve
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.workload import DATABASE, WorkloadResult, run_codec_workload

SETTINGS = ["FULL", "MINIMAL", "NO_LOG"]
VARIABLES = (
    "version",
    "version_comment",
    "binlog_checksum",
    "server_id",
    "log_slave_updates",
    "character_set_server",
    "collation_server",
    "binlog_row_metadata",
    "max_allowed_packet",
    "binlog_format",
)
PRIMARY_SERVER_ID = 11
MARIADB_DEFAULT_MAX_ALLOWED_PACKET = 16 << 20
READ_TIMEOUT = 300.0
# What python-mysql-replication 1.0.17 fails to decode whatever the server tells it: MariaDB
# 5.3's TIME/DATETIME/TIMESTAMP format (ValueError) and UTF-32 text (decoded as little-endian).
LIBRARY_LIMITS = {("t_temporal_old", "ValueError"), ("t_charset", "UnicodeDecodeError")}


@dataclass
class Primary:
    server: MariaDBServer
    truth: WorkloadResult
    events: list[tuple[Any, ...]]
    variables: tuple[Any, ...]
    handshake_version: str


@pytest.fixture(scope="module", params=SETTINGS)
def primary(request: pytest.FixtureRequest) -> Iterator[Primary]:
    """A running primary that ran the workload with binlog_row_metadata=<param>, and what
    python-mysql-replication read from it."""
    require_mariadb()
    options = {
        "binlog_row_metadata": request.param,
        "max_allowed_packet": MARIADB_DEFAULT_MAX_ALLOWED_PACKET,
    }
    server = MariaDBServer(options, server_id=PRIMARY_SERVER_ID)
    try:
        server.start()
        truth = run_codec_workload(server)
        events = read_stream(server.host, server.port, truth.binlog_files[0])
        yield Primary(
            server,
            truth,
            events,
            select_variables(server.host, server.port),
            handshake_version(server.host, server.port),
        )
    finally:
        server.close()


# --- reading --------------------------------------------------------------------------------


def read_stream(host: str, port: int, first_file: str) -> list[tuple[Any, ...]]:
    """Every event of the binlog as BinLogStreamReader returns it (non-blocking, from the
    first file), each reduced to what the library decoded: rows events to their table, column
    names and rows, or to the exception decoding them raised."""
    reader = BinLogStreamReader(
        connection_settings={"host": host, "port": port, "user": "root", "password": ""},
        server_id=4321,
        blocking=False,
        log_file=first_file,
        log_pos=4,
        resume_stream=True,
        is_mariadb=False,
        # python-mysql-replication 1.0.17 decodes a USER_VAR's value as UTF-8 and stops on the
        # binary one the workload logs (from the real primary as well): both readers skip them.
        ignored_events=[UserVarEvent],
    )
    events: list[tuple[Any, ...]] = []
    failure: list[BaseException] = []

    def read() -> None:
        try:
            for event in reader:
                events.append(summary(event))
        except BaseException as error:  # handed to the test thread
            failure.append(error)

    thread = threading.Thread(target=read, daemon=True)
    try:
        thread.start()
        thread.join(READ_TIMEOUT)
    finally:
        reader.close()
    if failure:
        raise failure[0]
    assert not thread.is_alive(), f"the reader did not reach the end after {len(events)} events"
    return events


def summary(event: Any) -> tuple[Any, ...]:
    head = (type(event).__name__, event.timestamp, event.packet.log_pos, event.event_size)
    if isinstance(event, RowsEvent):
        try:
            rows = event.rows
        except Exception as error:  # what the library fails with is compared too
            return (*head, event.schema, event.table, "failed", type(error).__name__)
        names = [column.name for column in event.columns]
        return (*head, event.schema, event.table, names, rows_of(event, rows))
    if isinstance(event, TableMapEvent):
        names = [column.name for column in event.columns]
        return (*head, event.schema, event.table, names)
    if isinstance(event, QueryEvent):
        return (*head, event.schema, event.query)
    if isinstance(event, MariadbGtidEvent | GtidEvent):
        return (*head, str(event.gtid))
    if isinstance(event, RotateEvent):
        return (*head, event.next_binlog, event.position)
    if isinstance(event, XidEvent):
        return (*head, event.xid)
    if isinstance(event, FormatDescriptionEvent):
        return (*head, event.mysql_version_str)
    return head


def rows_of(event: RowsEvent, rows: list[dict[str, Any]]) -> list[Any]:
    if isinstance(event, UpdateRowsEvent):
        return [(row["before_values"], row["after_values"]) for row in rows]
    return [row["values"] for row in rows]


def select_variables(host: str, port: int) -> tuple[Any, ...]:
    conn = pymysql.connect(host=host, port=port, user="root", password="")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT " + ", ".join(f"@@{name}" for name in VARIABLES))
            row = cur.fetchone()
            cur.execute("SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA'")
            shown = cur.fetchone()
        assert row is not None and shown is not None
        return (*row, *shown)
    finally:
        conn.close()


def handshake_version(host: str, port: int) -> str:
    conn = pymysql.connect(host=host, port=port, user="root", password="")
    try:
        return str(conn.server_version)
    finally:
        conn.close()


# --- the comparisons --------------------------------------------------------------------------


def rows_events(events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [event for event in events if event[0].endswith("RowsEvent")]


def check_against_the_primary(primary: Primary, events: list[tuple[Any, ...]]) -> None:
    assert len(events) == len(primary.events)
    differences = [
        (index, mine, theirs)
        for index, (mine, theirs) in enumerate(zip(events, primary.events, strict=True))
        if mine != theirs
    ]
    assert differences == []
    assert len(rows_events(events)) > 40


@pytest.mark.mariadb
def test_the_corpus_reads_the_same_from_the_fake_master(primary: Primary) -> None:
    with (
        DirectoryBinlogStore(primary.server.binlog_dir) as store,
        BackgroundFakeMaster(ServerConfig(), store) as master,
    ):
        events = read_stream(master.host, master.port, primary.truth.binlog_files[0])
        assert master.errors == []
    check_against_the_primary(primary, events)
    setting = primary.variables[VARIABLES.index("binlog_row_metadata")]
    failed = {(event[5], event[7]) for event in rows_events(events) if event[6] == "failed"}
    if setting == "FULL":
        # What the FULL metadata is for: every row decodes, named as in the table, but for
        # what the library cannot decode from the real primary either.
        assert failed <= LIBRARY_LIMITS
        check_names_and_values(primary.truth, events)
    else:
        # The library ignores the metadata: columns are unnamed, latin1 text is not UTF-8.
        assert ("t_string", "UnicodeDecodeError") in failed
        decoded = [event for event in rows_events(events) if event[6] != "failed"]
        assert decoded and all(
            name.startswith("UNKNOWN_COL") for event in decoded for name in row_keys(event)
        )


def row_keys(event: tuple[Any, ...]) -> set[str]:
    """The column names the rows of a decoded rows event are keyed by."""
    keys: set[str] = set()
    for row in event[7]:
        for image in row if isinstance(row, tuple) else (row,):
            keys.update(image)
    return keys


def check_names_and_values(truth: WorkloadResult, events: list[tuple[Any, ...]]) -> None:
    for event in rows_events(events):
        schema, table, names = event[4], event[5], event[6]
        if schema == DATABASE and table in truth.tables and names != "failed":
            # The table as it ends, or before columns were added to it (ALTER TABLE ... ADD).
            final = truth.tables[table].column_names
            assert names == final[: len(names)], (schema, table, names, final)
    # BIGINT UNSIGNED comes back unsigned: the values the workload inserted (its SQL literals).
    inserted = {
        values["pk"]: values["biu"]
        for event in rows_events(events)
        if event[0] == "WriteRowsEvent" and (event[4], event[5]) == (DATABASE, "t_int")
        for values in event[7]
    }
    assert inserted[2] == 18446744073709551615
    assert inserted[3] == 9223372036854775808
    assert inserted[6] == 12345678901234567890


@pytest.mark.mariadb
def test_the_fake_master_reports_the_primary_s_variables(primary: Primary) -> None:
    with (
        DirectoryBinlogStore(primary.server.binlog_dir) as store,
        BackgroundFakeMaster(ServerConfig(), store) as master,
    ):
        variables = select_variables(master.host, master.port)
        version = handshake_version(master.host, master.port)
        largest = max(
            len(data) for name in store.file_names() for _, data in store.iter_events(name)
        )
    # version_comment is not in the binlog: the configured one stands (the comparison shows it).
    mine = dict(zip((*VARIABLES, "shown_name", "shown"), variables, strict=True))
    theirs = dict(zip((*VARIABLES, "shown_name", "shown"), primary.variables, strict=True))
    assert mine.pop("version_comment") == ServerConfig().version_comment
    theirs.pop("version_comment")
    assert mine == theirs
    assert mine["server_id"] == PRIMARY_SERVER_ID
    assert mine["max_allowed_packet"] >= largest + 1
    assert version == primary.handshake_version == "5.5.5-" + str(theirs["version"])


@pytest.mark.mariadb
@pytest.mark.parametrize("primary", ["FULL"], indirect=True)
def test_serve_binlog_dir_through_the_command_line(primary: Primary) -> None:
    with serve("--binlog-dir", str(primary.server.binlog_dir)) as served:
        events = read_stream(served.host, served.port, primary.truth.binlog_files[0])
        variables = select_variables(served.host, served.port)
        status, _stdout, stderr = served.stop()
    assert status == 0 and "internal error" not in stderr, stderr
    check_against_the_primary(primary, events)
    assert {(event[5], event[7]) for event in rows_events(events) if event[6] == "failed"} <= (
        LIBRARY_LIMITS
    )
    assert variables[VARIABLES.index("binlog_row_metadata")] == "FULL"
    assert variables[VARIABLES.index("server_id")] == PRIMARY_SERVER_ID
