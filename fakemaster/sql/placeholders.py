"""The ``?`` placeholders of a prepared statement's text, and the text with values bound.

A prepared statement is answered by the same statement table as a query: its placeholders are
replaced by SQL literals of the values bound to them, and what the answer says about the text
(a column named after its expression, a syntax error quoting the text) is mapped back onto the
text as the client wrote it, where MariaDB shows ``?``.

A ``?`` counts where MariaDB's lexer would read it as a token: not inside a quoted string or
identifier or a comment (but inside an executable comment ``/*!...*/``, whose words count).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BoundText", "bind", "placeholders"]

# What the scanner steps over as a whole: quoted strings and identifiers (with their escapes
# and doubled quotes), plain comments, line comments; an executable comment's opening marker
# is stepped over alone, so that its contents are scanned as code.
_SKIPPED = re.compile(
    r"""'(?:[^'\\]|\\.|'')*'?"""
    r"""|"(?:[^"\\]|\\.|"")*"?"""
    r"|`(?:[^`]|``)*`?"
    r"|/\*M?!\d*"
    r"|/\*.*?(?:\*/|\Z)"
    r"|--(?=[\x00-\x20\x7f]|\Z)[^\n]*"
    r"|#[^\n]*",
    re.DOTALL,
)
_INTERESTING = re.compile(r"""['"`/#?-]""")


def placeholders(text: str) -> list[int]:
    """The offsets of the placeholders in ``text``."""
    found: list[int] = []
    pos = 0
    while (hit := _INTERESTING.search(text, pos)) is not None:
        pos = hit.start()
        if text[pos] == "?":
            found.append(pos)
            pos += 1
            continue
        skipped = _SKIPPED.match(text, pos)
        pos = skipped.end() if skipped is not None and skipped.end() > pos else pos + 1
    return found


@dataclass(frozen=True, slots=True)
class _Segment:
    bound_start: int
    bound_end: int
    original_start: int
    original_end: int
    param: int | None  # the placeholder's index, for a bound value


@dataclass(frozen=True, slots=True)
class BoundText:
    """``text``: the statement with the values in place of its placeholders; ``original``: as
    the client prepared it."""

    text: str
    original: str
    segments: tuple[_Segment, ...]

    def _original_offset(self, pos: int, *, end: bool) -> int:
        for segment in self.segments:
            if segment.bound_start <= pos < segment.bound_end or (
                end and pos == segment.bound_end and pos > segment.bound_start
            ):
                if segment.param is not None:
                    return segment.original_end if end else segment.original_start
                return segment.original_start + pos - segment.bound_start
        return len(self.original)

    def original_span(self, start: int, end: int) -> tuple[str, int | None]:
        """The original text of the bound text's ``[start, end)``, and the placeholder's index
        when that span lies within one bound value (a select item that is just ``?``)."""
        for segment in self.segments:
            if (
                segment.param is not None
                and segment.bound_start <= start
                and end <= segment.bound_end
            ):
                return "?", segment.param
        first = self._original_offset(start, end=False)
        last = self._original_offset(end, end=True) if end > start else first
        return self.original[first:last], None

    def map_name(self, name: str, cursor: int) -> tuple[str, int | None, int]:
        """A column name made from the bound text, as made from the original: the first
        occurrence at or after ``cursor``. Returns the name, the index of the placeholder it
        stands for alone (or None), and where to look for the next column's name."""
        at = self.text.find(name, cursor) if name else -1
        if at < 0:
            return name, None, cursor
        original, param = self.original_span(at, at + len(name))
        return original, param, at + len(name)

    def original_suffix(self, suffix: str) -> str | None:
        """The original text from where ``suffix`` (a tail of the bound text) starts."""
        if not self.text.endswith(suffix):
            return None
        start = len(self.text) - len(suffix)
        return self.original[self._original_offset(start, end=False) :]


def bind(text: str, positions: Sequence[int], literals: Sequence[str]) -> BoundText:
    """``text`` with the placeholder at each of ``positions`` replaced by its literal."""
    parts: list[str] = []
    segments: list[_Segment] = []
    bound = 0
    previous = 0
    for index, (pos, literal) in enumerate(zip(positions, literals, strict=True)):
        plain = text[previous:pos]
        segments.append(_Segment(bound, bound + len(plain), previous, pos, None))
        parts.append(plain)
        bound += len(plain)
        segments.append(_Segment(bound, bound + len(literal), pos, pos + 1, index))
        parts.append(literal)
        bound += len(literal)
        previous = pos + 1
    tail = text[previous:]
    segments.append(_Segment(bound, bound + len(tail), previous, len(text), None))
    parts.append(tail)
    return BoundText("".join(parts), text, tuple(segments))
