"""The lexer's word-character classes are written as the ASCII characters they leave out (a
class with a range up to U+10FFFF is slow to compile, issue #25). They must be the very sets
the written-out classes name: every code point is checked, and the whole one-match pattern is
compared with its written-out form on arbitrary text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.sql import sqltext
from tests.budget import examples

# The classes as they were written before, the reference.
WORD = r"A-Za-z0-9_$\x80-\U0010ffff"
WRITTEN_OUT = {
    "_WORD_CHAR": rf"[{WORD}]",
    "_WORD_CHAR_OR_QUOTE": rf"[{WORD}'\"]",
    "_VAR_NAME_CHAR": r"[A-Za-z0-9_$.\x80-\U0010ffff]",
}
FAST_TOKEN = re.compile(
    r"\s*+(?:"
    r"(?P<hex>0x([0-9A-Fa-f]+))"
    rf"|(?P<number>(?>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))(?![{WORD}])"
    rf"|(?P<word>[{WORD}]+)(?![{WORD}'\"])"
    r"|(?P<op>:=|<=>|<>|!=|<=|>=|\|\||&&|[=<>(),;.+%!~^&|]|-(?!-)|/(?!\*)|\*(?!/))"
    r")"
)
EVERY_CODE_POINT = "".join(map(chr, range(0x110000)))  # surrogates included, as str holds them


def test_each_class_holds_the_code_points_of_its_written_out_form() -> None:
    for name, reference in WRITTEN_OUT.items():
        ours = getattr(sqltext, name)
        assert re.sub(ours, "", EVERY_CODE_POINT) == re.sub(reference, "", EVERY_CODE_POINT), name


def test_the_word_and_variable_patterns_are_the_classes_repeated() -> None:
    assert sqltext._WORD.pattern == sqltext._WORD_CHAR + "+"
    assert sqltext._VAR_NAME.pattern == sqltext._VAR_NAME_CHAR + "+"


def _reading(pattern: re.Pattern[str], text: str) -> list[object]:
    found: list[object] = []
    for pos in range(len(text) + 1):
        match = pattern.match(text, pos)
        found.append(None if match is None else (match.span(), match.lastgroup, match.groups()))
    return found


# Characters around the classes' edges: each ASCII boundary, quotes, and beyond ASCII.
EDGES = "#$%/09:@AZ[^_`az{\x7f\x80'\".-+*e \t\n\u00a0\u00e9\ud800\U0001f600\U0010ffff"


@given(st.text(alphabet=st.sampled_from(EDGES) | st.characters(), max_size=40))
@settings(max_examples=examples(2))
def test_the_one_match_pattern_reads_as_its_written_out_form(text: str) -> None:
    assert _reading(sqltext._FAST_TOKEN, text) == _reading(FAST_TOKEN, text)
