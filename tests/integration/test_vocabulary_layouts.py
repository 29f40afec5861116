"""The vocabulary's named offsets and layouts read a binlog a real MariaDB 10.11 just wrote.

The server code patches and peeks at event bytes through these names (fakemaster/vocabulary/header.py,
fakemaster/vocabulary/layouts.py) without decoding whole events; here each one is checked against the
field the full decoder reads from the same bytes of a real server's file.
"""

from __future__ import annotations

from decoder.binlog_file import iter_raw_events
from decoder.core import decode_event
from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, EventType, GtidFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import FormatDescriptionEvent, GtidEvent, GtidListEvent
from fakemaster.vocabulary.header import (
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    SERVER_ID_OFFSET,
    TIMESTAMP_OFFSET,
    TYPE_CODE_OFFSET,
)
from fakemaster.vocabulary.layouts import (
    EMPTY_GTID_LIST_PADDING,
    FDE_CREATE_TIMESTAMP_OFFSET,
    FDE_HEADER_LENGTH_OFFSET,
    FDE_SERVER_VERSION_OFFSET,
    GTID_BODY_MIN,
    GTID_FLAGS2_OFFSET,
    GTID_LIST_COUNT,
    SERVER_VERSION_LEN,
    U16,
    U32,
)
from tests.peers.fixtures import MariaDBFactory


def test_named_offsets_read_what_the_decoder_reads(mariadb_factory: MariaDBFactory) -> None:
    server = mariadb_factory(server_id=7)
    server.execute("CREATE DATABASE d")  # a standalone GTID (DDL)
    server.execute("CREATE TABLE d.t (id INT PRIMARY KEY)")
    server.execute("INSERT INTO d.t VALUES (1)")  # a transactional one
    server.stop()
    ctx = BinlogContext()
    seen: set[str] = set()
    for offset, raw in iter_raw_events(str(server.binlog_files()[0])):
        event = decode_event(raw, ctx, offset=offset)
        assert U32.unpack_from(raw, TIMESTAMP_OFFSET)[0] == event.timestamp
        assert raw[TYPE_CODE_OFFSET] == event.type_code
        assert U32.unpack_from(raw, SERVER_ID_OFFSET)[0] == event.server_id == 7
        assert U32.unpack_from(raw, EVENT_LENGTH_OFFSET)[0] == len(raw)
        assert U32.unpack_from(raw, LOG_POS_OFFSET)[0] == event.log_pos == offset + len(raw)
        assert U16.unpack_from(raw, FLAGS_OFFSET)[0] == event.flags
        seen.add(EventType(event.type_code).name)
        if isinstance(event, FormatDescriptionEvent):
            at = HEADER_LEN + FDE_SERVER_VERSION_OFFSET
            version = bytes(raw[at : at + SERVER_VERSION_LEN]).split(b"\0", 1)[0]
            assert version.decode() == event.server_version
            assert version.startswith(b"10.11.")
            created = U32.unpack_from(raw, HEADER_LEN + FDE_CREATE_TIMESTAMP_OFFSET)[0]
            assert created == event.create_timestamp
            assert raw[HEADER_LEN + FDE_HEADER_LENGTH_OFFSET] == HEADER_LEN
        elif isinstance(event, GtidListEvent) and not event.gtids:
            assert GTID_LIST_COUNT.unpack_from(raw, HEADER_LEN)[0] == 0
            padding = raw[HEADER_LEN + GTID_LIST_COUNT.size : len(raw) - CHECKSUM_LEN]
            assert padding == EMPTY_GTID_LIST_PADDING
            seen.add("empty GTID_LIST")
        elif isinstance(event, GtidEvent):
            assert len(raw) - HEADER_LEN - CHECKSUM_LEN >= GTID_BODY_MIN
            assert raw[HEADER_LEN + GTID_FLAGS2_OFFSET] == event.flags2
            standalone = bool(raw[HEADER_LEN + GTID_FLAGS2_OFFSET] & GtidFlag.STANDALONE)
            seen.add(f"standalone={standalone}")
    assert {
        "FORMAT_DESCRIPTION",
        "empty GTID_LIST",
        "standalone=True",
        "standalone=False",
        "XID",
    } <= seen
