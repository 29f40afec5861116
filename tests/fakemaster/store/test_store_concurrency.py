"""Binlog stores changed while dumps read them: a rotation is atomic for readers.

The interleavings are injected, not hoped for: the store's injected clock is called while the
store writes a new file, so a dump driven from inside the clock reads at that exact moment.
The stress test runs a fixed number of rotations and appends from a thread against dumps read
round-robin, and compares what every dump sent with the files the store ends with.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from fakemaster.core.dump.stream import DumpStream
from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.store.base import MAGIC_LEN, BinlogStore
from fakemaster.vocabulary.constants import BINLOG_MAGIC, EventFlag, EventType
from fakemaster.vocabulary.events import Event, QueryEvent, XidEvent
from fakemaster.vocabulary.header import FLAGS_OFFSET
from tests.fakemaster.core.test_dump import (
    NOW,
    Sent,
    _real_dump,
    err_text,
    payloads,
    request,
    split,
)

BLOCKING = {"server_id": 2, "flags": 0}


def insert(n: int) -> list[Event]:
    return [QueryEvent(query=b"INSERT INTO t VALUES (%d)" % n, database="d"), XidEvent(xid=n)]


class ReaderInTheClock:
    """A clock that, once armed, drives dumps every time the store asks it for the time."""

    def __init__(self) -> None:
        self.readers: list[Callable[[], None]] = []

    def __call__(self) -> float:
        for read in self.readers:
            read()
        return NOW


def drain(stream: DumpStream, out: bytearray) -> None:
    while (chunk := stream.next_chunk()) is not None:
        out += chunk


@pytest.mark.parametrize("new_file", [MemoryBinlogStore.rotate, MemoryBinlogStore.restart])
def test_a_dump_never_sees_a_new_file_before_its_header(
    new_file: Callable[[MemoryBinlogStore], str],
) -> None:
    clock = ReaderInTheClock()
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction(insert(1))
    stream = DumpStream(store, request(**BLOCKING))
    sent = bytearray()
    drain(stream, sent)
    headers: list[tuple[str, bool]] = []

    def look_at_the_files() -> None:
        headers.extend((name, store.header_written(name)) for name in store.file_names())

    clock.readers += [look_at_the_files, lambda: drain(stream, sent)]
    new_file(store)
    store.append_transaction(insert(2))
    clock.readers.clear()
    drain(stream, sent)
    assert ("mysql-bin.000002", True) in headers  # the readers ran while the file was written
    assert all(written for _, written in headers), headers
    events, end = split(bytes(sent))
    assert end is None, f"the dump ended with {end!r}"
    assert not stream.is_finished
    assert received_files(events) == final_files(store)


# --- comparing what was sent with what the store holds ---------------------------------------


def _normalised(raw: bytes) -> bytes:
    """An event as compared: a FORMAT_DESCRIPTION without BINLOG_IN_USE (the dump clears it;
    the store clears it when the file is closed)."""
    if raw[4] != EventType.FORMAT_DESCRIPTION:
        return raw
    event = bytearray(raw)
    event[FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
    return bytes(event)


def received_files(events: list[Sent]) -> dict[str, list[bytes]]:
    """The events a dump sent, by the file its fake ROTATEs named (checksummed binlogs);
    fake GTID_LIST events left out."""
    files: dict[str, list[bytes]] = {}
    current: list[bytes] | None = None
    for sent in events:
        flags = sent.header[5]
        if flags & EventFlag.ARTIFICIAL and sent.type_code == EventType.GTID_LIST:
            continue  # where a GTID dump reached its position: not in the file
        if flags & EventFlag.ARTIFICIAL:
            assert sent.type_code == EventType.ROTATE
            name = sent.raw[19 + 8 : -4].decode()
            assert name not in files, f"{name} was sent twice"
            current = files[name] = []
            continue
        assert current is not None, "an event before the first fake ROTATE"
        current.append(_normalised(sent.raw))
    return files


def final_files(store: BinlogStore) -> dict[str, list[bytes]]:
    return {
        name: [_normalised(raw) for _, raw in store.iter_events(name)]
        for name in store.file_names()
    }


class WriterAfterSizing(MemoryBinlogStore):
    """A store where another writer gets in right after a reader asked for a file's size."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: NOW)
        self.after_sizing: Callable[[], None] | None = None

    def file_size(self, name: str) -> int:
        size = super().file_size(name)
        write, self.after_sizing = self.after_sizing, None
        if write is not None:
            write()
        return size


def test_a_rotation_between_sizing_and_the_last_file_check_loses_no_event() -> None:
    store = WriterAfterSizing()
    store.append_transaction(insert(1))
    stream = DumpStream(store, request(**BLOCKING))
    sent = bytearray()
    drain(stream, sent)

    def append_and_rotate() -> None:
        store.append_transaction(insert(2))
        store.rotate()

    store.after_sizing = append_and_rotate
    drain(stream, sent)
    events, end = split(bytes(sent))
    assert end is None, f"the dump ended with {end!r}"
    assert received_files(events) == final_files(store)


# --- a directory whose newest file is being created -------------------------------------------


def written_files(rotations: int) -> MemoryBinlogStore:
    """Binlog files to copy into a directory: a transaction in each, ``rotations`` rotations."""
    store = MemoryBinlogStore(clock=lambda: NOW)
    for n in range(rotations + 1):
        if n:
            store.rotate()
        store.append_transaction(insert(n))
    return store


def file_bytes(store: MemoryBinlogStore, name: str) -> bytes:
    return BINLOG_MAGIC + b"".join(raw for _, raw in store.iter_events(name))


def write_index(directory: Path, names: list[str]) -> None:
    (directory / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in names))


def test_a_header_less_last_file_means_wait(tmp_path: Path) -> None:
    source = written_files(rotations=1)
    first, second = source.file_names()
    whole = file_bytes(source, second)
    (tmp_path / first).write_bytes(file_bytes(source, first))
    (tmp_path / second).write_bytes(BINLOG_MAGIC)
    write_index(tmp_path, [first, second])
    with DirectoryBinlogStore(tmp_path) as store:
        stream = DumpStream(store, request(**BLOCKING))
        sent = bytearray()
        drain(stream, sent)
        # Magic only, then half of the FORMAT_DESCRIPTION: the dump waits at the file's start.
        for written in (MAGIC_LEN, MAGIC_LEN + 40):
            with open(tmp_path / second, "r+b") as out:
                out.write(whole[:written])
            drain(stream, sent)
            events, end = split(bytes(sent))
            assert end is None, f"the dump ended with {end!r}"
            assert not stream.is_finished
            assert list(received_files(events)) == [first, second]
            assert received_files(events)[second] == []
        (tmp_path / second).write_bytes(whole)
        drain(stream, sent)
        events, end = split(bytes(sent))
        assert end is None, f"the dump ended with {end!r}"
        assert received_files(events) == final_files(store) == final_files(source)


def test_a_gtid_dump_starts_before_a_header_less_last_file(tmp_path: Path) -> None:
    """The newest file's header is not written yet: the binlog state is the one at the end of
    the file before it, and a replica connecting by GTID starts there, then waits."""
    source = written_files(rotations=1)
    first, second = source.file_names()
    whole = file_bytes(source, second)
    (tmp_path / first).write_bytes(file_bytes(source, first))
    (tmp_path / second).write_bytes(BINLOG_MAGIC)
    write_index(tmp_path, [first, second])
    with DirectoryBinlogStore(tmp_path) as store:
        assert store.gtid_binlog_pos() == "0-1-1"
        stream = DumpStream(store, request(**BLOCKING, file_name="", connect_state="0-1-1"))
        sent = bytearray()
        drain(stream, sent)
        events, end = split(bytes(sent))
        assert end is None, f"the dump ended with {end!r}"
        assert list(received_files(events)) == [first, second]
        (tmp_path / second).write_bytes(whole)
        drain(stream, sent)
        assert store.gtid_binlog_pos() == "0-1-2"
    events, end = split(bytes(sent))
    assert end is None, f"the dump ended with {end!r}"
    assert received_files(events)[second] == final_files(source)[second]


def test_a_non_blocking_dump_ends_at_a_header_less_last_file(tmp_path: Path) -> None:
    source = written_files(rotations=1)
    first, second = source.file_names()
    (tmp_path / first).write_bytes(file_bytes(source, first))
    (tmp_path / second).write_bytes(BINLOG_MAGIC)
    write_index(tmp_path, [first, second])
    with DirectoryBinlogStore(tmp_path) as store:
        stream = DumpStream(store, request())
        sent = bytearray()
        drain(stream, sent)
    events, end = split(bytes(sent))
    assert stream.is_finished
    assert end is not None and end[0] == 0xFE, f"the dump ended with {end!r}"
    assert received_files(events) == {first: final_files(source)[first], second: []}


def test_a_header_less_file_that_is_not_the_last_is_an_error(tmp_path: Path) -> None:
    """The ERR a real primary sends (see the test against one below)."""
    source = written_files(rotations=2)
    first, second, third = source.file_names()
    (tmp_path / first).write_bytes(file_bytes(source, first))
    (tmp_path / second).write_bytes(BINLOG_MAGIC)
    (tmp_path / third).write_bytes(file_bytes(source, third))
    write_index(tmp_path, [first, second, third])
    with DirectoryBinlogStore(tmp_path) as store:
        stream = DumpStream(store, request(**BLOCKING))
        sent = bytearray()
        drain(stream, sent)
    _, end = split(bytes(sent))
    assert stream.is_finished
    assert err_text(end) == (
        1236,
        "Unknown error; the first event "
        f"'{first}' at 4, the last event read from '{second}' at 4, "
        f"the last byte read from '{second}' at 4.",
    )


# --- stress: a writer thread against dumps in threads and round-robin ---------------------------

ROTATIONS = 40
APPENDS_PER_FILE = 8
THREAD_READERS = 2
ROUND_ROBIN_READERS = 2
HANG_BOUND = 300.0  # seconds; only ever reached by a hung run, never part of a verdict


@contextmanager
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads as often as the interpreter allows, for many more interleavings."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_rotations_from_another_thread_never_break_a_dump() -> None:
    store = MemoryBinlogStore(clock=lambda: NOW)
    store.append_transaction(insert(0))
    written = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for n in range(ROTATIONS):
                for m in range(APPENDS_PER_FILE):
                    store.append_transaction(insert(n * APPENDS_PER_FILE + m + 1))
                store.rotate()
        except BaseException as error:  # reported by the test thread
            failures.append(error)
        finally:
            written.set()

    streams = [
        DumpStream(store, request(**BLOCKING)) for _ in range(THREAD_READERS + ROUND_ROBIN_READERS)
    ]
    sent = [bytearray() for _ in streams]

    def read_in_thread(index: int) -> None:
        try:
            while not written.is_set():
                drain(streams[index], sent[index])
        except BaseException as error:
            failures.append(error)

    with frequent_thread_switches():
        threads = [threading.Thread(target=write, name="binlog-writer")]
        threads += [
            threading.Thread(target=read_in_thread, args=(index,), name=f"dump-{index}")
            for index in range(THREAD_READERS)
        ]
        for thread in threads:
            thread.start()
        while not written.is_set():
            for index in range(THREAD_READERS, len(streams)):
                drain(streams[index], sent[index])
        for thread in threads:
            thread.join(HANG_BOUND)
            assert not thread.is_alive(), f"{thread.name} hung"
    assert not failures, failures
    expected = final_files(store)
    assert len(expected) == ROTATIONS + 1
    for stream, out in zip(streams, sent, strict=True):
        drain(stream, out)  # what was written after the stream last read
        events, end = split(bytes(out))
        assert end is None, f"a dump ended with {end!r}"
        assert received_files(events) == expected


@pytest.mark.mariadb
def test_a_header_less_closed_file_is_the_error_a_real_primary_sends(
    mariadb_factory: Callable[..., Any],
) -> None:
    """A real 10.11 primary whose index lists closed files holding only the magic, or the
    magic and part of the FORMAT_DESCRIPTION: a dump from such a file gets the same packets
    from the fake serving the same directory."""
    server = mariadb_factory()
    server.create_replication_user("repl", "pw")
    server.execute(
        [
            "CREATE DATABASE d",
            "FLUSH BINARY LOGS",
            "CREATE TABLE d.t (a INT) ENGINE=InnoDB",
            "FLUSH BINARY LOGS",
            "INSERT INTO d.t VALUES (1)",
            "FLUSH BINARY LOGS",
            "INSERT INTO d.t VALUES (2)",
        ]
    )
    server.stop()
    magic_only, partial_fde = server.binlog_files()[1:3]
    magic_only.write_bytes(BINLOG_MAGIC)
    partial_fde.write_bytes(partial_fde.read_bytes()[: MAGIC_LEN + 40])
    server.start()
    server.wait_for_binlog_checkpoint()  # nothing written in the background between reads
    differences = []
    for name in (magic_only.name, partial_fde.name):
        for fields in ({"file_name": name}, {"file_name": name, **BLOCKING}):
            expected = payloads(_real_dump(server, fields))
            with DirectoryBinlogStore(server.binlog_dir) as store:
                stream = DumpStream(store, request(**fields))
                mine = bytearray()
                drain(stream, mine)
            if not stream.is_finished or payloads(bytes(mine)) != expected:
                differences.append((fields, expected[1:], payloads(bytes(mine))[1:]))
    assert not differences


def test_an_index_line_being_appended_is_not_listed_yet(tmp_path: Path) -> None:
    source = written_files(rotations=1)
    first, second = source.file_names()
    (tmp_path / first).write_bytes(file_bytes(source, first))
    index = tmp_path / "mysql-bin.index"
    index.write_text(f"./{first}\n./{second[:-2]}")
    with DirectoryBinlogStore(tmp_path) as store:
        assert store.file_names() == [first]
        (tmp_path / second).write_bytes(BINLOG_MAGIC)
        index.write_text(f"./{first}\n./{second}\n")
        assert store.poll()
        assert store.file_names() == [first, second]


def test_a_directory_written_in_pieces_from_another_thread_never_breaks_a_dump(
    tmp_path: Path,
) -> None:
    """A writer thread plays a primary on disk: each new file is appended to the index (in
    pieces) while it holds only the magic, its header and events then arrive in pieces that cut
    events in two."""
    source = written_files(rotations=ROTATIONS // 4)
    names = source.file_names()
    contents = [file_bytes(source, name) for name in names]
    (tmp_path / names[0]).write_bytes(BINLOG_MAGIC)
    write_index(tmp_path, names[:1])
    written = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            for number, (name, data) in enumerate(zip(names, contents, strict=True)):
                if number:
                    (tmp_path / name).write_bytes(BINLOG_MAGIC)
                    with open(tmp_path / "mysql-bin.index", "a") as index:
                        for piece in (f"./{name}"[:7], f"./{name}"[7:], "\n"):
                            index.write(piece)
                            index.flush()
                with open(tmp_path / name, "ab") as out:
                    for start in range(MAGIC_LEN, len(data), 37):
                        out.write(data[start : start + 37])
                        out.flush()
        except BaseException as error:  # reported by the test thread
            failures.append(error)
        finally:
            written.set()

    with DirectoryBinlogStore(tmp_path) as store:
        streams = [DumpStream(store, request(**BLOCKING)) for _ in range(ROUND_ROBIN_READERS)]
        sent = [bytearray() for _ in streams]
        with frequent_thread_switches():
            writer = threading.Thread(target=write, name="binlog-writer")
            writer.start()
            while not written.is_set():
                for stream, out in zip(streams, sent, strict=True):
                    drain(stream, out)
            writer.join(HANG_BOUND)
            assert not writer.is_alive(), "the writer hung"
        assert not failures, failures
        for stream, out in zip(streams, sent, strict=True):
            drain(stream, out)
            events, end = split(bytes(out))
            assert end is None, f"a dump ended with {end!r}"
            assert received_files(events) == final_files(source)
