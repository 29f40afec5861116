"""Where the parts of a TOML scenario are in its file, so that an error about "step 13, change
3" also says "line 88, column 7". ``tomllib`` keeps no positions, so this is a small scanner of
the text that knows only what the scenario form needs: the ``[[tables]]`` and ``[[steps]]``
headers (or ``tables = [...]`` / ``steps = [...]`` arrays of inline tables), the elements of a
step's ``changes = [...]`` array, and where a table's ``create`` string starts.

It never decides anything about the scenario: when the text is written in a way it does not
follow, a position is None and the error goes without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Position", "TomlPositions"]

_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(\w+)[ \t]*\]\][ \t]*(#.*)?$")
_TABLE_HEADER = re.compile(r"^[ \t]*\[[ \t]*[\w.\"' ]+[ \t]*\][ \t]*(#.*)?$")
_QUOTES = ('"""', "'''", '"', "'")


@dataclass(frozen=True, slots=True)
class Position:
    """A 1-based line and column of the file."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


@dataclass
class TomlPositions:
    """The positions of one TOML text's scenario parts (see the module doc)."""

    text: str
    _line_starts: list[int] = field(default_factory=list)
    _sections: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        self._sections = {"tables": [], "steps": [], "accounts": []}
        self._scan_headers()

    def position(self, offset: int) -> Position:
        """The line and column of a character offset of the text."""
        line = _last_at_most(self._line_starts, offset)
        return Position(line + 1, offset - self._line_starts[line] + 1)

    def item(self, array: str, number: int) -> Position | None:
        """Where element ``number`` (1-based) of ``tables`` or ``steps`` starts."""
        sections = self._sections.get(array, [])
        if 0 < number <= len(sections):
            return self.position(sections[number - 1][0])
        return None

    def change(self, step: int, number: int) -> Position | None:
        """Where change ``number`` (1-based) of step ``step`` starts."""
        starts = self._elements_of_key("steps", step, "changes")
        if 0 < number <= len(starts):
            return self.position(starts[number - 1])
        return None

    def create_text(self, table: int) -> int | None:
        """The offset of the first character of table ``table``'s CREATE text."""
        found = self._key_value("tables", table, "create")
        if found is None:
            return None
        for quote in _QUOTES:
            if self.text.startswith(quote, found):
                start = found + len(quote)
                if len(quote) == 3 and self.text.startswith("\n", start):
                    start += 1  # TOML trims the newline right after the opening quotes
                return start
        return None

    # --- scanning ---------------------------------------------------------------------------

    def _scan_headers(self) -> None:
        boundaries: list[tuple[int, str | None]] = []
        for number, start in enumerate(self._line_starts):
            end = self._line_starts[number + 1] if number + 1 < len(self._line_starts) else None
            line = self.text[start:end].rstrip("\n")
            header = _HEADER.match(line)
            if header:
                boundaries.append((start, header.group(1)))
            elif _TABLE_HEADER.match(line):
                boundaries.append((start, None))
        for number, (start, name) in enumerate(boundaries):
            end = boundaries[number + 1][0] if number + 1 < len(boundaries) else len(self.text)
            if name in self._sections:
                self._sections[name].append((start, end))
        if not self._sections["tables"] and not self._sections["steps"]:
            self._scan_inline_arrays()

    def _scan_inline_arrays(self) -> None:
        for name in ("tables", "steps", "accounts"):
            match = re.search(rf"^[ \t]*{name}[ \t]*=[ \t]*\[", self.text, re.MULTILINE)
            if match:
                starts = _element_starts(self.text, match.end() - 1)
                self._sections[name] = [
                    (start, _matching_end(self.text, start)) for start in starts
                ]

    def _section(self, array: str, number: int) -> tuple[int, int] | None:
        sections = self._sections.get(array, [])
        return sections[number - 1] if 0 < number <= len(sections) else None

    def _key_value(self, array: str, number: int, key: str) -> int | None:
        """The offset where ``key``'s value starts inside element ``number`` of ``array``."""
        section = self._section(array, number)
        if section is None:
            return None
        pattern = re.compile(rf"(^|[{{,\s]){key}[ \t]*=[ \t]*", re.MULTILINE)
        offset = section[0]
        while True:
            match = pattern.search(self.text, offset, section[1])
            if match is None:
                return None
            if not _inside_string(self.text, section[0], match.start()):
                return match.end()
            offset = match.end()

    def _elements_of_key(self, array: str, number: int, key: str) -> list[int]:
        start = self._key_value(array, number, key)
        if start is None or not self.text.startswith("[", start):
            return []
        return _element_starts(self.text, start)


def _last_at_most(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def _skip_string(text: str, at: int) -> int:
    """The offset just after the string that starts at ``at``."""
    for quote in _QUOTES:
        if text.startswith(quote, at):
            position = at + len(quote)
            while position < len(text):
                if quote[0] == '"' and text[position] == "\\":
                    position += 2
                    continue
                if text.startswith(quote, position):
                    return position + len(quote)
                if len(quote) == 1 and text[position] == "\n":
                    return position  # an unterminated one-line string: tomllib refused it
                position += 1
            return position
    return at + 1


def _inside_string(text: str, start: int, offset: int) -> bool:
    position = start
    while position < offset:
        char = text[position]
        if char in "\"'":
            end = _skip_string(text, position)
            if end > offset:
                return True
            position = end
        elif char == "#":
            end = text.find("\n", position)
            if end == -1 or end > offset:
                return True
            position = end
        else:
            position += 1
    return False


def _element_starts(text: str, opening: int) -> list[int]:
    """The offsets of the inline tables that are direct elements of the array opened at
    ``opening`` (a ``[``)."""
    starts: list[int] = []
    depth = 0
    position = opening
    while position < len(text):
        char = text[position]
        if char in "\"'":
            position = _skip_string(text, position)
            continue
        if char == "#":
            end = text.find("\n", position)
            position = len(text) if end == -1 else end
            continue
        if char in "[{":
            if depth == 1 and char == "{":
                starts.append(position)
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                break
        position += 1
    return starts


def _matching_end(text: str, opening: int) -> int:
    depth = 0
    position = opening
    while position < len(text):
        char = text[position]
        if char in "\"'":
            position = _skip_string(text, position)
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    return len(text)
