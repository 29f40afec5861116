#!/usr/bin/env python3
"""Capture how a real MariaDB 10.11 logs MariaDB's own table kinds and types: UUID, INET4, INET6
columns, a SEQUENCE (CREATE SEQUENCE, NEXTVAL, SETVAL, ALTER SEQUENCE) and a system-versioned
table (WITH SYSTEM VERSIONING: INSERT, UPDATE, DELETE with their row_start/row_end).

Starts a private mariadbd (binlog_row_metadata=FULL, the session clock fixed with SET timestamp
so that row_start/row_end are known), runs STATEMENTS, stops the server and writes

    tests/golden/table_kinds/mysql-bin.000001   the server's bytes, as is
    tests/golden/table_kinds/expected.json      the statements, the server's version, every
                                                table's SHOW CREATE TABLE and rows (as text,
                                                history rows included), the sequence's
                                                NEXTVAL answers

``tests/codec/test_table_kinds.py`` checks the codec against them.

Usage: scripts/capture-golden-table-kinds.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.peers.mariadb import MariaDBServer  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "tests" / "golden" / "table_kinds"
OPTIONS = {"binlog_row_metadata": "FULL"}
CLOCK = 1_700_000_000

STATEMENTS = [
    "CREATE DATABASE kinds",
    "USE kinds",
    # MariaDB's own types
    "CREATE TABLE t_types (pk INT PRIMARY KEY, u UUID, a INET4, b INET6 NOT NULL DEFAULT '::1')",
    "INSERT INTO t_types VALUES (1, '6ccd780c-baba-1026-9564-5b8c656024db', '192.168.0.1',"
    " '2001:db8::ff00:42:8329'), (2, NULL, NULL, '::'), (3, '00000000-0000-0000-0000-000000000000',"
    " '10.0.0.0', '::ffff:1.2.3.4')",
    "INSERT INTO t_types (pk, u) VALUES (4, 'f47ac10b-58cc-4372-a567-0e02b2c3d479')",
    "UPDATE t_types SET u = 'ffffffff-ffff-ffff-ffff-ffffffffffff', b = '1::' WHERE pk = 2",
    "DELETE FROM t_types WHERE pk = 3",
    # a sequence
    "CREATE SEQUENCE s1",
    "SELECT NEXTVAL(s1)",
    "SELECT NEXTVAL(s1)",
    "CREATE SEQUENCE s2 START WITH 100 INCREMENT BY 10 MINVALUE 100 MAXVALUE 130 CACHE 2 CYCLE",
    "SELECT NEXTVAL(s2)",
    "SELECT NEXTVAL(s2)",
    "SELECT NEXTVAL(s2)",
    "SELECT NEXTVAL(s2)",
    "SELECT NEXTVAL(s2)",
    "SELECT SETVAL(s1, 5000)",
    "ALTER SEQUENCE s1 RESTART WITH 7",
    "SELECT NEXTVAL(s1)",
    # a system-versioned table
    "CREATE TABLE v (pk INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING",
    "SET timestamp = 1700000100.250000",
    "INSERT INTO v VALUES (1, 10), (2, 20)",
    "SET timestamp = 1700000200.500000",
    "UPDATE v SET x = x + 1",
    "SET timestamp = 1700000300",
    "DELETE FROM v WHERE pk = 2",
    "CREATE TABLE v2 (x INT, st TIMESTAMP(6) AS ROW START, en TIMESTAMP(6) AS ROW END,"
    " PERIOD FOR SYSTEM_TIME (st, en)) WITH SYSTEM VERSIONING",
    "SET timestamp = 1700000400",
    "INSERT INTO v2 (x) VALUES (1)",
    "SET timestamp = 1700000500",
    "UPDATE v2 SET x = 2",
]

READS = {
    "t_types": "SELECT pk, u, a, b FROM kinds.t_types ORDER BY pk",
    "s1": "SELECT * FROM kinds.s1",
    "s2": "SELECT * FROM kinds.s2",
    "v": "SELECT pk, x, UNIX_TIMESTAMP(row_start), UNIX_TIMESTAMP(row_end)"
    " FROM kinds.v FOR SYSTEM_TIME ALL ORDER BY pk, row_start",
    "v2": "SELECT x, UNIX_TIMESTAMP(st), UNIX_TIMESTAMP(en)"
    " FROM kinds.v2 FOR SYSTEM_TIME ALL ORDER BY st",
}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def capture(out: Path) -> None:
    with MariaDBServer(OPTIONS) as server:
        server.start()
        connection = server.connect()
        answers: list[list[list[str | None]]] = []
        with connection.cursor() as cursor:
            cursor.execute(f"SET timestamp = {CLOCK}")
            for statement in STATEMENTS:
                cursor.execute(statement)
                rows = cursor.fetchall() if cursor.description else ()
                answers.append([[_text(v) for v in row] for row in rows])
            connection.commit()
            tables: dict[str, Any] = {}
            for name, query in READS.items():
                cursor.execute(f"SHOW CREATE TABLE kinds.{name}")
                create = cursor.fetchone()[1]
                cursor.execute(query)
                rows = [[_text(v) for v in row] for row in cursor.fetchall()]
                tables[name] = {"create": create, "query": query, "rows": rows}
            cursor.execute("SHOW CREATE SEQUENCE kinds.s2")
            tables["s2"]["create_sequence"] = cursor.fetchone()[1]
        connection.close()
        version = server.version()
        server.stop()
        files = server.binlog_files()
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for path in files:
            (out / path.name).write_bytes(path.read_bytes())
    expected = {
        "captured_by": "scripts/capture-golden-table-kinds.py",
        "version": version,
        "options": OPTIONS,
        "clock": CLOCK,
        "binlog_files": [path.name for path in files],
        "statements": [
            {"sql": sql, "rows": rows} for sql, rows in zip(STATEMENTS, answers, strict=True)
        ],
        "tables": tables,
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {', '.join(p.name for p in files)} ({version})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    capture(parser.parse_args(argv).out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
