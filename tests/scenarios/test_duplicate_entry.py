"""A history that breaks a unique key is refused in MariaDB's own words (error 1062): the
same inserts run on a real MariaDB 10.11 give the message the model gives."""

from __future__ import annotations

from typing import Any

import pytest

from scenarios import Scenario
from scenarios.errors import HistoryError
from scenarios.sql import insert_rows_sql
from tests.peers.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb

CREATE = (
    "CREATE TABLE dup.t (a INT NOT NULL, b VARCHAR(5) NOT NULL, d DATE, f DOUBLE,"
    " x VARBINARY(3), s ENUM('new','paid'), PRIMARY KEY (a, b), UNIQUE KEY email (d),"
    " UNIQUE KEY (f), UNIQUE (x), UNIQUE KEY by_state (s, a))"
)
FIRST: dict[str, Any] = {
    "a": 1,
    "b": "x",
    "d": "2024-01-02",
    "f": 1.5,
    "x": b"\x00\xab",
    "s": "new",
}
# Each collides with FIRST on exactly one key (checked in the server's key order).
COLLIDING: list[dict[str, Any]] = [
    {"a": 1, "b": "x", "d": "2024-01-03"},
    {"a": 2, "b": "x", "d": "2024-01-02"},
    {"a": 3, "b": "x", "f": 1.5},
    {"a": 4, "b": "x", "x": b"\x00\xab"},
    {"a": 1, "b": "y", "s": "new"},
    {"a": 5, "b": "caf\u00e9", "d": "2024-02-01"},
]


def model_message(row: dict[str, Any]) -> str:
    scenario = Scenario()
    scenario.create_table(CREATE, [FIRST, {"a": 5, "b": "caf\u00e9"}])
    with pytest.raises(HistoryError) as caught:
        scenario.insert("dup.t", row)
    return str(caught.value).split(": ", 1)[1]


def test_unique_key_violations_read_as_the_server_words_them(mariadb_server: MariaDBServer) -> None:
    scenario = Scenario()
    table = scenario.create_table(CREATE)
    connection = mariadb_server.connect()
    cursor = connection.cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS dup")
    cursor.execute("DROP TABLE IF EXISTS dup.t")
    cursor.execute(CREATE)
    for row in (FIRST, {"a": 5, "b": "caf\u00e9"}):
        for statement in insert_rows_sql(table, [_row(table, row)]):
            cursor.execute(statement)
    for row in COLLIDING:
        statement = insert_rows_sql(table, [_row(table, row)])[0]
        with pytest.raises(Exception) as server:
            cursor.execute(statement)
        code, message = server.value.args[:2]
        assert code == 1062
        assert model_message(row) == message


def _row(table: Any, row: dict[str, Any]) -> tuple[Any, ...]:
    scenario = Scenario()
    scenario.create_table(CREATE, [row])
    return scenario.contents.rows["dup.t"][0]
