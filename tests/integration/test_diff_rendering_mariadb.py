"""The oracle's diff renders values as a real MariaDB 10.11 prints them: the boundary values of
every column type (the ``every_type`` scenario) written to a real server with the scenario's own
SQL, read back with ``mariadb --batch``, compared with the canonical text; and each SQL literal
the diff shows, used in a WHERE on the real server, finds its row (it denotes that value)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from scenarios import Oracle
from scenarios.library import build
from scenarios.oracle import cell_text, sql_literal
from scenarios.sql import create_table_sql, insert_rows_sql, quote_name

pytestmark = pytest.mark.mariadb

_BATCH_ESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r", "\\0": "\0"}


def _unescape(field: str) -> str | None:
    if field == "NULL":
        return None
    out, i = [], 0
    while i < len(field):
        pair = field[i : i + 2]
        if pair in _BATCH_ESCAPES:
            out.append(_BATCH_ESCAPES[pair])
            i += 2
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _select_expression(column: Any) -> str:
    name = quote_name(column.name)
    if column.type == "bit":
        return f"{name} + 0"
    if column.type in ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"):
        return f"IF({name} IS NULL, NULL, CONCAT('0x', HEX({name})))"
    return name


@pytest.fixture(scope="module")
def every_type(mariadb_server: Any) -> tuple[Any, Any, list[Any]]:
    """The table holding every row of every_type at every point (minimum, maximum, zero,
    empty, NULL), with new keys where a row was updated."""
    oracle = Oracle(build("every_type"))
    table = oracle.tables()["types.every"]
    rows = []
    for after in range(1, oracle.points + 1):
        for row in oracle.rows("types.every", after):
            if row not in rows:
                rows.append(row)
    rows = [(index + 1, *row[1:]) for index, row in enumerate(rows)]
    assert table.key == (0,) and len(rows) > 3
    mariadb_server.execute(
        [
            "SET time_zone = '+00:00'",
            "CREATE DATABASE IF NOT EXISTS types",
            "DROP TABLE IF EXISTS types.every",
            create_table_sql(table),
            *insert_rows_sql(table, rows),
        ]
    )
    return mariadb_server, table, rows


def test_the_canonical_text_is_what_mariadb_batch_prints(every_type: Any) -> None:
    server, table, rows = every_type
    key = quote_name(table.columns[table.key[0]].name)
    select = ", ".join(_select_expression(c) for c in table.columns)
    out = subprocess.run(
        [
            "mariadb",
            "--batch",
            "--skip-column-names",
            "-h",
            server.host,
            "-P",
            str(server.port),
            "-uroot",
            "--default-character-set=utf8mb4",
            "--init-command=SET time_zone='+00:00'",
            "-e",
            f"SELECT {select} FROM types.every ORDER BY {key}",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    printed = [[_unescape(f) for f in line.split("\t")] for line in out.splitlines()]
    ordered = sorted(rows, key=lambda row: row[table.key[0]])
    assert len(printed) == len(ordered)
    for got, row in zip(printed, ordered, strict=True):
        for column, text, value in zip(table.columns, got, row, strict=True):
            assert cell_text(column, value) == text, (column.name, value)


def test_each_literal_the_diff_shows_finds_its_row(every_type: Any) -> None:
    server, table, rows = every_type
    key = table.columns[table.key[0]]
    for row in rows:
        for column, value in zip(table.columns, row, strict=True):
            if column.type == "float":
                continue  # printed rounded to 6 digits, as mariadb does: not the stored float
            literal = sql_literal(column, cell_text(column, value))
            found = server.execute(
                [
                    "SET time_zone = '+00:00'",
                    f"SELECT COUNT(*) FROM types.every WHERE {quote_name(key.name)} = "
                    f"{row[table.key[0]]} AND {quote_name(column.name)} <=> {literal}",
                ]
            )
            assert found == [(1,)], (column.name, literal)


def test_numbers_are_bare_and_strings_quoted(every_type: Any) -> None:
    _server, table, _rows = every_type
    by_name = {c.name: c for c in table.columns}
    assert sql_literal(by_name["i"], "0") == "0"
    assert sql_literal(by_name["c"], "it's") == "'it''s'"
    assert sql_literal(by_name["bn"], "0x00") == "0x00"
    assert sql_literal(by_name["vb"], "0x") == "''"
    assert sql_literal(by_name["da"], "2000-01-01") == "'2000-01-01'"
    assert sql_literal(by_name["vc"], None) == "NULL"
