"""SELECT over a served table (fakemaster/sql/answers/table_select.py), sans-IO, for what
mutation testing found unpinned by the faster tests (docs/mutation.md): BETWEEN's upper bound,
NULL's place in ORDER BY, aggregates, FROM DUAL, IN over columns, <> and !=, hex literals,
DATABASE() with no database selected, qualified ORDER BY names. Every expected row was read
from MariaDB 10.11.19 on the same table and rows (tests/support/catalogue.py's shop.t)."""

from __future__ import annotations

import pytest

from fakemaster.protocol.resultset import ResultSet, SqlError
from fakemaster.sql.answers.table_select import zone_offset
from fakemaster.sql.statements import execute
from fakemaster.vocabulary.packets import ServerStatus
from tests.fakemaster.sql.test_snapshot_statements import make


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT 1 FROM DUAL", [(b"1",)]),
        ("SELECT id FROM shop.t WHERE id BETWEEN 2 AND 10", [(b"2",), (b"10",)]),
        ("SELECT id FROM shop.t ORDER BY name", [(b"2",), (b"1",), (b"10",)]),  # NULL first
        ("SELECT id FROM shop.t ORDER BY name DESC", [(b"10",), (b"1",), (b"2",)]),
        ("SELECT COUNT(*), COUNT(name), COUNT(d) FROM shop.t", [(b"3", b"2", b"2")]),
        ("SELECT MIN(name), MAX(d) FROM shop.t", [(b"a", b"1.50")]),
        ("SELECT MIN(id) FROM shop.t", [(b"1",)]),
        ("SELECT COUNT(*) FROM shop.t WHERE id = 1", [(b"1",)]),
        ("SELECT MAX(id) FROM shop.t WHERE id > 1", [(b"10",)]),
        ("SELECT id FROM shop.t WHERE 2 IN (id, 7)", [(b"2",)]),
        ("SELECT id FROM shop.t WHERE 2 NOT IN (id, 7)", [(b"1",), (b"10",)]),
        ("SELECT id FROM shop.t WHERE id <> 2", [(b"1",), (b"10",)]),
        ("SELECT id FROM shop.t WHERE id != 2", [(b"1",), (b"10",)]),
        ("SELECT id FROM shop.t WHERE id > 2", [(b"10",)]),
        ("SELECT id FROM shop.t WHERE name = 0x61", [(b"1",)]),
        ("SELECT id FROM shop.t WHERE DATABASE() IS NULL", [(b"1",), (b"2",), (b"10",)]),
        ("SELECT id FROM shop.t ORDER BY t.name DESC", [(b"10",), (b"1",), (b"2",)]),
    ],
)
def test_select_answers_as_mariadb(sql: str, expected: list[tuple[bytes | None, ...]]) -> None:
    _, _, session = make()
    response = execute(session, sql).responses[0]
    assert isinstance(response, ResultSet)
    assert [tuple(row) for row in response.rows] == expected
    assert len(response.columns) == len(expected[0])  # a definition for each cell


def test_an_aggregate_of_star_other_than_count_is_a_syntax_error() -> None:
    _, _, session = make()
    response = execute(session, "SELECT MAX(*) FROM shop.t").responses[0]
    assert isinstance(response, SqlError)
    assert response.errno == 1064


@pytest.mark.parametrize(
    ("zone", "seconds"),
    [("+00:00", 0), ("+05:30", 19_800), ("-05:30", -19_800), ("-8:00", -28_800), ("SYSTEM", 0)],
)
def test_timezone_offsets(zone: str, seconds: int) -> None:
    assert zone_offset(zone) == seconds


# SERVER_QUERY_NO_INDEX_USED in the result's EOF, as MariaDB 10.11.19 sets it on the same
# table (read with pymysql from the EOF packet). Two shapes where the fake differs are left out
# and named in docs/mutation.md: NOT BETWEEN on the key and MIN(key) under a WHERE on it.
@pytest.mark.parametrize(
    ("sql", "no_index_used"),
    [
        ("SELECT * FROM shop.t", True),
        ("SELECT * FROM shop.t WHERE id = 1", False),
        ("SELECT * FROM shop.t WHERE id IN (1, 2)", False),
        ("SELECT * FROM shop.t WHERE id NOT IN (1, 2)", True),
        ("SELECT * FROM shop.t WHERE id BETWEEN 1 AND 2", False),
        ("SELECT COUNT(*) FROM shop.t", True),
        ("SELECT MIN(id) FROM shop.t", False),
        ("SELECT MIN(name) FROM shop.t", True),
        ("SELECT table_name FROM information_schema.TABLES WHERE table_schema = 'shop'", True),
    ],
)
def test_no_index_used_as_mariadb_flags_it(sql: str, no_index_used: bool) -> None:
    _, _, session = make()
    response = execute(session, sql).responses[0]
    assert isinstance(response, ResultSet)
    flagged = [bool(status & ServerStatus.QUERY_NO_INDEX_USED) for status in response.extra_status]
    assert flagged == [no_index_used, no_index_used]
