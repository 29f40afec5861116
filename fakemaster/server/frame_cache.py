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

Disk use is bounded by ``max_bytes``: the least recently used runs no dump is sending from are
dropped; when nothing can be dropped the cache frames nothing more and dumps frame for
themselves. Runs are files without a name (``tempfile.TemporaryFile``) in ``directory``.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, NamedTuple

from fakemaster.core.dump.framing import ACCELERATED, FramedSpan, SpanEnd, frame_block
from fakemaster.server.logs import logger
from fakemaster.store import BinlogReadError, BinlogStore, UnknownBinlogFile

__all__ = [
    "DEFAULT_EXTEND_BYTES",
    "DEFAULT_MAX_BYTES",
    "Checkpoint",
    "FrameCache",
    "FramedRun",
    "span_end",
]

DEFAULT_MAX_BYTES = 4 << 30
DEFAULT_EXTEND_BYTES = 8 << 20
_READ_BLOCK = 1 << 20


class Checkpoint(NamedTuple):
    """A point of a run: an event boundary of the binlog file and the framed bytes up to it."""

    offset: int  # binlog file offset
    framed: int  # bytes of the run before it
    seq: int  # sequence number of the packet there
    events: int  # events framed before it, from the run's start
    last_event: int  # file offset of the last event walked before it


_Key = tuple[Hashable, str, bool, int, int]


class FramedRun:
    """The framed events of one file from one offset and sequence number on."""

    def __init__(
        self, identity: Hashable, name: str, send_annotate: bool, start: Checkpoint, file: IO[bytes]
    ) -> None:
        self.identity = identity
        self.name = name
        self.send_annotate = send_annotate
        self.file = file
        self.checkpoints = [start]
        self.users = 0
        self.broken = False  # the file's bytes at the tip are not whole events
        self.lock = threading.Lock()  # one extender at a time
        # The run's file mapped in memory, shared by the dumps that send from it; mapped
        # again (larger) when the run has grown past it.
        self._map: mmap.mmap | None = None
        self._map_lock = threading.Lock()

    @property
    def tip(self) -> Checkpoint:
        return self.checkpoints[-1]

    def view(self, offset: int, count: int) -> memoryview:
        """``count`` framed bytes from ``offset`` (framed already), without a copy: a view of
        the file mapped in memory."""
        with self._map_lock:
            mapped = self._map
            if mapped is None or len(mapped) < offset + count:
                size = os.fstat(self.file.fileno()).st_size
                mapped = self._map = mmap.mmap(self.file.fileno(), size, access=mmap.ACCESS_READ)
            return memoryview(mapped)[offset : offset + count]

    def unmap(self) -> None:
        """Forget the mapping (it goes once no view of it is left)."""
        with self._map_lock:
            self._map = None

    def key(self, point: Checkpoint) -> _Key:
        return (self.identity, self.name, self.send_annotate, point.offset, point.seq)


def _say_framing_is_in_python() -> None:
    """Once a process: the first dumps are slower than they would be, and the user can tell
    why."""
    global _SAID
    if not _SAID:
        _SAID = True
        logger.warning(
            "the package's C extensions (fakemaster.core.dump._framing_accel, "
            "fakemaster.config._facts_accel) are not built: small events are framed in Python "
            "(a first dump about 3x slower) and the start-up scan walks every event in Python; "
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
        extend_bytes: int = DEFAULT_EXTEND_BYTES,
        directory: str | os.PathLike[str] | None = None,
        thread_niceness: int = 0,
        pause: Callable[[], None] = lambda: None,
    ) -> None:
        if not ACCELERATED:
            _say_framing_is_in_python()
        self.store = store
        # The framing threads' nice increment (fakemaster.server.sender.lower_thread_priority).
        self.thread_niceness = thread_niceness
        # Called between blocks framed (a worker thread): the event loop's gate
        # (fakemaster.server.loop_gate), so framing steps aside while the loop works.
        self.pause = pause
        self.max_bytes = max_bytes
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
                start = Checkpoint(span.offset, 0, span.seq, 0, span.offset)
                file = tempfile.TemporaryFile(dir=self.directory)  # noqa: SIM115 - owned by run
                run = FramedRun(identity, span.file_name, span.send_annotate, start, file)
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
                end = min(self.store.file_size(run.name), tip.offset + self.extend_bytes)
            except UnknownBinlogFile:
                return tip
            if end <= tip.offset or not self._reserve(run, end - tip.offset):
                return tip
            offset, framed, seq, events, last_event = tip
            fd = run.file.fileno()
            try:
                pause = self.pause
                while offset < end:
                    pause()
                    # The bytes as they are: frame_block walks the headers and stops before an
                    # event that does not end in the block. One that is larger than a block, or
                    # bytes that are no event, are read with read(): the whole event, or the
                    # error the dump reports.
                    block = self.store.read_bytes(run.name, offset, min(_READ_BLOCK, end - offset))
                    result = frame_block(block, seq, send_annotate=run.send_annotate)
                    if result.walked == 0:
                        block = self.store.read(run.name, offset, min(_READ_BLOCK, end - offset))
                        if not block:
                            break
                        result = frame_block(block, seq, send_annotate=run.send_annotate)
                        if result.walked == 0:
                            raise BinlogReadError(
                                BinlogReadError.BOGUS, run.name, offset, offset + len(block)
                            )
                    framed += _pwritev_all(fd, result.parts, framed)
                    seq = result.seq
                    events += result.events
                    last_event = offset + result.last_event
                    offset += result.walked
            except (BinlogReadError, UnknownBinlogFile):
                run.broken = True  # the dump frames from here itself and reports the error
            point = Checkpoint(offset, framed, seq, events, last_event)
            if offset == tip.offset:
                return tip
            with self._lock:
                self._bytes += framed - tip.framed
                run.checkpoints.append(point)
                if id(run) in self._runs:
                    self._points[run.key(point)] = (run, point)
            return point

    def _reserve(self, run: FramedRun, more: int) -> bool:
        """Make room for about ``more`` bytes: drop unused runs, least recently used first."""
        with self._lock:
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
        self._bytes -= run.tip.framed
        run.unmap()
        run.file.close()

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
