"""The rebuilding of binlog files from a dump's events (fakemaster.record.rebuild), sans-IO.

The dumps are built here the way a MariaDB 10.11 primary sends its files (a fake ROTATE naming
each file, the file's FORMAT_DESCRIPTION with LOG_EVENT_BINLOG_IN_USE_F clear, the events as
stored, heartbeats between them; a dump resuming inside a file gets a fake ROTATE and a fake FDE
with log_pos 0 first) from files the encoder wrote (MemoryBinlogStore); the rebuilt files must
be those files, byte for byte.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.stream import EventSplitter
from encoder.core import encode_event
from fakemaster.record.rebuild import BinlogRebuilder, RecordError, Truncate, Write
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.constants import EventFlag, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    HeartbeatEvent,
    QueryEvent,
    RotateEvent,
    StartEncryptionEvent,
    XidEvent,
)
from fakemaster.vocabulary.header import FLAGS_OFFSET, LOG_POS_OFFSET, TYPE_CODE_OFFSET, event_crc
from tests.budget import examples
from tests.support.streams import store_file_bytes

IN_USE_OFFSET = 4 + FLAGS_OFFSET


def build_store(checksum: bool = True) -> MemoryBinlogStore:
    """Three files: a rotation, a restart (STOP), the last one still written (IN_USE)."""
    store = MemoryBinlogStore(server_id=7, checksum=checksum, clock=lambda: 1_700_000_000)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE d.t (id INT)")])
    for n in range(3):
        store.append_transaction(
            [
                QueryEvent(database="d", query=b"BEGIN"),
                QueryEvent(database="d", query=f"INSERT INTO d.t VALUES ({n})".encode()),
                XidEvent(xid=100 + n),
            ]
        )
    store.rotate()
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE d.u (id INT)")])
    store.restart()
    store.append_transaction(
        [
            QueryEvent(database="d", query=b"BEGIN"),
            QueryEvent(database="d", query=b"INSERT INTO d.u VALUES (1)"),
            QueryEvent(database="d", query=b"COMMIT"),
        ]
    )
    return store


def files_of(store: MemoryBinlogStore) -> dict[str, bytes]:
    return {name: store_file_bytes(store, name) for name in store.file_names()}


def events_of(data: bytes, start: int = 4) -> list[tuple[int, bytes]]:
    splitter = EventSplitter(expect_magic=start == 0, offset=start)
    splitter.feed(data[start:] if start else data)
    return list(splitter)


def with_crc(event: bytearray, checksum: bool) -> bytes:
    if checksum:
        crc = event_crc(event[:-4], event[TYPE_CODE_OFFSET])
        event[-4:] = crc.to_bytes(4, "little")
    return bytes(event)


def fake_rotate(name: str, checksum: bool, position: int = 4) -> bytes:
    event = RotateEvent(
        timestamp=0,
        server_id=7,
        log_pos=0,
        flags=EventFlag.ARTIFICIAL,
        position=position,
        next_file=name,
    )
    return encode_event(event, BinlogContext(checksum=checksum))


def heartbeat(name: str, position: int, checksum: bool) -> bytes:
    event = HeartbeatEvent(server_id=7, log_pos=position, file_name=name)
    return encode_event(event, BinlogContext(checksum=checksum))


def as_sent_fde(event: bytes, checksum: bool, *, fake: bool = False) -> bytes:
    """The FDE as a dump sends it: IN_USE clear (the CRC is taken with it clear: unchanged);
    a fake one (a dump starting past it) with log_pos 0 and its CRC recomputed."""
    sent = bytearray(event)
    sent[FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
    if fake:
        sent[LOG_POS_OFFSET : LOG_POS_OFFSET + 4] = bytes(4)
        return with_crc(sent, checksum)
    return bytes(sent)


def dump(files: dict[str, bytes], checksum: bool, *, beat: bool = True) -> Iterator[bytes]:
    """The events of a dump from the first file's start to the end (file/position mode)."""
    for name, data in files.items():
        yield fake_rotate(name, checksum)
        for offset, event in events_of(data):
            if event[TYPE_CODE_OFFSET] == EventType.FORMAT_DESCRIPTION:
                yield as_sent_fde(event, checksum)
                continue
            yield event
            if beat:
                yield heartbeat(name, offset + len(event), checksum)


def rebuild(
    events: Iterator[bytes] | list[bytes], rebuilder: BinlogRebuilder
) -> dict[str, bytearray]:
    out: dict[str, bytearray] = {}
    for event in events:
        apply(out, rebuilder.feed(event))
    return out


def apply(out: dict[str, bytearray], actions: list[Write | Truncate]) -> None:
    for action in actions:
        if isinstance(action, Write):
            if action.offset == 0:
                assert action.file not in out, f"{action.file} started twice"
                out[action.file] = bytearray()
            data = out[action.file]
            assert action.offset <= len(data)
            data[action.offset : action.offset + len(action.data)] = action.data
        else:
            del out[action.file][action.size :]


@pytest.mark.parametrize("checksum", [True, False])
def test_a_dump_rebuilds_the_files_and_the_last_one_is_in_use_again(checksum: bool) -> None:
    store = build_store(checksum)
    files = files_of(store)
    names = list(files)
    assert len(names) == 3
    # The encoder's files: only the last one is in use, as on a running primary.
    assert [bool(files[n][IN_USE_OFFSET] & EventFlag.BINLOG_IN_USE) for n in names] == [
        False,
        False,
        True,
    ]
    rebuilder = BinlogRebuilder(checksum)
    out = rebuild(dump(files, checksum), rebuilder)
    # Before finish: the last file as sent (IN_USE clear), nothing else differs.
    last = names[-1]
    assert [i for i, (a, b) in enumerate(zip(out[last], files[last], strict=True)) if a != b] == [
        IN_USE_OFFSET
    ]
    apply(out, rebuilder.finish())
    assert {name: bytes(data) for name, data in out.items()} == files
    assert [(f.name, f.size, f.closed) for f in rebuilder.files] == [
        (n, len(files[n]), n != last) for n in names
    ]
    total_events = sum(len(events_of(data)) for data in files.values())
    assert rebuilder.events_written == total_events
    # The GTIDs of the groups recorded: the store's binlog state.
    assert rebuilder.gtids.gtid_text == store.gtid_binlog_pos()


def test_a_dump_ending_with_a_rotate_leaves_every_file_closed() -> None:
    store = build_store()
    store.rotate()
    files = files_of(store)
    *closed, last = list(files)
    # Stop before the newest file: its fake ROTATE never came.
    events = [e for e in dump({n: files[n] for n in closed}, True)]
    rebuilder = BinlogRebuilder()
    out = rebuild(events, rebuilder)
    assert rebuilder.finish() == []  # a ROTATE ended the last file: nothing to mark
    assert {n: bytes(d) for n, d in out.items()} == {n: files[n] for n in closed}
    assert last not in out


def resumed(files: dict[str, bytes], name: str, position: int, checksum: bool) -> Iterator[bytes]:
    """A dump by file/position from ``name``:``position`` (> 4): a fake ROTATE, the file's FDE
    as a fake one (log_pos 0), the events from there, then the next files as usual."""
    names = list(files)
    yield fake_rotate(name, checksum, position)
    data = files[name]
    fde = events_of(data)[0][1]
    yield as_sent_fde(fde, checksum, fake=True)
    for offset, event in events_of(data):
        if offset >= position:
            yield event
    yield from dump({n: files[n] for n in names[names.index(name) + 1 :]}, checksum)


@pytest.mark.parametrize("checksum", [True, False])
def test_a_lost_connection_resumes_after_the_last_whole_group(checksum: bool) -> None:
    files = files_of(build_store(checksum))
    first = next(iter(files))
    events = list(dump(files, checksum, beat=False))
    # Cut inside the second transaction of the first file: after its BEGIN and INSERT.
    kinds = [e[TYPE_CODE_OFFSET] for e in events]
    xids = [i for i, kind in enumerate(kinds) if kind == EventType.XID]
    cut = xids[0] + 3  # GTID, BEGIN, INSERT of the next transaction
    rebuilder = BinlogRebuilder(checksum)
    out = rebuild(events[:cut], rebuilder)
    committed = rebuilder.resume_position
    assert committed.file == first
    end_of_first_xid = events_of(files[first])
    ends = [off + len(ev) for off, ev in end_of_first_xid if ev[TYPE_CODE_OFFSET] == EventType.XID]
    assert committed.position == ends[0]
    assert len(out[first]) > committed.position  # the cut-off group was written...
    actions = rebuilder.reconnected()
    assert actions == [Truncate(first, ends[0])]  # ...and is dropped
    apply(out, actions)
    assert bytes(out[first]) == files[first][: ends[0]]
    # The new dump: its fake ROTATE and fake FDE add nothing; the group comes again whole.
    restart = list(resumed(files, first, committed.position, checksum))
    assert rebuilder.feed(restart[0]) == []
    assert rebuilder.feed(restart[1]) == []
    for event in restart[2:]:
        apply(out, rebuilder.feed(event))
    apply(out, rebuilder.finish())
    assert {n: bytes(d) for n, d in out.items()} == files


@given(cuts=st.lists(st.integers(min_value=1, max_value=10_000), max_size=4))
@settings(max_examples=examples(0.5))
def test_any_losses_give_the_same_files(cuts: list[int]) -> None:
    files = files_of(build_store())
    rebuilder = BinlogRebuilder()
    out: dict[str, bytearray] = {}
    stream = list(dump(files, True))
    for cut in cuts:
        # This connection gets ``cut`` % len(stream) events, then is lost.
        for event in stream[: cut % len(stream)]:
            apply(out, rebuilder.feed(event))
        apply(out, rebuilder.reconnected())
        position = rebuilder.resume_position
        if position.file:
            stream = (
                list(resumed(files, position.file, position.position, True))
                if position.position > 4
                else list(
                    dump(
                        {n: files[n] for n in list(files)[list(files).index(position.file) :]}, True
                    )
                )
            )
    for event in stream:
        apply(out, rebuilder.feed(event))
    apply(out, rebuilder.finish())
    assert {n: bytes(d) for n, d in out.items()} == files


def test_a_damaged_event_is_refused() -> None:
    files = files_of(build_store())
    events = list(dump(files, True, beat=False))
    damaged = bytearray(events[5])
    damaged[len(damaged) // 2] ^= 0x01
    rebuilder = BinlogRebuilder()
    rebuild(events[:5], rebuilder)
    with pytest.raises(RecordError, match="CRC32 mismatch"):
        rebuilder.feed(bytes(damaged))


def test_an_event_that_does_not_land_where_its_log_pos_says_is_refused() -> None:
    files = files_of(build_store())
    events = list(dump(files, True, beat=False))
    rebuilder = BinlogRebuilder()
    rebuild(events[:4], rebuilder)
    # Leave one event out (as a primary leaves ANNOTATE_ROWS out for a replica that did not
    # ask for them): the next one says it ends further than it would.
    with pytest.raises(RecordError, match="says it ends at"):
        rebuilder.feed(events[5])


def test_a_dump_must_name_its_file_and_start_it_at_4() -> None:
    files = files_of(build_store())
    name, data = next(iter(files.items()))
    fde = events_of(data)[0][1]
    with pytest.raises(RecordError, match="before the dump named its first file"):
        BinlogRebuilder().feed(fde)
    with pytest.raises(RecordError, match="whole files"):
        BinlogRebuilder().feed(fake_rotate(name, True, 256))


def test_heartbeats_and_fake_events_write_nothing() -> None:
    rebuilder = BinlogRebuilder()
    assert rebuilder.feed(fake_rotate("mysql-bin.000001", True)) == [
        Write("mysql-bin.000001", 0, b"\xfebin")
    ]
    assert rebuilder.feed(heartbeat("mysql-bin.000001", 4, True)) == []
    assert rebuilder.feed(fake_rotate("mysql-bin.000001", True)) == []
    assert rebuilder.skipped == 3  # none of them is in a file
    # The CRC rule the rebuilt IN_USE flag relies on: it is taken with the flag clear.
    files = files_of(build_store())
    last = files[list(files)[-1]]
    fde = bytearray(events_of(last)[0][1])
    stored = int.from_bytes(fde[-4:], "little")
    fde[FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
    assert zlib.crc32(fde[:-4]) == stored


def test_an_encrypted_binlog_is_refused() -> None:
    """A primary sends an encrypted file's START_ENCRYPTION (flagged IGNORABLE) and then its
    events decrypted: not the file's bytes."""
    files = files_of(build_store())
    name, data = next(iter(files.items()))
    fde = events_of(data)[0][1]
    rebuilder = BinlogRebuilder()
    rebuilder.feed(fake_rotate(name, True))
    rebuilder.feed(as_sent_fde(fde, True))
    start = StartEncryptionEvent(
        server_id=7, log_pos=4 + len(fde) + 19 + 17 + 4, flags=EventFlag.IGNORABLE
    )
    event = encode_event(start, BinlogContext(checksum=True))
    assert len(event) == 19 + 17 + 4
    with pytest.raises(RecordError, match="encrypted"):
        rebuilder.feed(event)
