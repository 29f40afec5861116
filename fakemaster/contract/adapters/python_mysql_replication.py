"""A CDC client on python-mysql-replication (1.0.x), as a contract-test adapter::

    python -m fakemaster.contract.adapters.python_mysql_replication HOST PORT OUT

It starts from the snapshot's tables, dumps by file and position (non-blocking) from the first
file, applies each transaction when its XID arrives and remembers the position after it (the
last *committed* position). After a fault (a lost connection, a read timeout, an event whose
CRC32 does not match, an EOF before the end) it discards the unfinished transaction and
reconnects from that position; an event at or before a position it already read (a resend) is
skipped. It stops when its position equals ``SHOW MASTER STATUS``, and writes its change log and
final tables in the JSON-lines form (exactly-once).

Values are turned into the oracle's canonical text from the types python-mysql-replication
returns and the TABLE_MAP's column types. Known limits of python-mysql-replication 1.0.17 (the
cases show them): it cannot read compressed rows events (log_bin_compress: the ``compressed``
cases fail); worked around here: it returns BIT values as text of '0'/'1', misreads negative
TIME(n) values with a fraction (undone), returns an empty binary string as '' and BINARY(n)
without its trailing zero bytes, and gives None for zero dates and for columns a MINIMAL
image leaves out (told apart here by its ``none_sources``: a date out of its range is taken as
the zero date). Row images of a MINIMAL insert have
only the given columns: this client cannot fill in the defaults.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fakemaster.contract.adapter import OutputWriter, read_snapshot

__all__ = ["Flaw", "main", "replicate"]

Cells = dict[str, str | None]
Flaw = str  # "", "drop-after-reconnect", "reapply-after-reconnect"
MAX_CONNECTIONS = 50


class _Fault(Exception):
    """The stream is unusable from here (a damaged event)."""


class _LibraryReconnect(Exception):
    """python-mysql-replication reconnects by itself after a lost connection (errors 2013 and
    2006), from the last event it read, which may be inside a transaction; this client
    resumes from its last committed position instead, so it stops the library's reconnect."""


def _connect_once() -> Any:
    """A ``pymysql_wrapper`` that makes one stream connection and refuses a second."""
    import pymysql  # type: ignore[import-untyped]

    made = 0

    def connect(**settings: Any) -> Any:
        nonlocal made
        if "db" not in settings:  # the stream connection (the control one names a database)
            made += 1
            if made > 1:
                raise _LibraryReconnect("the connection was lost")
        return pymysql.connect(**settings)

    return connect


def _time_text(value: _dt.timedelta, fsp: int) -> str:
    total = value.days * 86400_000000 + value.seconds * 1_000000 + value.microseconds
    sign = "-" if total < 0 else ""
    total = abs(total)
    seconds, micro = divmod(total, 1_000000)
    hours, rest = divmod(seconds, 3600)
    text = f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return text + (f".{micro:06d}"[: fsp + 1] if fsp else "")


def _time2_fix(value: _dt.timedelta) -> _dt.timedelta:
    """python-mysql-replication 1.0.17 reads a negative TIME2 with a fraction f as
    -(whole seconds + (1 - f)) (it takes the stored complement of the fraction as it is:
    -838:59:58.999999 comes back as -838:59:58.000001); this undoes it."""
    total = value // _dt.timedelta(microseconds=1)
    if total >= 0 or not total % 1_000000:
        return value
    whole, complement = divmod(-total, 1_000000)
    return -_dt.timedelta(seconds=whole, microseconds=1_000000 - complement)


def cell(value: Any, column: Any) -> str | None:
    """python-mysql-replication's value of ``column`` as the oracle's canonical text."""
    from pymysqlreplication.constants import FIELD_TYPE  # type: ignore[import-untyped]

    from scenarios.text import format_double, format_float

    kind = column.type
    if value is None:
        return None
    if kind == FIELD_TYPE.BIT and isinstance(value, str):
        return str(int(value, 2)) if value else "0"
    if kind == FIELD_TYPE.YEAR:
        return f"{int(value) if int(value) != 1900 else 0:04d}"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return format_float(value) if kind == FIELD_TYPE.FLOAT else format_double(value)
    if isinstance(value, set):
        return ",".join(member for member in column.set_values or () if member in value)
    fsp = int(getattr(column, "fsp", 0) or 0)
    if isinstance(value, _dt.datetime):
        text = (
            f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
            f" {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        )
        return text + (f".{value.microsecond:06d}"[: fsp + 1] if fsp else "")
    if isinstance(value, _dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if isinstance(value, _dt.timedelta):
        if kind == FIELD_TYPE.TIME2:
            value = _time2_fix(value)
        return _time_text(value, fsp)
    binary = getattr(column, "character_set_name", None) == "binary"
    if binary and value == "":
        value = b""  # the library returns an empty binary string as ''
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
        if kind == FIELD_TYPE.STRING and binary:
            # BINARY(n): the binlog drops trailing zero bytes, as it drops CHAR's spaces.
            data = data.ljust(int(getattr(column, "max_length", 0) or 0), b"\0")
        return "0x" + data.hex().upper()
    return str(value)


def _image(
    values: Mapping[str, Any], none_sources: Mapping[str, str], columns: Sequence[Any]
) -> Cells:
    from pymysqlreplication.constants import NONE_SOURCE

    out: Cells = {}
    for column in columns:
        name = column.name
        value = values.get(name)
        source = none_sources.get(name, "") if value is None else ""
        fsp = int(getattr(column, "fsp", 0) or 0)
        if source == NONE_SOURCE.COLS_BITMAP:
            continue  # not in this image (binlog_row_image MINIMAL / NOBLOB)
        if source == NONE_SOURCE.EMPTY_SET:
            out[name] = ""
        elif source == NONE_SOURCE.OUT_OF_DATE_RANGE:
            out[name] = "0000-00-00"  # the library cannot tell which date: the zero date
        elif source in (NONE_SOURCE.OUT_OF_DATETIME_RANGE, NONE_SOURCE.OUT_OF_DATETIME2_RANGE):
            out[name] = "0000-00-00 00:00:00" + ("." + "0" * fsp if fsp else "")
        else:
            out[name] = cell(value, column)
    return out


def _matches(row: Cells, image: Cells) -> bool:
    return all(row.get(name) == value for name, value in image.items())


class Client:
    """The client's state: tables, change log, committed position."""

    def __init__(
        self,
        tables: dict[str, list[Cells]],
        first_file: str,
        flaw: Flaw,
        defaults: Mapping[str, Cells] | None = None,
    ) -> None:
        self.tables = tables
        self.defaults = dict(defaults or {})
        self.changes: list[dict[str, Any]] = []
        self.position = (first_file, 4)
        self.commits: list[tuple[str, int]] = [self.position]
        self.flaw = flaw
        self.connections = 0
        self.dropped = False

    def apply(self, change: dict[str, Any]) -> None:
        rows = self.tables.setdefault(change["table"], [])
        if change["op"] == "insert":
            # An image without some columns (MINIMAL, NOBLOB): they took their defaults.
            rows.append({**self.defaults.get(change["table"], {}), **change["after"]})
        else:
            found = next((row for row in rows if _matches(row, change["before"])), None)
            if found is None:  # (a client that lost a change): nothing to act on
                print(f"no row {change['before']} in {change['table']}", file=sys.stderr)
            elif change["op"] == "update":
                found.update(change["after"])
            else:
                rows.remove(found)
        self.changes.append(change)

    def read(
        self, host: str, port: int, user: str, password: str, server_id: int, read_timeout: float
    ) -> None:
        """One connection: read from the committed position until the stream ends or fails."""
        from pymysqlreplication import BinLogStreamReader  # type: ignore[import-untyped]
        from pymysqlreplication.event import MariadbGtidEvent, QueryEvent, RotateEvent, XidEvent  # type: ignore[import-untyped]
        from pymysqlreplication.row_event import (  # type: ignore[import-untyped]
            DeleteRowsEvent,
            UpdateRowsEvent,
            WriteRowsEvent,
        )

        start = self.position
        if self.flaw == "reapply-after-reconnect" and self.connections and len(self.commits) > 1:
            start = self.commits[-2]  # one transaction too early: it is applied twice
        self.connections += 1
        stream = BinLogStreamReader(
            connection_settings={
                "host": host,
                "port": port,
                "user": user,
                "passwd": password,
                "read_timeout": read_timeout,
                "connect_timeout": read_timeout,
            },
            server_id=server_id,
            blocking=False,
            resume_stream=True,
            log_file=start[0],
            log_pos=start[1],
            is_mariadb=False,
            verify_checksum=True,
            pymysql_wrapper=_connect_once(),
        )
        pending: list[dict[str, Any]] | None = None
        gtid = ""
        seen = start
        try:
            for event in stream:
                if getattr(event, "_is_event_valid", True) is False:
                    raise _Fault(f"CRC32 mismatch in a {type(event).__name__}")
                log_pos = int(event.packet.log_pos)
                here = (stream.log_file, log_pos)
                if isinstance(event, RotateEvent):
                    if pending is None and log_pos:
                        self.position = (event.next_binlog, int(event.position))
                    seen = (event.next_binlog, int(event.position))
                    continue
                if log_pos and here[0] == seen[0] and log_pos <= seen[1]:
                    continue  # at or before what was read: a resend
                if log_pos:
                    seen = here
                if isinstance(event, MariadbGtidEvent):
                    pending, gtid = [], event.gtid
                elif isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
                    if pending is None:
                        raise _Fault("a rows event outside a transaction")
                    if (
                        self.flaw == "drop-after-reconnect"
                        and self.connections > 1
                        and not self.dropped
                    ):
                        self.dropped = True
                        continue
                    name = f"{event.schema}.{event.table}"
                    for row in event.rows:
                        sources = row.get("none_sources", {})
                        item: dict[str, Any]
                        if isinstance(event, WriteRowsEvent):
                            item = {
                                "op": "insert",
                                "after": _image(row["values"], sources, event.columns),
                            }
                        elif isinstance(event, DeleteRowsEvent):
                            item = {
                                "op": "delete",
                                "before": _image(row["values"], sources, event.columns),
                            }
                        else:
                            item = {
                                "op": "update",
                                "before": _image(
                                    row["before_values"],
                                    row.get("before_none_sources", {}),
                                    event.columns,
                                ),
                                "after": _image(
                                    row["after_values"],
                                    row.get("after_none_sources", {}),
                                    event.columns,
                                ),
                            }
                        item.update(
                            {
                                "table": name,
                                "gtid": gtid,
                                "row": len(pending),
                                "file": here[0],
                                "pos": log_pos,
                            }
                        )
                        pending.append(item)
                elif isinstance(event, XidEvent) or (
                    isinstance(event, QueryEvent) and event.query.strip().upper() == "COMMIT"
                ):
                    for item in pending or ():
                        self.apply(item)
                    pending = None
                    self.position = here
                    self.commits.append(here)
                elif pending is None and log_pos:
                    self.position = here  # FORMAT_DESCRIPTION, GTID_LIST, BINLOG_CHECKPOINT...
        finally:
            stream.close()


def _defaults(creates: Mapping[str, str]) -> dict[str, Cells]:
    """Each table's column defaults (canonical text), from the snapshot's CREATE TABLE."""
    from scenarios.create_table import parse_create_table
    from scenarios.oracle import cell_text
    from scenarios.schema import NO_DEFAULT

    out: dict[str, Cells] = {}
    for name, text in creates.items():
        table = parse_create_table(text)
        out[name] = {
            column.name: None if column.default is NO_DEFAULT else cell_text(column, column.default)
            for column in table.columns
        }
    return out


def master_status(
    host: str, port: int, user: str, password: str, timeout: float
) -> tuple[str, int]:
    import pymysql

    connection = pymysql.connect(
        host=host,
        port=port,
        user=user,
        password=password,
        connect_timeout=timeout,
        read_timeout=timeout,
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW MASTER STATUS")
            row = cursor.fetchone()
            assert row is not None
            return str(row[0]), int(row[1])
    finally:
        connection.close()


def replicate(args: argparse.Namespace, flaw: Flaw = "") -> Client:
    """Read the whole stream, reconnecting after faults; the client at the end."""
    snapshot = read_snapshot(args.snapshot)
    tables = {name: [dict(row) for row in rows] for name, rows in snapshot.rows.items()}
    client = Client(tables, args.first_file, flaw, _defaults(snapshot.creates))
    while True:
        try:
            end = master_status(args.host, args.port, args.user, args.password, args.read_timeout)
        except Exception as error:  # the server is briefly unreachable: retry
            end = ("", -1)
            print(f"SHOW MASTER STATUS: {type(error).__name__}: {error}", file=sys.stderr)
        if client.position == end:
            return client
        if client.connections >= MAX_CONNECTIONS:
            raise SystemExit(f"gave up after {client.connections} connections at {client.position}")
        try:
            client.read(
                args.host, args.port, args.user, args.password, args.server_id, args.read_timeout
            )
        except Exception as error:  # a fault: resume from the committed position
            print(
                f"connection {client.connections}: {type(error).__name__}: {error};"
                f" resuming at {client.position}",
                file=sys.stderr,
            )
            time.sleep(0.05)


def parse_args(argv: Sequence[str] | None, name: str) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog=name, description=__doc__.split("\n\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("out")
    parser.add_argument("--snapshot", default=env("FAKEMASTER_SNAPSHOT"))
    parser.add_argument("--user", default=env("FAKEMASTER_USER", "root"))
    parser.add_argument("--password", default=env("FAKEMASTER_PASSWORD", ""))
    parser.add_argument("--first-file", default=env("FAKEMASTER_FIRST_FILE", "mysql-bin.000001"))
    parser.add_argument("--server-id", type=int, default=int(env("FAKEMASTER_SERVER_ID", "1001")))
    parser.add_argument(
        "--read-timeout",
        type=float,
        default=3.0,
        help="seconds without a byte before the connection counts as dead",
    )
    args = parser.parse_args(argv)
    if not args.snapshot:
        parser.error("--snapshot (or FAKEMASTER_SNAPSHOT) names the initial tables")
    return args


def main(
    argv: Sequence[str] | None = None, *, flaw: Flaw = "", name: str = "python-mysql-replication"
) -> int:
    args = parse_args(argv, name)
    client = replicate(args, flaw)
    with OutputWriter(args.out, client=name) as out:
        for change in client.changes:
            out.change(
                change["op"],
                change["table"],
                change["gtid"],
                change["row"],
                before=change.get("before"),
                after=change.get("after"),
                file=change["file"],
                pos=change["pos"],
            )
        for table, rows in client.tables.items():
            for row in rows:
                out.row(table, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
