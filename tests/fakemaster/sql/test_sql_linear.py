"""SQL a client sends is matched and parsed in time linear in its length, nested with a depth
limit, so that one hostile statement cannot hold the event loop every connection shares.

No verdict here depends on the clock: an input far beyond what a super-linear algorithm could
finish is simply run (a backtracking version would never return, which the run's own hang
bound catches), and work is counted where it can be.
"""

from __future__ import annotations

import sys
from types import FrameType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakemaster.protocol.resultset import parser_stack_exhausted, syntax_error
from fakemaster.sql.like import LikePattern
from fakemaster.sql.sqltext import MAX_NESTING, Tok, tokenize
from tests.fakemaster.sql.test_statements import error_of, make_session, values

# --- LIKE ----------------------------------------------------------------------------------


def reference_like(pattern: str, text: str, escape: str = "\\") -> bool:
    """Independent LIKE: dynamic programming over (pattern element, text prefix)."""
    elements: list[tuple[str, str]] = []  # ("%", ""), ("_", ""), ("=", char)
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == escape and index + 1 < len(pattern):
            elements.append(("=", pattern[index + 1].lower()))
            index += 2
            continue
        elements.append((char, "") if char in "%_" else ("=", char.lower()))
        index += 1
    text = text.lower()
    reachable = [True] + [False] * len(text)  # text prefixes the elements so far can match
    for kind, char in elements:
        following = [False] * (len(text) + 1)
        for end in range(len(text) + 1):
            if kind == "%":
                following[end] = reachable[end] or (end > 0 and following[end - 1])
            elif end > 0 and reachable[end - 1]:
                following[end] = kind == "_" or text[end - 1] == char
        reachable = following
    return reachable[len(text)]


ALPHABET = "aAb%_\\"
texts = st.text(alphabet="aAb_%\\", max_size=12)
like_patterns = st.text(alphabet=ALPHABET, max_size=12)


@given(pattern=like_patterns, text=texts)
def test_like_agrees_with_a_dynamic_programming_reference(pattern: str, text: str) -> None:
    assert LikePattern.compile(pattern).matches(text) == reference_like(pattern, text)


@given(
    pieces=st.lists(st.sampled_from(["%", "%%", "_", "a", "ab", "ba", "b_a", "\\%", "\\_"])),
    text=st.text(alphabet="ab%_", max_size=30),
)
def test_like_with_many_wildcards_agrees_with_the_reference(pieces: list[str], text: str) -> None:
    pattern = "".join(pieces)
    assert LikePattern.compile(pattern).matches(text) == reference_like(pattern, text)


def test_like_of_ten_thousand_percent_signs_matches_in_linear_time() -> None:
    # A regex translation (".*" per "%") backtracks exponentially here: ten "%" took 76 s.
    many = LikePattern.compile("%" * 10_000 + "x")
    name = "gtid_binlog_pos" * 1000
    assert not many.matches(name)
    assert many.matches(name + "x")
    assert LikePattern.compile("%_" * 5_000 + "%").matches("a" * 5_000)
    assert not LikePattern.compile("%_" * 5_000 + "%").matches("a" * 4_999)


def test_like_pattern_keeps_its_percent_runs_as_empty_segments() -> None:
    # The structure behind the linear bound: one segment per '%', never a choice point.
    pattern = LikePattern.compile("%" * 10 + "server_id" + "%" * 10)
    assert len(pattern.segments) == 21
    assert sum(1 for segment in pattern.segments if segment) == 1


def test_like_is_case_insensitive_and_honours_the_escape() -> None:
    assert LikePattern.compile("SERVER\\_ID").matches("server_id")
    assert not LikePattern.compile("server\\_id").matches("serverXid")
    assert LikePattern.compile("server_id").matches("serverXid")
    assert LikePattern.compile("100\\%").matches("100%")
    assert not LikePattern.compile("100\\%").matches("1000")
    assert LikePattern.compile("ends\\").matches("ends\\")


# --- SET STATEMENT ... FOR -----------------------------------------------------------------


def test_set_statement_with_a_huge_run_of_spaces_is_answered() -> None:
    # The old pattern (".+?\s+FOR") backtracked over such a run: 64k spaces took 12 s.
    _, session = make_session()
    spaces = " " * (1 << 20)
    assert values(session, f"SET STATEMENT{spaces}max_statement_time=1 FOR SELECT 1") == [[b"1"]]
    assert values(session, f"SET STATEMENT max_statement_time=1{spaces}FOR{spaces}SELECT 1") == [
        [b"1"]
    ]
    settings = ", ".join(["max_statement_time=1"] * 20_000)
    assert values(session, f"SET STATEMENT {settings} FOR SELECT 2") == [[b"2"]]


def test_nested_set_statements_are_taken_without_recursion() -> None:
    # A real MariaDB 10.11 answers "SET STATEMENT a=1 FOR SET STATEMENT a=2 FOR SELECT 1".
    _, session = make_session()
    nested = "SET STATEMENT max_statement_time=1 FOR " * 20_000
    assert values(session, nested + "SELECT 1") == [[b"1"]]


@pytest.mark.parametrize(
    ("sql", "near"),
    [  # what a real MariaDB 10.11 answers
        ("SET STATEMENT max_statement_time=1", ""),
        ("SET STATEMENT max_statement_time=1 FOR", ""),
        ("SET STATEMENT max_statement_time=1 FOR  ", ""),
        ("SET STATEMENT FOR SELECT 1", "FOR SELECT 1"),
    ],
)
def test_set_statement_without_settings_or_inner_statement_is_a_syntax_error(
    sql: str, near: str
) -> None:
    _, session = make_session()
    assert error_of(session, sql).message == syntax_error(near, 1).message


# --- Tokenizer -----------------------------------------------------------------------------


def _python_lines_run_by_tokenize(text: str) -> int:
    """How many lines of Python ``tokenize`` runs on ``text``: a count, not a duration."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> object:
        nonlocal count
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()  # a coverage tracer, say: put back afterwards
    sys.settrace(trace)
    try:
        tokenize(text)
    finally:
        sys.settrace(previous)
    return count


def test_a_long_string_literal_is_not_scanned_character_by_character() -> None:
    # A per-character loop runs millions of lines for a 1 MiB literal; scanning runs of plain
    # characters in the regex engine runs a few lines per 64 KiB, none per character.
    # Counted after a first call: what the lexer builds once (on its first use in the process,
    # which depends on the tests that ran before) is not per-character work.
    _python_lines_run_by_tokenize("SELECT 'warm'")
    short = _python_lines_run_by_tokenize("SELECT 'abc'")
    long = _python_lines_run_by_tokenize("SELECT '" + "a" * (1 << 20) + "'")
    # The regex takes at most 64 KiB a call (one call holds the GIL): a few lines per 64 KiB.
    assert short < long <= short + 8 * ((1 << 20) // 65536)
    with_escapes = _python_lines_run_by_tokenize("SELECT '" + ("a" * 4096 + "\\n") * 256 + "'")
    assert with_escapes < 256 * 40  # a handful of lines per escape, none per plain character


def test_a_sixteen_mebibyte_literal_is_read_whole() -> None:
    body = "x" * (16 << 20)
    tokens = tokenize(f"SELECT '{body}', \"{body}\", `{body}`")
    assert [token.kind for token in tokens] == [
        Tok.WORD,
        Tok.STRING,
        Tok.OP,
        Tok.STRING,
        Tok.OP,
        Tok.QUOTED_IDENT,
        Tok.END,
    ]
    assert tokens[1].text == tokens[3].text == tokens[5].text == body


def test_literal_escapes_and_doubled_quotes_are_still_read() -> None:
    tokens = tokenize("SELECT 'a''b\\nc\\'d', \"x\"\"y\", `p``q\\n`")
    assert [token.text for token in tokens if token.kind in (Tok.STRING, Tok.QUOTED_IDENT)] == [
        "a'b\nc'd",
        'x"y',
        "p`q\\n",
    ]


def test_an_unterminated_comment_is_the_syntax_error_a_real_server_gives() -> None:
    # MariaDB 10.11: "SELECT 1 /* abc /* def" -> 1064 near '/* abc /* def' at line 1.
    _, session = make_session()
    assert error_of(session, "SELECT 1 /* abc /* def").message == (
        syntax_error("/* abc /* def", 1).message
    )
    # Each "/*" once rescanned the rest of the text for its "*/": quadratic in their number.
    many = "SELECT 1 " + "/* " * 200_000
    assert error_of(session, many).message == syntax_error(many[9:], 1).message
    assert values(session, "SELECT 1 /* a */ /*Max*/") == [[b"1"]]


# --- Nesting depth -------------------------------------------------------------------------

DEEP = 40_000  # beyond what a real MariaDB 10.11 parses too (it stops after ~32,000 levels)


@pytest.mark.parametrize(
    "sql",
    [
        pytest.param("SELECT " + "(" * DEEP + "1" + ")" * DEEP, id="parentheses"),
        pytest.param("SELECT " + "- " * DEEP + "1", id="unary-minus"),
        pytest.param("SELECT " + "abs(" * DEEP + "1" + ")" * DEEP, id="function-calls"),
        pytest.param("SELECT " + "@a:=" * DEEP + "1", id="assignments"),
        pytest.param("SELECT (" + "1=(" * DEEP + "1" + ")" * DEEP + ")", id="comparisons"),
        pytest.param("SET @a=" + "(" * DEEP + "1" + ")" * DEEP, id="set"),
        pytest.param(
            "SET STATEMENT max_statement_time=1 FOR SELECT " + "(" * DEEP + "1" + ")" * DEEP,
            id="set-statement",
        ),
        pytest.param(
            "SHOW VARIABLES WHERE " + "NOT " * DEEP + "Variable_name='server_id'", id="where-not"
        ),
        pytest.param(
            "SHOW VARIABLES WHERE " + "(" * DEEP + "Variable_name='server_id'" + ")" * DEEP,
            id="where-parentheses",
        ),
    ],
)
def test_deep_nesting_is_the_error_a_real_server_gives_when_its_parser_stack_is_full(
    sql: str,
) -> None:
    # MariaDB 10.11, SELECT with 40,000 "(": 1064 "memory exhausted near '(((...' at line 1".
    _, session = make_session()
    error = error_of(session, sql)
    assert (error.errno, error.sqlstate) == (1064, "42000")
    assert error.message.startswith("memory exhausted near '")
    assert error.message.endswith("' at line 1")


def test_the_nesting_error_quotes_from_the_first_token_past_the_limit() -> None:
    _, session = make_session()
    sql = "SELECT 1,\n" + "(" * DEEP + "1" + ")" * DEEP
    first_refused = len("SELECT 1,\n") + MAX_NESTING  # MAX_NESTING parentheses were taken
    assert error_of(session, sql).message == (
        parser_stack_exhausted(sql[first_refused:], 2).message
    )
    assert parser_stack_exhausted("(" * 100, 2).message == (
        "memory exhausted near '" + "(" * 77 + "...' at line 2"
    )


def test_nesting_within_the_limit_is_answered() -> None:
    _, session = make_session()
    depth = MAX_NESTING - 1
    assert values(session, "SELECT " + "(" * depth + "7" + ")" * depth) == [[b"7"]]
    shown = values(
        session, "SHOW VARIABLES WHERE " + "(" * depth + "Variable_name='server_id'" + ")" * depth
    )
    assert [row[0] for row in shown] == [b"server_id"]
