"""Binlog files framed once as dump packets, for every replica that reaches them.

A plain replica (see :mod:`fakemaster.core.dump.framing`) gets every event of a file as it is, one
packet each, so the bytes on the wire from a file offset on depend only on that offset, the
packet sequence number there and whether ANNOTATE_ROWS are sent. :class:`FrameCache` frames
those bytes once into a temporary file (a *run*) and every dump that arrives at the same offset
with the same sequence number sends them from there with ``sendfile``: no per-event Python and
no copy in the server's memory, however many replicas read the file.

A run grows at its end in steps of ``extend_bytes`` of the binlog file, framed by whoever asks
first (in a worker thread: :meth:`FrameCache.extend` reads the store and writes the run; the
event loop only looks runs up). It works for the last file too: the bytes below a file's
readable end never change, and a run ends where the file ended when it was last extended.

A large event (:data:`~fakemaster.core.dump.framing.LARGE_EVENT` bytes or more) of a store whose
files are files (:meth:`~fakemaster.store.BinlogStore.open_file`) is not copied into the run:
the run holds its packet header and names where the event is in the binlog file, and a dump
sends it from there (a view of the file mapped in memory, or ``sendfile``), as a primary's dump
sends its events from the file: the first dump of a file of large events neither reads them
into the server nor writes them again. Only the kernel reads those mapped pages (``sendmsg``,
``sendfile``): a binlog file truncated while it is served fails that send (``EFAULT``, or an
early end of the file) and ends the dump; it cannot crash the server (SIGBUS).

Disk use is bounded by ``max_bytes``: the least recently used runs no dump is sending from are
dropped; when nothing can be dropped the cache frames nothing more and dumps frame for
themselves. At most ``max_runs`` runs are kept the same way (each holds file descriptors). Runs are files without a name (``tempfile.TemporaryFile``) in ``directory``.
"""

from __future__ import annotations

import mmap
import os
import struct
import tempfile
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any, NamedTuple, Protocol

from fakemaster.core.dump.framing import (
    ACCELERATED,
    LARGE_EVENT,
    FramedSpan,
    SpanEnd,
    frame_block,
    frame_small_run,
    is_left_out,
    large_event_head,
)
from fakemaster.server.logs import logger
from fakemaster.store import BinlogReadError, BinlogStore, UnknownBinlogFile
from fakemaster.store.base import next_read_size
from fakemaster.vocabulary.constants import HEADER_LEN, MAX_PACKET_PAYLOAD
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET, TYPE_CODE_OFFSET

__all__ = [
    "DEFAULT_EXTEND_BYTES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_RUNS",
    "Checkpoint",
    "FrameCache",
    "FramedRun",
    "SpanWriter",
    "send_span",
    "span_end",
]

DEFAULT_MAX_BYTES = 4 << 30
# Runs kept at most (beyond the ones dumps are sending from).
DEFAULT_MAX_RUNS = 256
DEFAULT_EXTEND_BYTES = 8 << 20
_READ_BLOCK = 1 << 20
# What is read after a large event sent from the file: enough for the next one's header, or
# for a few small events (then four times more at each read, up to _READ_BLOCK).
_PROBE = 4 << 10


class Checkpoint(NamedTuple):
    """A point of a run: an event boundary of the binlog file and the framed bytes up to it."""

    offset: int  # binlog file offset
    framed: int  # bytes of the run before it
    seq: int  # sequence number of the packet there
    events: int  # events framed before it, from the run's start
    last_event: int  # file offset of the last event walked before it


_Key = tuple[Hashable, str, bool, int, int]


class FramedRun:
    """The framed events of one file from one offset and sequence number on.

    Its bytes (offsets counted by :attr:`Checkpoint.framed`) are pieces, in order: bytes of the
    run's own file, and large events of the binlog file (``source``, when the store gives one)
    that are sent from there. ``piece_starts[i]`` is where piece ``i`` starts; ``pieces[i]`` is
    (from the binlog file, offset in that file); a piece ends where the next one starts (the
    last one at the tip)."""

    def __init__(
        self,
        identity: Hashable,
        name: str,
        send_annotate: bool,
        start: Checkpoint,
        file: IO[bytes],
        source: int | None = None,
    ) -> None:
        self.identity = identity
        self.name = name
        self.send_annotate = send_annotate
        self.file = file
        # A descriptor of the binlog file of its own (closed with the run), or None: then
        # every byte is in the run's file.
        self.source = source
        self.checkpoints = [start]
        self.stored = 0  # bytes in the run's file
        self.piece_starts = [0]
        self.pieces: list[tuple[bool, int]] = [(False, 0)]
        self.users = 0
        self.broken = False  # the file's bytes at the tip are not whole events
        # The framer's next read from ``source``, kept from one extension to the next: after a
        # large event a small one (a whole block there would read the next large event for
        # nothing, once per extension: 32 MB of 268 MB for a file of large rows).
        self.read_size = _READ_BLOCK
        self.lock = threading.Lock()  # one extender at a time
        # The run's file and the binlog file mapped in memory, shared by the dumps that send
        # from the run; mapped again (larger) when the run has grown past them.
        self._maps: dict[bool, mmap.mmap] = {}
        self._map_lock = threading.Lock()
        self._piece_views: list[memoryview] = []
        self._views_lock = threading.Lock()

    @property
    def tip(self) -> Checkpoint:
        return self.checkpoints[-1]

    def segments(self, offset: int, count: int) -> list[tuple[bool, int, int]]:
        """Where ``count`` framed bytes from ``offset`` (framed already) are: (from the binlog
        file, file offset, bytes) for each piece they span."""
        starts = self.piece_starts
        pieces = self.pieces
        index = bisect_right(starts, offset) - 1
        found: list[tuple[bool, int, int]] = []
        while count > 0:
            from_source, base = pieces[index]
            index += 1
            size = count if index == len(starts) else min(count, starts[index] - offset)
            found.append((from_source, base + offset - starts[index - 1], size))
            offset += size
            count -= size
        return found

    def views(self, offset: int, count: int) -> list[memoryview]:
        """``count`` framed bytes from ``offset`` (framed already), without a copy: views of the
        run's file and of the binlog file mapped in memory (only the kernel reads them: see the
        module docstring). The views of whole pieces are made once and kept: a dump asks for
        thousands of pieces (two per large event) with no per-piece work."""
        starts = self.piece_starts
        end = offset + count
        first = bisect_right(starts, offset) - 1
        last = bisect_right(starts, end - 1) - 1
        if first == last:
            from_source, base = self.pieces[first]
            return [self._view(from_source, base + offset - starts[first], count)]
        whole = self._whole_piece_views(last)
        from_source, base = self.pieces[last]
        return [
            whole[first][offset - starts[first] :],
            *whole[first + 1 : last],
            self._view(from_source, base, end - starts[last]),
        ]

    def whole(self, offset: int, count: int) -> bool:
        """Whether the binlog file still holds the large events of ``count`` framed bytes from
        ``offset`` (a user's file truncated while served does not: the dump reads it itself
        then, and reports what a primary reports)."""
        if self.source is None:
            return True
        starts = self.piece_starts
        end = offset + count
        first = bisect_right(starts, offset) - 1
        last = bisect_right(starts, end - 1) - 1
        # Pieces of the binlog file are in its order, each followed by one of the run's own:
        # the last of them in the range is one of its last two pieces.
        for index in range(last, max(first, last - 1) - 1, -1):
            from_source, base = self.pieces[index]
            if from_source:
                following = starts[index + 1] if index + 1 < len(starts) else end
                needed = base + min(end, following) - starts[index]
                return needed <= os.fstat(self.source).st_size
        return True

    def _whole_piece_views(self, before: int) -> list[memoryview]:
        """The views of the pieces before piece ``before`` (each ends where the next starts)."""
        made = self._piece_views
        if len(made) < before:
            with self._views_lock:
                starts = self.piece_starts
                pieces = self.pieces[len(made) : before]
                ends = [
                    base + starts[index + 1] - starts[index]
                    for index, (_, base) in enumerate(pieces, len(made))
                ]
                # Each file mapped once for them all (the furthest piece of each decides).
                maps = {
                    from_source: self._mapped(from_source, max(ends[i::2], default=0))
                    for i, (from_source, _) in enumerate(pieces[:2])
                }
                for (from_source, base), piece_end in zip(pieces, ends, strict=True):
                    view = maps[from_source][base:piece_end]
                    if len(view) < piece_end - base:
                        raise ConnectionResetError(
                            f"binlog file {self.name} was truncated while served"
                        )
                    made.append(view)
        return made

    def _view(self, from_source: bool, at: int, size: int) -> memoryview:
        view = self._mapped(from_source, at + size)[at : at + size]
        if len(view) < size:  # the binlog file shrank since whole() was asked
            raise ConnectionResetError(f"binlog file {self.name} was truncated while served")
        return view

    def descriptor(self, from_source: bool) -> int:
        """The descriptor of the binlog file (``from_source``) or of the run's file."""
        if from_source:
            assert self.source is not None
            return self.source
        return self.file.fileno()

    def _mapped(self, from_source: bool, end: int) -> memoryview:
        with self._map_lock:
            mapped = self._maps.get(from_source)
            if mapped is None or len(mapped) < end:
                fd = self.descriptor(from_source)
                mapped = mmap.mmap(fd, os.fstat(fd).st_size, access=mmap.ACCESS_READ)
                self._maps[from_source] = mapped
            return memoryview(mapped)

    def unmap(self) -> None:
        """Forget the mappings (each goes once no view of it is left)."""
        with self._views_lock:
            self._piece_views = []
        with self._map_lock:
            self._maps.clear()

    def close(self) -> None:
        self.unmap()
        self.file.close()
        if self.source is not None:
            os.close(self.source)
            self.source = None

    def key(self, point: Checkpoint) -> _Key:
        return (self.identity, self.name, self.send_annotate, point.offset, point.seq)


def _say_loops_are_in_python() -> None:
    """Once a process: the first dumps are slower than they would be, and the user can tell
    why."""
    global _SAID
    if not _SAID:
        _SAID = True
        logger.warning(
            "the package's C extensions (fakemaster.core.dump._framing_accel, "
            "fakemaster.config._facts_accel, fakemaster.server._send_accel) are not built: "
            "small events are framed in Python (a first dump about 3x slower), the start-up "
            "scan walks every event in Python and dump threads write with the GIL held; "
            "install the package where a C compiler and the Python headers are"
        )


_SAID = False


class FrameCache:
    """Runs of framed packets shared by the dumps of one store (see the module docstring)."""

    def __init__(
        self,
        store: BinlogStore,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_runs: int = DEFAULT_MAX_RUNS,
        extend_bytes: int = DEFAULT_EXTEND_BYTES,
        directory: str | os.PathLike[str] | None = None,
        thread_niceness: int = 0,
        pause: Callable[[], None] = lambda: None,
    ) -> None:
        from fakemaster.server import sender

        if not (ACCELERATED and sender.ACCELERATED):
            _say_loops_are_in_python()
        self.store = store
        # The framing threads' nice increment (fakemaster.server.sender.lower_thread_priority).
        self.thread_niceness = thread_niceness
        # Called between blocks framed (a worker thread): the event loop's gate
        # (fakemaster.server.loop_gate), so framing steps aside while the loop works.
        self.pause = pause
        self.max_bytes = max_bytes
        self.max_runs = max_runs
        self.extend_bytes = extend_bytes
        self.directory = directory
        self._lock = threading.Lock()
        # Every checkpoint of every run, and the runs, least recently used first.
        self._points: dict[_Key, tuple[FramedRun, Checkpoint]] = {}
        self._runs: OrderedDict[int, FramedRun] = OrderedDict()
        self._bytes = 0
        self._closed = False
        self._prefetcher: ThreadPoolExecutor | None = None

    @property
    def bytes_used(self) -> int:
        return self._bytes

    def acquire(self, span: FramedSpan) -> tuple[FramedRun, Checkpoint] | None:
        """The run and checkpoint where ``span`` starts (a new, empty run if none), counted as
        in use until :meth:`release`; None when the store cannot name the file or the cache
        is closed."""
        identity = self.store.file_identity(span.file_name)
        if identity is None:
            return None
        key = (identity, span.file_name, span.send_annotate, span.offset, span.seq)
        with self._lock:
            if self._closed:
                return None
            found = self._points.get(key)
            if found is None:
                self._drop_unused_beyond(self.max_runs - 1)
                start = Checkpoint(span.offset, 0, span.seq, 0, span.offset)
                file = tempfile.TemporaryFile(dir=self.directory)  # noqa: SIM115 - owned by run
                source = self.store.open_file(span.file_name)
                run = FramedRun(identity, span.file_name, span.send_annotate, start, file, source)
                self._points[key] = found = (run, start)
            run = found[0]
            run.users += 1
            self._runs[id(run)] = run
            self._runs.move_to_end(id(run))
            return found

    def prefetch(self, run: FramedRun, tip: Checkpoint) -> None:
        """Frame the part of ``run`` after ``tip`` in the background, if ``tip`` is still its
        end: a dump sending up to ``tip`` finds the next part ready."""
        if run.broken or run.tip is not tip:
            return
        with self._lock:
            if self._closed:
                return
            if self._prefetcher is None:
                from fakemaster.server.sender import lower_thread_priority

                self._prefetcher = ThreadPoolExecutor(
                    2,
                    thread_name_prefix="fakemaster-frame",
                    initializer=lower_thread_priority,
                    initargs=(self.thread_niceness,),
                )
            run.users += 1
            future = self._prefetcher.submit(self.extend, run, tip)

        def done(finished: Future[Checkpoint]) -> None:
            self.release(run)
            if finished.cancelled():  # the cache closed before it ran
                return
            error = finished.exception()
            if error is not None:  # the disk is full, say: the dumps frame for themselves
                logger.warning("framing %s ahead failed: %s", run.name, error)

        future.add_done_callback(done)

    def hold(self, run: FramedRun) -> None:
        """Count ``run`` as in use once more (until :meth:`release`)."""
        with self._lock:
            run.users += 1

    def release(self, run: FramedRun) -> None:
        with self._lock:
            run.users -= 1
            if self._closed and run.users == 0 and id(run) in self._runs:
                self._drop(run)

    def extend(self, run: FramedRun, after: Checkpoint) -> Checkpoint:
        """Frame more of the file if the run ends at ``after`` (runs in a worker thread: it
        reads the store and writes the run); the run's tip either way."""
        with run.lock:
            tip = run.tip
            if tip.offset > after.offset or run.broken:
                return tip
            try:
                readable = self.store.file_size(run.name)
            except UnknownBinlogFile:
                return tip
            end = min(readable, tip.offset + self.extend_bytes)
            if end <= tip.offset:
                return tip
            more = _framed_at_most(end - tip.offset)
            if not self._reserve(run, more):
                return tip
            framer = _Framer(self.store, run, tip, more, lambda extra: self._reserve(run, extra))
            point = tip
            try:
                try:
                    framer.frame_to(end, readable, self.pause)
                except (BinlogReadError, UnknownBinlogFile):
                    run.broken = True  # the dump frames from here itself and reports the error
                point = framer.checkpoint()
            finally:
                if point.offset == tip.offset:
                    framer.abandon()  # an error before any checkpoint (the disk full, say)
                # The reservation becomes what was written.
                with self._lock:
                    self._bytes += run.stored - framer.stored_before - framer.reserved
                    if point.offset != tip.offset:
                        run.checkpoints.append(point)
                        if id(run) in self._runs:
                            self._points[run.key(point)] = (run, point)
            return point if point.offset != tip.offset else tip

    def _reserve(self, run: FramedRun, more: int) -> bool:
        """Reserve ``more`` bytes for ``run`` (given back by the extension that asked: see
        :meth:`extend`), dropping unused runs, least recently used first; False when they cannot
        be made room for. Reserved at once, so concurrent extensions see each other's."""
        with self._lock:
            if not self._make_room(run, more):
                return False
            self._bytes += more
            return True

    def _drop_unused_beyond(self, count: int) -> None:
        """Drop unused runs, least recently used first, until at most ``count`` are left (each
        holds a descriptor or two: runs of large events take next to no disk, so the disk
        budget alone would let them pile up)."""
        for other in list(self._runs.values()):
            if len(self._runs) <= count:
                break
            if other.users == 0:
                self._drop(other)

    def _make_room(self, run: FramedRun, more: int) -> bool:
        """Drop unused runs other than ``run`` until ``more`` bytes fit (under the lock)."""
        for other in list(self._runs.values()):
            if self._bytes + more <= self.max_bytes:
                break
            if other.users == 0 and other is not run:
                self._drop(other)
        return self._bytes + more <= self.max_bytes

    def _drop(self, run: FramedRun) -> None:
        del self._runs[id(run)]
        for point in run.checkpoints:
            self._points.pop(run.key(point), None)
        self._bytes -= run.stored
        run.close()

    def close(self) -> None:
        """Drop every run; one still in use (a worker thread may be writing or sending it) is
        dropped when its last user releases it."""
        with self._lock:
            self._closed = True
            prefetcher, self._prefetcher = self._prefetcher, None
            for run in list(self._runs.values()):
                if run.users == 0:
                    self._drop(run)
        if prefetcher is not None:
            prefetcher.shutdown(wait=False, cancel_futures=True)


# The type code and the length of an event, read together (the server id between them).
_TYPE_AND_LENGTH = struct.Struct("<B4xI")
assert TYPE_CODE_OFFSET + _TYPE_AND_LENGTH.size == EVENT_LENGTH_OFFSET + 4


def _framed_at_most(binlog_bytes: int) -> int:
    """The most a run's file can take for ``binlog_bytes`` of events framed: each event (19
    bytes at least) gets 5 bytes of packet header and OK byte, and 4 more per 16 MiB split."""
    return (
        binlog_bytes
        + 5 * (binlog_bytes // HEADER_LEN + 1)
        + 4 * (binlog_bytes // MAX_PACKET_PAYLOAD + 1)
    )


class _Framer:
    """One extension of a run (under its lock): walks the binlog file from the tip, writes the
    run's own bytes and adds the pieces of large events sent from the file."""

    def __init__(
        self,
        store: BinlogStore,
        run: FramedRun,
        tip: Checkpoint,
        reserved: int,
        reserve: Callable[[int], bool],
    ) -> None:
        self.store = store
        self.run = run
        self.offset, self.framed, self.seq, self.events, self.last_event = tip
        self.stored_before = run.stored
        # Bytes of the cache's budget held for this extension: at least what it can write for
        # the bytes of the binlog file it walks (_framed_at_most), more asked with ``reserve``.
        self.reserved = reserved
        self._reserve = reserve
        self._start = tip.offset
        self._pieces_before = len(run.pieces)
        self._parts: list[bytes | bytearray | memoryview] = []
        self._pending = 0

    def abandon(self) -> None:
        """Forget the pieces this extension added: no checkpoint covers them, and the next
        extension walks from the same tip again. (Readers never look past a checkpoint.)"""
        run = self.run
        del run.pieces[self._pieces_before :]
        del run.piece_starts[self._pieces_before :]

    def checkpoint(self) -> Checkpoint:
        self._write()
        return Checkpoint(self.offset, self.framed, self.seq, self.events, self.last_event)

    def frame_to(self, end: int, readable: int, pause: Callable[[], None]) -> None:
        """Frame the whole events from the tip to ``end``, a binlog file offset, and past it to
        the end of an event that starts before it (as far as ``readable``, the file's readable
        end); BinlogReadError at bytes that are no event."""
        run = self.run
        while self.offset < end:
            pause()
            # The bytes as they are: the walk stops before an event that does not end in the
            # block, and (when the run has the binlog file) before a large event, sent from
            # the file: after one, a small read finds the next one's header.
            wanted = min(run.read_size, end - self.offset)
            # Below ``readable``, measured once for the extension; from the run's own
            # descriptor of the binlog file when it has one (a read per large event).
            source = self.run.source
            if source is None:
                block = self.store.read_range(self.run.name, self.offset, wanted)
                walked = self._add_block(block)
            else:
                block = os.pread(source, wanted, self.offset)
                walked = self._add_small(block)
                if self._add_large_at(block, walked, readable):
                    run.read_size = next_read_size(run.read_size, True, _PROBE, _READ_BLOCK)
                    continue
                # Small events to the end of the block: read more at once, up to a whole
                # block (what is read past a large event is read for nothing).
                grown = next_read_size(run.read_size, False, _PROBE, _READ_BLOCK)
                if walked == 0 and run.read_size < _READ_BLOCK and len(block) == wanted:
                    run.read_size = grown  # a small event longer than the read
                    continue
                run.read_size = grown
            if walked == 0:
                # An event larger than the block, or bytes that are no event: read() reads the
                # whole event, or raises the error the dump reports.
                block = self.store.read(
                    self.run.name, self.offset, min(_READ_BLOCK, end - self.offset)
                )
                if not block:
                    return  # the file ends here now
                # An event past ``end``: the budget must hold it too, or the dump frames it.
                needed = _framed_at_most(self.offset + len(block) - self._start)
                if needed > self.reserved:
                    if not self._reserve(needed - self.reserved):
                        return
                    self.reserved = needed
                if self._add_block(block) == 0:
                    raise BinlogReadError(
                        BinlogReadError.BOGUS, self.run.name, self.offset, self.offset + len(block)
                    )
            if self._pending >= _READ_BLOCK:
                self._write()

    def _add_block(self, block: bytes) -> int:
        """Frame the whole events at the start of ``block`` into the run's file (large ones
        copied); the bytes walked."""
        result = frame_block(block, self.seq, send_annotate=self.run.send_annotate)
        self._keep(result.parts, result.size)
        self._walked(result.walked, result.seq, result.events, result.last_event)
        return result.walked

    def _add_small(self, block: bytes) -> int:
        """Frame the small events at the start of ``block``; the bytes walked."""
        result = frame_small_run(block, 0, self.seq, send_annotate=self.run.send_annotate)
        if result.events:
            self._keep([result.packets], len(result.packets))
        self._walked(result.stopped_at, result.seq, result.events, result.last_event)
        return result.stopped_at

    def _add_large_at(self, block: bytes, index: int, end: int) -> bool:
        """Add the large event at ``index`` of ``block`` (the block's offset now the run's tip)
        as its header in the run and a piece of the binlog file, when its header is in the
        block, it ends below ``end`` and it is one packet (walked past unread when it is left
        out); True if it was."""
        if index + HEADER_LEN > len(block):
            return False
        type_code, length = _TYPE_AND_LENGTH.unpack_from(block, index + TYPE_CODE_OFFSET)
        offset = self.offset
        if length < LARGE_EVENT or length + 1 >= MAX_PACKET_PAYLOAD or offset + length > end:
            return False
        run = self.run
        seq = self.seq
        if is_left_out(type_code, send_annotate=run.send_annotate):
            self._walked(length, seq, 0, 0)
            return True
        head = large_event_head(length, seq)
        self._parts.append(head)
        self._pending += len(head)
        framed = self.framed + len(head)
        # Published before the checkpoint that covers it (readers look pieces up below tips);
        # the run's own bytes go on after the head, written or not yet.
        run.pieces += ((True, offset), (False, run.stored + self._pending))
        run.piece_starts += (framed, framed + length)
        self.framed = framed + length
        self._walked(length, (seq + 1) & 0xFF, 1, 0)
        return True

    def _walked(self, walked: int, seq: int, events: int, last_event: int) -> None:
        if last_event >= 0:
            self.last_event = self.offset + last_event
        self.offset += walked
        self.seq = seq
        self.events += events

    def _keep(self, parts: list[bytes | bytearray | memoryview], size: int) -> None:
        """Bytes for the run's file, written at the next :meth:`_write`."""
        self._parts.extend(parts)
        self._pending += size
        self.framed += size

    def _write(self) -> None:
        if self._parts:
            run = self.run
            run.stored += _pwritev_all(run.file.fileno(), self._parts, run.stored)
            self._parts = []
            self._pending = 0


class SpanWriter(Protocol):
    """What :func:`send_span` writes with (:class:`fakemaster.server.sender.SocketWriter`)."""

    def send_buffers(self, buffers: list[Any]) -> None: ...

    def send_file(self, file_fd: int, offset: int, count: int) -> None: ...


def send_span(cache: FrameCache, span: FramedSpan, writer: SpanWriter, *, local: bool) -> None:
    """Write what ``cache`` holds (or frames now) of ``span`` with ``writer``, and set
    span.reached; left None, the dump frames and sends those events itself. Runs in a
    sender thread.

    To a ``local`` replica (same host) the bytes go as views of the files mapped in memory, to a
    remote one with ``sendfile``. Measured on loopback, ``sendfile`` was the slowest (1.3x-1.5x
    MariaDB's time with 20 replicas: the receiver copies page-cache pages that are not in the
    CPU's cache), a copy through a small buffer better, and the mapped view, one copy into the
    socket, the fastest (about 1.0x); across a network ``sendfile`` saves that copy."""
    acquired = cache.acquire(span)
    if acquired is None:
        return
    run, start = acquired
    try:
        tip = run.tip
        if tip.offset <= start.offset:
            tip = cache.extend(run, start)
        if tip.framed <= start.framed:
            return
        count = tip.framed - start.framed
        if not run.whole(start.framed, count):
            logger.warning(
                "binlog file %s was truncated while served: dumps read it event by event",
                run.name,
            )
            return
        cache.prefetch(run, tip)  # the next part is framed while this one is sent
        if local:
            writer.send_buffers(run.views(start.framed, count))
        else:
            for from_source, at, size in run.segments(start.framed, count):
                writer.send_file(run.descriptor(from_source), at, size)
        span.reached = span_end(start, tip)
    finally:
        cache.release(run)


def span_end(start: Checkpoint, point: Checkpoint) -> SpanEnd:
    """What a dump that sent a run from ``start`` to ``point`` reached."""
    return SpanEnd(point.offset, point.seq, point.events - start.events, point.last_event)


# pwritev takes at most IOV_MAX (1024 on Linux) buffers at once.
_MAX_BUFFERS = 512


def _pwritev_all(fd: int, parts: list[bytes | bytearray | memoryview], offset: int) -> int:
    """Write ``parts`` one after another at ``offset``, gathered (a block of large events is
    a header and a view per event: one system call for many of them); the bytes written."""
    views = [memoryview(part).cast("B") for part in parts if len(part)]
    written = 0
    start = 0
    while start < len(views):
        batch = views[start : start + _MAX_BUFFERS]
        done = os.pwritev(fd, batch, offset + written)
        written += done
        # Past the buffers written whole; a buffer written in part is sliced to its rest.
        while start < len(views) and done >= len(views[start]):
            done -= len(views[start])
            start += 1
        if done:
            views[start] = views[start][done:]
    return written
