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
        "EXPLAIN SELECT * FROM `shop`.`t` WHERE 1 = 2",
        "EXPLAIN SELECT CONCAT(`id`, 1) FROM `shop`.`t` WHERE `id` > 1",
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


@pytest.mark.parametrize(
    "sql",
    [
        # A range of the key (the ORed comparisons all on its first column, not every value).
        "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id` = 2 OR `id` <> 1",
        "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id` = 1",
        # Without a hint the optimizer may merge indexes.
        "EXPLAIN SELECT `id` FROM `shop`.`t` WHERE `id` = 1 OR `id` <> 1",
        # Anything but comparisons of a column with a literal, ORed.
        "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id` = 1 AND `d` = 1",
        "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id` < 1 OR `d` = 1",
        "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id` = `d` OR `d` = 1",
        "EXPLAIN SELECT `id` FROM `shop`.`t` IGNORE INDEX (`PRIMARY`)",
    ],
)
def test_ranges_and_merges_are_not_planned_here(sql: str) -> None:
    _, session = make_session()
    assert error_of(session, sql).errno == 1235


def test_the_key_sizing_form_scans_the_forced_key() -> None:
    _, session = make_session()
    sql = "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`primary`) WHERE `id`=1 OR `id`<>1"
    row = values(session, sql)[0]
    assert row[3:6] == [b"index", b"PRIMARY", b"PRIMARY"]
    assert row[-1] == b"Using where; Using index"
    # A column the key does not hold: the table is read.
    sql = "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `id`=1 OR `d`=1"
    assert values(session, sql)[0][3:6] == [b"ALL", b"PRIMARY", None]


def test_an_unknown_key_comes_before_an_unknown_column() -> None:
    _, session = make_session()
    sql = "EXPLAIN SELECT `nosuch` FROM `shop`.`t` FORCE INDEX (`nokey`) WHERE `id`=1 OR `d`=1"
    response = execute(session, sql).responses[0]
    assert isinstance(response, ResultSet) and response.error is not None
    assert len(response.columns) == 10 and response.error.errno == 1176
    assert response.error.message == "Key 'nokey' doesn't exist in table 't'"
    sql = "EXPLAIN SELECT `id` FROM `shop`.`t` FORCE INDEX (`PRIMARY`) WHERE `no`=1 OR `d`=1"
    error = execute(session, sql).responses[0]
    assert isinstance(error, ResultSet) and error.error is not None
    assert error.error.message == "Unknown column 'no' in 'WHERE'"
