"""Binlog stores: files built in memory like a MariaDB 10.11 primary writes them, and a
directory of real binlog files (the golden files a real 10.11 server wrote), read by offsets."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.core import decode_event
from decoder.stream import StreamDecoder
from fakemaster.store import (
    BinlogReadError,
    DirectoryBinlogStore,
    MemoryBinlogStore,
    UnknownBinlogFile,
)
from fakemaster.store.base import MAX_EVENT_SIZE, SCAN_CHUNK, SCAN_PROBE, next_read_size
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    ChecksumAlg,
    EventFlag,
    EventType,
    GtidFlag,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
    StopEvent,
    TableMapEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.groups import GroupTracker, is_commit_or_rollback
from fakemaster.vocabulary.gtid_state import BinlogState
from fakemaster.vocabulary.header import CRC, HEADER, event_crc
from tests.budget import examples

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "binlogs"
NOW = 1_700_000_000


def clock() -> float:
    return NOW


def file_bytes(store: MemoryBinlogStore | DirectoryBinlogStore, name: str) -> bytes:
    out = bytearray(BINLOG_MAGIC)
    while chunk := store.read(name, len(out)):
        out += chunk
    return bytes(out)


def decode_file(data: bytes) -> list[tuple[int, Event]]:
    decoder = StreamDecoder()
    decoder.feed(data)
    decoded = [(item.offset, item.event) for item in decoder.decoded()]
    decoder.finish()
    return decoded


def insert(n: int) -> list[Event]:
    return [QueryEvent(query=b"INSERT INTO t VALUES (%d)" % n, database="d"), XidEvent(xid=n)]


def ddl(text: bytes = b"CREATE TABLE t (a INT)") -> list[Event]:
    return [QueryEvent(query=text, database="d")]


# --- the memory store ------------------------------------------------------------------


def test_new_file_starts_like_a_real_binlog() -> None:
    store = MemoryBinlogStore(clock=clock, server_id=7)
    assert store.file_names() == ["mysql-bin.000001"]
    events = decode_file(file_bytes(store, "mysql-bin.000001"))
    assert [type(event) for _, event in events] == [
        FormatDescriptionEvent,
        GtidListEvent,
        BinlogCheckpointEvent,
    ]
    fde, gtid_list, checkpoint = (event for _, event in events)
    assert isinstance(fde, FormatDescriptionEvent)
    assert fde.flags == EventFlag.BINLOG_IN_USE  # the active file
    assert fde.create_timestamp == NOW  # the first file after a server start
    assert fde.log_pos == 256 and fde.server_id == 7
    assert fde.checksum_alg == ChecksumAlg.CRC32
    assert isinstance(gtid_list, GtidListEvent)
    assert gtid_list.gtids == () and gtid_list.padding == b"\x00\x00"
    assert gtid_list.log_pos == 285  # 29 bytes, as a real empty GTID_LIST
    assert isinstance(checkpoint, BinlogCheckpointEvent)
    assert checkpoint.file_name == "mysql-bin.000001" and checkpoint.log_pos == 328
    assert store.master_status() == ("mysql-bin.000001", 328)
    assert store.checksum_alg("mysql-bin.000001") == ChecksumAlg.CRC32


def test_every_log_pos_is_the_event_end_and_every_crc_verifies() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(ddl())
    for n in range(3):
        store.append_transaction(insert(n))
    store.rotate()
    store.append_transaction(insert(9))
    for name in store.file_names():
        data = file_bytes(store, name)
        ends = [offset + HEADER.unpack_from(data, offset)[3] for offset, _ in decode_file(data)]
        assert [event.log_pos for _, event in decode_file(data)] == ends  # CRCs checked too
        assert ends[-1] == len(data) == store.file_size(name)


def test_append_transaction_assigns_gtids() -> None:
    store = MemoryBinlogStore(clock=clock, domain_id=3)
    first = store.append_transaction(ddl())
    second = store.append_transaction(insert(1), server_id=9)
    other = store.append_transaction(insert(2), domain_id=0)
    chosen = store.append_transaction(insert(3), seq_no=100)
    assert [first.gtid, second.gtid, other.gtid, chosen.gtid] == [
        Gtid(3, 1, 1),
        Gtid(3, 9, 2),
        Gtid(0, 1, 1),
        Gtid(3, 1, 100),
    ]
    assert store.next_gtid() == Gtid(3, 1, 101)
    assert store.next_gtid(domain_id=0, server_id=4) == Gtid(0, 4, 2)
    assert first.file_name == "mysql-bin.000001" and first.start == 328
    assert second.start == first.end
    events = [event for _, event in decode_file(file_bytes(store, "mysql-bin.000001"))]
    by_start = {event.log_pos: event for event in events}
    gtid_event = by_start[second.start + 42]
    assert isinstance(gtid_event, GtidEvent)
    assert gtid_event.gtid == Gtid(3, 9, 2)
    assert gtid_event.flags == EventFlag.SUPPRESS_USE
    # Every event of the group carries the GTID's server id and the GTID's timestamp.
    assert by_start[second.end].server_id == 9
    assert all(event.timestamp == NOW for event in events)
    assert store.end_state() == BinlogState(
        [Gtid(3, 1, 1), Gtid(3, 9, 2), Gtid(0, 1, 1), Gtid(3, 1, 100)]
    )
    assert store.gtid_binlog_pos() == "0-1-1,3-1-100"
    assert store.gtid_binlog_state() == "0-1-1,3-9-2,3-1-100"


@pytest.mark.parametrize(
    ("body", "flags2"),
    [
        (insert(1), GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL),
        (
            [QueryEvent(query=b"INSERT INTO m VALUES (1)"), QueryEvent(query=b"COMMIT")],
            GtidFlag.ALLOW_PARALLEL,
        ),
        (ddl(), GtidFlag.STANDALONE | GtidFlag.ALLOW_PARALLEL | GtidFlag.DDL),
        (
            [QueryEvent(query=b"INSERT"), XaPrepareEvent(xid=XaXid(1, b"x1", b""))],
            GtidFlag.PREPARED_XA | GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL,
        ),
    ],
)
def test_default_gtid_flags_follow_the_body(body: list[Event], flags2: int) -> None:
    store = MemoryBinlogStore(clock=clock)
    group = store.append_transaction(body)
    gtid = store.file_gtids(group.file_name)[-1]
    assert gtid.flags2 == flags2
    assert (gtid.gtid, gtid.start) == (group.gtid, group.start)


def test_commit_id_and_explicit_flags() -> None:
    store = MemoryBinlogStore(clock=clock)
    group = store.append_transaction(insert(1), commit_id=77, flags2=GtidFlag.TRANSACTIONAL)
    events = decode_file(file_bytes(store, group.file_name))
    gtid = next(event for _, event in events if isinstance(event, GtidEvent))
    assert gtid.commit_id == 77
    assert gtid.flags2 == GtidFlag.TRANSACTIONAL | GtidFlag.GROUP_COMMIT_ID
    assert gtid.log_pos - group.start == 19 + 21 + 4  # the 44-byte form


def test_rotate_closes_the_file_like_flush_logs() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    old_end = store.position
    assert store.rotate() == "mysql-bin.000002"
    assert store.current_file == "mysql-bin.000002"
    old = decode_file(file_bytes(store, "mysql-bin.000001"))
    fde = old[0][1]
    assert isinstance(fde, FormatDescriptionEvent) and fde.flags == 0  # IN_USE cleared
    rotate = old[-1][1]
    assert isinstance(rotate, RotateEvent)
    assert (rotate.position, rotate.next_file, rotate.flags) == (4, "mysql-bin.000002", 0)
    assert old[-1][0] == old_end and rotate.timestamp == NOW
    new = [event for _, event in decode_file(file_bytes(store, "mysql-bin.000002"))]
    assert isinstance(new[0], FormatDescriptionEvent)
    assert new[0].create_timestamp == 0 and new[0].flags == EventFlag.BINLOG_IN_USE
    assert isinstance(new[1], GtidListEvent) and new[1].gtids == (Gtid(0, 1, 1),)
    assert isinstance(new[2], BinlogCheckpointEvent) and new[2].file_name == "mysql-bin.000001"
    assert store.gtid_list("mysql-bin.000002") == (Gtid(0, 1, 1),)
    assert (
        store.format_description("mysql-bin.000001") == file_bytes(store, "mysql-bin.000001")[4:256]
    )
    # The first transaction of the new file is followed by a checkpoint naming it.
    group = store.append_transaction(insert(2))
    after = decode_file(file_bytes(store, "mysql-bin.000002"))
    assert after[-1][0] == group.end
    checkpoint = after[-1][1]
    assert isinstance(checkpoint, BinlogCheckpointEvent)
    assert checkpoint.file_name == "mysql-bin.000002"
    store.append_transaction(insert(3))
    assert isinstance(decode_file(file_bytes(store, "mysql-bin.000002"))[-1][1], XidEvent)


def test_restart_writes_stop_and_a_created_fde() -> None:
    times = iter([NOW, NOW, NOW + 50, NOW + 50, NOW + 50])
    store = MemoryBinlogStore(clock=lambda: next(times))
    assert store.restart() == "mysql-bin.000002"
    last = decode_file(file_bytes(store, "mysql-bin.000001"))[-1][1]
    assert isinstance(last, StopEvent)
    fde = decode_file(file_bytes(store, "mysql-bin.000002"))[0][1]
    assert isinstance(fde, FormatDescriptionEvent) and fde.create_timestamp == NOW + 50


def test_without_checksums() -> None:
    store = MemoryBinlogStore(clock=clock, checksum=False)
    store.append_transaction(insert(1))
    data = file_bytes(store, "mysql-bin.000001")
    fde = decode_file(data)[0][1]
    assert isinstance(fde, FormatDescriptionEvent) and fde.checksum_alg == ChecksumAlg.OFF
    assert store.checksum_alg("mysql-bin.000001") == ChecksumAlg.OFF
    # The FDE still ends with a CRC; the GTID_LIST after it has none.
    assert data[256 + 9 : 256 + 13] == (19 + 4 + 2).to_bytes(4, "little")


def test_initial_state_and_custom_names() -> None:
    store = MemoryBinlogStore(
        clock=clock, basename="binlog", first_file_number=41, initial_state=[Gtid(0, 1, 9)]
    )
    assert store.file_names() == ["binlog.000041"]
    assert store.gtid_list("binlog.000041") == (Gtid(0, 1, 9),)
    assert store.append_transaction(insert(1)).gtid == Gtid(0, 1, 10)


def test_append_raw_events_and_notifications() -> None:
    store = MemoryBinlogStore(clock=clock)
    seen: list[int] = []
    unsubscribe = store.subscribe(seen.append)
    version = store.version
    placed = store.append([GtidEvent(seq_no=5, flags2=GtidFlag.STANDALONE), *ddl()])
    assert [p.start for p in placed] == [328, 370]
    assert store.version == version + 1 and seen == [store.version]
    assert store.end_state() == BinlogState([Gtid(0, 1, 5)])
    store.rotate()
    assert seen == [version + 1, version + 2]
    unsubscribe()
    unsubscribe()
    store.append_transaction(insert(1))
    assert len(seen) == 2
    assert store.append([]) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.append([ddl()[0], 42]), "append: item 1 is not an event but int 42"),
        (lambda s: s.append(ddl()[0]), "append takes an iterable of events, got a single Query"),
        (lambda s: s.append("COMMIT"), "append takes an iterable of events, not str 'COMMIT'"),
        (lambda s: s.append(None), "append takes an iterable of events, not NoneType None"),
        (
            lambda s: s.append_transaction([*insert(1)[:2], b"COMMIT"]),
            "append_transaction: item 2 is not an event but bytes b'COMMIT'",
        ),
        (
            lambda s: s.append_transaction(XidEvent(xid=1)),
            "append_transaction takes an iterable of events, got a single XidEvent",
        ),
    ],
)
def test_appending_what_is_not_an_event_is_a_type_error_at_the_call(
    call: Any, message: str
) -> None:
    store = MemoryBinlogStore(clock=clock)
    before = (file_bytes(store, store.current_file), store.end_state(), store.version)
    with pytest.raises(TypeError) as caught:
        call(store)
    assert str(caught.value).startswith(message)
    # Raised by the check at the call, before any event was encoded.
    assert caught.traceback[-1].name == "event_list"
    assert (file_bytes(store, store.current_file), store.end_state(), store.version) == before


def test_an_event_that_cannot_be_encoded_leaves_the_store_as_it_was() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    before = (file_bytes(store, store.current_file), store.end_state(), store.next_gtid())
    table_map = TableMapEvent(
        table_id=3, database="d", table="t", column_types=(3,), column_meta=(0,), nullable=(False,)
    )
    good = WriteRowsEvent(table_id=3, width=1, columns_present=b"\x01", rows=((1,),))
    bad = WriteRowsEvent(table_id=3, width=1, columns_present=b"\x01", rows=((1 << 40,),))
    begin = QueryEvent(query=b"BEGIN", database="d")
    with pytest.raises(EncodeError, match=r"row 0, column 0: LONG \(signed\) cannot hold 1099"):
        store.append_transaction([begin, table_map, good, bad, XidEvent(xid=2)])
    with pytest.raises(EncodeError, match="row 0, column 0: LONG"):
        store.append([table_map, bad])
    assert (file_bytes(store, store.current_file), store.end_state(), store.next_gtid()) == before
    store.append_transaction([begin, table_map, good, XidEvent(xid=2)])
    assert store.end_state() == BinlogState([Gtid(0, 1, 2)])


def test_binlog_gtid_pos_answers_like_the_server() -> None:
    store = MemoryBinlogStore(clock=clock)
    first = store.append_transaction(insert(1))
    second = store.append_transaction(insert(2), domain_id=2)
    store.rotate()
    third = store.append_transaction(insert(3))
    assert store.binlog_gtid_pos("mysql-bin.000001", 4) == ""
    assert store.binlog_gtid_pos("", 4) == ""
    assert store.binlog_gtid_pos("mysql-bin.000001", 0) == ""
    assert store.binlog_gtid_pos("mysql-bin.000001", first.start) == ""
    assert store.binlog_gtid_pos("mysql-bin.000001", first.end) == "0-1-1"
    assert store.binlog_gtid_pos("mysql-bin.000001", second.end) == "0-1-1,2-1-1"
    assert store.binlog_gtid_pos("mysql-bin.000001", first.start + 1) is None
    assert store.binlog_gtid_pos("mysql-bin.000001", 10**6) is None
    assert store.binlog_gtid_pos("mysql-bin.000009", 4) is None
    assert store.binlog_gtid_pos("mysql-bin.000002", 4) == "0-1-1,2-1-1"
    assert store.binlog_gtid_pos("mysql-bin.000002", third.end) == "0-1-2,2-1-1"


def test_purge_to() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.rotate()
    store.rotate()
    assert store.purge_to("mysql-bin.000003") == ["mysql-bin.000001", "mysql-bin.000002"]
    assert store.file_names() == ["mysql-bin.000003"]
    assert store.purge_to("mysql-bin.000003") == []
    with pytest.raises(UnknownBinlogFile):
        store.purge_to("mysql-bin.000001")
    with pytest.raises(UnknownBinlogFile):
        store.file_size("mysql-bin.000001")
    assert store.binary_logs() == [("mysql-bin.000003", store.position)]


# --- reading by offsets ----------------------------------------------------------------


@settings(max_examples=examples(0.25))  # each example builds a whole store
@given(
    st.lists(st.sampled_from(["ddl", "insert", "rotate", "big"]), max_size=25),
    st.integers(1, 3000),
)
def test_reads_are_whole_events_and_cover_the_file(steps: list[str], max_bytes: int) -> None:
    store = MemoryBinlogStore(clock=clock)
    for n, step in enumerate(steps):
        if step == "rotate":
            store.rotate()
        elif step == "ddl":
            store.append_transaction(ddl())
        elif step == "big":
            store.append_transaction([QueryEvent(query=b"x" * 5000), XidEvent(xid=n)])
        else:
            store.append_transaction(insert(n))
    for name in store.file_names():
        whole = file_bytes(store, name)
        offsets = [offset for offset, _ in decode_file(whole)]
        pos = 4
        while chunk := store.read(name, pos, max_bytes):
            assert pos in offsets
            assert chunk == whole[pos : pos + len(chunk)]
            assert pos + len(chunk) in offsets or pos + len(chunk) == len(whole)
            # Only one event may exceed the budget.
            if len(chunk) > max(max_bytes, 19):
                assert len(decode_file(BINLOG_MAGIC + chunk)) == 1
            pos += len(chunk)
        assert pos == len(whole)
        gtids = [event.gtid for _, event in decode_file(whole) if isinstance(event, GtidEvent)]
        assert [entry.gtid for entry in store.file_gtids(name)] == gtids


def test_iter_events() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    whole = file_bytes(store, "mysql-bin.000001")
    listed = list(store.iter_events("mysql-bin.000001"))
    assert [offset for offset, _ in listed] == [offset for offset, _ in decode_file(whole)]
    assert b"".join(data for _, data in listed) == whole[4:]


GOLDEN_FIRST = GOLDEN / "default" / "mysql-bin.000001"


def copy_golden(tmp_path: Path, variant: str = "default", index: str | None = None) -> Path:
    source = GOLDEN / variant
    names = sorted(path.name for path in source.glob("mysql-bin.0*"))
    for name in names:
        shutil.copy(source / name, tmp_path / name)
    if index is None:
        index = "".join(f"./{name}\n" for name in names)
    (tmp_path / "mysql-bin.index").write_text(index)
    return tmp_path


def test_read_errors(tmp_path: Path) -> None:
    directory = copy_golden(tmp_path)
    name = "mysql-bin.000001"
    size = (directory / name).stat().st_size
    data = (directory / name).read_bytes()
    with DirectoryBinlogStore(directory) as store:
        # A position inside the FDE: its bytes 9..12 are not a sane length.
        with pytest.raises(BinlogReadError) as caught:
            store.read(name, 5)
        assert caught.value.message == BinlogReadError.BOGUS == "bogus data in log event"
        assert caught.value.last_byte == 5 + 19
        assert store.read(name, size) == b""
    # A file cut in the middle of its last event (a crash) is not the last file here.
    cut = bytearray(data)
    del cut[-10:]
    (directory / name).write_bytes(cut)
    with DirectoryBinlogStore(directory) as store:
        read: list[int] = []
        with pytest.raises(BinlogReadError) as caught:
            for offset, _ in store.iter_events(name, 4):
                read.append(offset)
        assert caught.value.message == (
            "binlog truncated in the middle of event; consider out of disk space on master"
        )
        assert caught.value.last_byte == size - 10
        assert read == [offset for offset, _ in _split(data)][:-1]  # all before the cut one
    # A length field past 1 GiB.
    huge = bytearray(data)
    huge[4 + 9 : 4 + 13] = (MAX_EVENT_SIZE + 1).to_bytes(4, "little")
    (directory / name).write_bytes(huge)
    with DirectoryBinlogStore(directory) as store, pytest.raises(BinlogReadError) as caught:
        store.read(name, 4)
    assert caught.value.message == BinlogReadError.TOO_LARGE


# --- a directory of real binlogs -------------------------------------------------------


@pytest.mark.parametrize("variant", ["default", "checksum_none", "compressed"])
def test_directory_serves_real_files_byte_for_byte(tmp_path: Path, variant: str) -> None:
    directory = copy_golden(tmp_path, variant)
    with DirectoryBinlogStore(directory, max_open_files=1) as store:
        assert store.basename == "mysql-bin"
        names = store.file_names()
        assert names == ["mysql-bin.000001", "mysql-bin.000002"]
        for name in names:
            data = (directory / name).read_bytes()
            assert file_bytes(store, name) == data
            assert store.file_size(name) == len(data)
            events = _decode_control_events(data)
            gtid_events = [event for event in events if isinstance(event, GtidEvent)]
            assert [g.gtid for g in store.file_gtids(name)] == [e.gtid for e in gtid_events]
            listed = next(event for event in events if isinstance(event, GtidListEvent))
            assert store.gtid_list(name) == listed.gtids
            fde = events[0]
            assert isinstance(fde, FormatDescriptionEvent)
            assert store.checksum_alg(name) == fde.checksum_alg
        state = BinlogState(store.gtid_list(names[-1]) or ())
        for entry in store.file_gtids(names[-1]):
            state.update(entry.gtid)
        assert store.end_state() == state
        assert store.binary_logs() == [(n, (directory / n).stat().st_size) for n in names]
        assert store.master_status() == (names[-1], (directory / names[-1]).stat().st_size)


def _mirror(memory: MemoryBinlogStore, directory: Path) -> None:
    """The memory store's files written into ``directory`` as a primary writes them: each
    file's new bytes appended (a growing file keeps its inode), the index rewritten."""
    names = memory.file_names()
    for name in names:
        data = file_bytes(memory, name)
        path = directory / name
        held = path.stat().st_size if path.exists() else 0
        with open(path, "ab") as out:
            out.write(data[held:])
    (directory / "mysql-bin.index").write_text("".join(f"./{n}\n" for n in names))


def test_directory_end_state_follows_a_growing_and_rotating_binlog(tmp_path: Path) -> None:
    """@@gtid_binlog_pos of a directory a primary keeps writing: after every transaction, every
    rotation, several domains and servers, and after a purge, the end state is the one the
    writer itself keeps (MemoryBinlogStore's, built as it writes). The store applies only the
    GTIDs written since its last answer; a mutation keeping the first answer fails here."""
    memory = MemoryBinlogStore(clock=clock)
    memory.append_transaction(ddl())
    _mirror(memory, tmp_path)
    with DirectoryBinlogStore(tmp_path) as served:
        assert served.end_state() == memory.end_state()
        for n in range(12):
            memory.append_transaction(insert(n), domain_id=n % 3, server_id=1 + n % 2)
            if n in (4, 9):
                memory.rotate()
            _mirror(memory, tmp_path)
            served.poll()
            assert served.end_state() == memory.end_state(), n
            assert served.gtid_binlog_pos() == memory.gtid_binlog_pos()
            assert served.gtid_binlog_state() == memory.gtid_binlog_state()
        # A state handed out is a copy: changing it changes no later answer.
        served.end_state().update(Gtid(0, 99, 1_000))
        assert served.end_state() == memory.end_state()
        served.purge_to(served.file_names()[-1])
        assert served.end_state() == memory.end_state()


def test_directory_end_state_of_a_real_file_as_it_grows(tmp_path: Path) -> None:
    """The same on bytes a real MariaDB 10.11 wrote: its last golden file appended event by
    event; after each, the end state is its GTID_LIST's GTIDs and those of the GTID events
    written so far, decoded from the bytes."""
    directory = copy_golden(tmp_path)
    last = "mysql-bin.000002"
    data = (directory / last).read_bytes()
    events = _split(data)
    first = events[0][0] + len(events[0][1])  # the file up to its FDE
    (directory / last).write_bytes(data[:first])
    with DirectoryBinlogStore(directory) as store:
        for offset, raw in events[1:]:
            with open(directory / last, "ab") as out:
                out.write(raw)
            decoded = _decode_control_events(data[: offset + len(raw)])
            listed = next((e.gtids for e in decoded if isinstance(e, GtidListEvent)), ())
            expected = BinlogState(listed)
            for event in decoded:
                if isinstance(event, GtidEvent):
                    expected.update(event.gtid)
            assert store.end_state() == expected, offset
        assert any(isinstance(e, GtidEvent) for e in _decode_control_events(data))


def test_directory_index_paths(tmp_path: Path) -> None:
    elsewhere = tmp_path / "moved"
    elsewhere.mkdir()
    directory = copy_golden(
        elsewhere,
        index="/nonexistent/dir/mysql-bin.000001\n" + str(elsewhere / "mysql-bin.000002") + "\n",
    )
    with DirectoryBinlogStore(directory, "mysql-bin") as store:
        assert store.file_names() == ["mysql-bin.000001", "mysql-bin.000002"]
        assert (
            store.read("mysql-bin.000001", 4)[:19]
            == (directory / "mysql-bin.000001").read_bytes()[4:23]
        )
    (directory / "other.index").write_text("")
    with pytest.raises(FileNotFoundError, match="exactly one"):
        DirectoryBinlogStore(directory)


def test_directory_follows_a_growing_binlog(tmp_path: Path) -> None:
    source = (GOLDEN / "default" / "mysql-bin.000001").read_bytes()
    events = [data for _, data in _split(source)]
    head = BINLOG_MAGIC + b"".join(events[:3])
    path = tmp_path / "mysql-bin.000001"
    path.write_bytes(head)
    (tmp_path / "mysql-bin.index").write_text("./mysql-bin.000001\n")
    with DirectoryBinlogStore(tmp_path) as store:
        seen: list[int] = []
        store.subscribe(seen.append)  # no watcher thread: polled by hand, deterministically
        assert store.file_size("mysql-bin.000001") == len(head)
        assert not store.poll()
        # Half an event: not readable yet.
        with path.open("ab") as out:
            out.write(events[3][:10])
        assert store.poll() and len(seen) == 1
        assert store.file_size("mysql-bin.000001") == len(head)
        assert store.read("mysql-bin.000001", len(head)) == b""
        with path.open("ab") as out:
            out.write(events[3][10:])
        assert store.poll() and len(seen) == 2
        assert store.read("mysql-bin.000001", len(head)) == events[3]
        # A rotation by the writer: a new file in the index.
        second = GOLDEN / "default" / "mysql-bin.000002"
        shutil.copy(second, tmp_path / "mysql-bin.000002")
        (tmp_path / "mysql-bin.index").write_text("./mysql-bin.000001\n./mysql-bin.000002\n")
        assert store.poll()
        assert store.file_names() == ["mysql-bin.000001", "mysql-bin.000002"]
        assert not store.is_last("mysql-bin.000001")
        assert store.next_file("mysql-bin.000001") == "mysql-bin.000002"
        assert store.next_file("mysql-bin.000002") is None
        assert store.purge_to("mysql-bin.000002") == ["mysql-bin.000001"]
        assert store.file_names() == ["mysql-bin.000002"]
        assert path.exists()  # purging hides, it does not delete


def test_a_last_file_cut_after_it_was_read_is_never_read_short(tmp_path: Path) -> None:
    """The last file's readable end only grows: an event cut by a truncation after the store
    saw it whole is reported as cut, not returned short (taken for a whole event)."""
    directory = copy_golden(tmp_path)
    name = "mysql-bin.000002"
    data = (directory / name).read_bytes()
    offsets = [offset for offset, _ in _split(data)]
    with DirectoryBinlogStore(directory) as store:
        assert store.is_last(name) and store.file_size(name) == len(data)
        event_at, following = offsets[-2], offsets[-1]
        os.truncate(directory / name, following - 3)
        store.poll()
        with pytest.raises(BinlogReadError) as caught:
            store.read(name, event_at, 1)
        assert caught.value.message == BinlogReadError.TRUNCATED
        assert caught.value.last_byte == following - 3


def test_a_closed_file_is_measured_once_until_the_index_changes(tmp_path: Path) -> None:
    """A file that is not the last one no longer grows: its size is measured once (the frame
    cache asks it at every extension). A RESET MASTER that makes the same name the last file
    again, with other bytes, is seen as soon as the index is read again."""
    directory = copy_golden(tmp_path)
    first = directory / "mysql-bin.000001"
    size = first.stat().st_size
    with DirectoryBinlogStore(directory) as store:
        assert not store.is_last(first.name)
        assert store.file_size(first.name) == size
        with first.open("ab") as out:  # not what a primary does to a closed file
            out.write(b"\0" * 100)
        assert store.file_size(first.name) == size
        # RESET MASTER: the index names the first file alone, which starts again.
        head = BINLOG_MAGIC + b"".join(data for _, data in _split(GOLDEN_FIRST.read_bytes())[:2])
        first.write_bytes(head)
        (directory / "mysql-bin.index").write_text(f"./{first.name}\n")
        assert store.poll()
        assert store.is_last(first.name)
        assert store.file_size(first.name) == len(head)
        assert store.read_range(first.name, 0, 1 << 20) == head
        # ... and is closed again by a rotation: its new size, not the one measured before.
        shutil.copy(GOLDEN / "default" / "mysql-bin.000002", directory / "mysql-bin.000002")
        (directory / "mysql-bin.index").write_text(f"./{first.name}\n./mysql-bin.000002\n")
        assert store.poll()
        assert not store.is_last(first.name)
        assert store.file_size(first.name) == len(head)


@settings(max_examples=examples(20), deadline=None)
@given(sizes=st.lists(st.sampled_from([10, 900, 5_000, 70_000, 200_000]), min_size=1, max_size=30))
def test_the_walk_of_headers_reads_little_of_large_events(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int]
) -> None:
    """The store walks a file's headers (its GTID index) without reading large events' bodies:
    after an event longer than its read, the next read is a small one. The index it finds is
    the decoder's."""
    memory = MemoryBinlogStore(clock=clock)
    for number, size in enumerate(sizes):
        memory.append_transaction(
            [QueryEvent(query=b"INSERT " + b"x" * size, database="d"), XidEvent(xid=number)]
        )
    name = memory.file_names()[-1]
    data = file_bytes(memory, name)
    directory = tmp_path_factory.mktemp("binlogs")
    (directory / name).write_bytes(data)
    (directory / "mysql-bin.index").write_text(f"./{name}\n")
    with DirectoryBinlogStore(directory) as store:
        read: list[int] = []
        real_read_range = store._read_range

        def counting(file: str, offset: int, size: int) -> bytes:
            got = real_read_range(file, offset, size)
            read.append(len(got))
            return got

        store._read_range = counting  # type: ignore[method-assign]
        index = store._scanned(name)
    expected = [offset for offset, event in decode_file(data) if isinstance(event, GtidEvent)]
    assert list(index.gtid_offsets) == expected
    # The file at most once, and a whole first chunk then small reads (1 KiB) once a large
    # event was passed; the FDE and GTID_LIST are read again whole (a few hundred bytes).
    assert sum(read) <= min(len(data), SCAN_CHUNK + 2 * len(sizes) * 1024) + 4096


def test_a_descriptor_is_of_the_file_the_store_names(tmp_path: Path) -> None:
    """open_file gives the file named by file_identity, and nothing once another file took
    its name (a frame cache would send the other file's bytes)."""
    directory = copy_golden(tmp_path)
    name = "mysql-bin.000001"
    with DirectoryBinlogStore(directory) as store:
        fd = store.open_file(name)
        assert fd is not None
        try:
            assert os.pread(fd, 100, 0) == (directory / name).read_bytes()[:100]
        finally:
            os.close(fd)
        store.file_identity(name)
        replacement = directory / "replacement"
        replacement.write_bytes((directory / name).read_bytes())
        os.replace(replacement, directory / name)
        assert store.open_file(name) is None
    assert MemoryBinlogStore().open_file("mysql-bin.000001") is None


def test_directory_watcher_thread_notifies(tmp_path: Path) -> None:
    import threading

    directory = copy_golden(tmp_path)
    changed = threading.Event()
    with DirectoryBinlogStore(directory) as store:
        store.subscribe(lambda _version: changed.set())
        store.start_watching()
        with (directory / "mysql-bin.000002").open("ab") as out:
            out.write(b"\x00")
        assert changed.wait(60)  # the watcher polls every 0.1 s; 60 s only bounds a hang


def _decode_control_events(data: bytes) -> list[Event]:
    """The FDE, GTID and GTID_LIST events of a real file (other events are not decoded)."""
    ctx = BinlogContext()
    wanted = (EventType.FORMAT_DESCRIPTION, EventType.GTID, EventType.GTID_LIST)
    return [decode_event(raw, ctx) for _, raw in _split(data) if raw[4] in wanted]


def _split(data: bytes) -> list[tuple[int, bytes]]:
    out = []
    pos = 4
    while pos < len(data):
        length = int.from_bytes(data[pos + 9 : pos + 13], "little")
        out.append((pos, data[pos : pos + length]))
        pos += length
    return out


# --- group ends ------------------------------------------------------------------------


def test_group_tracker_and_commit_peek() -> None:
    store = MemoryBinlogStore(clock=clock)
    groups = [
        store.append_transaction(insert(1)),
        store.append_transaction(ddl()),
        store.append_transaction([QueryEvent(query=b"INSERT"), QueryEvent(query=b"ROLLBACK")]),
        store.append_transaction([QueryEvent(query=b"X"), XaPrepareEvent(xid=XaXid(1, b"a", b""))]),
        store.append_transaction([QueryEvent(query=b"CREATE TABLE u (a INT)", database="db")]),
    ]
    tracker = GroupTracker()
    ends = [
        offset + len(event)
        for offset, event in store.iter_events("mysql-bin.000001")
        if tracker.feed(event[4], event, True)
    ]
    assert ends == [group.end for group in groups]
    commit = QueryEvent(query=b"COMMIT", database="x")
    from encoder import encode_event

    assert is_commit_or_rollback(encode_event(commit), True)
    assert not is_commit_or_rollback(encode_event(QueryEvent(query=b"COMMIT2")), True)
    assert not is_commit_or_rollback(b"\x00" * 20, False)


def test_fde_crc_is_taken_with_in_use_clear() -> None:
    store = MemoryBinlogStore(clock=clock)
    fde = store.format_description("mysql-bin.000001")
    assert fde is not None and fde[17] & 1
    cleared = bytearray(fde[:-4])
    assert CRC.unpack_from(fde, len(fde) - 4)[0] == event_crc(cleared, 15)


@pytest.mark.parametrize(
    ("size", "past_large", "expected"),
    [
        (SCAN_CHUNK, True, SCAN_PROBE),  # a whole block, then a large event: a probe
        (SCAN_PROBE, True, SCAN_PROBE),  # large events one after another: probes
        (SCAN_PROBE, False, SCAN_PROBE * 4),  # small events after a probe: four times more
        (SCAN_CHUNK // 4, False, SCAN_CHUNK),  # up to the block
        (SCAN_CHUNK // 2, False, SCAN_CHUNK),  # never past it
        (SCAN_CHUNK, False, SCAN_CHUNK),
    ],
)
def test_the_next_read_after_large_and_small_events(
    size: int, past_large: bool, expected: int
) -> None:
    assert next_read_size(size, past_large, SCAN_PROBE, SCAN_CHUNK) == expected
