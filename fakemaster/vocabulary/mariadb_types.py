"""MariaDB's own fixed-size binary types, UUID, INET4 and INET6: their bytes and their text.

A real MariaDB 10.11 logs them as fixed STRING columns (real type 0xFE, binary collation 63) of
16, 4 and 16 bytes, and nothing in the TABLE_MAP (not even ``binlog_row_metadata=FULL``) tells
them from BINARY(16) or BINARY(4): only the schema knows. The value bytes are:

* UUID: the 16 bytes in text order (also for version 1 UUIDs, whose record format swaps the
  time segments: the binlog carries the text order; see docs/verified-facts.md);
* INET4: the address in network order; INET6: the 16 bytes in network order;

and, like BINARY(n), without their trailing zero bytes (``Field_string::pack``): ``'::'`` is
logged as the empty string. The text is what ``SELECT`` prints: UUID as lowercase 8-4-4-4-12,
INET4 dotted, INET6 as MariaDB's ``inet_ntop`` prints it (lowercase hex, the *first longest*
run of zero words -- even a single one -- as ``::``, and ``::a.b.c.d`` / ``::ffff:a.b.c.d`` for
IPv4-compatible and IPv4-mapped addresses).

The codec takes these values (encoder: :meth:`FixedBinaryValue.logged`; decoder:
:func:`fixed_binary_value`), the scenarios model holds them as its column values.
"""

from __future__ import annotations

import re
from typing import ClassVar, Self

from fakemaster.vocabulary.errors import FakemasterError

__all__ = [
    "FIXED_BINARY_TYPES",
    "FixedBinaryValue",
    "FixedBinaryTextError",
    "Inet4",
    "Inet6",
    "Uuid",
    "fixed_binary_value",
]


class FixedBinaryTextError(FakemasterError, ValueError):
    """A text that is not a value of the type (the server answers ``Incorrect <type> value``)."""

    def __init__(self, sql_type: str, text: object) -> None:
        self.sql_type = sql_type
        self.text = text
        super().__init__(f"Incorrect {sql_type} value: {text!r}")


class FixedBinaryValue:
    """One value: its ``packed`` bytes, exactly ``LENGTH`` of them (zero bytes included)."""

    __slots__ = ("packed",)
    SQL_TYPE: ClassVar[str] = ""
    LENGTH: ClassVar[int] = 0

    def __init__(self, packed: bytes) -> None:
        if not isinstance(packed, (bytes, bytearray)) or len(packed) != self.LENGTH:
            raise FixedBinaryTextError(self.SQL_TYPE, packed)
        self.packed = bytes(packed)

    @classmethod
    def parse(cls, text: str) -> Self:
        """The value a text stands for, as the server reads it (FixedBinaryTextError if not
        one)."""
        raw = cls.packed_of(text) if isinstance(text, str) else None
        if raw is None:
            raise FixedBinaryTextError(cls.SQL_TYPE, text)
        return cls(raw)

    @classmethod
    def packed_of(cls, text: str) -> bytes | None:
        """The value bytes of a text, None when the server refuses it."""
        raise NotImplementedError

    @classmethod
    def from_logged(cls, raw: bytes) -> FixedBinaryValue:
        """The value of bytes as a row image holds them (trailing zero bytes dropped)."""
        if len(raw) > cls.LENGTH:
            raise FixedBinaryTextError(cls.SQL_TYPE, raw)
        return cls(bytes(raw) + b"\x00" * (cls.LENGTH - len(raw)))

    def logged(self) -> bytes:
        """The bytes a row image holds: trailing zero bytes dropped, as the server logs them."""
        return self.packed.rstrip(b"\x00")

    def text(self) -> str:
        raise NotImplementedError

    def sort_key(self) -> bytes:
        """The bytes the server orders values by (``ORDER BY``, a key's order)."""
        return self.packed

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text()!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FixedBinaryValue)
            and type(other) is type(self)
            and other.packed == self.packed
        )

    def __lt__(self, other: FixedBinaryValue) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __hash__(self) -> int:
        return hash((self.SQL_TYPE, self.packed))

    def __reduce__(self) -> tuple[type[FixedBinaryValue], tuple[bytes]]:
        return (type(self), (self.packed,))


# What a real MariaDB 10.11 accepts: 32 hex digits with any hyphens between two of them (none
# first or last, no spaces or braces).
_UUID_TEXT = re.compile(r"[0-9a-fA-F](?:-*[0-9a-fA-F]){31}\Z")


class Uuid(FixedBinaryValue):
    """A UUID: 32 hex digits; on input hyphens may stand between any two of them."""

    __slots__ = ()
    SQL_TYPE = "uuid"
    LENGTH = 16

    @classmethod
    def packed_of(cls, text: str) -> bytes | None:
        if not _UUID_TEXT.match(text):
            return None
        raw = bytes.fromhex(text.replace("-", ""))
        if raw[6] >= 0x80 and raw[8] < 0x80:
            # A version nibble of 8 or more needs the variant bit (a real 10.11 refuses the
            # text: its record format could not tell it from a swapped UUID).
            return None
        return raw

    def sort_key(self) -> bytes:
        """MariaDB's record format: an RFC 4122 UUID of versions 1 to 5 is stored (and ordered)
        with its five segments in reverse order, node first; any other UUID as it is."""
        raw = self.packed
        if 0 < raw[6] < 0x60 and raw[8] & 0x80:
            return raw[10:] + raw[8:10] + raw[6:8] + raw[4:6] + raw[:4]
        return raw

    def text(self) -> str:
        h = self.packed.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_INET4_TEXT = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\Z")


def _ipv4_bytes(text: str) -> bytes | None:
    found = _INET4_TEXT.match(text)
    if found is None:
        return None
    parts = [int(group) for group in found.groups()]
    if any(part > 255 for part in parts):
        return None
    return bytes(parts)


def _ipv4_text(raw: bytes) -> str:
    return ".".join(str(byte) for byte in raw)


class Inet4(FixedBinaryValue):
    """An IPv4 address, dotted decimal (at most three digits a part)."""

    __slots__ = ()
    SQL_TYPE = "inet4"
    LENGTH = 4

    @classmethod
    def packed_of(cls, text: str) -> bytes | None:
        return _ipv4_bytes(text)

    def text(self) -> str:
        return _ipv4_text(self.packed)


_HEX_WORD = re.compile(r"[0-9a-fA-F]{1,4}\Z")


def _words(part: str) -> list[int] | None:
    """The 16-bit words of one side of ``::`` (None when one is not 1-4 hex digits)."""
    if part == "":
        return []
    words = []
    for item in part.split(":"):
        if not _HEX_WORD.match(item):
            return None
        words.append(int(item, 16))
    return words


def _ipv6_bytes(text: str) -> bytes | None:
    head, colon, last = text.rpartition(":")
    if "." in last:  # a trailing dotted IPv4 address stands for the last two words
        v4 = _ipv4_bytes(last)
        if v4 is None or not colon:
            return None
        text = f"{head}:{v4[:2].hex()}:{v4[2:].hex()}"
    if text.count("::") > 1:
        return None
    if "::" in text:
        left, right = text.split("::")
        before, after = _words(left), _words(right)
        if before is None or after is None or len(before) + len(after) > 7:
            return None
        words = before + [0] * (8 - len(before) - len(after)) + after
    else:
        found = _words(text)
        if found is None or len(found) != 8:
            return None
        words = found
    return b"".join(word.to_bytes(2, "big") for word in words)


def _longest_zero_run(words: list[int]) -> tuple[int, int]:
    """(position, length) of the first longest run of zero words; length 0 when there is none."""
    best = (-1, 0)
    start = -1
    for position, word in enumerate([*words, 1]):
        if word == 0:
            start = position if start < 0 else start
        elif start >= 0:
            if position - start > best[1]:
                best = (start, position - start)
            start = -1
    return best


class Inet6(FixedBinaryValue):
    """An IPv6 address (an IPv4 address is not one: MariaDB refuses it for INET6)."""

    __slots__ = ()
    SQL_TYPE = "inet6"
    LENGTH = 16

    @classmethod
    def packed_of(cls, text: str) -> bytes | None:
        return _ipv6_bytes(text)

    def text(self) -> str:
        raw = self.packed
        words = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, 16, 2)]
        position, length = _longest_zero_run(words)
        if position == 0 and (length == 6 or (length == 5 and words[5] == 0xFFFF)):
            return ("::" if length == 6 else "::ffff:") + _ipv4_text(raw[12:])
        if length == 0:
            return ":".join(f"{word:x}" for word in words)
        left = ":".join(f"{word:x}" for word in words[:position])
        right = ":".join(f"{word:x}" for word in words[position + length :])
        return f"{left}::{right}"


FIXED_BINARY_TYPES: dict[str, type[FixedBinaryValue]] = {
    "uuid": Uuid,
    "inet4": Inet4,
    "inet6": Inet6,
}


def fixed_binary_value(sql_type: str, raw: bytes) -> FixedBinaryValue:
    """The typed value of a STRING column's logged bytes, the schema saying its SQL type."""
    try:
        kind = FIXED_BINARY_TYPES[sql_type.lower()]
    except KeyError:
        raise ValueError(f"{sql_type!r} is not one of {', '.join(FIXED_BINARY_TYPES)}") from None
    return kind.from_logged(raw)
