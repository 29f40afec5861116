"""``character_set_results``, differentially: the same statements after the same ``SET
character_set_results = X`` against a real MariaDB 10.11 holding a scenario's tables and
against fakemaster serving it; every payload (column definitions with their names, charset
numbers and lengths; every row's bytes) must be equal.

Errors naming accented and Cyrillic names are compared too (their messages are converted).
The strings are ASCII, accented Latin, Cyrillic and an emoji, in a utf8mb4, a utf8mb3 and a
latin1 column (each holds what it can), next to numbers, dates, binary strings and NULL, so
each conversion meets characters its target has, lacks (``?``) and numbers that ucs2, utf16
and utf32 convert too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.charsets import DEFAULT_COLLATIONS
from fakemaster.protocol.resultset import ColumnDefinition
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.history import Scenario
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from scenarios.toml_form import load_scenario
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

SCENARIO = """
[[tables]]
create = '''CREATE TABLE cs.words (
    id INT PRIMARY KEY,
    wide VARCHAR(12) CHARACTER SET utf8mb4,
    narrow VARCHAR(12) CHARACTER SET utf8mb3,
    western VARCHAR(12) CHARACTER SET latin1,
    raw VARBINARY(8),
    day DATE,
    price DECIMAL(6,2)
)'''
rows = [
    { id = 1, wide = "plain", narrow = "plain", western = "plain", raw = { hex = "00ff" }, day = 2024-02-29, price = "-1.50" },
    { id = 2, wide = "café déjà", narrow = "naïve", western = "Ærø ½ €", raw = { hex = "e9" } },
    { id = 3, wide = "Жёлтый", narrow = "Привет", western = "x", price = "9999.99" },
    { id = 4, wide = "a😀b", narrow = "ab", western = "¿?" },
    { id = 5, wide = { null = true }, narrow = "", western = { null = true } },
    { id = 6, wide = "a\\\\b ¥ ~", narrow = "\\\\", western = "\\\\" },
]
"""
STATEMENTS = [
    "SELECT * FROM cs.words ORDER BY id",
    "SELECT wide AS `é`, id AS `Ж` FROM cs.words WHERE id IN (2, 3)",
    "SHOW VARIABLES LIKE 'character_set_results'",
    "SHOW CREATE TABLE cs.words",
    "SHOW FULL COLUMNS FROM cs.words",
    "SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS"
    " WHERE TABLE_SCHEMA = 'cs' ORDER BY ORDINAL_POSITION",
    # Errors: their messages are converted too (\\XXXX for a missing character).
    "USE `nÖ`",
    "SELECT * FROM cs.`Жwords`",
]
# Every character set MariaDB 10.11 accepts for character_set_results, its alias utf8, and NULL.
CHARSETS = [*sorted(DEFAULT_COLLATIONS), "utf8", "NULL"]


def _describe(payload: bytes) -> str:
    try:
        return repr(ColumnDefinition.decode(payload))
    except Exception:  # not a column definition: the raw bytes
        return repr(payload)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[MariaDBServer, BackgroundFakeMaster]]:
    require_mariadb()
    scenario: Scenario = load_scenario(SCENARIO, source="charsets.toml")
    real = MariaDBServer(server_id=7)
    try:
        real.start()
        real.execute(
            [
                "SET SESSION sql_log_bin = 0",
                *SESSION_SETUP,
                *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in scenario.databases),
                *setup_sql(scenario),
                *(sql for step in scenario.steps for sql in step_sql(step)),
            ]
        )
        with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as fake:
            yield real, fake
            assert fake.errors == []
    finally:
        real.close()


def _differences(answers: list[list[list[bytes]]]) -> list[str]:
    problems = []
    for sql, want, got in zip(STATEMENTS, *answers, strict=False):
        if want != got:
            lines = [f"{sql}:"]
            for index in range(max(len(want), len(got))):
                a = want[index] if index < len(want) else b"<none>"
                b = got[index] if index < len(got) else b"<none>"
                if a != b:
                    lines.append(f"  [{index}] real {_describe(a)}")
                    lines.append(f"  [{index}] fake {_describe(b)}")
            problems.append("\n".join(lines[:7]))
    return problems


@pytest.mark.parametrize("charset", CHARSETS)
def test_results_are_converted_as_a_real_server_converts_them(
    servers: tuple[MariaDBServer, BackgroundFakeMaster], charset: str
) -> None:
    answers = []
    for server in servers:
        with RawClient(server.host, server.port, "root", "") as client:
            assert client.query(f"SET character_set_results = {charset}")[0][:1] == b"\x00"
            answers.append([client.query(sql) for sql in STATEMENTS])
    problems = _differences(answers)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("collation", "setup"),
    [(8, ""), (33, ""), (51, ""), (28, ""), (45, "SET NAMES cp1251"), (45, "SET NAMES utf8")],
    ids=["latin1", "utf8mb3", "cp1251", "gbk", "set_names_cp1251", "set_names_utf8"],
)
def test_the_handshake_and_set_names_choose_the_results_character_set(
    servers: tuple[MariaDBServer, BackgroundFakeMaster], collation: int, setup: str
) -> None:
    answers = []
    for server in servers:
        with RawClient(server.host, server.port, "root", "", charset=collation) as client:
            if setup:
                assert client.query(setup)[0][:1] == b"\x00"
            answers.append([client.query(sql) for sql in STATEMENTS[:2]])
    problems = _differences(answers)
    assert not problems, "\n".join(problems)


def test_the_single_byte_tables_are_the_servers(
    servers: tuple[MariaDBServer, BackgroundFakeMaster],
) -> None:
    """fakemaster/protocol/charset_tables.py (scripts/capture-charset-tables.py) against the
    live server: what every byte of every single-byte character set is."""
    from fakemaster.protocol.charset_tables import SINGLE_BYTE_TABLES

    real, _ = servers
    wrong = []
    for charset, table in SINGLE_BYTE_TABLES.items():
        items = ", ".join(
            f"HEX(CONVERT(CONVERT(UNHEX('{byte:02X}') USING {charset}) USING utf32))"
            for byte in range(256)
        )
        (row,) = real.execute(f"SELECT {items}")
        served = "".join(chr(int(str(code), 16)) for code in row)
        wrong += [f"{charset} byte {b:#04x}" for b in range(256) if served[b] != table[b]]
    single = {c.charset for c in DEFAULT_COLLATIONS.values() if c.mbmaxlen == 1} - {"binary"}
    assert set(SINGLE_BYTE_TABLES) == single
    assert wrong == []
