"""The dump thread: the exact packets a MariaDB 10.11 primary sends for COM_BINLOG_DUMP.

Expected shapes and texts were taken from what MariaDB 10.11.19 sent to a raw client for the
same requests; ``test_same_bytes_as_a_real_primary`` checks it again against a live server.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.core import decode_event
from encoder import encode_event
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.events import begin_event, dummy_event
from fakemaster.core.dump.stream import DumpStream, checksum_alg_at_connect
from fakemaster.core.session import DumpRequest
from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.store.semi_sync import SemiSyncMaster, semi_sync_master
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import (
    MAX_PACKET_PAYLOAD,
    ChecksumAlg,
    Command,
    DumpFlag,
    EventFlag,
    EventType,
    GtidFlag,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    HeartbeatEvent,
    QueryEvent,
    RotateEvent,
    UserVarEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.header import CRC, HEADER, event_crc

NOW = 1_700_000_000
CRC32 = "CRC32"


def clock() -> float:
    return NOW


def request(**fields: Any) -> DumpRequest:
    values: dict[str, Any] = {
        "command": Command.BINLOG_DUMP,
        "thread_id": 5,
        "server_id": 0,
        "position": 4,
        "flags": DumpFlag.NON_BLOCK,
        "file_name": "mysql-bin.000001",
        "master_binlog_checksum": CRC32,
        "slave_capability": 4,
    }
    values.update(fields)
    return DumpRequest(**values)


def run(stream: DumpStream) -> bytes:
    out = bytearray()
    while (chunk := stream.next_chunk()) is not None:
        out += chunk
    return bytes(out)


def dump(store: Any, config: Any = None, **fields: Any) -> bytes:
    stream = DumpStream(store, request(**fields), config)
    data = run(stream)
    assert stream.is_finished
    return data


def raw_packets(data: bytes) -> list[tuple[int, bytes]]:
    """(sequence number, payload) of every packet on the wire."""
    out = []
    pos = 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 3], "little")
        out.append((data[pos + 3], data[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    assert pos == len(data)
    return out


def payloads(data: bytes) -> list[tuple[int, bytes]]:
    """(sequence number of the first packet, logical payload), split packets joined."""
    out: list[tuple[int, bytes]] = []
    pending: list[bytes] = []
    first_seq = 0
    for seq, payload in raw_packets(data):
        if not pending:
            first_seq = seq
        pending.append(payload)
        if len(payload) < MAX_PACKET_PAYLOAD:
            out.append((first_seq, b"".join(pending)))
            pending = []
    assert not pending
    return out


@dataclass
class Sent:
    seq: int
    raw: bytes  # the event bytes
    ack: bool | None  # semi-sync flag (None without semi-sync)
    header: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.header = HEADER.unpack_from(self.raw)  # ts, type, server, length, log_pos, flags

    @property
    def type_code(self) -> int:
        return self.header[1]

    @property
    def log_pos(self) -> int:
        return self.header[4]


def split(data: bytes, *, semi_sync: bool = False) -> tuple[list[Sent], bytes | None]:
    """The events sent, and the final EOF/ERR payload (None if the dump did not end)."""
    events = []
    end = None
    for seq, payload in payloads(data):
        if payload[0] == 0:
            if semi_sync:
                assert payload[1] == 0xEF
                events.append(Sent(seq, payload[3:], bool(payload[2])))
            else:
                events.append(Sent(seq, payload[1:], None))
        else:
            assert end is None
            end = payload
    return events, end


def err_text(payload: bytes | None) -> tuple[int, str]:
    assert payload is not None and payload[0] == 0xFF and payload[3:9] == b"#HY000"
    return struct.unpack_from("<H", payload, 1)[0], payload[9:].decode()


def decode_all(events: list[Sent]) -> list[Event]:
    ctx = BinlogContext()
    return [decode_event(sent.raw, ctx) for sent in events]


def insert(n: int) -> list[Event]:
    return [QueryEvent(query=b"INSERT INTO t VALUES (%d)" % n, database="d"), XidEvent(xid=n)]


def annotated_insert(n: int) -> list[Event]:
    statement = b"INSERT INTO t VALUES (%d) /* %s */" % (n, b"x" * 60)
    return [AnnotateRowsEvent(query=statement), *insert(n)]


def ddl() -> list[Event]:
    return [QueryEvent(query=b"CREATE TABLE t (a INT)", database="d")]


def file_bytes(store: MemoryBinlogStore, name: str) -> bytes:
    out = bytearray(b"\xfebin")
    while chunk := store.read(name, len(out)):
        out += chunk
    return bytes(out)


def file_events(store: MemoryBinlogStore, name: str) -> list[bytes]:
    return [raw for _, raw in store.iter_events(name)]


EOF_AUTOCOMMIT = b"\xfe\x00\x00\x02\x00"


# --- file/pos dumps --------------------------------------------------------------------


def test_dump_from_the_start_of_a_file() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(ddl())
    store.append_transaction(insert(1))
    events, end = split(dump(store))
    assert [sent.seq for sent in events] == list(range(1, len(events) + 1))
    rotate = events[0]
    assert rotate.header == (0, EventType.ROTATE, 1, 47, 0, EventFlag.ARTIFICIAL)
    assert rotate.raw[19:27] == (4).to_bytes(8, "little")
    assert rotate.raw[27:-4] == b"mysql-bin.000001"
    assert CRC.unpack_from(rotate.raw, 43)[0] == event_crc(rotate.raw[:43], 4)
    stored = file_events(store, "mysql-bin.000001")
    fde = bytearray(stored[0])
    fde[17] &= 0xFE  # IN_USE cleared; the CRC was computed with it clear
    assert events[1].raw == bytes(fde)
    assert events[1].log_pos == 256
    assert [sent.raw for sent in events[2:]] == stored[1:]
    assert end == EOF_AUTOCOMMIT


def test_dump_from_a_position_inside_a_file() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(ddl())
    group = store.append_transaction(insert(1))
    events, end = split(dump(store, position=group.start))
    assert events[0].raw[19:27] == group.start.to_bytes(8, "little")
    fde = decode_all(events[1:2])[0]
    assert isinstance(fde, FormatDescriptionEvent)
    # log_pos 0 and created 0, CRC recomputed (decoding verifies it).
    assert (fde.log_pos, fde.create_timestamp, fde.flags) == (0, 0, 0)
    assert [sent.raw for sent in events[2:]] == [
        raw for offset, raw in store.iter_events("mysql-bin.000001") if offset >= group.start
    ]
    assert end == EOF_AUTOCOMMIT


def test_dump_across_files() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    store.rotate()
    store.append_transaction(insert(2))
    events, _ = split(dump(store))
    types = [sent.type_code for sent in events]
    real_rotate = types.index(EventType.ROTATE, 1)
    assert events[real_rotate].header[0] == NOW  # the file's own ROTATE
    fake = events[real_rotate + 1]
    assert fake.header[0] == 0 and fake.header[5] == EventFlag.ARTIFICIAL
    assert fake.raw[19:-4] == (4).to_bytes(8, "little") + b"mysql-bin.000002"
    second_fde = events[real_rotate + 2]
    assert second_fde.type_code == EventType.FORMAT_DESCRIPTION and second_fde.log_pos == 256
    assert [sent.raw for sent in events[real_rotate + 3 :]] == file_events(
        store, "mysql-bin.000002"
    )[1:]


def test_dump_from_the_end_of_a_closed_file_goes_to_the_next() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.rotate()
    size = store.file_size("mysql-bin.000001")
    events, end = split(dump(store, position=size))
    assert [sent.type_code for sent in events[:4]] == [
        EventType.ROTATE,
        EventType.FORMAT_DESCRIPTION,
        EventType.ROTATE,
        EventType.FORMAT_DESCRIPTION,
    ]
    assert events[1].log_pos == 0 and events[3].log_pos == 256
    assert end == EOF_AUTOCOMMIT


def test_empty_file_name_means_the_first_file() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.rotate()
    events, _ = split(dump(store, file_name=""))
    assert events[0].raw[27:-4] == b"mysql-bin.000001"


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        (
            {"file_name": "mysql-bin.000009"},
            "Could not find first log file name in binary log index file",
        ),
        (
            {"file_name": "/elsewhere/mysql-bin.000001"},
            "Could not find first log file name in binary log index file",
        ),
        (
            {"position": 3},
            "Client requested master to start replication from impossible position; "
            "the first event 'mysql-bin.000001' at 3, the last event read from "
            "'mysql-bin.000001' at 4, the last byte read from 'mysql-bin.000001' at 4.",
        ),
        (
            {"position": 99999},
            "Client requested master to start replication from impossible position; "
            "the first event 'mysql-bin.000001' at 99999, the last event read from "
            "'mysql-bin.000001' at 4, the last byte read from 'mysql-bin.000001' at 4.",
        ),
    ],
)
def test_start_errors(fields: dict[str, Any], text: str) -> None:
    store = MemoryBinlogStore(clock=clock)
    events, end = split(dump(store, **fields))
    assert events == []
    assert err_text(end) == (1236, text)
    assert raw_packets(dump(store, **fields))[0][0] == 1


def test_position_not_at_an_event_boundary() -> None:
    store = MemoryBinlogStore(clock=clock)
    events, end = split(dump(store, position=5))
    assert [sent.type_code for sent in events] == [EventType.ROTATE, EventType.FORMAT_DESCRIPTION]
    assert err_text(end) == (
        1236,
        "bogus data in log event; the first event 'mysql-bin.000001' at 5, the last event "
        "read from 'mysql-bin.000001' at 5, the last byte read from 'mysql-bin.000001' at 24.",
    )


def test_no_binlog() -> None:
    _, end = split(dump(None))
    assert err_text(end) == (1236, "Binary log is not open")


# --- checksums -------------------------------------------------------------------------


def test_replica_without_checksum_handshake() -> None:
    store = MemoryBinlogStore(clock=clock)
    group = store.append_transaction(insert(1))
    for position in (4, group.start):
        events, end = split(dump(store, master_binlog_checksum=None, position=position))
        assert len(events) == 1
        assert events[0].header[3] == 43  # the fake ROTATE, without CRC
        assert err_text(end) == (
            1236,
            "Slave can not handle replication events with the checksum that master is "
            f"configured to log; the first event 'mysql-bin.000001' at {position}, the last "
            "event read from 'mysql-bin.000001' at 4, the last byte read from "
            "'mysql-bin.000001' at 256.",
        )


@pytest.mark.parametrize(
    ("value", "rotate_length"), [("NONE", 43), ("none", 43), ("CRC32", 47), ("bogus", 47), ("", 47)]
)
def test_first_fake_rotate_follows_the_variable(value: str, rotate_length: int) -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    events, end = split(dump(store, master_binlog_checksum=value))
    assert events[0].header[3] == rotate_length
    # File events are sent as stored, with their CRCs, whatever the variable says.
    assert [sent.raw for sent in events[2:]] == file_events(store, "mysql-bin.000001")[1:]
    assert end == EOF_AUTOCOMMIT


def test_binlog_without_checksums() -> None:
    store = MemoryBinlogStore(clock=clock, checksum=False)
    store.append_transaction(insert(1))
    store.rotate()
    events, end = split(dump(store, master_binlog_checksum=None))
    rotates = [sent for sent in events if sent.type_code == EventType.ROTATE]
    assert all(len(sent.raw) == 19 + 8 + 16 for sent in rotates)
    assert end == EOF_AUTOCOMMIT


def test_checksum_alg_at_connect() -> None:
    assert checksum_alg_at_connect(None) == ChecksumAlg.UNDEF
    assert checksum_alg_at_connect("None") == ChecksumAlg.OFF
    assert checksum_alg_at_connect("crc32") == ChecksumAlg.CRC32


def test_later_fake_rotates_use_the_previous_files_algorithm() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.rotate()
    events, _ = split(dump(store, master_binlog_checksum="NONE"))
    rotates = [s for s in events if s.type_code == EventType.ROTATE and s.header[0] == 0]
    assert [len(s.raw) for s in rotates] == [43, 47]


# --- GTID dumps ------------------------------------------------------------------------


def gtid_store() -> tuple[MemoryBinlogStore, list[Any]]:
    store = MemoryBinlogStore(clock=clock)
    groups = [store.append_transaction(ddl())]
    groups += [store.append_transaction(insert(n)) for n in range(2, 5)]
    groups.append(store.append_transaction(insert(10), domain_id=2))
    store.rotate()
    groups += [store.append_transaction(insert(n)) for n in range(5, 7)]
    return store, groups


def test_gtid_connect_skips_to_the_position() -> None:
    store, groups = gtid_store()
    events, end = split(dump(store, connect_state="0-1-3", file_name="", position=4))
    decoded = decode_all(events)
    assert isinstance(decoded[0], RotateEvent) and decoded[0].position == 4
    fde = decoded[1]
    assert isinstance(fde, FormatDescriptionEvent)
    assert fde.create_timestamp == 0 and fde.log_pos == 256  # position not reached yet
    assert isinstance(decoded[2], GtidListEvent) and isinstance(decoded[3], BinlogCheckpointEvent)
    fake = decoded[4]
    assert isinstance(fake, GtidListEvent)
    assert (fake.timestamp, fake.flags, fake.log_pos) == (0, EventFlag.ARTIFICIAL, groups[2].end)
    assert fake.gtids == (Gtid(0, 1, 3),)
    gtids = [e.gtid for e in decoded if isinstance(e, GtidEvent)]
    assert gtids == [Gtid(0, 1, 4), Gtid(2, 1, 1), Gtid(0, 1, 5), Gtid(0, 1, 6)]
    assert end == EOF_AUTOCOMMIT


def test_gtid_connect_with_an_empty_position_sends_everything() -> None:
    store, _ = gtid_store()
    events, _ = split(dump(store, connect_state="", file_name=""))
    fde = decode_all(events[1:2])[0]
    assert isinstance(fde, FormatDescriptionEvent) and fde.create_timestamp == NOW
    assert [sent.raw for sent in events[2 : 2 + 3]] == file_events(store, "mysql-bin.000001")[1:4]
    assert not any(s.type_code == EventType.GTID_LIST and s.header[0] == 0 for s in events)


def test_gtid_connect_at_a_file_boundary_starts_there() -> None:
    store, _ = gtid_store()
    events, _ = split(dump(store, connect_state="0-1-4,2-1-1", file_name=""))
    assert events[0].raw[27:-4] == b"mysql-bin.000002"
    assert not any(s.type_code == EventType.GTID_LIST and s.header[0] == 0 for s in events)


def test_gtid_fake_list_orders_domains_like_the_server() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    store.append_transaction(insert(2), domain_id=5)
    store.append_transaction(insert(3))
    events, _ = split(dump(store, connect_state="0-1-2,5-1-1", file_name=""))
    fake = [e for e in decode_all(events) if isinstance(e, GtidListEvent) and e.timestamp == 0]
    assert [e.gtids for e in fake] == [
        (Gtid(5, 1, 1), Gtid(0, 1, 1)),
        (Gtid(5, 1, 1), Gtid(0, 1, 2)),
    ]


@pytest.mark.parametrize(
    ("state", "strict", "text"),
    [
        (
            "0-1-99",
            False,
            "Error: connecting slave requested to start from GTID 0-1-99, which is not in the "
            "master's binlog",
        ),
        (
            "0-2-3",
            True,
            "Error: connecting slave requested to start from GTID 0-2-3, which is not in the "
            "master's binlog. Since the master's binlog contains GTIDs with higher sequence "
            "numbers, it probably means that the slave has diverged due to executing extra "
            "erroneous transactions",
        ),
    ],
)
def test_gtid_not_in_binlog(state: str, strict: bool, text: str) -> None:
    store, _ = gtid_store()
    events, end = split(dump(store, connect_state=state, gtid_strict_mode=strict, file_name=""))
    assert events == [] and err_text(end) == (1236, text)


def test_gtid_ignore_duplicates() -> None:
    store, _ = gtid_store()
    events, end = split(
        dump(store, connect_state="0-1-99", gtid_ignore_duplicates=True, file_name="")
    )
    assert end == EOF_AUTOCOMMIT
    gtids = [e.gtid for e in decode_all(events) if isinstance(e, GtidEvent)]
    assert gtids == [Gtid(2, 1, 1)]  # every domain-0 group is "before" 0-1-99


@pytest.mark.parametrize(
    ("state", "errno", "text"),
    [
        ("bogus", 1941, "Could not parse GTID list"),
        ("0-1-5 ", 1941, "Could not parse GTID list"),
        ("0-1-1,0-1-2", 1943, "GTID 0-1-2 and 0-1-1 conflict (duplicate domain id 0)"),
    ],
)
def test_gtid_state_parse_errors(state: str, errno: int, text: str) -> None:
    store, _ = gtid_store()
    assert err_text(split(dump(store, connect_state=state))[1]) == (errno, text)


def test_gtid_purged_binlogs() -> None:
    store, _ = gtid_store()
    store.purge_to("mysql-bin.000002")
    for state in ("", "0-1-2,2-1-1"):
        assert err_text(split(dump(store, connect_state=state))[1]) == (
            1236,
            "Could not find GTID state requested by slave in any binlog files. Probably the "
            "slave state is too old and required binlog files have been purged.",
        )
    _, end = split(dump(store, file_name="mysql-bin.000001"))
    assert err_text(end) == (1236, "Could not find first log file name in binary log index file")


def hole_store() -> tuple[MemoryBinlogStore, Any]:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    store.append_transaction(insert(2))
    after = store.append_transaction(insert(3), seq_no=20)
    return store, after


def test_gtid_strict_mode_hole() -> None:
    store, _ = hole_store()
    _, end = split(dump(store, connect_state="0-1-10", gtid_strict_mode=True))
    assert err_text(end) == (
        1236,
        "The binlog on the master is missing the GTID 0-1-10 requested by the slave (even "
        "though both a prior and a subsequent sequence number does exist), and GTID strict "
        "mode is enabled",
    )


def test_gtid_hole_without_strict_mode_sends_the_fake_list_inside_the_group() -> None:
    store, after = hole_store()
    events, end = split(dump(store, connect_state="0-1-10"))
    decoded = decode_all(events)
    index = next(i for i, e in enumerate(decoded) if isinstance(e, GtidEvent))
    assert decoded[index].gtid == Gtid(0, 1, 20)  # type: ignore[attr-defined]
    fake = decoded[index + 1]
    assert isinstance(fake, GtidListEvent) and fake.timestamp == 0
    assert fake.log_pos == after.start + 42 and fake.gtids == (Gtid(0, 1, 20),)
    assert isinstance(decoded[index + 2], QueryEvent)
    assert end == EOF_AUTOCOMMIT


def test_unknown_domain_is_streamed_from_its_start() -> None:
    store, _ = gtid_store()
    events, _ = split(dump(store, connect_state="7-1-5"))
    fde = decode_all(events[1:2])[0]
    assert isinstance(fde, FormatDescriptionEvent) and fde.create_timestamp == NOW
    assert len([s for s in events if s.type_code == EventType.GTID]) == 7


def test_unknown_domain_that_shows_up_later_is_checked_then() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    stream = DumpStream(store, request(connect_state="3-1-5", flags=0, server_id=9))
    first, _ = split(run(stream))
    assert len(first) == 7 and not stream.is_finished
    store.append_transaction(insert(2), domain_id=3)
    _, end = split(run(stream))
    assert err_text(end) == (
        1236,
        "Error: connecting slave requested to start from GTID 3-1-5, which is not in the "
        "master's binlog",
    )
    assert stream.is_finished


def test_gtid_until_position() -> None:
    store, groups = gtid_store()
    events, end = split(dump(store, connect_state="0-1-2", until_gtid="0-1-4,2-1-1"))
    decoded = decode_all(events)
    gtids = [e.gtid for e in decoded if isinstance(e, GtidEvent)]
    assert gtids == [Gtid(0, 1, 3), Gtid(0, 1, 4), Gtid(2, 1, 1)]
    last = decoded[-1]
    assert isinstance(last, GtidListEvent)
    assert last.list_flags == 1 << 28 and last.log_pos == groups[4].end
    assert end == EOF_AUTOCOMMIT


def test_gtid_until_right_after_the_start_group() -> None:
    # As a real 10.11 primary: the UNTIL check right after the fake GTID_LIST looks at that
    # fake event instead of the group's COMMIT, so the dump stops only at the end of the next
    # (skipped) transaction.
    store = MemoryBinlogStore(clock=clock)
    groups = [
        store.append_transaction(insert(1)),
        store.append_transaction([QueryEvent(query=b"INSERT"), QueryEvent(query=b"COMMIT")]),
        store.append_transaction(insert(3)),
        store.append_transaction(insert(4)),
    ]
    events, end = split(dump(store, connect_state="0-1-2", until_gtid="0-1-2"))
    decoded = decode_all(events)
    fakes = [e for e in decoded if isinstance(e, GtidListEvent) and e.timestamp == 0]
    assert [(e.list_flags, e.log_pos, e.gtids) for e in fakes] == [
        (0, groups[1].end, (Gtid(0, 1, 2),)),
        (1 << 28, groups[2].end, (Gtid(0, 1, 3),)),
    ]
    assert not any(isinstance(e, GtidEvent) for e in decoded)
    assert end == EOF_AUTOCOMMIT
    # With an XID the stop comes right after the group.
    events, _ = split(dump(store, connect_state="0-1-3", until_gtid="0-1-3"))
    fakes = [e for e in decode_all(events) if isinstance(e, GtidListEvent) and e.timestamp == 0]
    assert [(e.list_flags, e.log_pos) for e in fakes] == [
        (0, groups[2].end),
        (1 << 28, groups[2].end),
    ]


# --- old replicas ----------------------------------------------------------------------


def capability_store() -> MemoryBinlogStore:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(annotated_insert(1))
    store.append_transaction(ddl())
    store.append_transaction(insert(2), commit_id=9)
    return store


@pytest.mark.parametrize("capability", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("annotate", [False, True])
def test_capability_rewrites(capability: int, annotate: bool) -> None:
    store = capability_store()
    flags = DumpFlag.NON_BLOCK | (DumpFlag.SEND_ANNOTATE_ROWS if annotate else 0)
    events, end = split(dump(store, slave_capability=capability, flags=flags))
    assert end == EOF_AUTOCOMMIT
    stored = {HEADER.unpack_from(raw)[4]: raw for raw in file_events(store, "mysql-bin.000001")}
    for sent in events[2:]:
        original = stored[sent.log_pos]
        # Whatever is sent has the original's position and length.
        assert len(sent.raw) == len(original)
    sent_by_end = {sent.log_pos: sent for sent in events[2:]}
    decoded = dict(zip(sent_by_end, decode_all(list(sent_by_end.values())), strict=True))

    def sent_as(original_type: int) -> list[Event | None]:
        return [
            decoded.get(end) for end, raw in stored.items() if raw[4] == original_type and end > 256
        ]

    gtids, annotations = sent_as(EventType.GTID), sent_as(EventType.ANNOTATE_ROWS)
    checkpoints, lists = sent_as(EventType.BINLOG_CHECKPOINT), sent_as(EventType.GTID_LIST)
    if capability >= 4:
        assert all(isinstance(e, GtidEvent) for e in gtids)
    else:
        begin, standalone, with_commit_id = gtids
        assert isinstance(begin, QueryEvent) and begin.query == b"BEGIN"
        assert isinstance(with_commit_id, QueryEvent) and with_commit_id.query == b"BEGIN"
        assert [(v.code, v.value) for v in with_commit_id.status_vars] == [(5, b"")]
        assert begin.flags == with_commit_id.flags == EventFlag.SUPPRESS_USE
        if capability >= 2:
            assert standalone is None
        else:
            assert isinstance(standalone, QueryEvent)
            assert standalone.query == b"# Dum"  # as much of the text as 42 bytes hold
    if annotate or capability == 1:
        assert all(isinstance(e, AnnotateRowsEvent) for e in annotations)
    elif capability >= 2:
        assert annotations == [None]
    else:
        (dummy,) = annotations
        assert isinstance(dummy, QueryEvent) and dummy.flags == EventFlag.SUPPRESS_USE
        assert dummy.query.startswith(b"# Dummy event replacing event type 160 that slave")
    if capability >= 3:
        assert all(isinstance(e, BinlogCheckpointEvent) for e in checkpoints)
    elif capability == 2:
        assert checkpoints == [None]
    else:
        assert all(isinstance(e, QueryEvent) for e in checkpoints)
    if capability >= 4:
        assert all(isinstance(e, GtidListEvent) for e in lists)
    elif capability >= 2:
        assert lists == [None]
    else:
        # The empty GTID_LIST is 25 bytes without its CRC: a NULL user variable "!".
        (dummy_var,) = lists
        assert isinstance(dummy_var, UserVarEvent)
        assert dummy_var.name == b"!" and dummy_var.value is None


def test_gtid_that_cannot_become_begin() -> None:
    store = MemoryBinlogStore(clock=clock)
    group = store.append_transaction(
        [QueryEvent(query=b"INSERT"), XaPrepareEvent(xid=XaXid(1, b"x12", b""))]
    )
    _, end = split(dump(store, slave_capability=3))
    gtid_end = group.start + 19 + 13 + 6 + 3 + 4
    assert err_text(end) == (
        1236,
        "Failed to replace GTID event with backwards-compatible event: corrupt event.; the "
        f"first event 'mysql-bin.000001' at 4, the last event read from 'mysql-bin.000001' "
        f"at {group.start}, the last byte read from 'mysql-bin.000001' at {gtid_end}.",
    )


def test_gtid_of_begin_size_becomes_begin_whatever_it_holds() -> None:
    # The server only looks at the size: an XA GTID of 21 bytes passes as "with commit id".
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(
        [QueryEvent(query=b"INSERT"), XaPrepareEvent(xid=XaXid(1, b"x1", b""))]
    )
    events, end = split(dump(store, slave_capability=3))
    assert end == EOF_AUTOCOMMIT
    begin = decode_all([s for s in events if s.header[1] == EventType.QUERY][:1])[0]
    assert isinstance(begin, QueryEvent) and begin.query == b"BEGIN"


@given(st.integers(25, 300), st.booleans())
def test_dummy_event_keeps_the_length(length: int, checksum: bool) -> None:
    alg = ChecksumAlg.CRC32 if checksum else ChecksumAlg.OFF
    body = bytes(range(256)) * 2
    head = struct.pack("<IBIIIH", 5, 200, 3, length + (4 if checksum else 0), 999, 0x0004)
    event = head + body[: length - 19] + (b"\x00\x00\x00\x00" if checksum else b"")
    out = dummy_event(event, alg)
    assert out is not None and len(out) == len(event)
    assert out[9:17] == event[9:17]  # length and position unchanged
    flags = struct.unpack_from("<H", out, 17)[0]
    assert flags == EventFlag.SUPPRESS_USE  # THREAD_SPECIFIC cleared
    decoded = decode_event(out, BinlogContext(checksum=checksum))
    if length < 34:
        assert isinstance(decoded, UserVarEvent)
        assert decoded.name == b"!dummyvar"[: length - 24] and decoded.value is None
    else:
        assert isinstance(decoded, QueryEvent)
        text = b"# Dummy event replacing event type 200 that slave cannot handle."
        comment = length - 33
        assert decoded.query == (text[:comment] if comment <= len(text) else text.ljust(comment))
    assert dummy_event(event[:24] if not checksum else event[:28], alg) is None


def test_begin_event_only_for_the_two_plain_gtid_sizes() -> None:
    plain = encode_event(GtidEvent(seq_no=1, flags2=GtidFlag.TRANSACTIONAL))
    assert begin_event(plain, ChecksumAlg.CRC32) is not None
    xa = encode_event(GtidEvent(seq_no=1, flags2=GtidFlag.PREPARED_XA, xid=XaXid(1, b"a", b"")))
    assert begin_event(xa, ChecksumAlg.CRC32) is None


def test_skip_replication_flag() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append([QueryEvent(query=b"SET x", flags=EventFlag.SKIP_REPLICATION)])
    kept = split(dump(store))[0]
    dropped = split(dump(store, skip_replication=True))[0]
    assert len(kept) == len(dropped) + 1
    assert not any(s.header[5] & EventFlag.SKIP_REPLICATION for s in dropped)


# --- blocking dumps, live appends, heartbeats ------------------------------------------


def test_blocking_dump_waits_and_streams_live_appends() -> None:
    store = MemoryBinlogStore(clock=clock)
    stream = DumpStream(store, request(flags=0, server_id=3))
    first, end = split(run(stream))
    assert end is None and not stream.is_finished
    assert stream.next_chunk() is None
    group = store.append_transaction(insert(1))
    more, _ = split(run(stream))
    assert [s.raw for s in more] == file_events(store, "mysql-bin.000001")[3:]
    assert more[0].seq == first[-1].seq + 1
    assert (stream.file_name, stream.position) == ("mysql-bin.000001", group.end)
    store.rotate()
    after_rotate, _ = split(run(stream))
    assert [s.type_code for s in after_rotate[:3]] == [
        EventType.ROTATE,
        EventType.ROTATE,
        EventType.FORMAT_DESCRIPTION,
    ]
    assert stream.file_name == "mysql-bin.000002"


def test_server_id_zero_is_non_blocking() -> None:
    store = MemoryBinlogStore(clock=clock)
    assert split(dump(store, flags=0, server_id=0))[1] == EOF_AUTOCOMMIT
    status = DumpStream(store, _StatusRequest(request(), 0))
    assert split(run(status))[1] == b"\xfe\x00\x00\x00\x00"


@dataclass
class _StatusRequest:
    """A request that carries the session's server status (autocommit off)."""

    inner: DumpRequest
    server_status: int

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_heartbeat() -> None:
    store = MemoryBinlogStore(clock=clock)
    stream = DumpStream(store, request(flags=0, server_id=3), ServerConfig(server_id=42))
    before = raw_packets(run(stream))
    packet = stream.heartbeat_packet()
    seq, payload = raw_packets(packet)[0]
    assert seq == before[-1][0] + 1 and stream.next_sequence == seq + 1
    event = decode_event(payload[1:], BinlogContext())
    assert isinstance(event, HeartbeatEvent)
    assert (event.timestamp, event.flags, event.server_id) == (0, 0, 42)
    assert event.log_pos == store.position and event.file_name == "mysql-bin.000001"
    assert event.position is None
    stream.position = 5 << 30  # past 4 GiB: log_pos 0 and an 8-byte position
    big = decode_event(raw_packets(stream.heartbeat_packet())[0][1][1:], BinlogContext())
    assert isinstance(big, HeartbeatEvent)
    assert (big.log_pos, big.position, big.file_name) == (0, 5 << 30, "mysql-bin.000001")
    plain = DumpStream(store, request(flags=0, server_id=3, master_binlog_checksum=None))
    assert plain.next_chunk() is not None  # the fake rotate, then the checksum error
    unchecked = DumpStream(MemoryBinlogStore(checksum=False), request(flags=0, server_id=3))
    run(unchecked)
    assert len(raw_packets(unchecked.heartbeat_packet())[0][1]) == 1 + 19 + 16


def test_chunks_are_bounded() -> None:
    store = MemoryBinlogStore(clock=clock)
    for n in range(300):
        store.append_transaction([QueryEvent(query=b"x" * 900), XidEvent(xid=n)])
    stream = DumpStream(store, request(), chunk_size=16 * 1024)
    sizes = []
    while (chunk := stream.next_chunk()) is not None:
        sizes.append(len(chunk))
    assert len(sizes) > 10
    assert max(sizes) < 16 * 1024 + 1100


# --- large events ----------------------------------------------------------------------


@pytest.mark.parametrize("semi_sync", [False, True])
@pytest.mark.parametrize("extra", [-1, 0, 1, MAX_PACKET_PAYLOAD + 5])
def test_events_of_16_mib_and_more_are_split(semi_sync: bool, extra: int) -> None:
    store = MemoryBinlogStore(clock=clock)
    prefix = 3 if semi_sync else 1
    # A QUERY event whose packet payload is 0xFFFFFF + extra bytes.
    overhead = 19 + 13 + 1 + 1 + 4  # header, post-header, db "d" + NUL, CRC
    query_len = MAX_PACKET_PAYLOAD + extra - prefix - overhead
    store.append([QueryEvent(query=b"q" * query_len, database="d")])
    data = dump(store, semi_sync=semi_sync)
    packets = raw_packets(data)
    sizes = [len(payload) for _, payload in packets]
    big = sizes.index(MAX_PACKET_PAYLOAD) if MAX_PACKET_PAYLOAD in sizes else None
    total = MAX_PACKET_PAYLOAD + extra
    if total < MAX_PACKET_PAYLOAD:
        assert big is None and total in sizes
    else:
        assert big is not None
        chunks = [MAX_PACKET_PAYLOAD] * (total // MAX_PACKET_PAYLOAD)
        chunks.append(total % MAX_PACKET_PAYLOAD)  # an empty packet for an exact multiple
        assert sizes[big : big + len(chunks)] == chunks
    assert [seq for seq, _ in packets] == list(range(1, len(packets) + 1))
    events, end = split(data, semi_sync=semi_sync)
    assert events[-1].raw == file_events(store, "mysql-bin.000001")[-1]
    assert end == EOF_AUTOCOMMIT


# --- semi-sync -------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def semi_setup(enabled: bool = True) -> tuple[MemoryBinlogStore, SemiSyncMaster, FakeClock]:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))  # history: nobody waits for it
    ticks = FakeClock()
    return store, SemiSyncMaster(store, enabled=enabled, timeout_ms=1000, clock=ticks), ticks


def semi_stream(store: MemoryBinlogStore, semi: SemiSyncMaster, **fields: Any) -> DumpStream:
    return DumpStream(
        store, request(flags=0, server_id=7, semi_sync=True, **fields), semi_sync=semi
    )


def test_semi_sync_header_on_every_packet_and_acks_for_live_groups() -> None:
    store, semi, _ = semi_setup()
    stream = semi_stream(store, semi)
    history, end = split(run(stream), semi_sync=True)
    assert end is None
    assert [s.ack for s in history] == [False] * len(history)  # nothing waits
    assert [s.seq for s in history] == list(range(1, len(history) + 1))
    trx = store.append_transaction(insert(2))
    standalone = store.append_transaction(ddl())
    commit = store.append_transaction([QueryEvent(query=b"INSERT"), QueryEvent(query=b"COMMIT")])
    assert semi.waiting == [
        ("mysql-bin.000001", trx.end),
        ("mysql-bin.000001", standalone.end),
        ("mysql-bin.000001", commit.end),
    ]
    live, _ = split(run(stream), semi_sync=True)
    acked = [s.log_pos for s in live if s.ack]
    assert acked == [trx.end, standalone.end, commit.end]
    # The packet after an ACK-requested one starts again at sequence 1.
    seqs = [s.seq for s in live]
    assert seqs == [history[-1].seq + 1, history[-1].seq + 2, history[-1].seq + 3, 1, 2, 1, 2, 3]
    heartbeat = raw_packets(stream.heartbeat_packet())[0][1]
    assert heartbeat[:3] == b"\x00\xef\x00"
    results: list[bool] = []
    semi.wait_for_ack("mysql-bin.000001", standalone.end, results.append)
    stream.on_semi_sync_ack(trx.end, "mysql-bin.000001")
    assert results == [] and semi.waiting[0] == ("mysql-bin.000001", standalone.end)
    stream.on_ack("mysql-bin.000001", commit.end)
    assert results == [True] and semi.waiting == []
    assert semi.is_acked("mysql-bin.000001", trx.end)
    assert semi.received_acks == 2 and semi.requested_acks == 3
    semi.wait_for_ack("mysql-bin.000001", trx.end, results.append)
    assert results == [True, True]
    stream.close()
    assert semi.clients == 0


def test_semi_sync_group_sent_before_the_master_heard_of_it_still_wants_an_ack() -> None:
    """The server subscribes to the store before the semi-sync state does, so a dump can send
    a new group before the semi-sync state's own notification registered it (a real replica
    then never ACKed it)."""
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    sent: list[Sent] = []
    streams: list[DumpStream] = []
    store.subscribe(lambda _version: sent.extend(split(run(streams[0]), semi_sync=True)[0]))
    semi = SemiSyncMaster(store, enabled=True, timeout_ms=1000, clock=FakeClock())
    streams.append(semi_stream(store, semi))
    run(streams[0])
    group = store.append_transaction(insert(2))
    assert [s.log_pos for s in sent if s.ack] == [group.end]
    assert semi.waiting == [("mysql-bin.000001", group.end)]
    assert semi.requested_acks == 1


def test_semi_sync_timeout_falls_back_to_async_until_caught_up() -> None:
    store, semi, ticks = semi_setup()
    waited = store.append_transaction(insert(2))
    results: list[bool] = []
    semi.wait_for_ack("mysql-bin.000001", waited.end, results.append)
    ticks.now += 5
    semi.check_timeouts()
    assert not semi.is_on and results == [False] and semi.off_times == 1
    later = store.append_transaction(insert(3))
    assert semi.waiting == []
    semi.wait_for_ack("mysql-bin.000001", later.end, results.append)
    assert results == [False, False]
    # A replica reading from the start: the only ACK request is where it catches up.
    stream = semi_stream(store, semi)
    events, _ = split(run(stream), semi_sync=True)
    assert [s.log_pos for s in events if s.ack] == [later.end]
    stream.on_semi_sync_ack(later.end, "mysql-bin.000001")
    assert semi.is_on
    again = store.append_transaction(insert(4))
    events, _ = split(run(stream), semi_sync=True)
    assert [s.log_pos for s in events if s.ack] == [again.end]


def test_semi_sync_timeout_checked_by_the_dump() -> None:
    store, semi, ticks = semi_setup()
    stream = semi_stream(store, semi)
    run(stream)
    store.append_transaction(insert(2))
    ticks.now += 2
    events, _ = split(run(stream), semi_sync=True)  # next_chunk switched semi-sync off first
    assert not semi.is_on
    assert [s.ack for s in events] == [False, False, True]  # caught up: one ACK request


def test_semi_sync_disabled_on_the_master_keeps_the_header() -> None:
    store, semi, _ = semi_setup(enabled=False)
    stream = semi_stream(store, semi)
    store.append_transaction(insert(2))
    events, _ = split(run(stream), semi_sync=True)
    assert events and not any(s.ack for s in events)
    results: list[bool] = []
    semi.wait_for_ack("mysql-bin.000001", 10, results.append)
    assert results == [False]


def test_semi_sync_master_is_shared_per_store() -> None:
    store = MemoryBinlogStore(clock=clock)
    config = ServerConfig(semi_sync_enabled=True, semi_sync_timeout_ms=500)
    master = semi_sync_master(store, config)
    assert semi_sync_master(store) is master
    assert master.enabled and master.timeout == 0.5
    stream = DumpStream(store, request(semi_sync=True, flags=0, server_id=2), config)
    run(stream)
    assert master.clients == 1
    other = MemoryBinlogStore(clock=clock)
    assert semi_sync_master(other) is not master
    master.close()


# --- a directory of real binlogs -------------------------------------------------------

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "binlogs"


def test_real_binlogs_are_streamed_byte_for_byte(tmp_path: Path) -> None:
    source = GOLDEN / "default"
    names = sorted(p.name for p in source.glob("mysql-bin.0*"))
    for name in names:
        (tmp_path / name).write_bytes((source / name).read_bytes())
    (tmp_path / "mysql-bin.index").write_text("".join(f"./{n}\n" for n in names))
    with DirectoryBinlogStore(tmp_path) as store:
        events, end = split(dump(store, slave_capability=4, flags=DumpFlag.NON_BLOCK | 2))
        assert end == EOF_AUTOCOMMIT
        sent = [s.raw for s in events if not (s.type_code == EventType.ROTATE and s.header[0] == 0)]
        stored: list[bytes] = []
        for name in names:
            data = (tmp_path / name).read_bytes()
            pos = 4
            while pos < len(data):
                length = int.from_bytes(data[pos + 9 : pos + 13], "little")
                stored.append(data[pos : pos + length])
                pos += length
        assert sent == stored


# --- the same bytes as a real primary --------------------------------------------------


def _real_dump(server: Any, fields: dict[str, Any]) -> bytes:
    """What a real MariaDB sends for COM_BINLOG_DUMP with these session settings."""
    import pymysql  # type: ignore[import-untyped]

    connection = pymysql.connect(
        host=server.host, port=server.port, user="repl", password="pw", autocommit=True
    )
    try:
        with connection.cursor() as cursor:
            checksum = fields.get("master_binlog_checksum", CRC32)
            if checksum is not None:
                cursor.execute("SET @master_binlog_checksum = %s", (checksum,))
            cursor.execute(
                "SET @mariadb_slave_capability = %s", (fields.get("slave_capability", 4),)
            )
            if fields.get("connect_state") is not None:
                cursor.execute("SET @slave_connect_state = %s", (fields["connect_state"],))
                cursor.execute(
                    "SET @slave_gtid_strict_mode = %s", (int(fields.get("gtid_strict_mode", 0)),)
                )
        command = BinlogDump(
            position=fields.get("position", 4),
            flags=fields.get("flags", DumpFlag.NON_BLOCK),
            server_id=0,
            file_name=fields.get("file_name", "mysql-bin.000001").encode(),
        ).encode()
        sock = connection._sock
        assert sock is not None
        sock.sendall(struct.pack("<I", len(command))[:3] + b"\x00" + command)
        sock.settimeout(30)
        stream = sock.makefile("rb")
        received = bytearray()
        continued = False
        while True:
            header = stream.read(4)
            length = int.from_bytes(header[:3], "little")
            payload = stream.read(length)
            received += header + payload
            if not continued and payload[:1] in (b"\xfe", b"\xff"):
                return bytes(received)
            continued = length == MAX_PACKET_PAYLOAD
    finally:
        connection.close()


@pytest.mark.mariadb
def test_same_bytes_as_a_real_primary(mariadb_factory: Callable[..., Any]) -> None:
    server = mariadb_factory()
    server.create_replication_user("repl", "pw")
    server.execute(
        [
            "CREATE DATABASE d",
            "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB",
            "CREATE TABLE d.m (id INT PRIMARY KEY, v VARCHAR(100)) ENGINE=MyISAM",
            "INSERT INTO d.t VALUES (1,'a'),(2,'b')",
            "INSERT INTO d.m VALUES (1,'a')",
            "SET SESSION gtid_domain_id=5",
            "INSERT INTO d.t VALUES (50,'d5')",
            "SET SESSION gtid_domain_id=0",
            "UPDATE d.t SET v='c' WHERE id=1",
            "FLUSH BINARY LOGS",
            "INSERT INTO d.t VALUES (3,'c')",
        ]
    )
    # Both sides read the binlog at different moments: wait for what the server writes into
    # it on its own after the rotation (it once landed between the two reads).
    server.wait_for_binlog_checkpoint()
    file_name, size = server.master_status()
    first = server.binlog_files()[0].name
    scenarios: list[dict[str, Any]] = [
        {"file_name": first},
        {"file_name": first, "slave_capability": 0},
        {"file_name": first, "slave_capability": 2, "flags": DumpFlag.NON_BLOCK | 2},
        {"file_name": first, "position": 4 + 252 + 29},
        {"file_name": first, "master_binlog_checksum": None},
        {"file_name": first, "master_binlog_checksum": "NONE"},
        {"file_name": first, "position": 3},
        {"file_name": "mysql-bin.000099"},
        {"file_name": "", "connect_state": "0-1-3"},
        {"file_name": "", "connect_state": "0-1-99"},
        {"file_name": "", "connect_state": "0-1-5,5-1-1"},
        {"file_name": file_name, "position": size},
    ]
    with DirectoryBinlogStore(server.binlog_dir) as store:
        for fields in scenarios:
            expected = _real_dump(server, fields)
            mine = dump(store, **fields)
            assert payloads(mine) == payloads(expected), fields


@pytest.mark.mariadb
def test_a_real_replica_follows_with_semi_sync(mariadb_factory: Callable[..., Any]) -> None:
    """A real 10.11 replica (GTID, semi-sync) reads the dump, ACKs live transactions, follows
    a rotation and resumes by GTID after a reconnect."""
    import time

    from fakemaster.server.master import BackgroundFakeMaster

    store = MemoryBinlogStore(server_id=100)
    store.append_transaction([QueryEvent(query=b"CREATE DATABASE e")])
    store.append_transaction(
        [QueryEvent(query=b"CREATE TABLE t (a INT PRIMARY KEY) ENGINE=InnoDB", database="e")]
    )
    config = ServerConfig(
        server_id=100, user="repl", password="pw", semi_sync_enabled=True, semi_sync_timeout_ms=5000
    )
    # A clock that never moves: the primary never gives up waiting (semi-sync stays ON however
    # slowly the replica answers), so only the replica's ACKs settle the waits.
    semi = semi_sync_master(store, config, clock=FakeClock())
    master = BackgroundFakeMaster(config, store).start()
    try:
        assert master.master is not None
        replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
        replica.execute(
            [
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', "
                f"MASTER_PORT={master.master.port}, MASTER_USER='repl', MASTER_PASSWORD='pw', "
                "MASTER_USE_GTID=slave_pos",
                "START SLAVE",
            ]
        )

        def rows(expected: int) -> list[tuple[Any, ...]]:
            deadline = time.monotonic() + 60  # bounds a hang; a slow replica only takes longer
            while time.monotonic() < deadline:
                try:
                    found = replica.execute("SELECT a FROM e.t ORDER BY a")
                except Exception:  # the table is not replicated yet
                    found = []
                if len(found) == expected:
                    return found
                time.sleep(0.05)
            return found

        def settled(count: int) -> list[bool]:
            # The replica ACKs once the group is in its relay log; the ACK may still be on its
            # way when the row is visible.
            deadline = time.monotonic() + 60
            while len(acks) < count and time.monotonic() < deadline:
                time.sleep(0.05)
            return acks

        acks: list[bool] = []
        for n in (1, 2):
            group = store.append_transaction(
                [QueryEvent(query=b"INSERT INTO t VALUES (%d)" % n, database="e"), XidEvent(xid=n)]
            )
            semi.wait_for_ack(group.file_name, group.end, acks.append)
            assert len(rows(n)) == n
        store.rotate()
        store.append_transaction(
            [QueryEvent(query=b"INSERT INTO t VALUES (3)", database="e"), XidEvent(xid=3)]
        )
        assert rows(3) == [(1,), (2,), (3,)]
        replica.execute(["STOP SLAVE", "START SLAVE"])
        store.append_transaction(
            [QueryEvent(query=b"INSERT INTO t VALUES (4)", database="e"), XidEvent(xid=4)]
        )
        assert rows(4) == [(1,), (2,), (3,), (4,)]
        assert settled(2) == [True, True]
        status = dict(replica.execute("SHOW STATUS LIKE 'Rpl_semi_sync_slave_status'"))
        assert status == {"Rpl_semi_sync_slave_status": "ON"}
        assert replica.execute("SELECT @@gtid_slave_pos") == [("0-100-6",)]
        assert master.master.errors == []
    finally:
        master.stop()


def test_a_dump_paused_between_chunks_holds_at_most_a_read_block() -> None:
    """With many replicas each paused between chunks (waiting for its socket to drain), what
    every paused dump keeps of the binlog adds up: it is one read block, not a whole chunk."""
    import tracemalloc

    from fakemaster.core.dump.stream import READ_BLOCK

    chunk_size = 4 * READ_BLOCK
    store = MemoryBinlogStore(clock=clock)
    while store.position < 3 * chunk_size:
        store.append_transaction([QueryEvent(query=b"INSERT " + b"x" * 3000, database="d")])
    store.binary_logs()  # the store's own index of the file, built before measuring
    stream = DumpStream(store, request(), chunk_size=chunk_size)
    tracemalloc.start()
    try:
        first = stream.next_chunk()
        assert first is not None and len(first) >= chunk_size
        held = tracemalloc.get_traced_memory()[0] - len(first)
    finally:
        tracemalloc.stop()
    assert held < READ_BLOCK + (32 << 10)
    # Reading in blocks loses nothing: after the fake ROTATE and the FDE, the file's events.
    sent, end = split(first + run(stream))
    assert end == EOF_AUTOCOMMIT
    assert [event.raw for event in sent[2:]] == file_events(store, "mysql-bin.000001")[1:]


def test_a_stores_semi_sync_state_dies_with_the_store() -> None:
    import gc
    import weakref

    store = MemoryBinlogStore()
    master = weakref.ref(semi_sync_master(store))
    del store
    gc.collect()
    assert master() is None


# --- encrypted binlog files ---------------------------------------------------------------

ENCRYPTED = Path(__file__).parent.parent.parent / "golden" / "binlogs" / "encrypted"
ENCRYPTED_NAMES = ("aes_cbc-bin", "aes_ctr-bin")


def encrypted_keys(basename: str) -> Any:
    from fakemaster.vocabulary.encryption import BinlogKeys

    if basename == "aes_cbc-bin":
        return BinlogKeys.from_key_file(ENCRYPTED / "aes_cbc.keys")
    return BinlogKeys.from_key_file(ENCRYPTED / "aes_ctr.keys.enc", filekey="fakemaster-secret")


def encrypted_store(tmp_path: Path, basename: str) -> DirectoryBinlogStore:
    """The golden encrypted files as a binlog directory, under the names the server gave them."""
    names = [f"{basename}.00000{n}" for n in (1, 2)]
    for name in names:
        (tmp_path / name).write_bytes((ENCRYPTED / f"{name}.encrypted").read_bytes())
    (tmp_path / f"{basename}.index").write_text("".join(f"./{name}\n" for name in names))
    return DirectoryBinlogStore(tmp_path, basename)


def real_dump_events(name: str) -> list[tuple[int, bytes]]:
    """(file offset, event bytes) of what the real server sent for the file (FDE first)."""
    from decoder.binlog_file import iter_raw_events

    return list(iter_raw_events(ENCRYPTED / f"{name}.dump"))


def one_file(sent: list[Sent]) -> list[bytes]:
    """The events sent for the first file, after its fake ROTATE and FDE."""
    events = []
    for event in sent[2:]:
        if event.type_code == EventType.ROTATE and event.header[5] & EventFlag.ARTIFICIAL:
            break
        events.append(event.raw)
    return events


@pytest.mark.parametrize("basename", ENCRYPTED_NAMES)
@pytest.mark.parametrize("number", [1, 2])
def test_encrypted_files_are_sent_decrypted_as_the_real_server_sent_them(
    tmp_path: Path, basename: str, number: int
) -> None:
    name = f"{basename}.00000{number}"
    store = encrypted_store(tmp_path, basename)
    config = ServerConfig(binlog_keys=encrypted_keys(basename))
    # mariadb-binlog asks for ANNOTATE_ROWS events, as in the capture.
    flags = DumpFlag.NON_BLOCK | DumpFlag.SEND_ANNOTATE_ROWS
    sent, end = split(dump(store, config, file_name=name, flags=flags))
    assert end == EOF_AUTOCOMMIT
    assert sent[0].type_code == EventType.ROTATE
    real = real_dump_events(name)
    assert sent[1].raw == real[0][1]  # the FDE, in clear in the file
    assert one_file(sent) == [data for _, data in real[1:]]
    assert real[1][1][4] == EventType.START_ENCRYPTION
    assert sent[2].header[5] & EventFlag.IGNORABLE
    store.close()


@pytest.mark.parametrize("basename", ENCRYPTED_NAMES)
def test_encrypted_file_from_a_position_past_the_start(tmp_path: Path, basename: str) -> None:
    name = f"{basename}.000001"
    store = encrypted_store(tmp_path, basename)
    config = ServerConfig(binlog_keys=encrypted_keys(basename))
    real = real_dump_events(name)
    start = real[10][0]
    flags = DumpFlag.NON_BLOCK | DumpFlag.SEND_ANNOTATE_ROWS
    sent, _ = split(dump(store, config, file_name=name, position=start, flags=flags))
    assert sent[0].raw[HEADER.size : HEADER.size + 8] == struct.pack("<Q", start)
    assert sent[1].log_pos == 0
    # START_ENCRYPTION goes out before the events from the position, with log_pos 0 as the FDE.
    expected_start = bytearray(real[1][1])
    struct.pack_into("<I", expected_start, 13, 0)
    struct.pack_into(
        "<I",
        expected_start,
        len(expected_start) - 4,
        event_crc(expected_start[:-4], EventType.START_ENCRYPTION),
    )
    events = one_file(sent)
    assert events[0] == bytes(expected_start)
    assert events[0] != real[1][1]
    assert events[1:] == [data for _, data in real[10:]]
    store.close()


@pytest.mark.parametrize("basename", ENCRYPTED_NAMES)
def test_encrypted_file_without_keys_is_the_key_error(tmp_path: Path, basename: str) -> None:
    name = f"{basename}.000001"
    store = encrypted_store(tmp_path, basename)
    sent, end = split(dump(store, file_name=name))
    assert [event.type_code for event in sent] == [
        EventType.ROTATE,
        EventType.FORMAT_DESCRIPTION,
    ]
    errno, text = err_text(end)
    fde_end = real_dump_events(name)[1][0]
    start_encryption_end = real_dump_events(name)[2][0]
    assert (errno, text) == (
        1236,
        "Could not decrypt binlog: encryption key error; the first event "
        f"'{name}' at 4, the last event read from '{name}' at {fde_end}, "
        f"the last byte read from '{name}' at {start_encryption_end}.",
    )
    store.close()


def test_encrypted_file_with_the_wrong_key(tmp_path: Path) -> None:
    from fakemaster.vocabulary.encryption import BinlogKeys

    store = encrypted_store(tmp_path, "aes_cbc-bin")
    wrong = BinlogKeys({1: {1: bytes(range(32))}})
    sent, end = split(dump(store, ServerConfig(binlog_keys=wrong), file_name="aes_cbc-bin.000001"))
    assert len(sent) == 3  # the fake ROTATE, the FDE and START_ENCRYPTION
    assert err_text(end)[1].startswith("event decryption failure; ")
    # A key of another version than START_ENCRYPTION names is a key error.
    other_version = BinlogKeys({1: {2: bytes(range(32))}})
    _, end = split(
        dump(store, ServerConfig(binlog_keys=other_version), file_name="aes_cbc-bin.000001")
    )
    assert err_text(end)[1].startswith("Could not decrypt binlog: encryption key error; ")
    store.close()
