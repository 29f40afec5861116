"""Malformed GTID and statement events: truncated, corrupted or self-contradicting bodies.

The decoders must raise DecodeError (never another exception) with an offset inside the event,
and whatever they accept must encode back to the very same bytes.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder import decode_event
from encoder import encode_event
from fakemaster.vocabulary.constants import EventType, GtidExtraFlag, GtidFlag, QueryStatus
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event, QueryEvent
from fakemaster.vocabulary.header import CRC, HEADER, event_crc
from tests.budget import examples
from tests.codec import test_gtid, test_query, test_statement

EVENT_OFFSET = 1000


def frame(type_code: int, body: bytes, checksum: bool = True) -> bytes:
    """A whole event around ``body`` with a correct length and CRC."""
    length = 19 + len(body) + (4 if checksum else 0)
    data = HEADER.pack(0x6B017280, type_code, 1, length, 0, 0) + body
    return data + CRC.pack(event_crc(data, type_code)) if checksum else data


def body_of(raw: bytes) -> bytes:
    return raw[19:-4]


def decode_or_error(raw: bytes) -> Event | None:
    """Decode ``raw``; a DecodeError must point inside the event. None when rejected."""
    try:
        return decode_event(raw, BinlogContext(checksum=True), offset=EVENT_OFFSET)
    except DecodeError as exc:
        assert EVENT_OFFSET <= exc.offset <= EVENT_OFFSET + len(raw), exc
        assert exc.event_type is not None
        return None


def assert_exact_if_accepted(raw: bytes) -> None:
    event = decode_or_error(raw)
    if event is None:
        return
    if isinstance(event, QueryEvent) and event.compressed:
        # Another deflate stream of the same text is valid too; only the text must survive.
        assert decode_event(encode_event(event, BinlogContext()), BinlogContext()) == event
        return
    assert encode_event(event, BinlogContext(checksum=True)) == raw


GOLDEN_EVENTS = [
    test_gtid.GTID_DDL_10_2,
    test_gtid.GTID_LIST_REAL_10_2,
    test_gtid.GTID_LIST_FAKE_10_2,
    test_gtid.CHECKPOINT_10_2,
    test_gtid.EMPTY_GTID_LIST_10_11,
    test_gtid.GTID_COMMIT_ID_10_11,
    test_gtid.GTID_XA_PREPARED_10_11,
    test_gtid.GTID_XA_COMPLETED_10_11,
    test_gtid.GTID_COMMIT_ALTER_10_11,
    test_query.FLUSH_TABLES_10_2,
    test_query.INVOKER,
    test_query.TIME_ZONE_HRNOW,
    test_query.COMMIT_ALTER_FLAGS3,
    test_query.COMPRESSED_INSERT,
    test_query.EXECUTE_LOAD_QUERY,
    *(raw for raw, _ in test_statement.USER_VARS),
    *(raw for raw, _ in test_statement.GOLDEN),
]
MY_TYPES = sorted(
    {
        EventType.GTID,
        EventType.GTID_LIST,
        EventType.BINLOG_CHECKPOINT,
        EventType.QUERY,
        EventType.QUERY_COMPRESSED,
        EventType.EXECUTE_LOAD_QUERY,
        EventType.XID,
        EventType.XA_PREPARE,
        EventType.INTVAR,
        EventType.RAND,
        EventType.USER_VAR,
        EventType.ANNOTATE_ROWS,
        EventType.BEGIN_LOAD_QUERY,
        EventType.APPEND_BLOCK,
        EventType.DELETE_FILE,
    }
)


def _ids(raws: list[bytes]) -> list[str]:
    return [f"{EventType(raw[4]).name}@{index}" for index, raw in enumerate(raws)]


@pytest.mark.parametrize("raw", GOLDEN_EVENTS, ids=_ids(GOLDEN_EVENTS))
def test_every_truncation_is_a_decode_error_or_exact(raw: bytes) -> None:
    body = body_of(raw)
    rejected = 0
    for cut in range(len(body)):
        shortened = frame(raw[4], body[:cut])
        if decode_or_error(shortened) is None:
            rejected += 1
        else:
            assert_exact_if_accepted(shortened)
    # Statement texts and data blocks may legally be shorter; everything else has a minimum.
    if raw[4] not in (EventType.ANNOTATE_ROWS,):
        assert decode_or_error(frame(raw[4], b"")) is None
    assert rejected > 0 or raw[4] == EventType.ANNOTATE_ROWS


@pytest.mark.parametrize("raw", GOLDEN_EVENTS, ids=_ids(GOLDEN_EVENTS))
@settings(max_examples=examples(0.25))  # once per golden event
@given(data=st.data())
def test_corrupted_bodies_raise_only_decode_error(raw: bytes, data: st.DataObject) -> None:
    body = bytearray(body_of(raw))
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        index = data.draw(st.integers(0, max(len(body) - 1, 0)))
        if action == "flip" and body:
            body[index] ^= data.draw(st.integers(1, 255))
        elif action == "insert":
            body[index:index] = data.draw(st.binary(min_size=1, max_size=4))
        elif body:
            del body[index]
    assert_exact_if_accepted(frame(raw[4], bytes(body)))


@settings(max_examples=examples(2))
@given(st.sampled_from(MY_TYPES), st.binary(max_size=120))
def test_random_bodies_raise_only_decode_error(type_code: int, body: bytes) -> None:
    assert_exact_if_accepted(frame(type_code, body))


def _error(raw: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as err:
        decode_event(raw, BinlogContext(checksum=True), offset=EVENT_OFFSET)
    return err.value


def _gtid_body(flags2: int, *parts: bytes) -> bytes:
    return struct.pack("<QIB", 7, 0, flags2) + b"".join(parts)


# --- GTID -----------------------------------------------------------------------------------


def test_gtid_body_shorter_than_19_bytes() -> None:
    err = _error(frame(EventType.GTID, _gtid_body(0, bytes(5))))
    assert err.event_type == "GTID" and "19" in err.reason


@pytest.mark.parametrize(
    ("body", "where"),
    [
        # MDEV-33672: flags_extra promises sa_seq_no, the event ends before it
        (_gtid_body(0, bytes((GtidExtraFlag.COMMIT_ALTER,)), bytes(5)), 14),
        (
            _gtid_body(
                0,
                bytes((GtidExtraFlag.ROLLBACK_ALTER | GtidExtraFlag.MULTI_ENGINE,)),
                b"\x01",
                bytes(4),
            ),
            15,
        ),
        # ... or extra_engines, flags_extra being the last byte
        (_gtid_body(GtidFlag.GROUP_COMMIT_ID, bytes(8), bytes((GtidExtraFlag.MULTI_ENGINE,))), 22),
        # commit id promised by flags2 in a 19-byte body
        (_gtid_body(GtidFlag.GROUP_COMMIT_ID, bytes(6)), 13),
        # XA lengths running past the body
        (_gtid_body(GtidFlag.PREPARED_XA, struct.pack("<IBB", 1, 64, 64), bytes(10)), 19),
        (_gtid_body(GtidFlag.GROUP_COMMIT_ID | GtidFlag.COMPLETED_XA, bytes(8), b"\x01\x00"), 21),
    ],
    ids=["commit_alter", "rollback_alter", "multi_engine", "commit_id", "xa_data", "xa_head"],
)
def test_gtid_flags_promising_missing_fields(body: bytes, where: int) -> None:
    err = _error(frame(EventType.GTID, body))
    assert err.event_type == "GTID"
    assert err.offset == EVENT_OFFSET + 19 + where
    assert "truncated" in err.reason


# --- GTID_LIST / BINLOG_CHECKPOINT ----------------------------------------------------------


def test_gtid_list_count_beyond_its_entries() -> None:
    body = struct.pack("<I", 2) + struct.pack("<IIQ", 0, 1, 5)
    err = _error(frame(EventType.GTID_LIST, body))
    assert err.event_type == "GTID_LIST" and err.offset == EVENT_OFFSET + 19 + 4


def test_gtid_list_flag_bits_are_not_counted() -> None:
    body = struct.pack("<I", (1 << 28) | 1) + struct.pack("<IIQ", 0, 1, 5)
    event = decode_event(frame(EventType.GTID_LIST, body), BinlogContext(checksum=True))
    assert len(event.gtids) == 1 and event.list_flags == 1 << 28  # type: ignore[attr-defined]
    # a count of 2^28-1 is refused by length, without allocating
    huge = struct.pack("<I", (1 << 28) - 1) + bytes(16)
    assert _error(frame(EventType.GTID_LIST, huge)).event_type == "GTID_LIST"


@pytest.mark.parametrize(
    "body",
    [struct.pack("<I", 17) + b"mysql-bin.000001", struct.pack("<I", 3) + b"abcd", b"\x01\x00"],
)
def test_binlog_checkpoint_name_length_must_match(body: bytes) -> None:
    assert _error(frame(EventType.BINLOG_CHECKPOINT, body)).event_type == "BINLOG_CHECKPOINT"


# --- QUERY ----------------------------------------------------------------------------------


def _query_body(
    status: bytes,
    db: bytes = b"d",
    query: bytes = b"q",
    db_nul: bytes = b"\x00",
    db_len: int | None = None,
) -> bytes:
    head = struct.pack("<IIBHH", 1, 0, len(db) if db_len is None else db_len, 0, len(status))
    return head + status + db + db_nul + query


# Each typed code cut one byte short at the end of the status block.
TRUNCATED_STATUS: dict[int, bytes] = {
    QueryStatus.FLAGS2: b"\x00\x01\x02\x03",
    QueryStatus.SQL_MODE: b"\x01" + bytes(7),
    QueryStatus.CATALOG: b"\x02\x03std",  # NUL missing
    QueryStatus.AUTO_INCREMENT: b"\x03\x01\x00\x01",
    QueryStatus.CHARSET: b"\x04" + bytes(5),
    QueryStatus.TIME_ZONE: b"\x05\x06+03:0",
    QueryStatus.CATALOG_NZ: b"\x06\x04std",
    QueryStatus.LC_TIME_NAMES: b"\x07\x01",
    QueryStatus.CHARSET_DATABASE: b"\x08",
    QueryStatus.TABLE_MAP_FOR_UPDATE: b"\x09" + bytes(7),
    QueryStatus.MASTER_DATA_WRITTEN: b"\x0a" + bytes(3),
    QueryStatus.INVOKER: b"\x0b\x04root\x09localhos",
    QueryStatus.UPDATED_DB_NAMES: b"\x0c\x02db1\x00db2",
    QueryStatus.MICROSECONDS: b"\x0d\x01\x02",
    QueryStatus.COMMIT_TS: b"\x0e" + bytes(7),
    QueryStatus.EXPLICIT_DEFAULTS_FOR_TIMESTAMP: b"\x10",
    QueryStatus.DDL_LOGGED_WITH_XID: b"\x11" + bytes(7),
    QueryStatus.DEFAULT_COLLATION_FOR_UTF8MB4: b"\x12\x01",
    QueryStatus.SQL_REQUIRE_PRIMARY_KEY: b"\x13",
    QueryStatus.DEFAULT_TABLE_ENCRYPTION: b"\x14",
    QueryStatus.HRNOW: b"\x80\x01\x02",
    QueryStatus.XID: b"\x81" + bytes(7),
    QueryStatus.GTID_FLAGS3: b"\x82\x04" + bytes(7),
    QueryStatus.CHARACTER_SET_COLLATIONS: b"\x83\x02" + bytes(7),
}


def test_every_typed_status_code_has_a_truncation_case() -> None:
    from encoder.query import KNOWN_STATUS_CODES

    assert set(TRUNCATED_STATUS) == set(KNOWN_STATUS_CODES)


@pytest.mark.parametrize("code", sorted(TRUNCATED_STATUS))
def test_status_var_running_past_the_block(code: int) -> None:
    status = b"\x06\x03std" + TRUNCATED_STATUS[code]
    err = _error(frame(EventType.QUERY, _query_body(status)))
    assert err.event_type == "QUERY"
    assert EVENT_OFFSET + 19 + 13 + 5 <= err.offset <= EVENT_OFFSET + 19 + 13 + len(status)
    # the same bytes one byte longer are fine only when the missing byte completes the value
    assert_exact_if_accepted(frame(EventType.QUERY, _query_body(status + b"\x00")))


@pytest.mark.parametrize(
    "body",
    [
        _query_body(b"", db=b"db", db_nul=b"x"),  # database not NUL-terminated
        _query_body(b"", db=b"db", db_len=200),  # database past the end
        struct.pack("<IIBHH", 1, 0, 0, 0, 50) + b"\x00",  # status block past the end
        struct.pack("<IIBHH", 1, 0, 0, 0, 0)[:12],  # post-header cut
    ],
    ids=["db_nul", "db_len", "status_len", "post_header"],
)
def test_query_framing_errors(body: bytes) -> None:
    for code in (EventType.QUERY, EventType.QUERY_COMPRESSED):
        assert _error(frame(code, body)).event_type == EventType(code).name


@pytest.mark.parametrize(
    "record",
    [
        b"",  # no record at all
        b"\x81\x00" + b"x\x9c\x03\x00\x00\x00\x00\x01",  # uncompressed length 0
        b"\x81\x05" + b"x\x9c+\xcf/\xcaI\x01\x00\x06\x8a\x02-",  # inflates to 4, says 5
        b"\x90\x04" + b"x\x9c+\xcf/\xcaI\x01\x00\x06\x8a\x02-",  # algorithm bits set
        b"\x85\x00\x00\x00\x00\x04",  # length of length 5
        b"\x81\x04" + b"x\x9c+\xcf/\xcaI\x01\x00\x06\x8a\x02",  # stream cut short
        b"\x81\x04garbage!",
    ],
    ids=["empty", "zero_length", "size_mismatch", "alg_bits", "lenlen", "cut", "garbage"],
)
def test_query_compressed_bad_records(record: bytes) -> None:
    body = _query_body(b"", query=record)
    err = _error(frame(EventType.QUERY_COMPRESSED, body))
    assert err.event_type == "QUERY_COMPRESSED"
    assert err.offset >= EVENT_OFFSET + 19 + 13 + 2


def test_execute_load_query_post_header_cut() -> None:
    body = struct.pack("<IIBHH", 1, 0, 0, 0, 0) + bytes(12)
    assert _error(frame(EventType.EXECUTE_LOAD_QUERY, body)).event_type == "EXECUTE_LOAD_QUERY"


# --- fixed-size and small events ------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_code", "body"),
    [
        (EventType.XID, bytes(7)),
        (EventType.XID, bytes(9)),
        (EventType.INTVAR, bytes(8)),
        (EventType.INTVAR, bytes(10)),
        (EventType.RAND, bytes(15)),
        (EventType.RAND, bytes(17)),
        (EventType.DELETE_FILE, bytes(3)),
        (EventType.DELETE_FILE, bytes(5)),
        (EventType.BEGIN_LOAD_QUERY, bytes(3)),
        (EventType.APPEND_BLOCK, bytes(2)),
    ],
)
def test_fixed_sizes(type_code: int, body: bytes) -> None:
    assert _error(frame(type_code, body)).event_type == EventType(type_code).name


@pytest.mark.parametrize(
    "body",
    [
        struct.pack("<BIII", 2, 1, 1, 0) + b"g",  # one_phase neither 0 nor 1
        struct.pack("<BIII", 0, 1, 0, 0),  # empty gtrid
        struct.pack("<BIII", 0, 1, 65, 0) + bytes(65),  # gtrid too long
        struct.pack("<BIII", 0, 1, 1, 65) + bytes(66),  # bqual too long
        struct.pack("<BIII", 0, 1, 4, 4) + bytes(7),  # data cut
        struct.pack("<BIII", 0, 1, 4, 4) + bytes(9),  # bytes after the data
        struct.pack("<BII", 0, 1, 4),  # header cut
    ],
)
def test_xa_prepare_errors(body: bytes) -> None:
    assert _error(frame(EventType.XA_PREPARE, body)).event_type == "XA_PREPARE"


@pytest.mark.parametrize(
    "body",
    [
        struct.pack("<I", 0xFFFFFFFF) + b"name\x01",  # name length past the end
        struct.pack("<I", 1) + b"n",  # is_null missing
        struct.pack("<I", 1) + b"n\x02",  # is_null neither 0 nor 1
        struct.pack("<I", 1) + b"n\x00\x00\x21\x00\x00",  # value header cut
        struct.pack("<I", 1) + b"n\x00" + struct.pack("<BII", 0, 33, 10) + b"short",
        b"\x01\x00",
    ],
)
def test_user_var_errors(body: bytes) -> None:
    assert _error(frame(EventType.USER_VAR, body)).event_type == "USER_VAR"


def test_dummy_user_var_of_the_dump_thread_decodes() -> None:
    # The dump thread's NULL "@!dummyvar" replacement of a 25-byte event (facts §5.6).
    body = struct.pack("<I", 2) + b"!d" + b"\x01"
    raw = frame(EventType.USER_VAR, body, checksum=False)
    event = decode_event(raw, BinlogContext(checksum=False))
    assert event.name == b"!d" and event.value is None  # type: ignore[attr-defined]
    assert encode_event(event, BinlogContext(checksum=False)) == raw
