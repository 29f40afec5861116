"""Text converted to character_set_results: each rule on characters whose encodings are
standard (Unicode, ISO 8859-1, Windows-1251, UTF-16/32 big-endian), each way a conversion can
go wrong (a character the target lacks, a byte that is no character, a 4-byte character in a
3-byte set, a number in a set that is not ASCII-compatible). The server's own answers are
compared in tests/integration/test_results_charset_differential.py."""

from __future__ import annotations

import pytest

from fakemaster.protocol.charsets import charset_default
from fakemaster.protocol.conversion import (
    client_text,
    converter,
    error_message,
    numeric_converter,
    text_encoder,
)
from fakemaster.protocol.resultset import (
    ClientProtocol,
    Column,
    ColumnDefinition,
    ResultSet,
    SqlError,
    result_set_payloads,
    text_column,
)
from fakemaster.vocabulary.constants import ColumnType

UTF8 = "aé Ж 😀".encode()


@pytest.mark.parametrize(
    ("target", "sent"),
    [
        ("utf8mb3", b"a\xc3\xa9 \xd0\x96 ?"),  # no 4-byte characters in utf8mb3
        ("latin1", b"a\xe9 ? ?"),
        ("cp1251", b"a? \xc6 ?"),
        ("ucs2", b"\x00a\x00\xe9\x00 \x04\x16\x00 \x00?"),
        ("utf16", b"\x00a\x00\xe9\x00 \x04\x16\x00 \xd8\x3d\xde\x00"),
        ("utf16le", b"a\x00\xe9\x00 \x00\x16\x04 \x00\x3d\xd8\x00\xde"),
        ("utf32", b"".join(ord(c).to_bytes(4, "big") for c in "aé Ж 😀")),
        ("ascii", b"a? ? ?"),
    ],
)
def test_utf8mb4_text_converted(target: str, sent: bytes) -> None:
    convert = converter("utf8mb4", target)
    assert convert is not None and convert(UTF8) == sent


def test_each_missing_character_is_one_question_mark() -> None:
    convert = converter("utf8mb4", "latin1")
    assert convert is not None and convert("Привет".encode()) == b"??????"


def test_a_byte_that_is_no_character_reads_as_a_question_mark() -> None:
    convert = converter("utf8mb4", "latin1")
    assert convert is not None and convert(b"a\xffb") == b"a?b"


def test_what_is_sent_as_it_is() -> None:
    for source, target in [
        ("utf8mb4", "utf8mb4"),
        ("utf8mb3", "utf8mb4"),
        ("binary", "ucs2"),
        ("latin1", "binary"),
    ]:
        assert converter(source, target) is None, (source, target)
    assert numeric_converter("latin1") is None and numeric_converter("utf8mb4") is None
    to_ucs2 = numeric_converter("ucs2")
    assert to_ucs2 is not None and to_ucs2(b"-1.5") == b"\x00-\x001\x00.\x005"


def test_latin1_is_windows_1252_with_its_gaps_kept() -> None:
    assert text_encoder("latin1")("€\x81") == b"\x80\x81"


def test_a_result_set_is_converted_names_and_all() -> None:
    columns = [
        text_column("é", 3),
        Column("n", ColumnType.LONG, length=11),
        text_column("raw", 2, collation=63),
    ]
    result = ResultSet(columns, [("Ж".encode(), b"12", b"\xff\x00")])
    protocol = ClientProtocol(capabilities=0x200 | 0x1000000)  # PROTOCOL_41, DEPRECATE_EOF
    ucs2, utf8 = charset_default("ucs2"), charset_default("utf8mb4")
    assert ucs2 is not None and utf8 is not None
    payloads = result_set_payloads(result, protocol, status=0, results=ucs2, connection=utf8)
    name = ColumnDefinition.decode(payloads[1])
    # The name in ucs2 (read back as UTF-8 with surrogate escapes: 00 E9).
    assert name.name.encode("utf-8", "surrogateescape") == b"\x00\xe9"
    assert name.charset == ucs2.id and name.length == 6
    assert payloads[4] == b"\x02\x04\x16" + b"\x04\x001\x002" + b"\x02\xff\x00"
    # NULL: sent as the answer holds it.
    same = result_set_payloads(result, protocol, status=0, results=None, connection=utf8)
    assert same[4] == b"\x02\xd0\x96\x0212\x02\xff\x00"


def test_statements_are_read_in_the_client_character_set() -> None:
    assert client_text(b"SELECT '\xe9'", "latin1") == "SELECT 'é'"
    assert client_text(b"SELECT '\xc6'", "cp1251") == "SELECT 'Ж'"
    assert client_text("SELECT '中'".encode("gbk"), "gbk") == "SELECT '中'"
    # UTF-8 (and bytes that are not) as before; swe7's '@' is not ASCII: read as UTF-8.
    assert client_text(b"SELECT '\xff'", "utf8mb4") == "SELECT '\udcff'"
    assert client_text(b"SELECT @@version", "swe7") == "SELECT @@version"
    assert client_text(b"SELECT 1", None) == "SELECT 1"


def test_error_messages_are_converted_escaped_and_cut_at_a_zero_byte() -> None:
    text = "Unknown database 'nÖЖ'"
    assert error_message(text, None) == text.encode()
    assert error_message(text, "latin1") == b"Unknown database 'n\xd6\\0416'"
    assert error_message(text, "cp1251") == b"Unknown database 'n\\00D6\xc6'"
    assert error_message(text, "swe7") == b"Unknown database 'n\\.0416'"  # swe7: \\ is O-umlaut
    assert error_message(text, "ucs2") == b""  # 00 55 ...: a C string ends at once
    assert error_message(text, "utf16le") == b"U"
    error = SqlError(1049, "42000", text)
    assert error.payload(results="cp1251").endswith(b"'n\\00D6\xc6'")
