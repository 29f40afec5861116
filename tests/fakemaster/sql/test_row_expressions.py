"""fakemaster.sql.row_expressions through the statements that use it: the chunk checksum over
``shop.t``'s rows, computed here independently (zlib's CRC32 of the CONCAT_WS text), CONV and
CAST at their edges as MariaDB documents them, and what cannot be evaluated answered with the
server's errors."""

from __future__ import annotations

import zlib
from functools import reduce

import pytest

from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, make_session, values

CHECKSUM = (
    "SELECT COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(CONCAT_WS('#', `id`,"
    " convert(`name` using utf8mb4), `d`, CONCAT(ISNULL(`name`), ISNULL(`d`)))) AS UNSIGNED)),"
    " 10, 16)), 0) AS crc FROM `shop`.`t`"
)
# shop.t's rows as CONCAT_WS renders them: NULLs left out, the ISNULL bitmap last.
ROW_TEXTS = ["1#a#1.50#00", "2#11", "10#Zoë#-3.00#00"]


def _crc(texts: list[str]) -> bytes:
    folded = reduce(lambda acc, text: acc ^ zlib.crc32(text.encode()), texts, 0)
    return format(folded, "x").encode()


def test_the_chunk_checksum_is_crc32_of_each_row_xored() -> None:
    _, session = make_session()
    assert values(session, CHECKSUM) == [[b"3", _crc(ROW_TEXTS)]]


def test_a_chunk_is_the_rows_its_where_keeps() -> None:
    _, session = make_session()
    chunk = CHECKSUM + " FORCE INDEX(`PRIMARY`) WHERE ((`id` >= '2')) AND ((`id` <= '10'))"
    assert values(session, chunk + " LOCK IN SHARE MODE /*checksum chunk*/") == [
        [b"2", _crc(ROW_TEXTS[1:])]
    ]
    # No row: COUNT 0 and BIT_XOR's 0, as a server answers an empty chunk.
    assert values(session, CHECKSUM + " WHERE `id` > 99") == [[b"0", b"0"]]


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("CONV('-1', 10, 16)", b"FFFFFFFFFFFFFFFF"),  # MariaDB's manual: 64-bit unsigned
        ("CONV('a', 16, 10)", b"10"),
        ("CONV('zz', 36, 10)", b"1295"),
        ("CONV('12', 1, 10)", None),  # no base 1
        ("CONV('" + "z" * 5000 + "', 36, 10)", b"18446744073709551615"),  # saturates
        ("CONV(NULL, 10, 16)", None),
        ("CAST('-1' AS UNSIGNED)", b"18446744073709551615"),
        ("CAST('12abc' AS UNSIGNED)", b"12"),
        ("CONCAT_WS(NULL, 'a', 'b')", None),
        ("CONCAT_WS('#', NULL, NULL)", b""),
        ("CONCAT('a', NULL)", None),
        ("CRC32(CONCAT_WS('#', 'a', 'b'))", str(zlib.crc32(b"a#b")).encode()),
    ],
)
def test_functions_at_their_edges(expression: str, expected: bytes | None) -> None:
    _, session = make_session()
    for sql in (
        "CREATE DATABASE scratch",
        "CREATE TABLE scratch.v (k INT NOT NULL, v VARCHAR(100), PRIMARY KEY (k))",
        f"INSERT INTO scratch.v (k, v) SELECT 1, {expression}",
    ):
        execute(session, sql)
    assert values(session, "SELECT v FROM scratch.v") == [[expected]]


@pytest.mark.parametrize(
    ("sql", "errno"),
    [
        ("SELECT COUNT(*), BIT_XOR(CRC32(nosuch)) FROM shop.t", 1054),
        ("SELECT COUNT(*), BIT_XOR(NOSUCH(id)) FROM shop.t", 1305),
        ("SELECT COUNT(*), BIT_XOR(CONV(id, 10)) FROM shop.t", 1582),
        ("SELECT COUNT(*), BIT_XOR(BIT_XOR(id)) FROM shop.t", 1305),
        ("SELECT COUNT(*), BIT_XOR(" + "CONCAT(" * 500 + "id" + ")" * 501 + " FROM shop.t", 1064),
        ("SELECT COUNT(*), BIT_XOR(id) FROM shop.nosuch", 1146),
    ],
)
def test_what_cannot_be_evaluated_is_an_error(sql: str, errno: int) -> None:
    _, session = make_session()
    assert error_of(session, sql).errno == errno
