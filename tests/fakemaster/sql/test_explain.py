"""EXPLAIN SELECT (fakemaster.sql.answers.explain): what is planned here and what is left to
ER_NOT_SUPPORTED_YET. The plans themselves are compared with a real 10.11 over every column type
of the snapshot scenarios in tests/integration/test_sql_comments_differential.py."""

from __future__ import annotations

import pytest

from fakemaster.protocol.resultset import ResultSet
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, make_session, values


def test_a_whole_table_read_is_planned() -> None:
    _, session = make_session()
    rows = values(session, "EXPLAIN SELECT * FROM `shop`.`t`")
    assert len(rows) == 1 and rows[0][:2] == [b"1", b"SIMPLE"]
    assert values(session, "EXPLAIN SELECT 1") == [
        [b"1", b"SIMPLE", None, None, None, None, None, None, None, b"No tables used"]
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "EXPLAIN SELECT * FROM `shop`.`t` WHERE 1 = 1",
        "EXPLAIN SELECT COUNT(*) FROM `shop`.`t`",
        "EXPLAIN SELECT * FROM information_schema.TABLES",
        "EXPLAIN EXTENDED SELECT * FROM `shop`.`t`",
    ],
)
def test_what_is_not_planned_here_is_not_supported(sql: str) -> None:
    _, session = make_session()
    assert error_of(session, sql).errno == 1235


def test_an_unknown_table_is_the_servers_error() -> None:
    _, session = make_session()
    assert error_of(session, "EXPLAIN SELECT * FROM `shop`.`nosuch`").errno == 1146
    assert error_of(session, "EXPLAIN SELECT").errno == 1064
    assert execute(session, "EXPLAIN SELECT * FROM `shop`.`t`").responses
    # An unknown column: the ten column definitions, then the ERR (as MariaDB sends it).
    response = execute(session, "EXPLAIN SELECT `nosuch` FROM `shop`.`t`").responses[0]
    assert isinstance(response, ResultSet) and response.error is not None
    assert len(response.columns) == 10 and response.error.errno == 1054
