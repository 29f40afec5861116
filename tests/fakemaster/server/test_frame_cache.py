"""Dumps that send files framed once (fakemaster.server.frame_cache), driven without sockets.

The shell's part is played by :func:`drain`: it answers every FramedSpan from the cache the way
the asyncio shell does (look the run up, frame more in the same thread, send the run's bytes).
Expected bytes come from the same dump request served on the per-event path: a request with
``skip_replication`` (no event in these stores carries SKIP_REPLICATION, so nothing is left out
by it) is never framed by blocks, and each event goes through the dump's generic rewriting.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fakemaster.core.dump.stream
from fakemaster.core.dump.framing import FramedSpan, frame_block_in_python
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import DumpRequest
from fakemaster.server.frame_cache import FrameCache, send_span
from fakemaster.store import BinlogStore, DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.constants import Command, DumpFlag
from fakemaster.vocabulary.events import AnnotateRowsEvent, QueryEvent, XidEvent
from tests.budget import examples

NOW = 1_700_000_000


def request(**fields: Any) -> DumpRequest:
    values: dict[str, Any] = {
        "command": Command.BINLOG_DUMP,
        "thread_id": 5,
        "server_id": 0,
        "position": 4,
        "flags": DumpFlag.NON_BLOCK,
        "file_name": "mysql-bin.000001",
        "master_binlog_checksum": "CRC32",
        "slave_capability": 4,
    }
    values.update(fields)
    return DumpRequest(**values)


def build_store(seed: int, transactions: int, rotate_every: int) -> MemoryBinlogStore:
    rng = random.Random(seed)
    store = MemoryBinlogStore(clock=lambda: NOW)
    for number in range(transactions):
        size = rng.choice([10, 300, 5000, 70_000])
        body: list[Any] = []
        if rng.random() < 0.5:
            body.append(AnnotateRowsEvent(query=b"INSERT INTO t VALUES (%d)" % number))
        body.append(QueryEvent(query=b"INSERT " + b"x" * size, database="d"))
        body.append(XidEvent(xid=number))
        store.append_transaction(body)
        if rotate_every and number % rotate_every == rotate_every - 1:
            store.rotate()
    return store


class Drained:
    """A replica's end of the dump: what :func:`send_span` and the dump's own parts wrote."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.spans = 0
        self.span_bytes = 0
        self.from_binlog = 0  # bytes sent from the binlog file (large events not copied)
        self._binlog_fds: set[int] = set()

    def send_buffers(self, buffers: list[Any]) -> None:
        for buffer in buffers:
            self.data += buffer

    def send_file(self, file_fd: int, offset: int, count: int) -> None:
        got = os.pread(file_fd, count, offset)
        assert len(got) == count
        self.data += got


def drain(stream: DumpStream, cache: FrameCache, *, local: bool = True) -> Drained:
    """Serve ``stream`` to its end as the asyncio shell does, spans through the frame cache's
    :func:`send_span` (mapped views to a ``local`` replica, ``sendfile``'s segments to a remote
    one)."""
    out = Drained()
    while True:
        parts = stream.next_parts()
        if not parts:
            break
        for part in parts:
            if not isinstance(part, FramedSpan):
                out.data += part
                continue
            before = len(out.data)
            send_span(cache, part, out, local=local)
            if part.reached is not None:
                out.spans += 1
                out.span_bytes += len(out.data) - before
    assert stream.is_finished
    return out


def on_disk(store: MemoryBinlogStore, directory: Path) -> DirectoryBinlogStore:
    """The same files in ``directory``, served as a user's binlog directory is."""
    names = store.file_names()
    for name in names:
        (directory / name).write_bytes(store.read_bytes(name, 0, store.file_size(name)))
    (directory / f"{store.basename}.index").write_text("".join(f"./{name}\n" for name in names))
    return DirectoryBinlogStore(directory)


def stored_run_bytes(cache: FrameCache) -> tuple[int, int]:
    """(bytes in the runs' own files, framed bytes of the runs)."""
    runs = list(cache._runs.values())
    return sum(run.stored for run in runs), sum(run.tip.framed for run in runs)


def per_event(store: BinlogStore, **fields: Any) -> bytes:
    stream = DumpStream(store, request(skip_replication=True, **fields))
    out = bytearray()
    while (chunk := stream.next_chunk()) is not None:
        out += chunk
    return bytes(out)


@settings(max_examples=examples(0.5), deadline=None)
@given(
    seed=st.integers(0, 2**32),
    transactions=st.integers(1, 60),
    rotate_every=st.sampled_from([0, 7, 25]),
    send_annotate=st.booleans(),
    extend_bytes=st.sampled_from([1, 4096, 100_000, 1 << 20]),
    span_min=st.sampled_from([0, 1, 50_000]),
    chunk_size=st.sampled_from([1, 10_000, 1 << 20]),
    in_directory=st.booleans(),
    local=st.booleans(),
)
def test_spans_from_the_cache_are_the_bytes_of_the_per_event_path(
    seed: int,
    transactions: int,
    rotate_every: int,
    send_annotate: bool,
    extend_bytes: int,
    span_min: int,
    chunk_size: int,
    in_directory: bool,
    local: bool,
) -> None:
    """In memory every byte is in the runs; in a binlog directory the large events are sent
    from the binlog files (views, or sendfile's segments to a remote replica)."""
    memory = build_store(seed, transactions, rotate_every)
    flags = DumpFlag.NON_BLOCK | (DumpFlag.SEND_ANNOTATE_ROWS if send_annotate else 0)
    expected = per_event(memory, flags=flags)
    with tempfile.TemporaryDirectory() as directory:
        store = on_disk(memory, Path(directory)) if in_directory else memory
        assert per_event(store, flags=flags) == expected
        cache = FrameCache(store, extend_bytes=extend_bytes)
        try:
            with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", span_min):
                # Twice: the second dump finds the first one's runs.
                for _ in range(2):
                    stream = DumpStream(store, request(flags=flags), chunk_size=chunk_size)
                    stream.allow_framed_spans()
                    got = drain(stream, cache, local=local)
                    assert bytes(got.data) == expected
                    if span_min == 0:
                        assert got.spans > 0
            stored, framed = stored_run_bytes(cache)
            assert stored <= framed
            if not in_directory:
                assert stored == framed
        finally:
            cache.close()
            if isinstance(store, DirectoryBinlogStore):
                store.close()


def large_events_store(count: int, *, annotate: bool = False) -> MemoryBinlogStore:
    """Transactions of one 70 kB statement each (a large event), with small events between."""
    store = MemoryBinlogStore(clock=lambda: NOW)
    for number in range(count):
        body: list[Any] = []
        if annotate:
            body.append(AnnotateRowsEvent(query=b"/* " + b"a" * 70_000 + b" */"))
        body.append(QueryEvent(query=b"INSERT " + bytes([65 + number % 26]) * 70_000, database="d"))
        body.append(XidEvent(xid=number))
        store.append_transaction(body)
    return store


@pytest.mark.parametrize("send_annotate", [False, True])
def test_large_events_of_a_binlog_directory_are_sent_from_the_file(
    tmp_path: Path, send_annotate: bool
) -> None:
    """The runs hold the small events and the large events' packet headers only: a first
    dump writes no copy of a large event, and every later one sends the same bytes. Large
    ANNOTATE_ROWS a replica did not ask for are left out, not sent from the file."""
    memory = large_events_store(40, annotate=True)
    flags = DumpFlag.NON_BLOCK | (DumpFlag.SEND_ANNOTATE_ROWS if send_annotate else 0)
    expected = per_event(memory, flags=flags)
    store = on_disk(memory, tmp_path)
    cache = FrameCache(store)
    try:
        with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 0):
            sent = []
            for local in (True, False, True):
                stream = DumpStream(store, request(flags=flags))
                stream.allow_framed_spans()
                got = drain(stream, cache, local=local)
                assert bytes(got.data) == expected
                sent.append(got.span_bytes)
        stored, framed = stored_run_bytes(cache)
        large = 40 * (2 if send_annotate else 1)
        assert sent == [framed] * 3
        # Each large event: 5 bytes of packet header in the run, none of the event.
        assert stored < framed - large * 70_000
        run = next(iter(cache._runs.values()))
        assert sum(1 for from_file, _ in run.pieces if from_file) == large
    finally:
        cache.close()
        store.close()


class _CountingOs:
    """The ``os`` module, counting the bytes its ``pread`` returns."""

    def __init__(self) -> None:
        self.reads: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        got = os.pread(fd, size, offset)
        self.reads.append(len(got))
        return got


def test_framing_large_events_in_many_extensions_reads_little_past_them(tmp_path: Path) -> None:
    """After a large event the framer reads a small block (the next header), and keeps that
    read size into the next extension: an extension does not start with a whole block of the
    next large event, read for nothing."""
    count, block, probe = 40, 1 << 20, 4 << 10
    memory = large_events_store(count)
    expected = per_event(memory, flags=DumpFlag.NON_BLOCK)
    store = on_disk(memory, tmp_path)
    # About 3.5 large events per extension: a dozen extensions over the 2.8 MB file.
    cache = FrameCache(store, extend_bytes=256 << 10)
    counting = _CountingOs()
    try:
        with (
            mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 0),
            mock.patch("fakemaster.server.frame_cache.os", counting),
        ):
            stream = DumpStream(store, request(flags=DumpFlag.NON_BLOCK))
            stream.allow_framed_spans()
            assert bytes(drain(stream, cache, local=True).data) == expected
    finally:
        cache.close()
        store.close()
    # The framer's reads of the binlog file: one whole block at most (the file's first read),
    # a small one after each large event.
    reads = counting.reads
    assert len(reads) > count
    assert sum(reads) <= block + count * probe, f"{sum(reads)} bytes read in {len(reads)} reads"


def test_a_binlog_file_truncated_while_served_is_read_as_without_the_cache(
    tmp_path: Path, caplog: Any
) -> None:
    """A user's file cut in the middle of a large event the runs send from it: the dump reads
    it event by event and reports what a primary reports (the same bytes as without a cache),
    and the log says which file."""
    memory = large_events_store(30)
    store = on_disk(memory, tmp_path)
    cache = FrameCache(store)
    try:
        with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 0):
            stream = DumpStream(store, request())
            stream.allow_framed_spans()
            assert bytes(drain(stream, cache).data) == per_event(memory)
            name = store.file_names()[0]
            middle = [offset for offset, _ in store.iter_events(name)][40] + 30_000
            os.truncate(tmp_path / name, middle)
            store.poll()
            expected = per_event(store)
            with caplog.at_level("WARNING", logger="fakemaster"):
                stream = DumpStream(store, request())
                stream.allow_framed_spans()
                got = drain(stream, cache)
        assert bytes(got.data) == expected
        assert got.spans == 0
        assert f"binlog file {name} was truncated while served" in caplog.text
    finally:
        cache.close()
        store.close()


def test_views_of_a_binlog_file_shorter_than_its_pieces_are_refused(tmp_path: Path) -> None:
    """Cut between the check and the send: a view that would come back short (bytes missing
    from the stream) ends the dump instead."""
    store = on_disk(large_events_store(10), tmp_path)
    cache = FrameCache(store)
    try:
        name = store.file_names()[0]
        span = FramedSpan(name, 4, 1, False, store.file_size(name))
        acquired = cache.acquire(span)
        assert acquired is not None
        run, start = acquired
        tip = cache.extend(run, start)
        assert run.whole(0, tip.framed)
        os.truncate(tmp_path / name, store.file_size(name) // 2)
        assert not run.whole(0, tip.framed)
        with pytest.raises(ConnectionResetError, match=f"binlog file {name} was truncated"):
            run.views(0, tip.framed)
        cache.release(run)
    finally:
        cache.close()
        store.close()


def test_a_gtid_dump_skips_event_by_event_then_sends_from_the_cache() -> None:
    store = build_store(3, 40, 0)
    # Start in the middle of the file: the groups before are skipped on the per-event path.
    middle = store.end_state().find(0, 1)
    assert middle is not None
    start = f"0-1-{middle.seq_no // 2}"
    expected = per_event(store, connect_state=start)
    cache = FrameCache(store)
    with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 1):
        stream = DumpStream(store, request(connect_state=start))
        stream.allow_framed_spans()
        got = drain(stream, cache)
    assert bytes(got.data) == expected
    assert 0 < got.span_bytes < len(expected)
    cache.close()


def test_a_corrupt_event_is_reported_as_without_the_cache() -> None:
    """The cache frames whole events only: at a bogus one the dump frames for itself and ends
    with the ERR a primary sends, naming the same coordinates."""
    store = build_store(4, 30, 0)
    name = store.file_names()[0]
    size = store.file_size(name)
    events = list(store.iter_events(name))
    broken_at = events[len(events) // 2][0]
    store._files[name][broken_at + 9 : broken_at + 13] = (5).to_bytes(4, "little")  # length 5
    expected = per_event(store)
    assert b"bogus data in log event" in expected
    cache = FrameCache(store, extend_bytes=10_000)
    with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 1):
        stream = DumpStream(store, request())
        stream.allow_framed_spans()
        got = drain(stream, cache)
    assert bytes(got.data) == expected
    assert got.spans > 0
    assert store.file_size(name) == size
    cache.close()


def test_disk_use_stays_within_the_budget() -> None:
    store = build_store(5, 60, 20)
    expected = per_event(store)
    cache = FrameCache(store, max_bytes=200_000, extend_bytes=50_000)
    with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", 1):
        for _ in range(3):
            stream = DumpStream(store, request())
            stream.allow_framed_spans()
            got = drain(stream, cache)
            assert bytes(got.data) == expected
            assert cache.bytes_used <= 200_000
            assert got.spans > 0
    cache.close()


@settings(max_examples=examples(0.5), deadline=None)
@given(
    sizes=st.lists(st.integers(0, 3000), max_size=1500),
    at_most=st.integers(1, 5000),
    offset=st.integers(0, 100),
)
def test_parts_are_written_gathered_in_order_even_in_pieces(
    sizes: list[int], at_most: int, offset: int
) -> None:
    """The run file gets every part in order, however many parts (more than one pwritev
    takes) and however little each call writes (a short write is simulated)."""
    import tempfile

    from fakemaster.server import frame_cache as framed_cache

    rng = random.Random(len(sizes))
    parts: list[Any] = []
    for index, size in enumerate(sizes):
        data = rng.randbytes(size)
        parts.append(memoryview(data) if index % 3 else bytearray(data) if index % 2 else data)
    real = os.pwritev

    def short(fd: int, buffers: Any, at: int) -> int:
        joined = b"".join(bytes(buffer) for buffer in buffers)[:at_most]
        return real(fd, [joined], at)

    with tempfile.TemporaryFile() as file, mock.patch.object(framed_cache.os, "pwritev", short):
        written = framed_cache._pwritev_all(file.fileno(), parts, offset)
        file.seek(offset)
        assert file.read() == b"".join(bytes(part) for part in parts)
    assert written == sum(sizes)


@pytest.mark.parametrize("missing", ["framing", "write loop"])
def test_a_cache_without_the_c_loops_says_so_once(caplog: Any, missing: str) -> None:
    """Built without an extension, the package frames or writes in Python: slower, and the
    log says why, once a process."""
    import fakemaster.server.frame_cache as frame_cache
    from fakemaster.server import sender

    store = build_store(1, 5, 0)
    module = frame_cache if missing == "framing" else sender
    with (
        mock.patch.object(module, "ACCELERATED", False),
        mock.patch.object(frame_cache, "_SAID", False),
        caplog.at_level("WARNING", logger=frame_cache.logger.name),
    ):
        for _ in range(2):
            FrameCache(store).close()
    said = [r.getMessage() for r in caplog.records if "C extensions" in r.getMessage()]
    assert len(said) == 1
    assert "framed in Python" in said[0]
    caplog.clear()
    with caplog.at_level("WARNING", logger=frame_cache.logger.name):
        FrameCache(store).close()
    # Built (as here and in CI): nothing said.
    built = frame_cache.ACCELERATED and sender.ACCELERATED
    assert built == ("C extensions" not in caplog.text)


def test_framing_ahead_cancelled_by_a_close_is_no_error(caplog: Any) -> None:
    """A cache closed while framing ahead is queued: the queued framing is cancelled, its runs
    released, and nothing is logged as an error."""
    import threading

    store = build_store(6, 30, 10)
    gate = threading.Event()
    cache = FrameCache(store, extend_bytes=1000, pause=lambda: gate.wait(10))
    acquired = []
    with caplog.at_level("ERROR"):
        for name in store.file_names()[:3]:
            found = cache.acquire(FramedSpan(name, 4, 1, False, store.file_size(name)))
            assert found is not None
            acquired.append(found)
            # Two framing threads wait at the gate; the third framing stays queued.
            cache.prefetch(*found)
        for run, _ in acquired:
            cache.release(run)
        prefetcher = cache._prefetcher
        assert prefetcher is not None
        cache.close()
        gate.set()
        prefetcher.shutdown(wait=True)  # the two framings at the gate end
    assert [record.getMessage() for record in caplog.records] == []
    assert all(run.users == 0 for run, _ in acquired)


def test_runs_are_dropped_beyond_their_number(tmp_path: Path) -> None:
    """Runs of large events take next to no disk: their number is bounded too (each holds
    descriptors), the least recently used dropped first, never one a dump sends from."""
    memory = build_store(7, 40, 4)  # ten files
    store = on_disk(memory, tmp_path)
    names = store.file_names()
    cache = FrameCache(store, max_runs=3)

    def span(name: str) -> FramedSpan:
        return FramedSpan(name, 4, 1, False, store.file_size(name))

    try:
        for name in names:
            found = cache.acquire(span(name))
            assert found is not None
            cache.extend(*found)
            cache.release(found[0])
            assert len(cache._runs) <= 3
        assert [run.name for run in cache._runs.values()] == names[-3:]
        held = [cache.acquire(span(name)) for name in names[:5]]
        assert all(found is not None for found in held)
        assert [run.name for run in cache._runs.values()] == names[:5]  # in use: kept
    finally:
        cache.close()
        store.close()


def test_an_extension_that_fails_to_write_leaves_no_piece_behind(tmp_path: Path) -> None:
    """A write that fails mid-extension (the disk full) publishes nothing: the pieces it added
    go, and the next extension from the same tip frames the same bytes again."""
    import fakemaster.server.frame_cache as frame_cache

    memory = large_events_store(12)
    store = on_disk(memory, tmp_path)
    cache = FrameCache(store)
    real = frame_cache._pwritev_all
    calls = 0

    def full_once(fd: int, parts: list[Any], offset: int) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError(28, "No space left on device")
        return real(fd, parts, offset)

    try:
        name = store.file_names()[0]
        found = cache.acquire(FramedSpan(name, 4, 1, False, store.file_size(name)))
        assert found is not None
        run, start = found
        with mock.patch.object(frame_cache, "_pwritev_all", full_once):
            with pytest.raises(OSError, match="No space"):
                cache.extend(run, start)
            assert (run.pieces, run.piece_starts, run.tip) == ([(False, 0)], [0], start)
            tip = cache.extend(run, start)
        cache.release(run)
        size = store.file_size(name)
        assert tip.offset == size
        # Held to the framing in Python of the whole file, in one block.
        whole = frame_block_in_python(store.read_bytes(name, 4, size - 4), 1, send_annotate=False)
        framed = b"".join(bytes(view) for view in run.views(0, tip.framed))
        assert framed == b"".join(bytes(part) for part in whole.parts)
        assert cache.bytes_used == run.stored
    finally:
        cache.close()
        store.close()
