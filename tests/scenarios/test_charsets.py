"""Character columns in the character sets beyond utf8mb4/latin1/binary (utf8mb3, ucs2,
utf16, utf16le, utf32, cp1251, gbk, sjis), each history run on a real MariaDB 10.11 and
compared with the compiler's events and the oracle's tables; the value edges (the longest
value in each set, a character beyond the BMP in utf8mb3 and ucs2, CHAR padding in the wide
sets) explicit."""

from __future__ import annotations

import pytest

from scenarios.errors import SchemaError, ValueDoesNotFit
from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

CHARSETS = ("utf8mb3", "ucs2", "utf16", "utf16le", "utf32", "cp1251", "gbk", "sjis")
# A text each set holds (ASCII, then the set's own letters).
TEXTS = {
    "utf8mb3": "Grüße ☃",
    "ucs2": "Grüße ☃",
    "utf16": "Grüße ☃ 😀",
    "utf16le": "Grüße ☃ 😀",
    "utf32": "Grüße ☃ 😀",
    "cp1251": "Привет",
    "gbk": "中文字符",
    "sjis": "日本語テキスト",
}


def charset_table(settings: Settings) -> Scenario:
    return with_charset_table(Scenario(settings))


def with_charset_table(scenario: Scenario) -> Scenario:
    """``scenario`` with table e.cs: every character type in each set, written, updated and
    deleted."""
    columns = ", ".join(
        f"c_{cs} CHAR(10) CHARACTER SET {cs}, v_{cs} VARCHAR(12) CHARACTER SET {cs}, "
        f"t_{cs} TEXT CHARACTER SET {cs}, e_{cs} ENUM('a','{TEXTS[cs][:2]}') CHARACTER SET {cs}, "
        f"s_{cs} SET('x','{TEXTS[cs][1:3]}') CHARACTER SET {cs}"
        for cs in CHARSETS
    )
    scenario.create_table(f"CREATE TABLE e.cs (id INT PRIMARY KEY, {columns})")
    for n, cs in enumerate(CHARSETS, start=1):
        text = TEXTS[cs]
        scenario.insert(
            "e.cs",
            {
                "id": n,
                f"c_{cs}": text[:10],
                f"v_{cs}": text,
                f"t_{cs}": text * 3,
                f"e_{cs}": text[:2],
                f"s_{cs}": f"x,{text[1:3]}",
            },
        )
    scenario.insert("e.cs", {"id": 99, **{f"c_{cs}": "a" for cs in CHARSETS}})
    scenario.update("e.cs", {"id": 1}, {"v_ucs2": "☃☃", "c_utf32": "ab"})
    scenario.delete("e.cs", {"id": 2})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("metadata", ["MINIMAL", "FULL"])
def test_character_columns_in_each_set(server: MariaDBServer, metadata: str) -> None:
    settings = Settings(binlog_row_metadata=metadata)
    assert compare_with_server(server, charset_table(settings)) == []


# One character of each set at its widest (bytes per character in the set).
WIDEST = {
    "utf8mb3": "☃",
    "ucs2": "☃",
    "utf16": "😀",
    "utf16le": "😀",
    "utf32": "😀",
    "cp1251": "Я",
    "gbk": "中",
    "sjis": "日",
}


def value_edges(settings: Settings) -> Scenario:
    """The longest value each column holds (CHAR(5), VARCHAR(7) full of the widest character),
    CHAR padding (a short value, the empty one) in the wide sets, and a key on a ucs2 CHAR."""
    return with_value_edges(Scenario(settings))


def with_value_edges(scenario: Scenario) -> Scenario:
    """``scenario`` with table e.edge (:func:`value_edges`)."""
    columns = ", ".join(
        f"c_{cs} CHAR(5) CHARACTER SET {cs}, v_{cs} VARCHAR(7) CHARACTER SET {cs}"
        for cs in CHARSETS
    )
    scenario.create_table(
        f"CREATE TABLE e.edge (k CHAR(3) CHARACTER SET ucs2 PRIMARY KEY, {columns})"
    )
    scenario.insert(
        "e.edge",
        {"k": "a", **{f"c_{cs}": WIDEST[cs] * 5 for cs in CHARSETS}}
        | {f"v_{cs}": WIDEST[cs] * 7 for cs in CHARSETS},
    )
    scenario.insert("e.edge", {"k": "", **{f"c_{cs}": "" for cs in CHARSETS}})
    scenario.insert("e.edge", {"k": "☃b", **{f"c_{cs}": " a" for cs in CHARSETS}})
    scenario.update("e.edge", {"k": "a"}, {"c_ucs2": "x", "c_utf32": "y", "v_utf16": ""})
    return scenario


@pytest.mark.mariadb
def test_the_longest_values_and_char_padding(server: MariaDBServer) -> None:
    assert compare_with_server(server, value_edges(Settings(binlog_row_metadata="FULL"))) == []


@pytest.mark.parametrize(
    ("charset", "text"), [("utf8mb3", "a😀"), ("ucs2", "😀"), ("cp1251", "中")]
)
def test_a_character_the_set_lacks_is_refused_naming_the_column(charset: str, text: str) -> None:
    scenario = Scenario(Settings())
    scenario.create_table(
        f"CREATE TABLE e.t (id INT PRIMARY KEY, c VARCHAR(4) CHARACTER SET {charset})"
    )
    with pytest.raises(ValueDoesNotFit, match=r"\bc\b.*not representable"):
        scenario.insert("e.t", {"id": 1, "c": text})


@pytest.mark.parametrize(("charset", "length"), [("ucs2", 3), ("utf32", 3), ("sjis", 3)])
def test_a_value_longer_than_the_column_is_refused(charset: str, length: int) -> None:
    scenario = Scenario(Settings())
    scenario.create_table(
        f"CREATE TABLE e.t (id INT PRIMARY KEY, c CHAR({length}) CHARACTER SET {charset})"
    )
    with pytest.raises(ValueDoesNotFit, match="longer than 3 characters"):
        scenario.insert("e.t", {"id": 1, "c": "日" * (length + 1)})


@pytest.mark.mariadb
def test_the_server_refuses_what_the_model_refuses(server: MariaDBServer) -> None:
    # Strict mode (the default): a 4-byte character in utf8mb3 or ucs2 is ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
    # a value one character too long ER_DATA_TOO_LONG.
    import pymysql

    server.execute(
        [
            "CREATE DATABASE IF NOT EXISTS refusals",
            "CREATE OR REPLACE TABLE refusals.t (id INT PRIMARY KEY,"
            " m VARCHAR(4) CHARACTER SET utf8mb3, u VARCHAR(4) CHARACTER SET ucs2,"
            " w CHAR(3) CHARACTER SET utf32)",
        ]
    )
    for column, value, code in (("m", "a😀", 1366), ("u", "😀", 1366), ("w", "日日日日", 1406)):
        with pytest.raises(pymysql.MySQLError) as caught:
            server.execute(
                [
                    "SET NAMES utf8mb4",
                    f"INSERT INTO refusals.t (id, {column}) VALUES (1, '{value}')",
                ]
            )
        assert caught.value.args[0] == code, caught.value.args
    server.execute("DROP DATABASE refusals")


def test_an_enum_member_beyond_the_bmp_outside_utf8mb4_is_refused_naming_the_column() -> None:
    # The real server prints such a member as '?' in SHOW CREATE TABLE (docs/verified-facts.md).
    scenario = Scenario(Settings())
    with pytest.raises(SchemaError, match=r"column s: SET member beyond U\+FFFF"):
        scenario.create_table(
            "CREATE TABLE e.t (id INT PRIMARY KEY, s SET('x','😀') CHARACTER SET utf16)"
        )
