"""Comments as MariaDB's lexer reads them (fakemaster.sql.sqltext): which executable comments are
SQL for the served version, which are dropped, and what a broken comment gives. The answers
themselves are compared with a real server in tests/integration/test_sql_comments_differential.py;
these pin the boundaries, including for a served version no real server here runs."""

from __future__ import annotations

import sys
from types import FrameType

import pytest

from fakemaster.protocol.resultset import syntax_error
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.sqltext import lex, version_id, without_cuts
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, make_session, single_result


def words(text: str, served: int = 101119) -> list[str]:
    return [token.text for token in lex(text, served).tokens[:-1]]


@pytest.mark.parametrize(
    ("comment", "kept"),
    [
        ("/*!50002 FULL*/", True),
        ("/*!50699 FULL*/", True),
        ("/*!50700 FULL*/", False),  # MySQL 5.7+: not MariaDB's
        ("/*!99999 FULL*/", False),
        ("/*!100000 FULL*/", True),
        ("/*M!50700 FULL*/", True),  # /*M! is MariaDB's whatever the number
        ("/*!101119 FULL*/", True),  # the served version itself
        ("/*!101120 FULL*/", False),
        ("/*M!101120 FULL*/", False),
        ("/*!FULL*/", True),
        ("/*M!FULL*/", True),
        ("/* FULL */", False),
    ],
)
def test_an_executable_comment_is_sql_up_to_the_served_version(comment: str, kept: bool) -> None:
    assert words(f"SHOW {comment} TABLES") == (
        ["SHOW", "FULL", "TABLES"] if kept else ["SHOW", "TABLES"]
    )


def test_the_served_version_decides() -> None:
    assert words("SHOW /*!100600 FULL*/ TABLES", version_id("10.5.22-MariaDB-log")) == [
        "SHOW",
        "TABLES",
    ]
    assert words("SHOW /*!100600 FULL*/ TABLES", version_id("10.6.0-MariaDB")) == [
        "SHOW",
        "FULL",
        "TABLES",
    ]
    assert version_id("10.11.19-MariaDB-0+deb12u1-log") == 101119


def test_digits_that_are_no_version_stay_in_the_text() -> None:
    assert words("SELECT /*!1234 x*/") == ["SELECT", "1234", "x"]  # four digits: no version
    assert words("SELECT /*!1011187 x*/") == ["SELECT", "7", "x"]  # six digits, then SQL
    assert words("SELECT /*!1011207 x*/") == ["SELECT"]


def test_a_dropped_comment_may_hold_plain_comments_one_level_deep() -> None:
    assert words("SELECT /*!99999 a /* b */ c */ 1") == ["SELECT", "1"]
    assert words("SELECT /*!99999 a /*/ b */ c */ 1") == ["SELECT", "1"]
    # A plain comment holds none: its first "*/" ends it.
    assert words("SELECT /* a /* b */ 1") == ["SELECT", "1"]


def test_line_comments_need_a_blank_after_the_dashes() -> None:
    assert words("SELECT 1 -- x") == ["SELECT", "1"]
    assert words("SELECT 1 --\tx") == ["SELECT", "1"]
    assert words("SELECT 1 --") == ["SELECT", "1"]
    assert words("SELECT 1 --x") == ["SELECT", "1", "-", "-", "x"]
    assert words("SELECT 1 #x\n, 2") == ["SELECT", "1", ",", "2"]


def test_the_statement_table_reads_through_comments() -> None:
    _, session = make_session()
    assert len(single_result(session, "SHOW /*!50002 FULL*/ TABLES FROM shop").columns) == 2
    assert len(single_result(session, "SHOW /*!99999 FULL*/ TABLES FROM shop").columns) == 1
    assert len(single_result(session, "SHOW /*FULL*/ TABLES FROM shop").columns) == 1
    assert single_result(session, "SHOW /*40003 GLOBAL*/ VARIABLES LIKE 'port'").rows


def test_broken_comments_are_the_syntax_errors_mariadb_gives() -> None:
    _, session = make_session()
    for sql, near in [
        ("SELECT 1 /* open", "/* open"),
        ("SELECT 1 /*!99999 open", "/*!99999 open"),
        ("SELECT 1 /*!99999 a /* b */", "/*!99999 a /* b */"),
        ("SELECT 1 /*!50000 + 1", ""),
        ("SELECT 1 /*!50000 -- the end */", ""),
    ]:
        assert error_of(session, sql).message == syntax_error(near, 1).message, sql
    # An open executable comment is rejected at the end, before the blanks MariaDB strips.
    assert error_of(session, "SELECT 1 /*!50000\n + 1\n;\n").message == syntax_error("", 2).message


def test_comments_alone_are_ok_and_nothing_at_all_is_empty() -> None:
    _, session = make_session()
    for sql in ["/* c */", "-- c", "# c", "/*!99999 x */", "/* c */;"]:
        assert isinstance(execute(session, sql).responses[0], OkResult), sql
    for sql in ["", "   ", ";"]:
        assert error_of(session, sql).errno == 1065, sql


def test_names_leave_out_markers_and_dropped_comments_but_keep_plain_ones() -> None:
    text = "SELECT 1 /*!50000 + 1 */ + 1 /*!99999 x */ /* c */ + 2"
    assert without_cuts(text, 7, len(text), lex(text).cuts) == "1  + 1  + 1  /* c */ + 2"


def _lines_run_by_lex(text: str) -> int:
    """How many lines of Python ``lex`` runs on ``text``: a count, not a duration."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> object:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        lex(text)
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize(
    "piece",
    ["/* c */ ", "/*!50000 1 */, ", "/*!99999 a /* b */ c */ ", "-- c\n", "# c\n", "/*!50700 x */"],
)
def test_work_grows_linearly_with_the_number_of_comments(piece: str) -> None:
    small = _lines_run_by_lex("SELECT 1, " + piece * 100 + "2")
    large = _lines_run_by_lex("SELECT 1, " + piece * 1000 + "2")
    assert large <= 11 * small
