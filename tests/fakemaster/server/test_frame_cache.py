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
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import fakemaster.core.dump.stream
from fakemaster.core.dump.framing import FramedSpan
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import DumpRequest
from fakemaster.server.frame_cache import FrameCache, span_end
from fakemaster.store import BinlogStore, MemoryBinlogStore
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
    def __init__(self) -> None:
        self.data = bytearray()
        self.spans = 0
        self.span_bytes = 0


def drain(stream: DumpStream, cache: FrameCache) -> Drained:
    out = Drained()
    while True:
        parts = stream.next_parts()
        if not parts:
            break
        for part in parts:
            if not isinstance(part, FramedSpan):
                out.data += part
                continue
            acquired = cache.acquire(part)
            assert acquired is not None
            run, start = acquired
            try:
                tip = run.tip
                if tip.offset <= start.offset:
                    tip = cache.extend(run, start)
                if tip.framed > start.framed:
                    size = tip.framed - start.framed
                    out.data += os.pread(run.file.fileno(), size, start.framed)
                    out.spans += 1
                    out.span_bytes += size
                    part.reached = span_end(start, tip)
            finally:
                cache.release(run)
    assert stream.is_finished
    return out


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
)
def test_spans_from_the_cache_are_the_bytes_of_the_per_event_path(
    seed: int,
    transactions: int,
    rotate_every: int,
    send_annotate: bool,
    extend_bytes: int,
    span_min: int,
    chunk_size: int,
) -> None:
    store = build_store(seed, transactions, rotate_every)
    flags = DumpFlag.NON_BLOCK | (DumpFlag.SEND_ANNOTATE_ROWS if send_annotate else 0)
    expected = per_event(store, flags=flags)
    cache = FrameCache(store, extend_bytes=extend_bytes)
    try:
        with mock.patch.object(fakemaster.core.dump.stream, "SPAN_MIN", span_min):
            # Twice: the second dump finds the first one's runs.
            for _ in range(2):
                stream = DumpStream(store, request(flags=flags), chunk_size=chunk_size)
                stream.allow_framed_spans()
                got = drain(stream, cache)
                assert bytes(got.data) == expected
                if span_min == 0:
                    assert got.spans > 0
    finally:
        cache.close()


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


def test_a_cache_without_the_c_framing_says_so_once(caplog: Any) -> None:
    """Built without its extension, the package frames in Python: slower, and the log says
    why, once a process."""
    import fakemaster.server.frame_cache as frame_cache

    store = build_store(1, 5, 0)
    with (
        mock.patch.object(frame_cache, "ACCELERATED", False),
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
    assert frame_cache.ACCELERATED == ("C extensions" not in caplog.text)
