"""Generated columns (VIRTUAL, PERSISTENT/STORED), INVISIBLE columns, constant DEFAULT
expressions and CREATE TABLE ... LIKE: the model's values and row images against a real
MariaDB 10.11 (tables read back with SELECT equal to the oracle's, events equal to the
server's binlog), for each row image."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from scenarios.catalogue import catalogue_table
from scenarios.create_table import parse_create_table
from scenarios.errors import HistoryError
from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_properties import assert_replay_agrees
from tests.support.mariadb_run import compare_with_server

LINES = """CREATE TABLE shop.lines (
    id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    qty INT NOT NULL,
    price DECIMAL(8,2) NOT NULL,
    total DECIMAL(10,2) AS (qty * price) PERSISTENT,
    each_ DECIMAL(10,4) AS (price / qty) VIRTUAL,
    label VARCHAR(40) GENERATED ALWAYS AS (concat(upper(sku), '-', qty)) STORED,
    sku VARCHAR(10) NOT NULL DEFAULT 'x',
    secret INT INVISIBLE DEFAULT (2 * 3 + 1),
    half INT AS (qty DIV 2) VIRTUAL,
    KEY k_half (half))"""

EDGES = """CREATE TABLE shop.edges (
    id INT PRIMARY KEY,
    a INT, b DECIMAL(6,2), c VARCHAR(20),
    d2 INT DEFAULT -5, d4 VARCHAR(9) DEFAULT concat('a','b'), d6 DECIMAL(8,3) DEFAULT (10 / 4),
    g1 INT AS (a DIV 3) VIRTUAL, g2 INT AS (a % 3) VIRTUAL, g3 INT AS (a MOD -3) STORED,
    g4 VARCHAR(30) AS (ucase(c)) VIRTUAL, g5 VARCHAR(30) AS (lower(c)) STORED,
    g6 INT AS (ifnull(a, 0)) VIRTUAL, g7 INT AS (abs(-a)) VIRTUAL,
    g8 DECIMAL(10,4) AS (b / 3) VIRTUAL, g9 INT AS ((a + 1) * (a - 1)) VIRTUAL,
    g10 INT AS (a - (a - 1)) VIRTUAL, g11 VARCHAR(40) AS (concat_ws('-', c, a)) VIRTUAL,
    g12 INT AS (coalesce(a, b, 1)) VIRTUAL, g13 DECIMAL(10,2) AS (b * 2 + 1.5) STORED,
    g14 INT AS (-a) VIRTUAL, g15 INT AS (a * -1) VIRTUAL,
    g16 VARCHAR(12) AS (concat(c, 'it''s')) VIRTUAL, g17 INT AS (char_length(c)) VIRTUAL,
    g18 INT AS (length(c)) STORED, g19 VARCHAR(9) AS (left(c, 2)) VIRTUAL,
    g20 INT AS (b / 4) STORED, g21 CHAR(8) AS (concat(c, '  ')) STORED,
    KEY (g19))"""

INVISIBLES = """CREATE TABLE shop.invisibles (a INT, x INT NOT NULL INVISIBLE DEFAULT 1,
    ts TIMESTAMP NULL INVISIBLE, g INT AS (a + 1) VIRTUAL INVISIBLE COMMENT 'cc',
    h INT AS (a) STORED COMMENT 'dd')"""


def generated(settings: Settings) -> Scenario:
    scenario = Scenario(settings, clock=1_700_000_000)
    scenario.create_table(LINES, rows=[{"qty": 3, "price": "1.50", "sku": "ab"}])
    scenario.create_table(EDGES)
    scenario.insert("shop.lines", {"qty": 7, "price": "10.25"}, {"qty": -7, "price": "3.33"})
    scenario.insert("shop.lines", {"qty": 2, "price": "3.33", "sku": "q"})
    scenario.update("shop.lines", {"id": 1}, {"qty": 4})
    scenario.update("shop.lines", {"id": 2}, {"sku": "zz"})
    scenario.ddl("CREATE TABLE shop.lines2 LIKE shop.lines")
    scenario.insert("shop.lines2", {"qty": 1, "price": 2, "secret": 5})
    scenario.delete("shop.lines", {"id": 3})
    scenario.insert(
        "shop.edges",
        {"id": 1, "a": 7, "b": "10.25", "c": " Ab "},
        {"id": 2, "a": -7, "b": "-3.33", "c": "x"},
        {"id": 3, "a": None, "b": None, "c": None},
        {"id": 4, "a": 0, "b": "0.06", "c": "ÄÖü"},
    )
    scenario.update("shop.edges", {"id": 3}, {"a": 2, "c": "q"})
    scenario.update("shop.edges", {"id": 1}, {"b": "-0.02"})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_generated_and_invisible_columns_are_the_servers(server: MariaDBServer, image: str) -> None:
    scenario = generated(Settings(binlog_row_image=image, binlog_row_metadata="FULL"))
    assert compare_with_server(server, scenario) == []


@pytest.mark.mariadb
def test_show_create_table_of_generated_columns_and_like_is_the_servers(
    server: MariaDBServer,
) -> None:
    connection = server.connect()
    try:
        cursor = connection.cursor()
        cursor.execute("DROP DATABASE IF EXISTS shop")
        cursor.execute("CREATE DATABASE shop")
        scenario = Scenario()
        for text in (LINES, EDGES, INVISIBLES, "CREATE TABLE shop.copy LIKE shop.lines"):
            cursor.execute(text)
            scenario.create_table(text)
        for name in ("lines", "edges", "invisibles", "copy"):
            cursor.execute(f"SHOW CREATE TABLE shop.{name}")
            printed = str(cursor.fetchone()[1])
            model = scenario.tables[f"shop.{name}"]
            assert catalogue_table(model).create_text == printed.replace(" AUTO_INCREMENT=2", "")
            assert parse_create_table(printed, "shop") == model
    finally:
        connection.close()


def test_a_generated_column_is_never_given_a_value() -> None:
    scenario = Scenario()
    scenario.create_table(LINES)
    with pytest.raises(HistoryError, match="generated column total"):
        scenario.insert("shop.lines", {"qty": 1, "price": 1, "total": 1})
    scenario.insert("shop.lines", {"qty": 1, "price": 1})
    with pytest.raises(HistoryError, match="generated column half"):
        scenario.update("shop.lines", {"id": 1}, {"half": 3})


def test_a_value_the_server_refuses_is_refused() -> None:
    # As a 10.11 in strict mode answers: ERROR 1365 Division by 0, ERROR 1406 Data too long
    # (a VIRTUAL column too), ERROR 1264 Out of range.
    scenario = Scenario()
    scenario.create_table(LINES)
    scenario.create_table("CREATE TABLE shop.z (a INT, w VARCHAR(3) AS (concat('ab', a)) VIRTUAL)")
    scenario.create_table("CREATE TABLE shop.y (a INT, t INT AS (a * 1000) STORED)")
    with pytest.raises(HistoryError, match="division by zero"):
        scenario.insert("shop.lines", {"qty": 0, "price": 1})  # price / qty
    with pytest.raises(HistoryError, match="generated column w.*longer than 3"):
        scenario.insert("shop.z", {"a": 10})
    with pytest.raises(HistoryError, match="generated column t"):
        scenario.insert("shop.y", {"a": 5_000_000})
    scenario.insert("shop.z", {"a": 1})
    scenario.insert("shop.y", {"a": 5})


def altered_generated(settings: Settings) -> Scenario:
    """Generated columns added by ALTER to a table with rows (computed for them), a
    constant expression default added, a source column widened, then rows written."""
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE shop.stock (id INT PRIMARY KEY, qty SMALLINT, price DECIMAL(6,2))",
        rows=[{"id": 1, "qty": 3, "price": "2.50"}, {"id": 2, "qty": None, "price": "1.00"}],
    )
    scenario.alter_table(
        "shop.stock",
        "ADD COLUMN worth DECIMAL(10,2) AS (qty * price) PERSISTENT,"
        " ADD COLUMN tag VARCHAR(20) AS (concat('#', id, '/', qty)) VIRTUAL AFTER id,"
        " ADD COLUMN bonus INT NOT NULL DEFAULT (3 * 4)",
    )
    scenario.insert("shop.stock", {"id": 3, "qty": 4, "price": "0.25"})
    scenario.alter_table("shop.stock", "MODIFY COLUMN qty INT")
    scenario.update("shop.stock", {"id": 1}, {"qty": 100000})
    scenario.update("shop.stock", {"id": 2}, {"qty": 1})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_generated_columns_added_by_alter_are_the_servers(
    server: MariaDBServer, image: str
) -> None:
    scenario = altered_generated(Settings(binlog_row_image=image))
    assert compare_with_server(server, scenario) == []


def test_dropping_a_column_a_generated_one_names_is_refused() -> None:
    scenario = Scenario()
    scenario.create_table(LINES)
    with pytest.raises(HistoryError, match="names an unknown column 'qty'"):
        scenario.alter_table("shop.lines", "DROP COLUMN qty")


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
@pytest.mark.parametrize("history", [generated, altered_generated])
def test_a_replay_of_the_stream_computes_the_generated_columns(
    image: str, history: Callable[[Settings], Scenario]
) -> None:
    # A MINIMAL image leaves unkeyed VIRTUAL columns out: the replica computes them.
    assert_replay_agrees(history(Settings(binlog_row_image=image)))
