"""``x IN (constants)`` as set lookups: the work is rows + constants, not rows x constants (an
IN list of 200,000 names over information_schema compared every row with every name).

Each constant is filed under the way the WHERE clause compares it with the column (numbers,
bytes as they are, text as it is or folded by the _general_ci collations), keyed so that two
values are equal under that comparison exactly when their keys are. A row's value is keyed
the same way once per kind of comparison present. What a key cannot stand for (a NaN, a row
value that is no number in a numeric comparison) is compared one by one, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from fakemaster.sql.release import release_in_slices, release_set

__all__ = ["ConstantList"]

Value = Any  # a cell value or a literal (str, bytes, Decimal)


class ConstantList:
    """The constants of an IN list, for a left operand that is ``numeric`` or ``folded``.

    ``number``, ``text`` and ``fold`` are the WHERE clause's own conversions (a value as a
    Decimal or None, as text, as its _general_ci weight); ``compare(value, constant)`` its
    comparison, used where no key stands for it."""

    def __init__(
        self,
        numeric: bool,
        folded: bool,
        constants: Sequence[tuple[Value, bool, bool]],
        *,
        number: Callable[[Value], Decimal | None],
        text: Callable[[Value], str],
        fold: Callable[[str], str],
    ) -> None:
        self._number, self._text, self._fold = number, text, fold
        self.has_null = False
        self._numbers: set[Decimal] = set()
        self._numeric: list[tuple[Value, bool, bool]] = []  # for row values that are no number
        self._bytes: set[bytes] = set()
        self._bytes_as_text: set[str] = set()
        self._plain: set[str] = set()
        self._folded: set[str] = set()
        self._one_by_one: list[tuple[Value, bool, bool]] = []
        for constant in constants:
            self._file(numeric, folded, constant)

    def _file(self, numeric: bool, folded: bool, constant: tuple[Value, bool, bool]) -> None:
        value, its_numeric, its_folded = constant
        if value is None:
            self.has_null = True
        elif numeric or its_numeric:
            key = self._number(value)
            if key is None or key.is_nan():
                self._one_by_one.append(constant)
            else:
                self._numbers.add(key)
                self._numeric.append(constant)
        elif folded or its_folded:
            self._folded.add(self._fold(self._text(value)))
        elif isinstance(value, bytes):
            self._bytes.add(value)
            self._bytes_as_text.add(self._text(value).rstrip(" "))
        else:
            self._plain.add(self._text(value).rstrip(" "))

    def release(self) -> None:
        """Empty the constants a slice at a time (see fakemaster.sql.release)."""
        for items in (self._numeric, self._one_by_one):
            release_in_slices(items)
        for keys in (self._numbers, self._bytes, self._bytes_as_text, self._plain, self._folded):
            release_set(keys)

    def holds(
        self, value: Value, compare: Callable[[Value, tuple[Value, bool, bool]], int]
    ) -> bool:
        """Whether ``value`` (not NULL) equals one of the constants."""
        if self._numeric:
            key = self._number(value)
            if key is not None and not key.is_nan():
                if key in self._numbers:
                    return True
            elif any(compare(value, constant) == 0 for constant in self._numeric):
                return True
        if self._bytes:
            if isinstance(value, bytes):
                if value in self._bytes:
                    return True
            elif self._text(value).rstrip(" ") in self._bytes_as_text:
                return True
        if self._plain and self._text(value).rstrip(" ") in self._plain:
            return True
        if self._folded and self._fold(self._text(value)) in self._folded:
            return True
        return any(compare(value, constant) == 0 for constant in self._one_by_one)
