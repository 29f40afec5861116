"""Binlog files a real MariaDB 10.11 writes for the workloads that broke ``pipeline batch``
(issue #20 item 3): statement-format tables, a CREATE the model cannot parse, a bulk load with
``binlog_annotate_row_events``, zero dates and an ALTER that adds a NOT NULL DEFAULT column."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.peers.mariadb import MariaDBServer

__all__ = ["CAPTURE_OPTIONS", "Capture", "bulk_statement", "capture_workload"]

CAPTURE_OPTIONS = {
    "binlog_row_metadata": "FULL",
    "binlog_annotate_row_events": "ON",
    "sql_mode": "NO_ENGINE_SUBSTITUTION",  # zero dates accepted
}

ALTER = "ALTER TABLE shop.later ADD COLUMN c VARCHAR(5) NOT NULL DEFAULT 'x', ALGORITHM=INPLACE"


def bulk_statement(rows: int) -> str:
    """One multi-row INSERT of ``rows`` rows (about 75 bytes each): its text is logged once,
    in an ANNOTATE_ROWS event, before the rows events of all its rows."""
    values = ",".join(
        f"({i},'name-{i:08d}-abcdefghijklmnop','note-{i:08d}-qrstuvwxyz0123')" for i in range(rows)
    )
    return "INSERT INTO shop.bulk VALUES " + values


@dataclass(frozen=True)
class Capture:
    files: list[Path]
    bulk: str  # the bulk INSERT's text
    alter: str  # the ALTER that adds shop.later.c
    tables: dict[str, list[tuple[Any, ...]]]  # the primary's rows of the tables written in ROW


def capture_workload(server: MariaDBServer, bulk_rows: int) -> Capture:
    """Run the workload on ``server`` (started with :data:`CAPTURE_OPTIONS`) and return its
    binlog files (those after a RESET MASTER: ``shop.old`` was created before them)."""
    bulk = bulk_statement(bulk_rows)
    connection = server.connect(autocommit=True)
    try:
        cursor = connection.cursor()
        for statement in (
            "CREATE DATABASE shop",
            "CREATE TABLE shop.old (id INT PRIMARY KEY, v VARCHAR(10))",
            "RESET MASTER",
            "CREATE TABLE shop.ok (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO shop.ok VALUES (1, 'a'), (2, 'b')",
            "SET SESSION binlog_format = 'STATEMENT'",
            "CREATE TABLE shop.stmt (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))"
            " AUTO_INCREMENT=5",
            "INSERT INTO shop.stmt (v) VALUES ('x'), ('y')",
            "UPDATE shop.stmt SET v = 'z' WHERE id = 5",
            "CREATE TABLE shop.copy SELECT * FROM shop.ok",
            "INSERT INTO shop.copy VALUES (9, 'q')",
            "INSERT INTO shop.old VALUES (1, 'o')",
            "SET SESSION binlog_format = 'ROW'",
            "CREATE TABLE shop.bulk (id INT PRIMARY KEY, name VARCHAR(64), note VARCHAR(64))",
            bulk,
            "CREATE TABLE shop.dates (id INT PRIMARY KEY, d DATE, t DATETIME)",
            "INSERT INTO shop.dates VALUES (1, '0000-00-00', '2020-01-02 03:04:05'),"
            " (2, '2021-02-03', '0000-00-00 00:00:00'), (3, NULL, NULL)",
            "CREATE TABLE shop.later (id INT PRIMARY KEY)",
            "INSERT INTO shop.later VALUES (1), (2)",
            ALTER,
            "INSERT INTO shop.later VALUES (3, 'y')",
            "INSERT INTO shop.ok VALUES (3, 'c')",
            "FLUSH BINARY LOGS",
        ):
            cursor.execute(statement)
        tables = {}
        for name in ("shop.ok", "shop.bulk", "shop.dates", "shop.later"):
            cursor.execute(f"SELECT * FROM {name}")
            tables[name] = list(cursor.fetchall())
    finally:
        connection.close()
    return Capture(server.binlog_files(), bulk, ALTER, tables)
