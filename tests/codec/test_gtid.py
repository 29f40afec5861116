"""GTID, GTID_LIST and BINLOG_CHECKPOINT: golden bytes of real servers and round trips.

Vectors marked 10.2.10 come from the GTID-connect capture quoted in binlog-codec-facts.md §5.5
(MariaDB 10.2.10, server_id 10201). Vectors marked 10.11.19 were captured from MariaDB
10.11.19-MariaDB-0+deb12u1-log on 2026-11-21 (binlog files written by a throwaway server,
binlog_format=STATEMENT, checksum CRC32).
"""

from __future__ import annotations

import pytest
from hypothesis import given

from decoder import decode_event
from encoder import encode_event
from fakemaster.vocabulary.constants import (
    GTID_LIST_FLAG_IGN_GTIDS,
    GTID_LIST_FLAG_UNTIL_REACHED,
    EventFlag,
    GtidExtraFlag,
    GtidFlag,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    Gtid,
    GtidEvent,
    GtidListEvent,
    XaXid,
)
from fakemaster.vocabulary.layouts import EMPTY_GTID_LIST_PADDING
from scenarios.strategies.statements import (
    binlog_checkpoint_events,
    gtid_events,
    gtid_list_events,
)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# --- 10.2.10 (facts §2.3-§2.5, §5.5) -------------------------------------------------------
GTID_DDL_10_2 = h(
    "94fd385a a2 d9270000 2a000000 5e060000 08008d26000000000000 00000000 29 000000000000 2287c061"
)
GTID_LIST_REAL_10_2 = h(
    "fbcc375a a3 d9270000 3b000000 3b010000 0000 02000000"
    "00000000 01000000 1e00000000000000 00000000 d9270000 8626000000000000 b6338a22"
)
GTID_LIST_FAKE_10_2 = h(
    "00000000 a3 d9270000 2b000000 34060000 2000 01000000"
    "00000000 d9270000 8c26000000000000 4a019422"
)
CHECKPOINT_10_2 = (
    h("fbcc375a a1 d9270000 2b000000 66010000 0000 10000000") + b"mysql-bin.000034" + h("161ffe3f")
)

# --- 10.11.19 captures ----------------------------------------------------------------------
EMPTY_GTID_LIST_10_11 = h("8072016b a3 01000000 1d000000 1d010000 0000 00000000 0000 9a167064")
GTID_LIST_3_10_11 = h(
    "a572016b a3 01000000 4b000000 4b010000 0000 03000000"
    "00000000 01000000 3800000000000000"
    "02000000 4d000000 0200000000000000"
    "ffffffff 4d000000 feffffffffffffff 14344a4a"
)
GTID_COMMIT_ID_10_11 = h(
    "9f72016b a2 01000000 2c000000 ad010000 0800 3600000000000000 00000000 0e"
    "dc00000000000000 cef5567c"
)
GTID_MAX_DOMAIN_10_11 = h(
    "a572016b a2 4d000000 2a000000 a3030000 0800 feffffffffffffff ffffffff 0c000000000000 faf8a715"
)
GTID_XA_PREPARED_10_11 = h(
    "8072016b a2 01000000 38000000 45150000 0800 1900000000000000 00000000 4c"
    "07000000 06 06 677472696431 627175616c31 01 ff 4763df46"
)
GTID_XA_COMPLETED_10_11 = h(
    "8072016b a2 01000000 36000000 73160000 0800 1a00000000000000 00000000 8d"
    "07000000 06 06 677472696431 627175616c31 f297df8b"
)
GTID_START_ALTER_10_11 = h(
    "9072016b a2 01000000 2a000000 60020000 0800 2100000000000000 00000000 29 020000000000 7b177d6d"
)
GTID_COMMIT_ALTER_10_11 = h(
    "9072016b a2 01000000 2d000000 f0020000 0800 2200000000000000 00000000 29 04"
    "2100000000000000 1e2c588a"
)
GTID_ROLLBACK_ALTER_10_11 = h(
    "a972016b a2 01000000 2d000000 1b030000 0800 3b00000000000000 00000000 29 08"
    "3a00000000000000 9d209e80"
)


def crc_ctx() -> BinlogContext:
    return BinlogContext(checksum=True)


def assert_golden(raw: bytes, expected: Event) -> None:
    event = decode_event(raw, crc_ctx())
    assert event == expected
    assert encode_event(event, crc_ctx()) == raw


def test_gtid_ddl_10_2_capture() -> None:
    assert len(GTID_DDL_10_2) == 42
    assert_golden(
        GTID_DDL_10_2,
        GtidEvent(
            timestamp=0x5A38FD94,
            server_id=10201,
            log_pos=1630,
            flags=EventFlag.SUPPRESS_USE,
            seq_no=9869,
            domain_id=0,
            flags2=GtidFlag.STANDALONE | GtidFlag.ALLOW_PARALLEL | GtidFlag.DDL,
        ),
    )
    event = decode_event(GTID_DDL_10_2, crc_ctx())
    assert isinstance(event, GtidEvent) and str(event.gtid) == "0-10201-9869"


def test_gtid_list_real_10_2_capture() -> None:
    assert_golden(
        GTID_LIST_REAL_10_2,
        GtidListEvent(
            timestamp=0x5A37CCFB,
            server_id=10201,
            log_pos=315,
            flags=0,
            gtids=(Gtid(0, 1, 30), Gtid(0, 10201, 9862)),
        ),
    )


def test_gtid_list_fake_10_2_capture() -> None:
    event = decode_event(GTID_LIST_FAKE_10_2, crc_ctx())
    assert event == GtidListEvent(
        timestamp=0,
        server_id=10201,
        log_pos=1588,
        flags=EventFlag.ARTIFICIAL,
        gtids=(Gtid(0, 10201, 9868),),
    )
    assert event.is_artificial
    assert encode_event(event, crc_ctx()) == GTID_LIST_FAKE_10_2


def test_binlog_checkpoint_10_2_capture() -> None:
    assert_golden(
        CHECKPOINT_10_2,
        BinlogCheckpointEvent(
            timestamp=0x5A37CCFB,
            server_id=10201,
            log_pos=358,
            flags=0,
            file_name="mysql-bin.000034",
        ),
    )


def test_empty_gtid_list_of_a_fresh_10_11_server_has_two_padding_bytes() -> None:
    assert len(EMPTY_GTID_LIST_10_11) == 19 + 6 + 4
    assert_golden(
        EMPTY_GTID_LIST_10_11,
        GtidListEvent(
            timestamp=0x6B017280,
            server_id=1,
            log_pos=285,
            flags=0,
            gtids=(),
            padding=EMPTY_GTID_LIST_PADDING,
        ),
    )


def test_gtid_list_with_edge_values_10_11() -> None:
    assert_golden(
        GTID_LIST_3_10_11,
        GtidListEvent(
            timestamp=0x6B0172A5,
            server_id=1,
            log_pos=331,
            flags=0,
            gtids=(Gtid(0, 1, 56), Gtid(2, 77, 2), Gtid(0xFFFFFFFF, 77, (1 << 64) - 2)),
        ),
    )


TRANSACTIONAL = GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
DDL = GtidFlag.STANDALONE | GtidFlag.ALLOW_PARALLEL | GtidFlag.DDL
GTRID_BQUAL = XaXid(7, b"gtrid1", b"bqual1")


@pytest.mark.parametrize(
    ("raw", "fields"),
    [
        (
            GTID_COMMIT_ID_10_11,
            {
                "server_id": 1,
                "seq_no": 54,
                "flags2": TRANSACTIONAL | GtidFlag.GROUP_COMMIT_ID,
                "commit_id": 220,
            },
        ),
        (
            GTID_MAX_DOMAIN_10_11,
            {
                "server_id": 77,
                "seq_no": (1 << 64) - 2,
                "domain_id": 0xFFFFFFFF,
                "flags2": TRANSACTIONAL,
            },
        ),
        # 10.11.19 marks an XA PREPARE group multi-engine with extra_engines 0xff.
        (
            GTID_XA_PREPARED_10_11,
            {
                "server_id": 1,
                "seq_no": 25,
                "flags2": TRANSACTIONAL | GtidFlag.PREPARED_XA,
                "xid": GTRID_BQUAL,
                "flags_extra": GtidExtraFlag.MULTI_ENGINE,
                "extra_engines": 255,
            },
        ),
        (
            GTID_XA_COMPLETED_10_11,
            {
                "server_id": 1,
                "seq_no": 26,
                "flags2": GtidFlag.STANDALONE | TRANSACTIONAL | GtidFlag.COMPLETED_XA,
                "xid": GTRID_BQUAL,
            },
        ),
        (
            GTID_START_ALTER_10_11,
            {
                "server_id": 1,
                "seq_no": 33,
                "flags2": DDL,
                "flags_extra": GtidExtraFlag.START_ALTER,
            },
        ),
        (
            GTID_COMMIT_ALTER_10_11,
            {
                "server_id": 1,
                "seq_no": 34,
                "flags2": DDL,
                "flags_extra": GtidExtraFlag.COMMIT_ALTER,
                "sa_seq_no": 33,
            },
        ),
        (
            GTID_ROLLBACK_ALTER_10_11,
            {
                "server_id": 1,
                "seq_no": 59,
                "flags2": DDL,
                "flags_extra": GtidExtraFlag.ROLLBACK_ALTER,
                "sa_seq_no": 58,
            },
        ),
    ],
    ids=[
        "commit_id",
        "max_domain",
        "xa_prepared",
        "xa_completed",
        "start_alter",
        "commit_alter",
        "rollback_alter",
    ],
)
def test_gtid_10_11_captures(raw: bytes, fields: dict[str, object]) -> None:
    event = decode_event(raw, crc_ctx())
    assert isinstance(event, GtidEvent)
    header = {
        "timestamp": int.from_bytes(raw[:4], "little"),
        "log_pos": int.from_bytes(raw[13:17], "little"),
        "flags": EventFlag.SUPPRESS_USE,
    }
    assert event == GtidEvent(**header, **fields)  # type: ignore[arg-type]
    assert encode_event(event, crc_ctx()) == raw


def test_gtid_body_is_padded_to_19_bytes() -> None:
    plain = GtidEvent(seq_no=1, domain_id=2, flags2=GtidFlag.TRANSACTIONAL)
    raw = encode_event(plain, BinlogContext(checksum=False))
    assert len(raw) == 19 + 19
    assert raw[19 + 13 :] == bytes(6)
    assert decode_event(raw, BinlogContext(checksum=False)) == plain


def test_gtid_trailing_bytes_of_a_newer_server_survive() -> None:
    # An 11.x-style flags_extra bit this codec does not know, with its 4-byte field.
    newer = GtidEvent(
        seq_no=5, flags2=GtidFlag.TRANSACTIONAL, flags_extra=0x10, trailing=b"\x2a\x00\x00\x00\x00"
    )
    raw = encode_event(newer, crc_ctx())
    assert raw[19 + 13 : 19 + 19] == b"\x10\x2a\x00\x00\x00\x00"
    assert decode_event(raw, crc_ctx()) == newer


def test_gtid_bytes_after_the_padding_are_trailing() -> None:
    ctx = BinlogContext(checksum=False)
    padded = encode_event(GtidEvent(seq_no=5), ctx) + b"\x07"
    raw = padded[:9] + len(padded).to_bytes(4, "little") + padded[13:]
    event = decode_event(raw, ctx)
    assert isinstance(event, GtidEvent)
    assert event.flags_extra == 0 and event.trailing == bytes(6) + b"\x07"
    assert encode_event(event, ctx) == raw


@pytest.mark.parametrize(
    "event",
    [
        GtidEvent(flags2=GtidFlag.GROUP_COMMIT_ID),
        GtidEvent(commit_id=5),
        GtidEvent(flags2=GtidFlag.PREPARED_XA),
        GtidEvent(xid=XaXid(1, b"a", b"")),
        GtidEvent(flags_extra=GtidExtraFlag.MULTI_ENGINE),
        GtidEvent(extra_engines=1),
        GtidEvent(flags_extra=GtidExtraFlag.COMMIT_ALTER),
        GtidEvent(sa_seq_no=3),
        GtidEvent(seq_no=1 << 64),
        GtidEvent(domain_id=-1),
        GtidEvent(flags2=GtidFlag.PREPARED_XA, xid=XaXid(1, b"g" * 256, b"")),
        GtidEvent(trailing=b"\x01" * 8),  # would be read back as flags_extra
        GtidEvent(trailing=b"\x00\x01"),  # body shorter than 19 bytes
        GtidEvent(trailing=bytes(6)),  # indistinguishable from the padding
    ],
)
def test_gtid_encoder_rejects_what_it_cannot_write_faithfully(event: GtidEvent) -> None:
    with pytest.raises(EncodeError):
        encode_event(event, crc_ctx())


def test_gtid_list_flags_use_the_top_bits_and_count_is_masked() -> None:
    event = GtidListEvent(
        gtids=(Gtid(1, 2, 3),), list_flags=GTID_LIST_FLAG_UNTIL_REACHED | GTID_LIST_FLAG_IGN_GTIDS
    )
    raw = encode_event(event, crc_ctx())
    assert raw[19:23] == (0x30000001).to_bytes(4, "little")
    assert decode_event(raw, crc_ctx()) == event


@pytest.mark.parametrize("list_flags", [1, 1 << 27, 1 << 32, -1])
def test_gtid_list_rejects_flags_outside_the_top_bits(list_flags: int) -> None:
    with pytest.raises(EncodeError):
        encode_event(GtidListEvent(list_flags=list_flags), crc_ctx())


def test_every_flags2_and_flags_extra_combination_round_trips() -> None:
    ctx = BinlogContext(checksum=False)
    xa = XaXid(0xFFFFFFFF, b"g" * 64, b"b" * 64)
    alter = GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER
    for flags2 in range(256):
        for flags_extra in [*range(16), 0x10, 0x80, 0xFF]:
            event = GtidEvent(
                seq_no=(1 << 64) - 1,
                domain_id=0xFFFFFFFF,
                flags2=flags2,
                commit_id=(1 << 64) - 1 if flags2 & GtidFlag.GROUP_COMMIT_ID else None,
                xid=xa if flags2 & (GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA) else None,
                flags_extra=flags_extra,
                extra_engines=255 if flags_extra & GtidExtraFlag.MULTI_ENGINE else None,
                sa_seq_no=(1 << 64) - 1 if flags_extra & alter else None,
            )
            raw = encode_event(event, ctx)
            assert len(raw) >= 19 + 19
            assert decode_event(raw, ctx) == event, (flags2, flags_extra)


@given(gtid_events())
def test_gtid_round_trip(event: GtidEvent) -> None:
    raw = encode_event(event, crc_ctx())
    assert len(raw) >= 19 + 19 + 4
    assert decode_event(raw, crc_ctx()) == event


@given(gtid_list_events())
def test_gtid_list_round_trip(event: GtidListEvent) -> None:
    assert decode_event(encode_event(event, crc_ctx()), crc_ctx()) == event


@given(binlog_checkpoint_events())
def test_binlog_checkpoint_round_trip(event: BinlogCheckpointEvent) -> None:
    raw = encode_event(event, BinlogContext(checksum=False))
    assert decode_event(raw, BinlogContext(checksum=False)) == event
