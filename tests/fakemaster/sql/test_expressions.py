"""fakemaster.sql.expressions: SQL's functions written without parentheses. pt-find's use of
``SELECT CURRENT_TIMESTAMP`` is compared with a real 10.11 in
tests/integration/test_real_tools_differential.py."""

from __future__ import annotations

import pytest

from tests.fakemaster.sql.test_statements import error_of, make_session, single_result


@pytest.mark.parametrize("word", ["CURRENT_TIMESTAMP", "localtime", "LocalTimeStamp"])
def test_a_niladic_function_needs_no_parentheses(word: str) -> None:
    _, session = make_session()
    bare = single_result(session, f"SELECT {word}")
    called = single_result(session, f"SELECT {word}()")
    assert bare.columns[0].name == word  # headed as written
    assert bare.columns[0].type == called.columns[0].type


def test_quoted_it_is_a_column_name() -> None:
    _, session = make_session()
    error = error_of(session, "SELECT `CURRENT_TIMESTAMP`")
    assert (error.errno, error.message) == (1054, "Unknown column 'CURRENT_TIMESTAMP' in 'SELECT'")


# Values 10.11.19 gave for the same expressions (pt-mysql-summary's start time is
# ``LEFT(NOW() - INTERVAL n SECOND, 16)``); the column definitions are compared with a real
# server's in tests/integration/test_real_tools_differential.py.
@pytest.mark.parametrize(
    ("sql", "row"),
    [
        ("SELECT LEFT('2020-01-01 00:00:00' - INTERVAL 155 SECOND, 16)", [b"2019-12-31 23:57"]),
        ("SELECT '2020-01-01 00:00:00' - INTERVAL 2 HOUR", [b"2019-12-31 22:00:00"]),
        ("SELECT '2020-01-01' + INTERVAL 1 WEEK", [b"2020-01-08"]),
        ("SELECT LEFT('abcdef', 3), LEFT(NULL, 2), LEFT('é', 1)", [b"abc", None, "é".encode()]),
        ("SELECT NOW() - INTERVAL 1 DAY > '2000-01-01'", [b"1"]),
        # Out of range, not a date, lengths rounded or past the end: as 10.11.19 answered.
        ("SELECT '9999-12-31 23:59:59' + INTERVAL 1 SECOND", [None]),
        ("SELECT 'garbage' - INTERVAL 1 SECOND, NOW() + INTERVAL 99999999999 DAY", [None, None]),
        ("SELECT LEFT('abc', 1e300), LEFT('abc', -1), LEFT('abc', 2.6)", [b"abc", b"", b"abc"]),
    ],
)
def test_intervals_and_left(sql: str, row: list[bytes | None]) -> None:
    _, session = make_session()
    assert list(single_result(session, sql).rows[0]) == row


def test_an_interval_needs_a_unit_it_knows() -> None:
    _, session = make_session()
    assert error_of(session, "SELECT NOW() - INTERVAL 1 FORTNIGHT").errno == 1064
