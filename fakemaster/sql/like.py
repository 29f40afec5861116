"""SQL ``LIKE`` matching in time linear in the pattern, without regex backtracking.

A pattern translated to a regex (``%`` as ``.*``) backtracks: ten ``%`` against a 64-character
name take minutes, on the event loop every connection shares. Here the pattern is cut at its
``%`` into segments of literal characters and ``_``. The first segment must match at the start,
the last one at the end, and each one between at its leftmost place after the previous one:
taking the leftmost place never loses a match, since whatever follows a ``%`` can start anywhere
after it. No position is ever revisited for a segment, so the work is at most the text's length
times the longest segment, plus the pattern's length; runs of ``%`` cost nothing.

Comparison is case-insensitive, one character against one character, like the ``_ci``
collations a real server uses for variable names.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LikePattern"]

# In a segment, ANY stands for ``_``: exactly one character, whatever it is.
ANY = None
Segment = tuple[str | None, ...]


def _fold(text: str) -> str:
    """Lower-case ``text`` character by character, keeping its length (a character whose lower
    case is longer, like U+0130, stays as it is) so that positions keep meaning one character."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(lower if len(lower := char.lower()) == 1 else char for char in text)


@dataclass(frozen=True, slots=True)
class LikePattern:
    """A compiled ``LIKE`` pattern; :meth:`matches` tells whether a whole text matches it."""

    segments: tuple[Segment, ...]  # the pieces between the '%'; one piece when there is none

    @classmethod
    def compile(cls, pattern: str, escape: str = "\\") -> LikePattern:
        """Compile ``pattern``: ``%`` any run of characters, ``_`` one character, ``escape``
        followed by a character that character itself (at the very end: the escape itself)."""
        pattern = _fold(pattern)
        segments: list[Segment] = []
        current: list[str | None] = []
        index = 0
        length = len(pattern)
        while index < length:
            char = pattern[index]
            if char == escape and index + 1 < length:
                current.append(pattern[index + 1])
                index += 2
                continue
            if char == "%":
                segments.append(tuple(current))
                current = []
            elif char == "_":
                current.append(ANY)
            else:
                current.append(char)
            index += 1
        segments.append(tuple(current))
        return cls(tuple(segments))

    def matches(self, text: str) -> bool:
        text = _fold(text)
        segments = self.segments
        if len(segments) == 1:
            return len(text) == len(segments[0]) and _matches_at(text, 0, segments[0])
        first, *middle, last = segments
        if len(first) + len(last) > len(text):
            return False
        if not _matches_at(text, 0, first):
            return False
        tail_start = len(text) - len(last)
        if not _matches_at(text, tail_start, last):
            return False
        pos = len(first)
        for segment in middle:
            if not segment:
                continue
            found = _leftmost(text, pos, tail_start, segment)
            if found < 0:
                return False
            pos = found + len(segment)
        return True


def _matches_at(text: str, pos: int, segment: Segment) -> bool:
    """Whether ``segment`` matches ``text`` at ``pos`` (the caller knows it fits)."""
    for offset, wanted in enumerate(segment):
        if wanted is not ANY and text[pos + offset] != wanted:
            return False
    return True


def _leftmost(text: str, start: int, stop: int, segment: Segment) -> int:
    """The first position at or after ``start`` where ``segment`` matches and ends by ``stop``,
    or -1. A segment without ``_`` is found by ``str.find``."""
    last_start = stop - len(segment)
    if ANY not in segment:
        return text.find("".join(char for char in segment if char is not ANY), start, stop)
    for pos in range(start, last_start + 1):
        if _matches_at(text, pos, segment):
            return pos
    return -1
