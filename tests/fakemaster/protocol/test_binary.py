"""The binary protocol: rows checked against a row a real MariaDB 10.11 sent for a table of
many types (its column definitions and row captured from the server), and the parameters of a
COM_STMT_EXECUTE read as the server reads them (malformed ones are the cases a real server
answered 1210 for in tests/integration/test_prepared_statements_differential.py)."""

from __future__ import annotations

import struct

import pytest

from fakemaster.protocol.binary import BoundParam, ExecuteRequest, binary_row, param_literal
from fakemaster.protocol.resultset import ColumnDefinition
from fakemaster.vocabulary.errors import DecodeError

# CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), ts DATETIME(6), f DOUBLE,
# dec1 DECIMAL(8,2), d DATE, tm TIME, b BLOB, u BIGINT UNSIGNED, ti TINYINT, y YEAR): the
# definitions a real 10.11 sent for SELECT * FROM t, and its binary row for
# (1, 'a', '2024-01-02 03:04:05.123456', 1.5, 12.34, '2024-01-02', '-01:02:03', x'00ff',
# 18446744073709551615, -5, 2024).
REAL_DEFINITIONS = """
036465660164017401740269640269640c3f000b000000030350000000
03646566016401740174046e616d65046e616d650c2d0050000000fd0000000000
036465660164017401740274730274730c3f001a0000000c8000060000
03646566016401740174016601660c3f00160000000500001f0000
03646566016401740174046465633104646563310c3f000a000000f60000020000
03646566016401740174016401640c3f000a0000000a8000000000
0364656601640174017402746d02746d0c3f000a0000000b8000000000
03646566016401740174016201620c3f00ffff0000fc9000000000
03646566016401740174017501750c3f0014000000082000000000
036465660164017401740274690274690c3f0004000000010000000000
03646566016401740174017901790c3f00040000000d6000000000
""".split()
REAL_ROW = bytes.fromhex(
    "0000000100000001610be807010203040540e20100000000000000f83f0531322e333404e807010208010000"
    "00000102030200fffffffffffffffffffbe807"
)
TEXT_CELLS = [
    b"1",
    b"a",
    b"2024-01-02 03:04:05.123456",
    b"1.5",
    b"12.34",
    b"2024-01-02",
    b"-01:02:03",
    b"\x00\xff",
    b"18446744073709551615",
    b"-5",
    b"2024",
]


def test_a_binary_row_is_the_one_a_real_server_sends() -> None:
    definitions = [ColumnDefinition.decode(bytes.fromhex(raw)) for raw in REAL_DEFINITIONS]
    assert binary_row(definitions, TEXT_CELLS) == REAL_ROW


def test_nulls_are_in_the_bitmap_two_bits_along() -> None:
    definitions = [ColumnDefinition.decode(bytes.fromhex(raw)) for raw in REAL_DEFINITIONS]
    # The real server's row for (2, NULL, ..., NULL): columns 1 to 10 NULL.
    assert binary_row(definitions, [b"2"] + [None] * 10) == bytes.fromhex("00f81f02000000")


HEAD = struct.pack("<IBI", 7, 0, 1)


def test_parameters_of_every_kind_are_read() -> None:
    body = (
        HEAD
        + b"\x04"  # NULL bitmap: the third parameter
        + b"\x01"
        + bytes.fromhex("0800fd00060005000180")  # LONGLONG, VAR_STRING, NULL, DOUBLE, TINY (u)
        + struct.pack("<q", -5)
        + b"\x03a'b"
        + struct.pack("<d", 1.5)
        + b"\xff"
    )
    request = ExecuteRequest.parse(body, 5, None, {})
    assert [param_literal(param) for param in request.params] == [
        "-5",
        "'a''b'",
        "NULL",
        "1.5e0",
        "255",
    ]
    assert request.types[4] == (1, True)


def test_temporal_parameters_become_their_text() -> None:
    when = BoundParam(12, False, b"\x0b" + struct.pack("<HBBBBBI", 2024, 1, 2, 3, 4, 5, 6))
    date = BoundParam(10, False, b"\x04" + struct.pack("<HBB", 2024, 1, 2))
    time = BoundParam(11, False, b"\x08" + struct.pack("<BIBBB", 1, 1, 2, 3, 4))
    assert param_literal(when) == "'2024-01-02 03:04:05.000006'"
    round_ = BoundParam(12, False, b"\x0b" + struct.pack("<HBBBBBI", 2024, 1, 2, 3, 4, 5, 678000))
    assert param_literal(round_) == "'2024-01-02 03:04:05.678'"
    assert param_literal(date) == "'2024-01-02'"
    assert param_literal(time) == "'-26:03:04'"


def test_types_bound_before_are_kept_and_long_data_is_a_string() -> None:
    request = ExecuteRequest.parse(HEAD + b"\x00\x00", 1, ((8, False),), {0: b"piece"})
    assert param_literal(request.params[0]) == "'piece'"


@pytest.mark.parametrize(
    "tail",
    [
        b"",
        b"\x00",
        b"\x00\x00",
        b"\x00\x01\x08\x00",
        b"\x00\x01\x08\x00\x05",
        b"\x00\x01\x63\x00\x01",
    ],
    ids=["nothing", "bitmap only", "never bound", "value missing", "cut short", "unknown type"],
)
def test_malformed_parameters_are_refused(tail: bytes) -> None:
    with pytest.raises(DecodeError):
        ExecuteRequest.parse(HEAD + tail, 1, None, {})
