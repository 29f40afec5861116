"""Where a prepared statement's placeholders are, and mapping bound text back to the text as
written. Expected offsets are counted by hand from the texts."""

from __future__ import annotations

import pytest

from fakemaster.sql.placeholders import bind, placeholders


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT ?", [7]),
        ("SELECT ?, ?", [7, 10]),
        ("SELECT '?', ?", [12]),
        ('SELECT "it\'s ?", ?', [17]),
        ("SELECT 'a\\'?', ?", [15]),
        ("SELECT 'a''?', ?", [15]),
        ("SELECT `?`, ?", [12]),
        ("SELECT /* ? */ ?", [15]),
        ("SELECT ? -- ?\n, ?", [7, 16]),
        ("SELECT ? # ?\n, ?", [7, 15]),
        ("SELECT /*!50000 ? */", [16]),  # an executable comment's words count
        ("SELECT 1-?", [9]),
        ("SELECT 'open ?", []),
    ],
)
def test_placeholders_are_found_where_the_lexer_reads_tokens(
    text: str, expected: list[int]
) -> None:
    assert placeholders(text) == expected


def test_a_select_item_that_is_a_bound_value_alone_maps_back_to_its_placeholder() -> None:
    text = "SELECT 5, ?, ? + 1 AS x"
    bound = bind(text, placeholders(text), ["5", "'abc'"])
    assert bound.text == "SELECT 5, 5, 'abc' + 1 AS x"
    # The literal 5 written in the text stays 5; the bound 5 after it is the placeholder.
    assert bound.map_name("5", 0) == ("5", None, 8)
    assert bound.map_name("5", 8) == ("?", 0, 11)
    assert bound.map_name("abc", 11)[:2] == ("?", 1)
    assert bound.original_span(13, 22) == ("? + 1", None)


def test_the_original_suffix_starts_where_the_bound_suffix_does() -> None:
    text = "SELEC ? FROM t"
    bound = bind(text, placeholders(text), ["'x y'"])
    assert bound.original_suffix("'x y' FROM t") == "? FROM t"
    assert bound.original_suffix("y' FROM t") == "? FROM t"  # inside a value: from its "?"
    assert bound.original_suffix("nothing") is None
