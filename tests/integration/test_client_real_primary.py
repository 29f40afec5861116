"""The project's replica client against a real MariaDB 10.11 primary running a workload: the
change events it hands over, applied to empty tables, give the primary's tables, by GTID and
by file/position, with the column names from FULL row metadata or from a catalogue; a second
client started from the first one's position gets exactly the transactions after it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.changes import DDL, DELETE, INSERT, ChangeEvent
from fakemaster.client.position import Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind, Where
from fakemaster.faults.proxy import BackgroundFaultProxy
from tests.peers.binlog_scan import iter_event_headers
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer

USER, PASSWORD = "repl", "pw"
TABLES = {
    "w.items": ["id", "name", "price", "qty", "note"],
    "w.log": ["id", "what"],
}
SCHEMA = [
    "CREATE DATABASE w",
    "CREATE TABLE w.items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2),"
    " qty INT UNSIGNED, note TEXT)",
    "CREATE TABLE w.log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(100))",
]


def workload(primary: MariaDBServer, first: int, count: int) -> None:
    statements: list[str] = []
    for n in range(first, first + count):
        statements += [
            "BEGIN",
            f"INSERT INTO w.items VALUES ({n}, 'item{n}', {n}.25, {4000000000 + n}, "
            f"REPEAT('n', {n % 7 * 50}))",
            f"INSERT INTO w.log (what) VALUES ('added {n}')",
            "COMMIT",
        ]
        if n % 3 == 0:
            statements.append(f"UPDATE w.items SET qty = qty - 1, note = NULL WHERE id = {n - 1}")
        if n % 4 == 0:
            statements.append(f"DELETE FROM w.items WHERE id = {n - 2}")
        if n % 9 == 0:
            statements.append("FLUSH BINARY LOGS")
    statements.append("UPDATE w.items SET price = price * 2 WHERE id % 2 = 0")
    primary.execute(statements)


def normal(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    if isinstance(value, Decimal):
        return str(value)
    return value


class KeyedTables:
    """Rows by primary key (``id``) per table, changed by change events."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in TABLES}

    def apply(self, change: ChangeEvent) -> None:
        if change.operation == DDL:  # the setup's CREATE USER/DATABASE/TABLE: no rows
            assert change.statement and change.before is None and change.after is None
            return
        rows = self.rows[change.qualified]
        if change.operation == INSERT:
            assert change.after is not None
            assert change.after["id"] not in rows, f"insert of an existing row: {change}"
            rows[change.after["id"]] = dict(change.after)
            return
        assert change.before is not None
        key = change.before["id"]
        assert key in rows, f"{change.operation} of a missing row: {change}"
        if change.operation == DELETE:
            del rows[key]
            return
        assert change.after is not None
        rows.pop(key)
        rows[change.after["id"]] = {**dict(change.before), **dict(change.after)}

    def table(self, name: str) -> list[tuple[Any, ...]]:
        return [
            tuple(normal(row.get(column)) for column in TABLES[name])
            for _key, row in sorted(self.rows[name].items())
        ]


def primary_table(primary: MariaDBServer, name: str) -> list[tuple[Any, ...]]:
    rows = primary.execute(f"SELECT {', '.join(TABLES[name])} FROM {name} ORDER BY id")
    return [tuple(normal(value) for value in row) for row in rows]


def started_primary(factory: MariaDBFactory, metadata: str) -> MariaDBServer:
    primary = factory({"binlog_format": "ROW", "binlog_row_metadata": metadata}, server_id=1)
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(SCHEMA)
    return primary


def run_client(
    primary: MariaDBServer, config: ClientConfig, start: Position | None, tables: KeyedTables
) -> BlockingReplica:
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    client = BlockingReplica(
        primary.host,
        primary.port,
        config,
        start=start,
        until=lambda p: p.covers(goal),
        catalogue=TABLES,
    )
    with client:
        for change in client.changes():
            tables.apply(change)
    return client


def only_checkpoints_after(primary: MariaDBServer, name: str, position: int) -> bool:
    """Whether ``position`` starts an event of the primary's file ``name`` (or is its end) and
    every event from there to the end of the file is a BINLOG_CHECKPOINT: MariaDB writes those
    asynchronously after commits, so the end of the file (SHOW MASTER STATUS) may be past the
    last committed group by one or more of them when the client stops."""
    path = next(path for path in primary.binlog_files() if path.name == name)
    headers = list(iter_event_headers(path))
    starts = {header.pos for header in headers}
    end = headers[-1].pos + headers[-1].event_length if headers else 4
    after = [header.type_name for header in headers if header.pos >= position]
    return (position in starts or position == end) and set(after) <= {"BINLOG_CHECKPOINT"}


@pytest.mark.mariadb
@pytest.mark.parametrize(
    ("mode", "metadata", "checksum"),
    [("gtid", "FULL", True), ("file_pos", "MINIMAL", True), ("gtid", "MINIMAL", False)],
)
def test_client_ends_with_a_real_primarys_tables_and_resumes_from_its_position(
    mariadb_factory: MariaDBFactory, mode: str, metadata: str, checksum: bool
) -> None:
    """(checksum False: the client asks the primary, whose binlog has CRC32, for none.)"""
    primary = started_primary(mariadb_factory, metadata)
    workload(primary, 1, 20)
    config = ClientConfig(
        user=USER, password=PASSWORD, server_id=42, gtid_mode=mode == "gtid", checksum=checksum
    )
    tables = KeyedTables()
    first = run_client(primary, config, None, tables)
    for name in TABLES:
        assert tables.table(name) == primary_table(primary, name), name
    assert first.errors == [] and first.ready is not None
    assert first.ready.checksum is checksum
    assert first.ready.master_server_id == 1
    # The primary agrees: the GTID position at the client's file/position is its GTIDs (the
    # end of the binlog may have a BINLOG_CHECKPOINT after them, written when InnoDB is done).
    where = primary.query_one(
        f"SELECT binlog_gtid_pos('{first.position.file}', {first.position.position})"
    )
    assert where == first.position.gtid_text == primary.query_one("SELECT @@gtid_binlog_pos")
    assert first.position.file == primary.master_status()[0]
    assert only_checkpoints_after(primary, first.position.file, first.position.position)
    # More work on the primary; a new client from the first one's position gets just that.
    workload(primary, 21, 10)
    second = run_client(primary, config, first.position, tables)
    for name in TABLES:
        assert tables.table(name) == primary_table(primary, name), name
    assert second.position.gtid_text == primary.query_one("SELECT @@gtid_binlog_pos")


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_client_resumes_through_faults_in_front_of_a_real_primary(
    mariadb_factory: MariaDBFactory, mode: str
) -> None:
    """The fault proxy in front of the real primary: an RST 20 bytes into an event in the
    middle of a transaction, a corrupted CRC on the reconnect, a blackhole on the one after;
    the client ends with the primary's tables, each change applied once."""
    primary = started_primary(mariadb_factory, "FULL")
    workload(primary, 1, 20)
    tx = PointKind.TRANSACTION
    plan = FaultPlan(
        (
            Fault(FaultKind.CUT, Point(tx, 6, Where.INSIDE, 2, into=20), 0, {"close": "rst"}),
            Fault(FaultKind.CORRUPT_CRC, Point(tx, 3, Where.INSIDE, 1), 1),
            Fault(FaultKind.BLACKHOLE, Point(tx, 2, Where.INSIDE, 2), 2),
        )
    )
    config = ClientConfig(
        user=USER,
        password=PASSWORD,
        server_id=42,
        gtid_mode=mode == "gtid",
        net_timeout=1.0,
        heartbeat_period=0.25,
    )
    tables = KeyedTables()
    goal = Position.from_gtids(str(primary.query_one("SELECT @@gtid_binlog_pos")))
    with BackgroundFaultProxy((primary.host, primary.port), plan) as proxy:
        client = BlockingReplica(
            proxy.host, proxy.port, config, until=lambda p: p.covers(goal), catalogue=TABLES
        )
        with client:
            for change in client.changes():
                tables.apply(change)
        applied = [a.fault for engine in proxy.engines for a in engine.applied]
    assert applied == list(plan.faults)
    for name in TABLES:
        assert tables.table(name) == primary_table(primary, name), name
    assert client.connections == 4
    assert [type(error).__name__ for error in client.errors] == [
        "ConnectionLost",
        "ProtocolError",
        "ConnectionLost",
    ]
