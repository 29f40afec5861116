"""A CDC client on asyncmy's binlog reader (``asyncmy.replication.BinLogStream``, asyncmy
0.2.x), as a contract-test adapter::

    python -m fakemaster.contract.adapters.asyncmy_binlog HOST PORT OUT

asyncmy's reader is a port of an early python-mysql-replication: it reads a table's columns
from ``INFORMATION_SCHEMA.COLUMNS`` (it does not use ``binlog_row_metadata=FULL``), which a
replication source need not serve; this client, having taken the snapshot, hands the reader
the snapshot's columns instead (its table-information hook). The reader knows no MariaDB event
(GTID, GTID list, annotate, XA prepare, compressed rows: all "not implemented"), so the client
reads a group's GTID from the raw MariaDB GTID event (sequence number, domain, and the header's
server id), having set ``@mariadb_slave_capability`` so that the primary sends GTID events.

Like the python-mysql-replication client, it dumps by file and position (non-blocking) from
the first file, applies a transaction at its XID (or COMMIT; an XA transaction at its XA COMMIT, from the raw
XA_PREPARE event's xid), and after any fault (a lost
connection, an error, 3 s without an event, an EOF before the end) reconnects from its last
committed position, the unfinished transaction discarded (exactly-once); the reader's own
reconnect (after the last event read, possibly inside a transaction) is refused. It stops at
``FAKEMASTER_END_FILE``/``FAKEMASTER_END_POS``. Values go through the python-mysql-replication
client's conversion (same column objects).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import re
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from fakemaster.contract.adapter import OutputWriter, read_snapshot

__all__ = ["column_schemas", "main"]

Cells = dict[str, str | None]
MAX_CONNECTIONS = 50
READ_TIMEOUT = 3.0
_MARIADB_GTID = 162


def column_schemas(table: Any) -> list[dict[str, Any]]:
    """The rows ``INFORMATION_SCHEMA.COLUMNS`` would give asyncmy for a scenarios table."""
    out = []
    for position, column in enumerate(table.columns, 1):
        kind = column.sql_type()
        if column.unsigned and "unsigned" not in kind:
            kind += " unsigned"
        out.append(
            {
                "COLUMN_NAME": column.name,
                "COLLATION_NAME": column.collation,
                # asyncmy decodes with this name: bytes stay bytes without one
                "CHARACTER_SET_NAME": None if column.is_bytes else column.charset,
                "COLUMN_COMMENT": "",
                "COLUMN_TYPE": kind,
                "COLUMN_KEY": "PRI" if column.name in table.primary_key else "",
                "ORDINAL_POSITION": position,
            }
        )
    return out


def _text(value: Any, codec: str | int | None) -> Any:
    if isinstance(value, bytes) and isinstance(codec, str):
        return value.decode(codec, "replace")
    if isinstance(value, bytes) and isinstance(codec, int):
        return value.ljust(codec, b"\0")
    return value


_XA_PREPARE = 38
_XA_END = re.compile(r"XA (COMMIT|ROLLBACK) (X'[0-9a-fA-F]*',X'[0-9a-fA-F]*',\d+)", re.I)
_NOT_A_COMMIT = re.compile(r"(BEGIN|XA (START|BEGIN|END))\b", re.I)


def _xa_prepare(event: Any) -> str | None:
    """An XA_PREPARE event's xid as XA statements are logged (X'gtrid',X'bqual',formatID);
    asyncmy does not parse the event. None for any other event, and for a one-phase commit."""
    packet = event.packet
    if packet.event_type != _XA_PREPARE:
        return None
    data = packet._packet.get_all_data()
    one_phase, format_id, gtrid, bqual = struct.unpack_from("<BIII", data, 20)
    if one_phase:
        return None
    xid = data[33 : 33 + gtrid + bqual]
    return f"X'{xid[:gtrid].hex()}',X'{xid[gtrid:].hex()}',{format_id}"


class _Reconnect(Exception):
    """The connection is unusable: resume from the last committed position."""


def _gtid(event: Any) -> str | None:
    """A MariaDB GTID event's ``domain-server-sequence`` (asyncmy leaves it unparsed)."""
    packet = event.packet
    if packet.event_type != _MARIADB_GTID:
        return None
    data = packet._packet.get_all_data()
    seq, domain = struct.unpack_from("<QI", data, 20)  # after the OK byte and 19-byte header
    return f"{domain}-{packet.server_id}-{seq}"


class _Client:
    def __init__(self, args: argparse.Namespace) -> None:
        from scenarios.create_table import parse_create_table

        env = os.environ
        self.args = args
        snapshot = read_snapshot(env["FAKEMASTER_SNAPSHOT"])
        self.tables = {n: parse_create_table(sql) for n, sql in snapshot.creates.items()}
        self.rows: dict[str, list[Cells]] = {
            n: [dict(r) for r in rs] for n, rs in snapshot.rows.items()
        }
        self.end = (env["FAKEMASTER_END_FILE"], int(env["FAKEMASTER_END_POS"]))
        self.committed = (env["FAKEMASTER_FIRST_FILE"], 4)
        self.changes: list[dict[str, Any]] = []
        # Prepared XA transactions' changes by xid, kept across reconnects as the server does.
        self.prepared: dict[str, list[dict[str, Any]]] = {}

    def _text_codecs(self, table: str) -> dict[str, str | int]:
        """By column name: a text column's Python codec (asyncmy leaves its values as bytes),
        a BINARY(n) column's length (the binlog drops its trailing zero bytes)."""
        from scenarios.values import python_codec

        found = self.tables.get(table)
        columns = found.columns if found is not None else ()
        out: dict[str, str | int] = {
            c.name: python_codec(c.charset) or "utf-8" for c in columns if c.is_text
        }
        out.update({c.name: c.length or 0 for c in columns if c.type == "binary"})
        return out

    async def _info(self, schema: str, table: str) -> Any:
        rows = (
            column_schemas(self.tables[f"{schema}.{table}"])
            if f"{schema}.{table}" in self.tables
            else []
        )

        async def fetched() -> list[dict[str, Any]]:
            return rows

        return fetched()  # asyncmy awaits the hook, then its result (a cursor's fetchall)

    async def connection(self) -> None:
        # Through importlib: asyncmy is untyped here (and an optional test peer).
        asyncmy: Any = importlib.import_module("asyncmy")
        binlog: Any = importlib.import_module("asyncmy.replication.binlogstream")

        args = self.args
        settings = {"host": args.host, "port": int(args.port), "user": args.user}
        settings["password"] = args.password
        stream_connection = await asyncmy.connect(**settings)
        control: Any = await asyncmy.connect(**settings)
        file, pos = self.committed
        stream: Any = binlog.BinLogStream(
            stream_connection,
            control,
            server_id=args.server_id,
            master_log_file=file,
            master_log_position=pos,
            resume_stream=True,
            blocking=False,
            filter_non_implemented_events=False,
        )
        control._get_table_information = self._info
        checksum = stream._checksum_enable

        async def capable() -> Any:
            # Without MariaDB's slave capability the primary rewrites each GTID event as a
            # BEGIN query (as for a MySQL 5.5 replica), and the GTIDs are lost: asyncmy does not
            # set it, so the client does, on the stream connection just before the dump.
            async with stream_connection.cursor() as cursor:
                await cursor.execute("SET @mariadb_slave_capability=4")
            return await checksum()

        stream._checksum_enable = capable
        try:
            await self._read(stream, file)
        finally:
            await stream.close()
            control.close()

    async def _read(self, stream: Any, file: str) -> None:
        events: Any = importlib.import_module("asyncmy.replication.row_events")
        UpdateRowsEvent, WriteRowsEvent = events.UpdateRowsEvent, events.WriteRowsEvent
        rows_events = (events.WriteRowsEvent, events.UpdateRowsEvent, events.DeleteRowsEvent)

        from fakemaster.contract.adapters.python_mysql_replication import cell

        pending: list[dict[str, Any]] = []
        gtid, row, last = "", 0, self.committed[1]
        while True:
            event = await asyncio.wait_for(stream._read(), READ_TIMEOUT)
            if event is None:
                if not pending and (file, last) == self.end:
                    self.committed = self.end  # caught up between transactions (after rotations)
                    return
                if not stream._connected:
                    raise _Reconnect("EOF or a lost connection before the end")
                continue
            packet = event.packet
            name = type(event).__name__
            if name == "RotateEvent":
                if event.next_binlog != file:
                    file, last = event.next_binlog, 4
                    if not pending:
                        self.committed = (file, event.position)
                continue
            if 0 < packet.log_pos <= last:
                continue  # a resend of an event already read
            last = packet.log_pos or last
            if (found := _gtid(event)) is not None:
                gtid, row, pending = found, 0, []
            elif isinstance(event, rows_events):
                table = f"{event.schema}.{event.table}"
                for values in event.rows:
                    change: dict[str, Any] = {"table": table, "gtid": gtid, "row": row}
                    change.update(file=file, pos=packet.log_pos)
                    row += 1
                    columns = {c.name: c for c in event.columns}
                    texts = self._text_codecs(table)

                    def convert(
                        values: Any, bitmap: Any, columns: Any = columns, texts: Any = texts
                    ) -> Cells:
                        # asyncmy gives None for a column the image did not carry: left out
                        return {
                            k: cell(_text(x, texts.get(k)), columns[k])
                            for i, (k, x) in enumerate(values.items())
                            if bitmap[i >> 3] >> (i & 7) & 1
                        }

                    first = event.columns_present_bitmap
                    if isinstance(event, UpdateRowsEvent):
                        change.update(op="update", before=convert(values["before_values"], first))
                        after = values["after_values"]
                        change["after"] = convert(after, event.columns_present_bitmap2)
                    elif isinstance(event, WriteRowsEvent):
                        change.update(op="insert", after=convert(values["values"], first))
                    else:
                        change.update(op="delete", before=convert(values["values"], first))
                    pending.append(change)
            elif (xid := _xa_prepare(event)) is not None:
                self.prepared[xid] = pending  # its changes take effect at its XA COMMIT
                pending = []
                self.committed = (file, packet.log_pos)
            elif name == "QueryEvent" and (end := _XA_END.match(event.query.strip())):
                held = self.prepared.pop(end.group(2), [])
                if end.group(1).upper() == "COMMIT":
                    self.changes += [
                        {**c, "gtid": gtid, "row": i, "pos": packet.log_pos}
                        for i, c in enumerate(held)
                    ]
                self.committed = (file, packet.log_pos)
            elif name == "XidEvent" or (
                name == "QueryEvent" and not _NOT_A_COMMIT.match(event.query.strip())
            ):
                self.changes += pending
                pending = []
                self.committed = (file, packet.log_pos)
            if self.committed[0] == self.end[0] and self.committed[1] >= self.end[1]:
                return


def _apply(rows: list[Cells], change: Mapping[str, Any], defaults: Cells) -> None:
    before, after = change.get("before"), change.get("after")
    if before is not None:
        for i, row in enumerate(rows):
            if all(row.get(k) == v for k, v in before.items()):
                if after is None:
                    del rows[i]
                else:
                    rows[i] = {**row, **after}
                return
    if after is not None:  # an insert's columns a MINIMAL image left out took their defaults
        rows.append({**defaults, **after})


async def _run(client: _Client) -> int:
    for number in range(1, MAX_CONNECTIONS + 1):
        try:
            await client.connection()
            return 0
        except Exception as error:  # every fault: resume from the last commit
            file, pos = client.committed
            reason = f"{type(error).__name__}: {error}"
            print(f"connection {number}: {reason}; resuming at {file}:{pos}", file=sys.stderr)
    print(
        f"Error: gave up after {MAX_CONNECTIONS} connections at {client.committed}", file=sys.stderr
    )
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    env = os.environ
    parser = argparse.ArgumentParser(prog="asyncmy_binlog", description=__doc__.splitlines()[0])
    parser.add_argument("host")
    parser.add_argument("port")
    parser.add_argument("out")
    parser.add_argument("--user", default=env.get("FAKEMASTER_USER", "repl"))
    parser.add_argument("--password", default=env.get("FAKEMASTER_PASSWORD", ""))
    parser.add_argument(
        "--server-id", type=int, default=int(env.get("FAKEMASTER_SERVER_ID", "1001"))
    )
    args = parser.parse_args(argv)
    client = _Client(args)
    status = asyncio.run(_run(client))
    if status:
        return status
    from fakemaster.contract.adapters.python_mysql_replication import _defaults

    defaults = _defaults(read_snapshot(os.environ["FAKEMASTER_SNAPSHOT"]).creates)
    with OutputWriter(args.out, client="asyncmy") as out:
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
            table = change["table"]
            _apply(client.rows.setdefault(table, []), change, defaults.get(table, {}))
        for name, rows in client.rows.items():
            for row in rows:
                out.row(name, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
