"""XID, XA_PREPARE, INTVAR, RAND, USER_VAR, ANNOTATE_ROWS and the LOAD DATA block events.

Golden vectors captured from MariaDB 10.11.19-MariaDB-0+deb12u1-log on 2026-11-21
(binlog_format=STATEMENT, except ANNOTATE_ROWS which comes from a ROW-format statement;
checksum CRC32). The USER_VAR vectors come from ``SET @a=1; SET @b='x'; SET @c=1.5e0;
SET @d=NULL; SET @e=CAST(1 AS DECIMAL(10,2)); ...`` followed by an INSERT using them: they show
that the server writes the trailing flags byte after INT values only.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given

from decoder import decode_event
from encoder import encode_event
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    DeleteFileEvent,
    Event,
    IntvarEvent,
    RandEvent,
    UserVarEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from scenarios.strategies.statements import statement_events, user_var_events


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def crc_ctx() -> BinlogContext:
    return BinlogContext(checksum=True)


TS = 0x6B017280


def user_var(raw_body_hex: str, crc: str, log_pos: int, ts: int = TS) -> bytes:
    body = h(raw_body_hex)
    head = struct.pack("<IBIIIH", ts, 14, 1, 19 + len(body) + 4, log_pos, 0)
    return head + body + h(crc)


# (event bytes, the expected value fields)
USER_VARS: list[tuple[bytes, dict[str, object]]] = [
    # SET @a=1: INT, charset 8, flags byte 0
    (
        user_var("01000000 61 00 02 08000000 08000000 0100000000000000 00", "04f85319", 801),
        {
            "name": b"a",
            "value": (1).to_bytes(8, "little"),
            "value_type": 2,
            "charset": 8,
            "value_flags": 0,
        },
    ),
    # SET @b='x': STRING in utf8mb4_general_ci (33), no flags byte
    (
        user_var("01000000 62 00 00 21000000 01000000 78", "4ae5ae57", 840),
        {"name": b"b", "value": b"x", "value_type": 0, "charset": 33},
    ),
    # SET @c=1.5e0: REAL, no flags byte
    (
        user_var("01000000 63 00 01 08000000 08000000 000000000000f83f", "4f34ce85", 886),
        {"name": b"c", "value": struct.pack("<d", 1.5), "value_type": 1, "charset": 8},
    ),
    # SET @d=NULL
    (user_var("01000000 64 01", "1d688a05", 915), {"name": b"d"}),
    # SET @e=CAST(1 AS DECIMAL(10,2)): DECIMAL precision 11 scale 2, no flags byte
    (
        user_var("01000000 65 00 04 08000000 07000000 0b02 8000000100", "13865a2c", 960),
        {"name": b"e", "value": h("0b028000000100"), "value_type": 4, "charset": 8},
    ),
    # SET @f=18446744073709551615: INT with the unsigned flag
    (
        user_var("01000000 66 00 02 08000000 08000000 ffffffffffffffff 01", "8c8d5f6f", 1274),
        {"name": b"f", "value": b"\xff" * 8, "value_type": 2, "charset": 8, "value_flags": 1},
    ),
    # SET @g=-5: signed INT
    (
        user_var("01000000 67 00 02 08000000 08000000 fbffffffffffffff 00", "1a038870", 1186),
        {
            "name": b"g",
            "value": (-5 % (1 << 64)).to_bytes(8, "little"),
            "value_type": 2,
            "charset": 8,
            "value_flags": 0,
        },
    ),
    # SET @h=_latin1'hé': STRING in latin1 (8)
    (
        user_var("01000000 68 00 00 08000000 03000000 68c3a9", "3290a01b", 1227),
        {"name": b"h", "value": "hé".encode(), "value_type": 0, "charset": 8},
    ),
    # SET @empty='': empty STRING
    (
        user_var("05000000 656d707479 00 00 21000000 00000000", "b6df3810", 3397, 0x6B017299),
        {"name": b"empty", "value": b"", "value_type": 0, "charset": 33},
    ),
    # SET @bin=x'00FF10': binary STRING (63)
    (
        user_var("03000000 62696e 00 00 3f000000 03000000 00ff10", "807518cd", 2778, 0x6B017294),
        {"name": b"bin", "value": b"\x00\xff\x10", "value_type": 0, "charset": 63},
    ),
    # SET @dneg=CAST(-0.5 AS DECIMAL(5,3))
    (
        user_var(
            "04000000 646e6567 00 04 08000000 08000000 0c037ffffffffe0b",
            "e88f94e4",
            3286,
            0x6B017299,
        ),
        {"name": b"dneg", "value": h("0c037ffffffffe0b"), "value_type": 4, "charset": 8},
    ),
]


@pytest.mark.parametrize(("raw", "fields"), USER_VARS, ids=[str(f["name"]) for _, f in USER_VARS])
def test_user_var_10_11_captures(raw: bytes, fields: dict[str, object]) -> None:
    event = decode_event(raw, crc_ctx())
    header = {
        "timestamp": int.from_bytes(raw[:4], "little"),
        "server_id": 1,
        "log_pos": int.from_bytes(raw[13:17], "little"),
        "flags": 0,
    }
    assert event == UserVarEvent(**header, **fields)  # type: ignore[arg-type]
    assert encode_event(event, crc_ctx()) == raw


GOLDEN: list[tuple[bytes, Event]] = [
    (
        h("8072016b 10 01000000 1f000000 49040000 0000 5600000000000000 904650f5"),
        XidEvent(timestamp=TS, log_pos=1097, xid=86),
    ),
    # XA PREPARE 'gtrid1','bqual1',7
    (
        h(
            "8072016b 26 01000000 30000000 3d160000 0000 00 07000000 06000000 06000000"
            "677472696431 627175616c31 2a5a2542"
        ),
        XaPrepareEvent(
            timestamp=TS, log_pos=5693, one_phase=False, xid=XaXid(7, b"gtrid1", b"bqual1")
        ),
    ),
    # LAST_INSERT_ID then INSERT_ID before INSERT ... VALUES (LAST_INSERT_ID())
    (
        h("8072016b 05 01000000 20000000 0c090000 0000 01 0100000000000000 96eaf657"),
        IntvarEvent(timestamp=TS, log_pos=2316, kind=1, value=1),
    ),
    (
        h("8072016b 05 01000000 20000000 2c090000 0000 02 0300000000000000 b0ef9ba4"),
        IntvarEvent(timestamp=TS, log_pos=2348, kind=2, value=3),
    ),
    (
        h("8072016b 0d 01000000 27000000 090a0000 0000 1e0d9e1a00000000 941d7c1500000000 085a775c"),
        RandEvent(timestamp=TS, log_pos=2569, seed1=446565662, seed2=360455572),
    ),
    (
        h("8072016b a0 01000000 34000000 91140000 0000")
        + b"INSERT INTO t (a) VALUES (99)"
        + h("ae3a8e39"),
        AnnotateRowsEvent(timestamp=TS, log_pos=5265, query=b"INSERT INTO t (a) VALUES (99)"),
    ),
    (
        h("8072016b 11 01000000 2d000000 67a20200 0000 02000000")
        + b"1\ta\n2\tb\n2\tdup\n3\tc\n"
        + h("7af91b36"),
        BeginLoadQueryEvent(
            timestamp=TS, log_pos=172647, file_id=2, data=b"1\ta\n2\tb\n2\tdup\n3\tc\n"
        ),
    ),
    # The last 29 bytes of a 131101-byte LOAD DATA file (blocks are read_buffer_size long).
    (
        h("d173016b 09 01000000 38000000 a6080200 0000 08000000")
        + b"8738\tr108738\n108739\tlast row\n"
        + h("8491f889"),
        AppendBlockEvent(
            timestamp=0x6B0173D1,
            log_pos=133286,
            file_id=8,
            data=b"8738\tr108738\n108739\tlast row\n",
        ),
    ),
    # LOAD DATA into MyISAM failing on its first row: the file is dropped on the replica.
    (
        h("9972016b 0b 01000000 1b000000 d10b0000 0000 07000000 fb8b2867"),
        DeleteFileEvent(timestamp=0x6B017299, log_pos=3025, file_id=7),
    ),
]


@pytest.mark.parametrize(("raw", "expected"), GOLDEN, ids=[type(e).__name__ for _, e in GOLDEN])
def test_10_11_captures(raw: bytes, expected: Event) -> None:
    event = decode_event(raw, crc_ctx())
    assert event == expected
    assert encode_event(event, crc_ctx()) == raw


def test_user_var_flags_byte_is_read_after_any_value_type() -> None:
    # The server's reader takes any byte after the value as the flags; so does the codec.
    event = UserVarEvent(
        name=b"s", value=b"abc", value_type=0, charset=33, value_flags=1, trailing=b"\x00\x05"
    )
    raw = encode_event(event, crc_ctx())
    assert raw[-4 - 3 : -4] == b"\x01\x00\x05"
    assert decode_event(raw, crc_ctx()) == event


@pytest.mark.parametrize(
    "event",
    [
        XidEvent(xid=1 << 64),
        XaPrepareEvent(xid=XaXid(1, b"", b"")),
        XaPrepareEvent(xid=XaXid(1, b"g" * 65, b"")),
        XaPrepareEvent(xid=XaXid(1, b"g", b"b" * 65)),
        XaPrepareEvent(xid=XaXid(1 << 32, b"g", b"")),
        IntvarEvent(kind=256),
        IntvarEvent(value=-1),
        RandEvent(seed1=1 << 64),
        UserVarEvent(name=b"n", value=None, value_type=2),
        UserVarEvent(name=b"n", value=None, charset=8),
        UserVarEvent(name=b"n", value=None, value_flags=0),
        UserVarEvent(name=b"n", value=b"x", trailing=b"\x01"),
        UserVarEvent(name=b"n", value=b"x", value_flags=256),
        UserVarEvent(name=b"n", value=b"x", charset=1 << 32),
        BeginLoadQueryEvent(file_id=-1),
        AppendBlockEvent(file_id=1 << 32),
        DeleteFileEvent(file_id=1 << 32),
    ],
)
def test_encoder_rejects_unrepresentable_events(event: Event) -> None:
    with pytest.raises(EncodeError):
        encode_event(event, crc_ctx())


def test_xa_prepare_with_full_128_byte_xid() -> None:
    event = XaPrepareEvent(one_phase=True, xid=XaXid(0xFFFFFFFF, b"g" * 64, b"b" * 64))
    raw = encode_event(event, crc_ctx())
    assert len(raw) == 19 + 13 + 128 + 4
    assert decode_event(raw, crc_ctx()) == event


@given(user_var_events())
def test_user_var_round_trip(event: UserVarEvent) -> None:
    assert decode_event(encode_event(event, crc_ctx()), crc_ctx()) == event


@given(statement_events())
def test_statement_events_round_trip(event: Event) -> None:
    raw = encode_event(event, crc_ctx())
    assert decode_event(raw, crc_ctx()) == event
    plain = encode_event(event, BinlogContext(checksum=False))
    assert plain == raw[:9] + (len(raw) - 4).to_bytes(4, "little") + raw[13:-4]
    assert decode_event(plain, BinlogContext(checksum=False)) == event
