"""A real MariaDB replica as a contract-test client (needs ``mariadbd``)::

    python -m fakemaster.contract.adapters.mariadb_replica HOST PORT OUT

It starts a MariaDB server on a temporary datadir (:mod:`fakemaster.contract.mariadb_server`),
creates the snapshot's tables with their initial rows (not binlogged), points it at HOST:PORT
with ``CHANGE MASTER TO`` (file and position: the first file, position 4; reconnect after 1 s;
``slave_net_timeout`` 3 s), starts it and waits until it executed up to ``SHOW MASTER STATUS``
(or its GTID position covers ``@@gtid_binlog_pos``), or until a replication thread stopped with
an error (then it writes the tables it has and exits with status 1, the error on stderr). It
writes the final tables, every table outside the server's own schemas (those created or renamed
mid-stream too; SELECT, byte columns as ``0x`` hex, BIT as numbers); a replica keeps no change
log. The server is shut down and its directory removed at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from fakemaster.contract.adapter import OutputWriter, read_snapshot

__all__ = ["dump_tables", "main", "user_tables", "wait_caught_up"]

# The server's own schemas: every other table was created by the snapshot or the stream.
_SYSTEM_SCHEMAS = ("information_schema", "mysql", "performance_schema", "sys")
_BYTE_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})
POLL = 0.05


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def user_tables(server: Any) -> list[str]:
    """Every ``database.table`` outside the server's own schemas: a table created or renamed
    mid-stream is in the final tables too, not only the snapshot's."""
    connection = server.connect(conv={})
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
                " WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN (%s, %s, %s, %s)"
                " ORDER BY TABLE_SCHEMA, TABLE_NAME",
                _SYSTEM_SCHEMAS,
            )
            return [f"{_text(schema)}.{_text(table)}" for schema, table in cursor.fetchall()]
    finally:
        connection.close()


def dump_tables(server: Any, names: Sequence[str]) -> dict[str, list[dict[str, str | None]]]:
    """Each table's rows as canonical text (``database.table`` -> rows)."""
    connection = server.connect(conv={})
    out: dict[str, list[dict[str, str | None]]] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION time_zone = '+00:00'")
            for name in names:
                database, table = name.split(".", 1)
                cursor.execute(
                    "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS"
                    " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                    (database, table),
                )
                columns = [
                    (_text(column), _text(kind).lower()) for column, kind in cursor.fetchall()
                ]
                parts = []
                for column, kind in columns:
                    if kind == "bit":
                        parts.append(f"{_quote(column)} + 0")
                    elif kind in _BYTE_TYPES:
                        parts.append(f"CONCAT('0x', HEX({_quote(column)}))")
                    else:
                        parts.append(_quote(column))
                cursor.execute(f"SELECT {', '.join(parts)} FROM {_quote(database)}.{_quote(table)}")
                out[name] = [
                    {
                        c: None if v is None else _text(v)
                        for (c, _), v in zip(columns, row, strict=True)
                    }
                    for row in cursor.fetchall()
                ]
    finally:
        connection.close()
    return out


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes | bytearray) else str(value)


def _gtids(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in text.split(","):
        if part.strip():
            domain, _, seq = part.strip().split("-")
            out[int(domain)] = int(seq)
    return out


def wait_caught_up(server: Any, end: tuple[str, int], end_gtid: str, timeout: float) -> str:
    """Until the replica executed up to ``end`` (file, position) or its GTID position covers
    ``end_gtid``: '' then; the replication error when a thread stopped with one; a message
    after ``timeout`` seconds."""
    wanted = _gtids(end_gtid)
    deadline = time.monotonic() + timeout
    while True:
        status = server.slave_status()
        if (
            status.get("Relay_Master_Log_File"),
            int(status.get("Exec_Master_Log_Pos") or 0),
        ) == end:
            return ""
        have = _gtids(str(server.query_one("SELECT @@GLOBAL.gtid_slave_pos")))
        if wanted and all(have.get(d, -1) >= seq for d, seq in wanted.items()):
            return ""
        for thread in ("IO", "SQL"):
            if status.get(f"Last_{thread}_Errno") and status.get(f"Slave_{thread}_Running") == "No":
                return (
                    f"the replica's {thread} thread stopped: {status.get(f'Last_{thread}_Error')}"
                )
        if time.monotonic() > deadline:
            return f"not caught up within {timeout:g}s: {status.get('Last_IO_Error') or ''}"
        time.sleep(POLL)


def main(argv: Sequence[str] | None = None) -> int:
    import os

    from fakemaster.contract.adapters.python_mysql_replication import master_status
    from fakemaster.contract.mariadb_server import MariaDBServer

    env = os.environ.get
    parser = argparse.ArgumentParser(prog="mariadb_replica", description=__doc__.split("\n\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("out")
    parser.add_argument("--snapshot", default=env("FAKEMASTER_SNAPSHOT"))
    parser.add_argument("--user", default=env("FAKEMASTER_USER", "root"))
    parser.add_argument("--password", default=env("FAKEMASTER_PASSWORD", ""))
    parser.add_argument("--first-file", default=env("FAKEMASTER_FIRST_FILE", "mysql-bin.000001"))
    parser.add_argument("--end-gtid", default=env("FAKEMASTER_END_GTID", ""))
    parser.add_argument("--server-id", type=int, default=int(env("FAKEMASTER_SERVER_ID", "1001")))
    parser.add_argument("--wait", type=float, default=50.0, help="seconds to wait for the replica")
    args = parser.parse_args(argv)
    if not args.snapshot:
        parser.error("--snapshot (or FAKEMASTER_SNAPSHOT) names the initial tables")
    snapshot = read_snapshot(args.snapshot)
    end = master_status(args.host, args.port, args.user, args.password, 10.0)
    server = MariaDBServer({"slave_net_timeout": 3}, server_id=args.server_id)
    try:
        server.start()
        server.execute(["SET SESSION sql_log_bin = 0", *snapshot.sql])
        server.change_master(
            args.host,
            args.port,
            args.user,
            args.password,
            use_gtid="no",
            log_file=args.first_file,
            log_pos=4,
            connect_retry=1,
        )
        server.execute("START SLAVE")
        problem = wait_caught_up(server, end, args.end_gtid, args.wait)
        tables = dump_tables(server, user_tables(server))
        server.execute("STOP SLAVE")
    finally:
        server.close()
    with OutputWriter(args.out, client="mariadb-replica", changes=False) as out:
        for name, rows in tables.items():
            for row in rows:
                out.row(name, row)
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
