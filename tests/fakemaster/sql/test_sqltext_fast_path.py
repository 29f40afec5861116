"""The lexer reads the common tokens (words, numbers, hex, operators) in one regex match each;
everything else goes the long way. Both ways must read every text alike: the long way alone
(``_never`` in place of the one match) is the reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.protocol.resultset import SqlError
from fakemaster.sql import sqltext
from fakemaster.sql.sqltext import DEFAULT_VERSION_ID, lex
from tests.budget import examples

PIECES = [
    "a",
    "b",
    "1",
    "0x1F",
    "x'0a'",
    "_latin1'x'",
    "'s'",
    '"d"',
    "`q`",
    " ",
    "\n",
    "\t",
    "-",
    "--",
    "-- ",
    "#",
    "/*",
    "*/",
    "/*!",
    "/*!50002 ",
    "/*M!100000 ",
    "*",
    "/",
    ".",
    "5",
    ".5",
    "e",
    "1e5",
    "1.5",
    "(",
    ")",
    ",",
    ";",
    "@a",
    "@@global.x",
    "=",
    "<=>",
    "<",
    "!",
    "|",
    "||",
    "&&",
    ":=",
    "é",
    "0x",
    "0xg",
    "X'",
    "1.5abc",
    "12abc",
    "1e",
    "1e+",
    "$",
    "\\",
    "?",
    "\u00a0",
]


def read(text: str, fast: bool) -> object:
    try:
        lexed = sqltext._lex(
            text, DEFAULT_VERSION_ID, sqltext._FAST_TOKEN.match if fast else sqltext._never
        )
    except SqlError as error:
        return ("error", error.errno, error.message)
    tokens = [(t.kind, t.text, t.start, t.end, t.extra, t.raw) for t in lexed.tokens]
    return tokens, lexed.plain, lexed.cuts, lexed.found_comment


@settings(max_examples=examples(2))
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_one_match_per_token_reads_as_the_long_way(text: str) -> None:
    assert read(text, fast=True) == read(text, fast=False)


@settings(max_examples=examples(1))
@given(st.text(max_size=30))
def test_any_text_reads_as_the_long_way(text: str) -> None:
    assert read(text, fast=True) == read(text, fast=False)


def test_a_number_followed_by_a_word_character_is_no_number() -> None:
    # The long way takes "1.5abc" as WORD "1", ".", WORD "5abc": no shorter number is tried.
    assert [t.text for t in lex("1.5abc").tokens][:3] == ["1", ".", "5abc"]
    assert read("1.5abc", fast=True) == read("1.5abc", fast=False)


def test_tokens_are_built_once_per_token_of_the_text() -> None:
    # Counted, not timed: one token built per token of the text, whatever n (no re-basing
    # copy for a query's first statement).
    built = []
    real = sqltext.Token

    class Counting(real):  # type: ignore[misc,valid-type]
        __slots__ = ()

        def __init__(self, *args: object, **kw: object) -> None:
            built.append(1)
            super().__init__(*args, **kw)  # type: ignore[arg-type]

    def count(n: int) -> int:
        built.clear()
        sql = "SELECT id FROM t WHERE id IN (" + ", ".join(str(i) for i in range(n)) + ")"
        sqltext.Token = Counting  # type: ignore[misc]
        try:
            sqltext.split_statements(sql, sqltext.lex(sql))
        finally:
            sqltext.Token = real  # type: ignore[misc]
        return len(built)

    # SELECT id FROM t WHERE id IN ( n numbers, n - 1 commas ) END: 2n + 9 tokens, and the
    # statement's own END.
    assert count(1000) == 2 * 1000 + 10
    assert count(4000) == 2 * 4000 + 10
