"""Character columns in the character sets beyond utf8mb4/latin1/binary (utf8mb3, ucs2,
utf16, utf16le, utf32, cp1251, gbk, sjis), each history run on a real MariaDB 10.11 and
compared with the compiler's events and the oracle's tables; the value edges (the longest
value in each set, a character beyond the BMP in utf8mb3 and ucs2, CHAR padding in the wide
sets) explicit."""

from __future__ import annotations

import pytest

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
    scenario = Scenario(settings)
    columns = ", ".join(
        f"c_{cs} CHAR(10) CHARACTER SET {cs}, v_{cs} VARCHAR(12) CHARACTER SET {cs}, "
        f"t_{cs} TEXT CHARACTER SET {cs}, e_{cs} ENUM('a','{TEXTS[cs][:2]}') CHARACTER SET {cs}, "
        f"s_{cs} SET('x','{TEXTS[cs][-2:]}') CHARACTER SET {cs}"
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
                f"s_{cs}": f"x,{text[-2:]}",
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
