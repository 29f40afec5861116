"""QUERY, QUERY_COMPRESSED and EXECUTE_LOAD_QUERY: golden bytes and round trips.

The 10.2.10 vector is the ``flush tables`` capture of binlog-codec-facts.md §2.6/§5.5. The
10.11.19 vectors were captured from MariaDB 10.11.19-MariaDB-0+deb12u1-log on 2026-11-21
(binlog_format=STATEMENT, checksum CRC32; the compressed ones with log_bin_compress=ON and
log_bin_compress_min_len=10). The server's zlib (1.2.13, level 6) produced exactly the bytes
Python's ``zlib.compress`` produces, so compressed events round-trip byte for byte.
"""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder import decode_event
from encoder import encode_event
from encoder.query import KNOWN_STATUS_CODES, status_vars_bytes
from fakemaster.vocabulary.constants import EventFlag, QueryStatus
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import ExecuteLoadQueryEvent, QueryEvent, StatusVar
from scenarios.strategies.statements import (
    STATUS_VALUES,
    UNKNOWN_STATUS_CODES,
    execute_load_query_events,
    known_status_vars,
    query_events,
    unknown_status_vars,
)
from tests.budget import examples


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


FLUSH_TABLES_10_2 = (
    h("94fd385a 02 d9270000 4b000000 a9060000 0000")
    + h("21000000 00000000 00 0000 1a00")
    + h("0000000000 010000205400000000 0603737464 04080008000800")
    + h("00")
    + b"flush tables"
    + h("6ec88960")
)

# The status variables MariaDB 10.11.19 writes for a plain statement with default settings.
FLAGS2 = StatusVar(QueryStatus.FLAGS2, 0x01000000)
# STRICT_TRANS_TABLES | ERROR_FOR_DIVISION_BY_ZERO | NO_AUTO_CREATE_USER | NO_ENGINE_SUBSTITUTION
SQL_MODE = StatusVar(QueryStatus.SQL_MODE, 0x54200000)
CATALOG = StatusVar(QueryStatus.CATALOG_NZ, b"std")
CHARSET = StatusVar(QueryStatus.CHARSET, (33, 33, 8))
DEFAULT_VARS = (FLAGS2, SQL_MODE, CATALOG, CHARSET)

CREATE_TABLE_Q_XID = h(
    "8072016b0201000000ae000000c802000000000d0000000000000002000023000000000001010000205400"
    "000000060373746404210021000800814d00000000000000643100435245415445205441424c4520742028"
    "6120424947494e542c20622056415243484152283430292c206320444f55424c452c206420444543494d41"
    "4c2831302c32292c206520424947494e5420554e5349474e45442920454e47494e453d496e6e6f4442731e"
    "0844"
)
AUTO_INCREMENT_VAR = h(
    "8072016b020100000063000000370b000000000d000000000000000200001f00000000000101000020540000"
    "00000603737464030500030004210021000800643100494e5345525420494e544f206169202876292056414c"
    "55455320283729e15d3389"
)
TIME_ZONE_HRNOW = h(
    "8072016b02010000006d000000ed0b000000000d000000000000000200002600000000000101000020540000"
    "0000060373746404210021000800 05062b30333a3030 801a1603 643100494e5345525420494e544f2074"
    "202862292056414c55455320284e4f572829294861896a"
)
LC_TIME_NAMES = h(
    "8072016b02010000007d000000b30c000000000d000000000000000200001d00000000000101000020540000"
    "0000060373746404210021000800070400643100494e5345525420494e544f2074202862292056414c554553"
    "2028444154455f464f524d41542827323032302d30312d3031272c27255727292908f5b64c"
)
TABLE_MAP_FOR_UPDATE = h(
    "8072016b02010000007a000000f510000000000d00000000000000020000230000000000010100002054000000"
    "000603737464042100210008000903000000000000006431005550444154452075312c207532205345542075"
    "312e613d322c2075322e613d332057484552452075312e613d75322e612407490f"
)
INVOKER = h(
    "9072016b020100000071000000a7070000000010000000000000000200002a00000000000101000020540000"
    "0000060373746404 2d002d000800 0b04726f6f74096c6f63616c686f7374 6431004752414e542053454c"
    "454354204f4e2064312e2a20544f202775312740272527f3c51d6e"
)
CHARSET_DATABASE = h(
    "7d73016b02010000006400000055070000000025000000000000000200001d00000000000101000020540000"
    "0000060373746404210021000800082f00643100494e5345525420494e544f20742028622920"
    "56414c5545532028276364622729dab059b9"
)
START_ALTER_FLAGS3 = h(
    "9072016b020100000063000000c3020000000010000000000000000200001c00000000000101000020540000"
    "0000060373746404210021000800 8202 643100414c544552205441424c45206c6433204144442043"
    "4f4c554d4e206320494e547b900b38"
)
COMMIT_ALTER_FLAGS3 = h(
    "9072016b02010000007400000064030000000010000000000000000200002d00000000000101000020540000"
    "0000060373746404210021000800818f0000000000000082042100000000000000643100414c544552205441"
    "424c45206c64332041444420434f4c554d4e206320494e5447bdf4b0"
)
NO_FK_CHECKS = h(
    "9072016b02010000005d000000c5050000000010000000000000000200001a00000000000d010000000000"
    "000000060373746404210021000800643100494e5345525420494e544f2074202861292056414c5545532028"
    "31291583c8f5"
)
COMPRESSED_INSERT = h(
    "9d72016ba5010000007c00000027020000000019000000000000000200001a00000000000101000020540000"
    "00000603737464042100210008006431008131789cf3f40b760d0a51f0f40bf1572851d048d2540873f40975"
    "0d56d0504fcecf2d284a2d2e4e4d51282c4d2daa54c8cf4b55d7040065790f3363fca99c"
)
COMPRESSED_DDL = h(
    "9d72016ba50100000081000000af03000000001900000000000000020000230000000000010100002054000000"
    "0006037374640421002100080081c900000000000000643100812d789c730e72750c7155087174f2715548ca"
    "4c57d028a92851f0f1f7730f718d08d15470f573f7f473b5f5adf40c76f4050026b10cf8e25c4f50"
)
EXECUTE_LOAD_QUERY = h(
    "8072016b1201000000e000000047a3020000000e000000000000000226041a00020000000900000029000000"
    "0000000000010100002054000000000603737464042100210008006431004c4f4144204441544120494e4649"
    "4c4520272f746d702f67712f6c6f6164322e7478742720494e544f205441424c4520606c643260204649454c"
    "4453205445524d494e4154454420425920275c742720454e434c4f534544204259202727204553434150454420"
    "425920275c5c27204c494e4553205445524d494e4154454420425920275c6e2720286061602c206062602977"
    "0e8247"
)


def crc_ctx() -> BinlogContext:
    return BinlogContext(checksum=True)


def test_flush_tables_10_2_capture() -> None:
    event = decode_event(FLUSH_TABLES_10_2, crc_ctx())
    assert event == QueryEvent(
        timestamp=0x5A38FD94,
        server_id=10201,
        log_pos=1705,
        flags=0,
        thread_id=33,
        exec_time=0,
        error_code=0,
        status_vars=(
            StatusVar(QueryStatus.FLAGS2, 0),
            SQL_MODE,
            StatusVar(QueryStatus.CATALOG_NZ, b"std"),
            StatusVar(QueryStatus.CHARSET, (8, 8, 8)),
        ),
        database="",
        query=b"flush tables",
    )
    assert encode_event(event, crc_ctx()) == FLUSH_TABLES_10_2


def test_10_11_create_table_carries_q_xid() -> None:
    event = decode_event(CREATE_TABLE_Q_XID, crc_ctx())
    assert isinstance(event, QueryEvent)
    assert event.status_vars == (*DEFAULT_VARS, StatusVar(QueryStatus.XID, 77))
    assert (event.thread_id, event.database, event.log_pos) == (13, "d1", 712)
    assert event.query.startswith(b"CREATE TABLE t (a BIGINT")
    assert not event.compressed
    assert encode_event(event, crc_ctx()) == CREATE_TABLE_Q_XID


@pytest.mark.parametrize(
    ("raw", "status_vars"),
    [
        # Q_AUTO_INCREMENT (6 before 3: codes are not written in ascending order)
        (
            AUTO_INCREMENT_VAR,
            (FLAGS2, SQL_MODE, CATALOG, StatusVar(QueryStatus.AUTO_INCREMENT, (5, 3)), CHARSET),
        ),
        (
            TIME_ZONE_HRNOW,
            (
                *DEFAULT_VARS,
                StatusVar(QueryStatus.TIME_ZONE, b"+03:00"),
                StatusVar(QueryStatus.HRNOW, 202266),
            ),
        ),
        (LC_TIME_NAMES, (*DEFAULT_VARS, StatusVar(QueryStatus.LC_TIME_NAMES, 4))),
        (TABLE_MAP_FOR_UPDATE, (*DEFAULT_VARS, StatusVar(QueryStatus.TABLE_MAP_FOR_UPDATE, 3))),
        (
            INVOKER,
            (
                FLAGS2,
                SQL_MODE,
                CATALOG,
                StatusVar(QueryStatus.CHARSET, (45, 45, 8)),
                StatusVar(QueryStatus.INVOKER, (b"root", b"localhost")),
            ),
        ),
        (CHARSET_DATABASE, (*DEFAULT_VARS, StatusVar(QueryStatus.CHARSET_DATABASE, 47))),
        (START_ALTER_FLAGS3, (*DEFAULT_VARS, StatusVar(QueryStatus.GTID_FLAGS3, (2, None)))),
        (
            COMMIT_ALTER_FLAGS3,
            (
                *DEFAULT_VARS,
                StatusVar(QueryStatus.XID, 143),
                StatusVar(QueryStatus.GTID_FLAGS3, (4, 33)),
            ),
        ),
        # foreign_key_checks=0, unique_checks=0, sql_mode=''
        (
            NO_FK_CHECKS,
            (
                StatusVar(QueryStatus.FLAGS2, 0x0D000000),
                StatusVar(QueryStatus.SQL_MODE, 0),
                CATALOG,
                CHARSET,
            ),
        ),
    ],
    ids=[
        "auto_increment",
        "time_zone_hrnow",
        "lc_time_names",
        "table_map_for_update",
        "invoker",
        "charset_database",
        "flags3_start_alter",
        "flags3_commit_alter",
        "flags2_no_fk_checks",
    ],
)
def test_10_11_status_variable_captures(raw: bytes, status_vars: tuple[StatusVar, ...]) -> None:
    event = decode_event(raw, crc_ctx())
    assert isinstance(event, QueryEvent)
    assert event.status_vars == status_vars
    assert event.database == "d1"
    assert encode_event(event, crc_ctx()) == raw


@pytest.mark.parametrize(
    ("raw", "query", "extra"),
    [
        (COMPRESSED_INSERT, b"INSERT INTO t (b) VALUES ('compressed query one')", ()),
        (
            COMPRESSED_DDL,
            b"CREATE TABLE big (txt LONGTEXT) ENGINE=MyISAM",
            (StatusVar(QueryStatus.XID, 201),),
        ),
    ],
    ids=["insert", "ddl"],
)
def test_10_11_query_compressed_captures(
    raw: bytes, query: bytes, extra: tuple[StatusVar, ...]
) -> None:
    event = decode_event(raw, crc_ctx())
    assert isinstance(event, QueryEvent)
    assert event.compressed and event.type_code == 165
    assert event.query == query
    assert event.status_vars == (*DEFAULT_VARS, *extra)
    # The record: 0x81, the length in one byte, then zlib.compress() output of this Python.
    record_start = 19 + 13 + len(status_vars_bytes(event.status_vars)) + len(b"d1\x00")
    assert raw[record_start : record_start + 2] == bytes((0x81, len(query)))
    assert raw[record_start + 2 : -4] == zlib.compress(query)
    assert encode_event(event, crc_ctx()) == raw


def test_10_11_execute_load_query_capture() -> None:
    event = decode_event(EXECUTE_LOAD_QUERY, crc_ctx())
    assert isinstance(event, ExecuteLoadQueryEvent)
    assert (event.thread_id, event.error_code, event.file_id) == (14, 1062, 2)
    assert (event.fn_pos_start, event.fn_pos_end, event.dup_handling) == (9, 41, 0)
    # The span replaced on replay covers the keywords around the file name too.
    assert event.query[event.fn_pos_start : event.fn_pos_end] == b" INFILE '/tmp/gq/load2.txt' INTO"
    assert event.status_vars == DEFAULT_VARS
    assert encode_event(event, crc_ctx()) == EXECUTE_LOAD_QUERY


def test_unknown_code_keeps_the_rest_of_the_block_raw() -> None:
    # Code 15 (COMMIT_TS2) has no known size: the server stops there; so does the codec.
    tail = bytes((15,)) + b"\x00" + bytes((QueryStatus.FLAGS2,)) + b"\x01\x02\x03\x04"
    event = QueryEvent(status_vars=(FLAGS2, StatusVar(15, tail)), database="x", query=b"q")
    raw = encode_event(event, crc_ctx())
    decoded = decode_event(raw, crc_ctx())
    assert decoded == event
    assert isinstance(decoded, QueryEvent) and decoded.status_vars[-1].value == tail


def test_updated_db_names_over_max_has_no_names() -> None:
    body = status_vars_bytes((StatusVar(QueryStatus.UPDATED_DB_NAMES, 254), CATALOG))
    assert body == b"\x0c\xfe" + b"\x06\x03std"
    names = status_vars_bytes((StatusVar(QueryStatus.UPDATED_DB_NAMES, (b"a", b"bc")),))
    assert names == b"\x0c\x02a\x00bc\x00"


@pytest.mark.parametrize(
    "status_vars",
    [
        (StatusVar(QueryStatus.FLAGS2, 1 << 32),),
        (StatusVar(QueryStatus.FLAGS2, b"\x00"),),
        (StatusVar(QueryStatus.CHARSET, (1, 2)),),
        (StatusVar(QueryStatus.TIME_ZONE, b"x" * 256),),
        (StatusVar(QueryStatus.INVOKER, (b"u",)),),
        (StatusVar(QueryStatus.UPDATED_DB_NAMES, (b"a\x00",)),),
        (StatusVar(QueryStatus.UPDATED_DB_NAMES, 16),),
        (StatusVar(QueryStatus.UPDATED_DB_NAMES, tuple([b"d"] * 17)),),
        (StatusVar(QueryStatus.GTID_FLAGS3, (4, None)),),
        (StatusVar(QueryStatus.GTID_FLAGS3, (2, 7)),),
        (StatusVar(QueryStatus.CHARACTER_SET_COLLATIONS, ((1, 2, 3),)),),
        (StatusVar(200, b"\x00"),),  # raw value must start with its own code
        (StatusVar(200, b"\xc8"), FLAGS2),  # an unknown code must come last
        (StatusVar(300, b"\x00"),),
    ],
)
def test_status_var_encoder_rejects_bad_values(status_vars: tuple[StatusVar, ...]) -> None:
    with pytest.raises(EncodeError):
        encode_event(QueryEvent(status_vars=status_vars), crc_ctx())


@pytest.mark.parametrize(
    "event",
    [
        QueryEvent(database="x" * 256),
        QueryEvent(query=b"", compressed=True),
        QueryEvent(thread_id=1 << 32),
        QueryEvent(error_code=1 << 16),
        QueryEvent(status_vars=(StatusVar(QueryStatus.TIME_ZONE, b"z" * 255),) * 260),
        ExecuteLoadQueryEvent(dup_handling=256),
    ],
)
def test_query_encoder_rejects_out_of_range_fields(
    event: QueryEvent | ExecuteLoadQueryEvent,
) -> None:
    with pytest.raises(EncodeError):
        encode_event(event, crc_ctx())


def test_every_typed_code_has_a_strategy_and_a_writer() -> None:
    assert set(STATUS_VALUES) == set(KNOWN_STATUS_CODES)
    assert set(UNKNOWN_STATUS_CODES).isdisjoint(KNOWN_STATUS_CODES)
    assert QueryStatus.COMMIT_TS2 in UNKNOWN_STATUS_CODES
    assert QueryStatus.DUMMY in UNKNOWN_STATUS_CODES


@pytest.mark.parametrize("code", sorted(STATUS_VALUES))
@settings(max_examples=examples(0.25))  # once per status variable code
@given(data=st.data())
def test_each_status_var_round_trips(code: int, data: st.DataObject) -> None:
    var = data.draw(known_status_vars(code))
    tail = data.draw(st.one_of(st.none(), unknown_status_vars()))
    status_vars = (var, CATALOG) if tail is None else (var, CATALOG, tail)
    event = QueryEvent(status_vars=status_vars, database="db", query=b"SELECT 1")
    assert decode_event(encode_event(event, crc_ctx()), crc_ctx()) == event


@given(query_events(compressed=False))
def test_query_round_trip(event: QueryEvent) -> None:
    assert decode_event(encode_event(event, crc_ctx()), crc_ctx()) == event


@given(query_events(compressed=True))
def test_query_compressed_round_trip(event: QueryEvent) -> None:
    raw = encode_event(event, crc_ctx())
    assert raw[4] == 165
    decoded = decode_event(raw, crc_ctx())
    assert decoded == event
    assert encode_event(decoded, crc_ctx()) == raw


@given(execute_load_query_events())
def test_execute_load_query_round_trip(event: ExecuteLoadQueryEvent) -> None:
    assert decode_event(encode_event(event, crc_ctx()), crc_ctx()) == event


def test_query_without_checksum_and_with_artificial_flags() -> None:
    event = QueryEvent(flags=EventFlag.SUPPRESS_USE, database="", query=b"BEGIN")
    raw = encode_event(event, BinlogContext(checksum=False))
    assert raw[19:] == bytes(13) + b"\x00BEGIN"
    assert decode_event(raw, BinlogContext(checksum=False)) == event
