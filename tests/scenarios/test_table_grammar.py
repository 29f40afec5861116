"""The table grammar of a real server: realistic schemas (tests/scenarios/realistic_schemas.py)
are created on a real MariaDB 10.11; the text its ``SHOW CREATE TABLE`` prints is accepted by
the model, and the model's own ``SHOW CREATE TABLE`` (:mod:`scenarios.show_create`, what a
served scenario answers) equals it, character for character."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from scenarios.catalogue import catalogue_table
from scenarios.create_table import parse_create_table
from scenarios.errors import SchemaError
from scenarios.sql import quote_name
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.realistic_schemas import SCHEMAS


def _name(text: str) -> str:
    # The table's name: the first name after CREATE TABLE [IF NOT EXISTS].
    words = text.replace("`", " ").replace("(", " ( ").split()
    at = words.index("TABLE") + 1
    if words[at].upper() == "IF":
        at += 3
    return words[at]


@pytest.fixture(scope="module")
def server_texts(server: MariaDBServer) -> Iterator[dict[tuple[str, str], str]]:
    """Each schema's table as the server prints it, by (database, table)."""
    connection = server.connect()
    try:
        cursor = connection.cursor()
        for database in dict.fromkeys(database for database, _ in SCHEMAS):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_name(database)}")
            cursor.execute(f"CREATE DATABASE {quote_name(database)}")
        texts = {}
        for database, text in SCHEMAS:
            cursor.execute(f"USE {quote_name(database)}")
            cursor.execute(text)
            name = _name(text)
            cursor.execute(f"SHOW CREATE TABLE {quote_name(database)}.{quote_name(name)}")
            texts[database, name] = str(cursor.fetchone()[1])
        yield texts
    finally:
        connection.close()


def test_the_schemas_are_realistic_enough() -> None:
    assert len(SCHEMAS) >= 15
    assert len({database for database, _ in SCHEMAS}) >= 3


@pytest.mark.mariadb
@pytest.mark.parametrize(("database", "text"), SCHEMAS, ids=[_name(t) for _, t in SCHEMAS])
def test_show_create_table_from_the_model_equals_the_servers(
    server_texts: dict[tuple[str, str], str], database: str, text: str
) -> None:
    printed = server_texts[database, _name(text)]
    table = parse_create_table(printed, database)
    assert catalogue_table(table).create_text == printed
    # The text as written is accepted too, and declares the same columns (a CHECK's
    # expression is kept as written: the server's own spelling only from its text).
    written = parse_create_table(text, database).columns
    assert [replace(c, check=None) for c in written] == [
        replace(c, check=None) for c in table.columns
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("CREATE TABLE d.t (a INT, b INT AS (a + 1) VIRTUAL)", "AS"),
        ("CREATE TABLE d.t (a INT, b INT GENERATED ALWAYS AS (a) STORED)", "GENERATED"),
        ("CREATE TABLE d.t (a INT INVISIBLE)", "INVISIBLE"),
        ("CREATE TABLE d.t (a INT) PARTITION BY HASH (a)", "PARTITION"),
        ("CREATE TABLE d.t (a INT) ENGINE=InnoDB UNION=(x)", "UNION"),
        ("CREATE TABLE d.t (a INT) FROBNICATE=1", "FROBNICATE"),
        ("CREATE TABLE d.t (a UUID)", "UUID"),
        ("CREATE TABLE d.t LIKE d.u", "LIKE"),
        ("CREATE TABLE d.t (a INT DEFAULT (1 + 1))", "expression defaults"),
        ("CREATE TABLE d.t (a INT, PERIOD FOR p (a, a))", "PERIOD"),
        ("CREATE TABLE d.t (a INT AUTO_INCREMENT)", "AUTO_INCREMENT"),
    ],
)
def test_a_clause_the_model_cannot_take_is_an_error_naming_it(text: str, named: str) -> None:
    with pytest.raises(SchemaError, match=named):
        parse_create_table(text)
