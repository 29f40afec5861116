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
