"""UUID, INET4 and INET6 text and bytes, against a real MariaDB 10.11: every value's text is the
one the server prints for the same bytes, and every text parses to the bytes the server stores.

The values are enumerated, not drawn: every pattern of zero and non-zero words of an INET6
address (where ``::`` goes is the hard part), the IPv4-compatible and -mapped forms, and the
edges of each type.
"""

from __future__ import annotations

import pytest

from fakemaster.vocabulary.mariadb_types import (
    FixedBinaryTextError,
    Inet4,
    Inet6,
    Uuid,
    fixed_binary_value,
)
from tests.peers.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb


def _inet6_patterns() -> list[bytes]:
    values = []
    for mask in range(256):  # bit i set: word i is non-zero
        words = [(0x1001 + 0x111 * i) if mask >> i & 1 else 0 for i in range(8)]
        values.append(b"".join(w.to_bytes(2, "big") for w in words))
    for prefix in (b"\x00" * 10 + b"\xff\xff", b"\x00" * 12, b"\x00" * 10 + b"\xff\xfe"):
        for v4 in (b"\x01\x02\x03\x04", b"\x00\x00\x00\x01", b"\x00\x01\x00\x00", b"\xff" * 4):
            values.append(prefix + v4)
    values.append(b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00")
    return values


def _select_texts(server: MariaDBServer, sql_type: str, values: list[bytes]) -> list[str]:
    items = ", ".join(f"CAST(X'{raw.hex()}' AS {sql_type})" for raw in values)
    row = server.execute(f"SELECT {items}")[0]
    return [str(text) for text in row]


def test_inet6_text_is_the_servers(mariadb_server: MariaDBServer) -> None:
    values = _inet6_patterns()
    expected = _select_texts(mariadb_server, "INET6", values)
    assert [Inet6(raw).text() for raw in values] == expected
    # ... and the server's text parses back to the same bytes.
    assert [Inet6.parse(text).packed for text in expected] == values


UUIDS = [
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "6ccd780c-baba-1026-9564-5b8c656024db",  # version 1 (its record format swaps segments)
    "f47ac10b-58cc-4372-a567-0e02b2c3d479",  # version 4
    "01890a5d-ac96-774b-bcce-b302099a8057",  # version 7
    "12345678-9abc-0ef0-0123-456789abcdef",  # version 0, variant 0: not RFC 4122
]


def test_uuid_and_inet4_texts_are_the_servers(mariadb_server: MariaDBServer) -> None:
    raws = [Uuid.parse(text).packed for text in UUIDS]
    assert _select_texts(mariadb_server, "UUID", raws) == UUIDS
    v4 = [
        bytes([a, b, c, d]) for a, b, c, d in ((0, 0, 0, 0), (255, 255, 255, 255), (10, 0, 20, 3))
    ]
    assert _select_texts(mariadb_server, "INET4", v4) == [Inet4(raw).text() for raw in v4]


# Inputs the server accepts, in forms other than its own output.
ACCEPTED = [
    ("uuid", "6CCD780CBABA102695645B8C656024DB"),
    ("uuid", "6ccd-780c-baba-1026-9564-5b8c-6560-24db"),
    ("uuid", "6ccd780c--baba-1026-9564-5b8c656024db"),
    ("uuid", "6-c-c-d-7-8-0-c-b-a-b-a-1-0-2-6-9-5-6-4-5b8c656024d--b"),
    ("uuid", "12345678-9abc-fef0-8123-456789abcdef"),
    ("uuid", "12345678-9abc-7ef0-0123-456789abcdef"),
    ("inet6", "1:2:3:4:5:6:7::"),
    ("inet6", "::ffff:01.2.3.4"),
    ("inet6", "2001:DB8:0:0:0:0:0:1"),
    ("inet6", "0000:0000::0001"),
    ("inet6", "::FFFF:10.1.2.3"),
    ("inet6", "1:2:3:4:5:6:1.2.3.4"),
    ("inet4", "010.001.000.009"),
]
# Inputs the server refuses (each broken in one way).
REFUSED = [
    ("uuid", "6ccd780c-baba-1026-9564-5b8c656024d"),  # a digit short
    ("uuid", "6ccd780c-baba-1026-9564-5b8c656024dbb"),  # a digit too many
    ("uuid", "-6ccd780c-baba-1026-9564-5b8c656024db"),  # leading hyphen
    ("uuid", "6ccd780c-baba-1026-9564-5b8c656024db-"),  # trailing hyphen
    ("uuid", "{6ccd780c-baba-1026-9564-5b8c656024db}"),  # braces
    ("uuid", "6ccd780cbaba102695645b8c656024db "),  # a space
    ("uuid", "6ccd780g-baba-1026-9564-5b8c656024db"),  # not hex
    ("uuid", "12345678-9abc-8ef0-7123-456789abcdef"),  # version 8 without the variant bit
    ("inet4", "256.1.1.1"),
    ("inet4", "1.2.3"),
    ("inet4", "1.2.3.4.5"),
    ("inet4", "0001.2.3.4"),
    ("inet4", "1.2.3.4 "),
    ("inet6", "1.2.3.4"),  # an IPv4 address is not an INET6
    ("inet6", "1::2::3"),
    ("inet6", "1:2:3:4:5:6:7:8:9"),
    ("inet6", "12345::"),
    ("inet6", "::1.2.3.256"),
    ("inet6", "1:2:3:4:5:6:7:1.2.3.4"),
    ("inet6", "1::2:3:4:5:6:7:8"),
    ("inet6", " ::1"),
]


def test_parsing_agrees_with_the_server(mariadb_server: MariaDBServer) -> None:
    cases = ACCEPTED + REFUSED
    items = ", ".join(f"HEX(CAST('{text}' AS {kind}))" for kind, text in cases)
    mariadb_server.execute("SET SESSION sql_mode = ''")
    row = mariadb_server.execute(["SET SESSION sql_mode = ''", f"SELECT {items}"])[-1]
    for (kind, text), server_hex in zip(cases, row, strict=True):
        try:
            ours: str | None = fixed_binary_value(kind, b"").parse(text).packed.hex().upper()
        except FixedBinaryTextError:
            ours = None
        assert ours == server_hex, (kind, text)


def test_uuids_order_as_the_servers_keys(mariadb_server: MariaDBServer) -> None:
    # Every version nibble against every variant nibble the server accepts.
    texts = [
        f"{version:x}{variant:x}345678-9abc-{version:x}ef0-{variant:x}123-456789abcd{variant:x}{version:x}"
        for version in range(16)
        for variant in range(16)
        if version < 8 or variant >= 8
    ]
    rows = mariadb_server.execute(
        [
            "CREATE DATABASE IF NOT EXISTS uuid_order",
            "CREATE OR REPLACE TABLE uuid_order.u (u UUID PRIMARY KEY)",
            "INSERT INTO uuid_order.u VALUES " + ", ".join(f"('{text}')" for text in texts),
            "SELECT u FROM uuid_order.u ORDER BY u",
        ]
    )
    assert [str(u) for u in sorted(Uuid.parse(text) for text in texts)] == [r[0] for r in rows]


def test_logged_bytes_drop_trailing_zeros_and_read_back() -> None:
    value = Inet6.parse("1::")
    assert value.logged() == b"\x00\x01"
    assert fixed_binary_value("INET6", b"\x00\x01") == value
    assert fixed_binary_value("inet4", b"") == Inet4.parse("0.0.0.0")
    with pytest.raises(FixedBinaryTextError):
        fixed_binary_value("inet4", b"12345")  # more bytes than the type has
    with pytest.raises(ValueError, match="not one of"):
        fixed_binary_value("binary", b"")


def test_values_compare_by_type_and_bytes() -> None:
    assert Uuid(b"\x00" * 16) != Inet6(b"\x00" * 16)
    assert len({Inet4.parse("1.2.3.4"), Inet4.parse("001.2.3.4")}) == 1
    assert repr(Inet4.parse("1.2.3.4")) == "Inet4('1.2.3.4')"
