"""Text converted to ``character_set_results`` as MariaDB 10.11 converts it on the way out.

The server converts every string it sends in a result set (``Protocol::store_string_aux``):
a text value from its own character set, the column definition's names from the system
character set (utf8mb3), and numbers and temporal values (ASCII) too when the target is not
ASCII-compatible (ucs2, utf16, utf16le, utf32: ``store_numeric_string_aux``). Binary strings
and a ``binary`` or NULL ``character_set_results`` are sent as they are. A character the
target cannot hold, and a byte that is no character of the source, becomes ``?`` (in the
target's encoding: ``00 3F`` in ucs2), as ``my_convert`` does; utf8mb3 holds no 4-byte
character (an emoji is ``?``). The single-byte character sets are the server's own tables
(fakemaster.protocol.charset_tables, captured from MariaDB 10.11: Python's codecs differ for
several and lack six); the multi-byte ones are Python's codecs.

:func:`converter` gives the conversion between two character sets (None when the bytes stay
as they are), :func:`text_encoder` how a Python text is sent in a character set.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Callable

from fakemaster.protocol.charset_tables import SINGLE_BYTE_TABLES

__all__ = [
    "ASCII_INCOMPATIBLE",
    "client_text",
    "error_message",
    "PYTHON_CODECS",
    "converter",
    "numeric_converter",
    "text_decoder",
    "text_encoder",
]

# MariaDB's multi-byte character sets -> Python codecs (the single-byte ones are the server's
# own tables: fakemaster.protocol.charset_tables).
PYTHON_CODECS: dict[str, str] = {
    "big5": "big5",
    "cp932": "cp932",
    "eucjpms": "euc_jp",
    "euckr": "euc_kr",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "sjis": "shift_jis",
    "ucs2": "utf-16-be",
    "ujis": "euc_jp",
    "utf16": "utf-16-be",
    "utf16le": "utf-16-le",
    "utf32": "utf-32-be",
    "utf8mb3": "utf-8",
    "utf8mb4": "utf-8",
}
# Targets where even ASCII takes more than a byte: numbers are converted too.
ASCII_INCOMPATIBLE = frozenset({"ucs2", "utf16", "utf16le", "utf32"})
# Character sets whose bytes mean the same as in another's (source -> targets that need no
# conversion from it).
_SAME_BYTES = {"utf8mb3": {"utf8mb4"}, "ascii": {"utf8mb3", "utf8mb4", "latin1"}}
_BEYOND_BMP = re.compile("[\U00010000-\U0010ffff]")  # what utf8mb3 and ucs2 cannot hold
_BMP_ONLY = frozenset({"utf8mb3", "ucs2"})
_QUESTION = "fakemaster.question"
# Where Python's Japanese codecs and MariaDB's differ on the way out: MariaDB's sjis sends a
# backslash as 81 5F (its 5C is the yen sign), and none of the three has the yen sign (U+00A5:
# '?'), which Python writes as 5C.
_JAPANESE_REMAP = {
    "sjis": str.maketrans({"\\": "\uff3c", "\u00a5": "?"}),
    "ujis": str.maketrans({"\u00a5": "?"}),
    "eucjpms": str.maketrans({"\u00a5": "?"}),
}


def _question(error: UnicodeError) -> tuple[str, int]:
    """What my_convert puts for a character the target lacks (one '?' each), or for a byte
    that is no character of the source."""
    if isinstance(error, UnicodeEncodeError):
        return "?" * (error.end - error.start), error.end
    assert isinstance(error, UnicodeDecodeError)
    return "?", error.start + 1


codecs.register_error(_QUESTION, _question)


class _Unmapped(dict[int, str]):
    """A translation table in which a character it lacks becomes '?'."""

    def __missing__(self, key: int) -> str:
        return "?"


@functools.cache
def _byte_maps(charset: str) -> tuple[dict[int, str], _Unmapped]:
    """(byte -> character, character -> byte as a latin-1 character) of a single-byte set."""
    table = SINGLE_BYTE_TABLES[charset]
    decode = {byte: char for byte, char in enumerate(table)}
    encode = _Unmapped()
    for byte, char in enumerate(table):
        if char != "?" or byte == ord("?"):
            encode.setdefault(ord(char), chr(byte))
    return decode, encode


@functools.cache
def text_encoder(charset: str) -> Callable[[str], bytes]:
    """How a text is sent in ``charset`` (a MariaDB character set name; KeyError for one that
    is not MariaDB's)."""
    if charset in SINGLE_BYTE_TABLES:
        _, to_bytes = _byte_maps(charset)
        return lambda text: text.translate(to_bytes).encode("latin-1")
    name = PYTHON_CODECS[charset]
    remap = _JAPANESE_REMAP.get(charset)
    if remap is not None:
        return lambda text: text.translate(remap).encode(name, _QUESTION)
    if charset in _BMP_ONLY:
        return lambda text: _BEYOND_BMP.sub("?", text).encode(name, _QUESTION)
    return lambda text: text.encode(name, _QUESTION)


@functools.cache
def text_decoder(charset: str) -> Callable[[bytes], str]:
    """The text of bytes in ``charset``; a byte that is no character of it reads as '?'."""
    if charset in SINGLE_BYTE_TABLES:
        to_text, _ = _byte_maps(charset)
        return lambda data: data.decode("latin-1").translate(to_text)
    name = PYTHON_CODECS[charset]
    return lambda data: data.decode(name, _QUESTION)


@functools.cache
def converter(source: str, target: str) -> Callable[[bytes], bytes] | None:
    """How bytes in ``source`` are sent in ``target``; None when they are sent as they are
    (the same character set, one a subset of the other, or ``binary`` on either side)."""
    if source == target or "binary" in (source, target) or target in _SAME_BYTES.get(source, ()):
        return None
    decode, encode = text_decoder(source), text_encoder(target)
    return lambda data: encode(decode(data))


@functools.cache
def numeric_converter(target: str) -> Callable[[bytes], bytes] | None:
    """How a number's or a temporal value's text (ASCII) is sent in ``target``: converted only
    when ``target`` is not ASCII-compatible."""
    if target not in ASCII_INCOMPATIBLE:
        return None
    encode = text_encoder(target)
    return lambda data: encode(data.decode("ascii", _QUESTION))


def client_text(data: bytes, charset: object) -> str:
    """A statement's text as the server reads it in ``character_set_client``: UTF-8 (bytes
    that are not, kept as surrogate escapes) unless the client declared another character set,
    whose bytes are then its characters (latin1's ``E9`` is ``é``)."""
    name = str(charset or "")
    if not _ascii_based(name):
        return data.decode("utf-8", "surrogateescape")
    return text_decoder(name)(data)


_ASCII = "".join(map(chr, range(128)))


@functools.cache
def _ascii_based(charset: str) -> bool:
    """Whether ``charset`` is one a statement is read in: its ASCII bytes ASCII (not swe7,
    whose ``@`` is ``É``), not UTF-8 (read as UTF-8 already) nor unknown."""
    if charset in SINGLE_BYTE_TABLES:
        return SINGLE_BYTE_TABLES[charset][:128] == _ASCII
    return charset in PYTHON_CODECS and charset not in _UTF8_OR_WIDE


_UTF8_OR_WIDE = ASCII_INCOMPATIBLE | {"utf8mb3", "utf8mb4"}


def error_message(text: str, charset: str | None) -> bytes:
    """An ERR packet's message in ``character_set_results`` (None: NULL or binary, UTF-8), as
    the server converts it: a character the target lacks becomes ``\\XXXX`` (its code point;
    ``.XXXX`` in a set without a backslash, swe7), the whole then converted like any text, and
    cut at its first zero byte (a C string: nothing is left of ucs2's ``00 55``, one character
    of utf16le's ``55 00``)."""
    if charset is None or charset in ("utf8mb3", "utf8mb4"):
        return text.encode("utf-8", "surrogateescape")
    encode = text_encoder(charset)
    table = SINGLE_BYTE_TABLES.get(charset)
    escape = "." if table is not None and table[0x5C] != "\\" else "\\"
    escaped = "".join(
        char if char == "?" or encode(char) != b"?" else f"{escape}{ord(char):04X}" for char in text
    )
    return encode(escaped).split(b"\0", 1)[0]
