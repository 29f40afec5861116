"""The built-in demo binlog that ``fakemaster serve`` serves when it is given no binlog files.

It is what a MariaDB 10.11 primary with ``binlog_row_metadata=FULL`` writes for
:data:`DEMO_STATEMENTS`: a database with two tables of mixed column types (INT, BIGINT UNSIGNED,
VARCHAR, TEXT, DECIMAL, DOUBLE, ENUM, DATETIME(6), TIMESTAMP(3), DATE), a few transactions of
inserts, updates and deletes (one touching both tables), DDL, and a rotation, so that
``mariadb-binlog --read-from-remote-server`` or a real replica shows something at once. The
events mirror the real server's byte for byte (status variables, TABLE_MAP metadata, row
images); only timestamps and XIDs are this process's own (``tests/fakemaster/cli/test_serve_cli.py``
compares them with a real server's binlog).

:class:`DemoWriter` writes the stream into a :class:`~fakemaster.store.MemoryBinlogStore` and,
for ``serve --demo-live``, appends one more order transaction per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from fakemaster.protocol.charsets import UTF8MB4_GENERAL_CI
from fakemaster.store import DEFAULT_SERVER_VERSION, AppendedGroup, MemoryBinlogStore
from fakemaster.vocabulary.constants import EventFlag, OptionalMetadata, QueryStatus, RowsFlag
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    DeleteRowsEvent,
    Event,
    MetadataField,
    QueryEvent,
    StatusVar,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)
from fakemaster.vocabulary.values import Date, DateTime, Timestamp

if TYPE_CHECKING:
    from fakemaster.vocabulary.events import RowImage, RowPair

__all__ = ["DEMO_DATABASE", "DEMO_STATEMENTS", "DemoTable", "DemoWriter", "demo_store"]

DEMO_DATABASE = "demo"
# The marker in DEMO_STATEMENTS where the binlog rotates (a real server: FLUSH BINARY LOGS).
ROTATE = "FLUSH BINARY LOGS"

CREATE_DATABASE = "CREATE DATABASE demo"
CREATE_CUSTOMERS = """CREATE TABLE demo.customers (
  id INT NOT NULL PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  email VARCHAR(255) NULL,
  balance DECIMAL(10,2) NOT NULL,
  created_at DATETIME(6) NOT NULL
)"""

CREATE_ORDERS = """CREATE TABLE demo.orders (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  customer_id INT NOT NULL,
  amount DOUBLE NOT NULL,
  status ENUM('new','paid','shipped') NOT NULL,
  note TEXT NULL,
  placed_at TIMESTAMP(3) NULL DEFAULT NULL,
  delivery DATE NULL
)"""

INSERT_CUSTOMERS = (
    "INSERT INTO demo.customers VALUES "
    "(1,'Ada Lovelace','ada@example.com',100.50,'2024-01-02 03:04:05.123456'),"
    "(2,'Grace Hopper',NULL,0,'2024-02-03 04:05:06'),"
    "(3,'Zoë Ünicode','zoe@example.com',-12.34,'2024-03-04 05:06:07.5')"
)
INSERT_ORDERS = (
    "INSERT INTO demo.orders VALUES "
    "(1,1,19.99,'new','first order','2024-04-05 06:07:08.901','2024-04-10'),"
    "(2,3,5.5,'paid',NULL,NULL,NULL)"
)
PAY_ORDER = "UPDATE demo.customers SET balance = balance - 19.99 WHERE id = 1"
SHIP_ORDER = "UPDATE demo.orders SET status='shipped', delivery='2024-04-09' WHERE id=1"
DELETE_CUSTOMER = "DELETE FROM demo.customers WHERE id=2"
ADD_INDEX = "ALTER TABLE demo.orders ADD INDEX by_customer (customer_id)"

# What the demo stream records, one entry per transaction (a tuple: several statements in one
# transaction), with ROTATE where the binlog rotates. Run with the session time zone UTC.
DEMO_STATEMENTS: tuple[str | tuple[str, ...], ...] = (
    CREATE_DATABASE,
    CREATE_CUSTOMERS,
    CREATE_ORDERS,
    INSERT_CUSTOMERS,
    (INSERT_ORDERS, PAY_ORDER),
    ROTATE,
    SHIP_ORDER,
    DELETE_CUSTOMER,
    ADD_INDEX,
)

# The session a MariaDB 10.11 client such as pymysql gets by default: these flags2, the default
# sql_mode, utf8mb4_general_ci for client, connection and server.
QUERY_FLAGS2 = 0x01000000
DEFAULT_SQL_MODE_BITS = 1411383296
THREAD_ID = 5


@dataclass(frozen=True)
class DemoTable:
    """A demo table as its TABLE_MAP (binlog_row_metadata=FULL) describes it."""

    table_id: int
    name: str
    column_types: tuple[int, ...]
    column_meta: tuple[int, ...]
    nullable: tuple[bool, ...]
    optional_metadata: tuple[MetadataField, ...]

    @property
    def width(self) -> int:
        return len(self.column_types)

    @property
    def all_columns(self) -> bytes:
        return ((1 << self.width) - 1).to_bytes((self.width + 7) // 8, "little")

    def table_map(self) -> TableMapEvent:
        return TableMapEvent(
            table_id=self.table_id,
            database=DEMO_DATABASE,
            table=self.name,
            column_types=self.column_types,
            column_meta=self.column_meta,
            nullable=self.nullable,
            optional_metadata=self.optional_metadata,
        )


def _names(*names: str) -> MetadataField:
    return MetadataField(OptionalMetadata.COLUMN_NAME, tuple(name.encode() for name in names))


_DEFAULT_CHARSET = MetadataField(OptionalMetadata.DEFAULT_CHARSET, (UTF8MB4_GENERAL_CI, ()))
_PRIMARY_KEY_FIRST = MetadataField(OptionalMetadata.SIMPLE_PRIMARY_KEY, (0,))

CUSTOMERS = DemoTable(
    table_id=18,
    name="customers",
    # INT, VARCHAR(64), VARCHAR(255), DECIMAL(10,2), DATETIME(6)
    column_types=(3, 15, 15, 246, 18),
    # Meta bytes read little-endian: VARCHAR max bytes (4 per utf8mb4 character); DECIMAL
    # precision, then scale.
    column_meta=(0, 256, 1020, 2 << 8 | 10, 6),
    nullable=(False, False, True, False, False),
    optional_metadata=(
        MetadataField(OptionalMetadata.SIGNEDNESS, (False, False)),  # the numeric columns
        _DEFAULT_CHARSET,
        _names("id", "name", "email", "balance", "created_at"),
        _PRIMARY_KEY_FIRST,
    ),
)

ORDERS = DemoTable(
    table_id=22,
    name="orders",
    # BIGINT, INT, DOUBLE, ENUM (as STRING), TEXT (BLOB), TIMESTAMP(3), DATE
    column_types=(8, 3, 5, 254, 252, 17, 10),
    # ENUM: real type 0xF7, then 1 byte per value; DOUBLE: 8 bytes; TEXT: 2 length bytes;
    # TIMESTAMP(3): fsp.
    column_meta=(0, 0, 8, 1 << 8 | 0xF7, 2, 3, 0),
    nullable=(False, False, False, False, True, True, True),
    optional_metadata=(
        MetadataField(OptionalMetadata.SIGNEDNESS, (True, False, False)),  # id is UNSIGNED
        _DEFAULT_CHARSET,
        _names("id", "customer_id", "amount", "status", "note", "placed_at", "delivery"),
        MetadataField(OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET, (UTF8MB4_GENERAL_CI, ())),
        MetadataField(OptionalMetadata.ENUM_STR_VALUE, ((b"new", b"paid", b"shipped"),)),
        _PRIMARY_KEY_FIRST,
    ),
)

ADA = (
    1,
    b"Ada Lovelace",
    b"ada@example.com",
    Decimal("100.50"),
    DateTime(2024, 1, 2, 3, 4, 5, 123456),
)
GRACE = (2, b"Grace Hopper", None, Decimal("0.00"), DateTime(2024, 2, 3, 4, 5, 6))
ZOE = (
    3,
    "Zoë Ünicode".encode(),
    b"zoe@example.com",
    Decimal("-12.34"),
    DateTime(2024, 3, 4, 5, 6, 7, 500000),
)
ADA_PAID = ADA[:3] + (Decimal("80.51"),) + ADA[4:]
FIRST_ORDER = (1, 1, 19.99, 1, b"first order", Timestamp(1712297228, 901000), Date(2024, 4, 10))
SECOND_ORDER = (2, 3, 5.5, 2, None, None, None)
FIRST_ORDER_SHIPPED = FIRST_ORDER[:3] + (3,) + FIRST_ORDER[4:6] + (Date(2024, 4, 9),)

# Live orders go to the customers still there.
LIVE_CUSTOMER_IDS = (1, 3)


def ddl_query(query: str, *, xid: int | None, database: str = "", flags: int = 0) -> QueryEvent:
    """A DDL statement's QUERY event as a MariaDB 10.11 primary logs it (``xid``: the Q_XID
    status variable of DDL that is logged with an XID, None for statements that are not)."""
    status = [
        StatusVar(QueryStatus.FLAGS2, QUERY_FLAGS2),
        StatusVar(QueryStatus.SQL_MODE, DEFAULT_SQL_MODE_BITS),
        StatusVar(QueryStatus.CATALOG_NZ, b"std"),
        StatusVar(QueryStatus.CHARSET, (UTF8MB4_GENERAL_CI,) * 3),
    ]
    if xid is not None:
        status.append(StatusVar(QueryStatus.XID, xid))
    return QueryEvent(
        flags=flags,
        thread_id=THREAD_ID,
        status_vars=tuple(status),
        database=database,
        query=query.encode(),
    )


def row_statement(query: str, table: DemoTable, rows_event: Event) -> list[Event]:
    """The events of one row-based statement: ANNOTATE_ROWS, TABLE_MAP, the rows event."""
    return [AnnotateRowsEvent(query=query.encode()), table.table_map(), rows_event]


def write_rows(table: DemoTable, rows: Sequence[RowImage]) -> WriteRowsEvent:
    return WriteRowsEvent(
        table_id=table.table_id,
        rows_flags=RowsFlag.STMT_END,
        width=table.width,
        columns_present=table.all_columns,
        rows=tuple(rows),
    )


def update_rows(table: DemoTable, rows: Sequence[RowPair]) -> UpdateRowsEvent:
    return UpdateRowsEvent(
        table_id=table.table_id,
        rows_flags=RowsFlag.STMT_END,
        width=table.width,
        columns_present=table.all_columns,
        columns_present_after=table.all_columns,
        rows=tuple(rows),
    )


def delete_rows(table: DemoTable, rows: Sequence[RowImage]) -> DeleteRowsEvent:
    return DeleteRowsEvent(
        table_id=table.table_id,
        rows_flags=RowsFlag.STMT_END,
        width=table.width,
        columns_present=table.all_columns,
        rows=tuple(rows),
    )


def _sql_timestamp(value: Timestamp) -> str:
    moment = time.gmtime(value.seconds)
    return time.strftime("%Y-%m-%d %H:%M:%S", moment) + f".{value.microsecond // 1000:03d}"


class DemoWriter:
    """Writes the demo stream into a store, and live orders after it."""

    def __init__(self, store: MemoryBinlogStore, *, first_xid: int = 7) -> None:
        self.store = store
        self._xid = first_xid
        self.next_order_id = 3

    def _next_xid(self) -> int:
        xid = self._xid
        self._xid += 1
        return xid

    def _commit(self, events: list[Event]) -> AppendedGroup:
        return self.store.append_transaction([*events, XidEvent(xid=self._next_xid())])

    def write_all(self) -> None:
        """The whole demo stream (see the module docstring)."""
        store = self.store
        # CREATE DATABASE names its database with SUPPRESS_USE and is logged without an XID.
        create = ddl_query(
            CREATE_DATABASE, xid=None, database=DEMO_DATABASE, flags=EventFlag.SUPPRESS_USE
        )
        store.append_transaction([create])
        store.append_transaction([ddl_query(CREATE_CUSTOMERS, xid=self._next_xid())])
        store.append_transaction([ddl_query(CREATE_ORDERS, xid=self._next_xid())])
        self._commit(
            row_statement(INSERT_CUSTOMERS, CUSTOMERS, write_rows(CUSTOMERS, [ADA, GRACE, ZOE]))
        )
        self._commit(
            row_statement(INSERT_ORDERS, ORDERS, write_rows(ORDERS, [FIRST_ORDER, SECOND_ORDER]))
            + row_statement(PAY_ORDER, CUSTOMERS, update_rows(CUSTOMERS, [(ADA, ADA_PAID)]))
        )
        store.rotate()
        self._commit(
            row_statement(
                SHIP_ORDER, ORDERS, update_rows(ORDERS, [(FIRST_ORDER, FIRST_ORDER_SHIPPED)])
            )
        )
        self._commit(row_statement(DELETE_CUSTOMER, CUSTOMERS, delete_rows(CUSTOMERS, [GRACE])))
        store.append_transaction([ddl_query(ADD_INDEX, xid=self._next_xid())])

    def append_live_order(self, now: float | None = None) -> AppendedGroup:
        """One more transaction: INSERT of the next order, placed ``now`` (what
        ``serve --demo-live`` adds)."""
        order_id = self.next_order_id
        self.next_order_id += 1
        moment = time.time() if now is None else now
        placed = Timestamp(int(moment), int(moment * 1000) % 1000 * 1000)
        customer = LIVE_CUSTOMER_IDS[order_id % len(LIVE_CUSTOMER_IDS)]
        amount = round(2.5 + (order_id * 7.25) % 90, 2)
        note = f"live order {order_id}"
        query = (
            f"INSERT INTO demo.orders VALUES ({order_id},{customer},{amount},'new',"
            f"'{note}','{_sql_timestamp(placed)}',NULL)"
        )
        row = (order_id, customer, amount, 1, note.encode(), placed, None)  # 1: 'new'
        return self._commit(row_statement(query, ORDERS, write_rows(ORDERS, [row])))


def demo_store(
    *,
    server_id: int = 1,
    server_version: str | None = None,
    checksum: bool = True,
    domain_id: int = 0,
    clock: Callable[[], float] = time.time,
) -> tuple[MemoryBinlogStore, DemoWriter]:
    """A memory store holding the demo stream, and the writer for live orders. ``clock`` gives
    the events' timestamps (a fixed one makes the stream the same bytes on every call)."""
    store = MemoryBinlogStore(
        server_id=server_id,
        server_version=server_version or DEFAULT_SERVER_VERSION,
        checksum=checksum,
        domain_id=domain_id,
        clock=clock,
    )
    writer = DemoWriter(store)
    writer.write_all()
    return store, writer
