"""The sender: an OS thread that writes a dump stream's packets to the replica's socket.

The asyncio transport sends from the event loop's thread, so every byte every replica gets
would be copied by one core, with a hop through the loop per chunk. A dump on a plain TCP
connection runs instead as a MariaDB dump thread does: a worker thread asks the sans-IO
connection (:class:`fakemaster.core.connection.ServerConnection`) for the dump's packets and writes
them itself, buffers with ``sendmsg`` (gathered, never joined: a large event is a view of what
was read) and frame-cache spans (:mod:`fakemaster.server.frame_cache`) as views of the cache file
mapped in memory, or with ``os.sendfile`` to a remote replica, until the dump has nothing more
to send now; then the event loop takes over again (heartbeats, waiting
for new events). Both calls release the GIL: replicas are served on as many cores as there are.

:class:`SocketWriter` writes to its own duplicate of the socket's descriptor, so the transport
may close its descriptor at any time without the worker ever writing to a reused number; the
transport writes nothing meanwhile (its buffer is empty when the worker starts, and the dump is
the only writer of a streaming connection). The socket stays non-blocking (a duplicate shares
that flag): the worker waits for room with ``poll`` and looks at its stop flag at least every
``POLL_SECONDS``.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import threading
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from fakemaster.core.dump.framing import FramedSpan

__all__ = ["ACCELERATED", "POLL_SECONDS", "SocketWriter", "lower_thread_priority", "pump_dump"]

POLL_SECONDS = 0.25
_POLL_MS = int(POLL_SECONDS * 1000)

_SendViews = Callable[[int, list[Any], int, int, int], int]
_send_views: _SendViews | None
try:
    # The write loop in C, without the GIL while it writes and waits (_send_accel.c).
    from fakemaster.server._send_accel import send_views as _send_views
except ImportError:  # not built: SocketWriter writes in Python (_send_some_in_python)
    _send_views = None
# Whether buffers are written by the C loop.
ACCELERATED = _send_views is not None
_SENDFILE_BLOCK = 1 << 30
# sendmsg takes at most IOV_MAX (1024 on Linux) buffers at once.
_MAX_BUFFERS = 512


def lower_thread_priority(niceness: int) -> None:
    """Run the calling thread ``niceness`` steps below the main thread's priority (Linux: a
    thread has its own nice value; elsewhere nothing changes).

    Bulk-transfer threads (dumps, framing) run below the event loop's thread, which answers
    logins, KILL and heartbeats: at the same priority the scheduler let a new client's
    handshake wait behind twenty dump threads (``bench/bench_serving.py``'s handshake probe:
    10-17 ms median, 57-127 ms at most with 20 dumps streaming; at +10: 2 ms and 34-46 ms,
    the dumps as fast). Only raising a nice value needs no privilege, so such a thread never
    gets its priority back: pools that call this serve nothing else."""
    if niceness <= 0 or not sys.platform.startswith("linux"):
        return
    thread = threading.get_native_id()
    try:
        # From the main thread's value: a thread started by a lowered one (a framing thread
        # started by a dump thread) inherited that value already.
        wanted = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + niceness)
        if os.getpriority(os.PRIO_PROCESS, thread) < wanted:
            os.setpriority(os.PRIO_PROCESS, thread, wanted)
    except OSError:
        pass  # a sandbox that forbids it: the thread keeps the loop's priority


class SocketWriter:
    """Blocking writes to a non-blocking socket, from a worker thread (see the module
    docstring). ConnectionResetError when the connection broke or :meth:`abort` was called."""

    def __init__(self, socket_fd: int) -> None:
        self._sock = socket.socket(fileno=os.dup(socket_fd))
        self._stop = threading.Event()
        self._poller = select.poll()
        self._poller.register(self._sock.fileno(), select.POLLOUT)

    def _wait(self) -> None:
        if self._stop.is_set():
            raise ConnectionResetError("the connection is closing")
        self._poller.poll(_POLL_MS)
        if self._stop.is_set():
            raise ConnectionResetError("the connection is closing")

    def send_buffers(self, buffers: list[Any]) -> None:
        """Write every buffer (bytes, or views of bytes), in order. Where a call stopped is
        found by bisecting the buffers' running ends: a run of thousands of views (a frame
        cache's large events) costs no Python per buffer."""
        ends = list(accumulate(map(len, buffers)))
        total = ends[-1] if ends else 0
        send_some = self._send_some_in_python if _send_views is None else self._send_some_in_c
        done = 0  # bytes written
        first = 0  # the first buffer not written whole
        while done < total:
            if self._stop.is_set():
                raise ConnectionResetError("the connection is closing")
            skip = done - (ends[first - 1] if first else 0)
            try:
                done += send_some(buffers, first, skip)
            except OSError as error:
                raise ConnectionResetError(str(error)) from None
            first = bisect_right(ends, done)

    def _send_some_in_c(self, buffers: list[Any], first: int, skip: int) -> int:
        """buffers[first:] from byte ``skip`` of the first, all of them, or fewer after
        POLL_SECONDS without room; the bytes written (the GIL released meanwhile)."""
        assert _send_views is not None
        return _send_views(self._sock.fileno(), buffers, first, skip, _POLL_MS)

    def _send_some_in_python(self, buffers: list[Any], first: int, skip: int) -> int:
        """One sendmsg of buffers[first:] from byte ``skip`` of the first (at most
        _MAX_BUFFERS of them); 0 after a wait for room."""
        batch = buffers[first : first + _MAX_BUFFERS]
        if skip:
            batch[0] = memoryview(batch[0])[skip:]
        try:
            return self._sock.sendmsg(batch)
        except (BlockingIOError, InterruptedError):
            self._wait()
            return 0

    def send_file(self, file_fd: int, offset: int, count: int) -> None:
        """Write ``count`` bytes of the file from ``offset`` with ``sendfile``."""
        fd = self._sock.fileno()
        sent = 0
        while sent < count:
            if self._stop.is_set():
                raise ConnectionResetError("the connection is closing")
            try:
                done = os.sendfile(fd, file_fd, offset + sent, min(count - sent, _SENDFILE_BLOCK))
            except (BlockingIOError, InterruptedError):
                self._wait()
                continue
            except OSError as error:
                raise ConnectionResetError(str(error)) from None
            if done == 0:  # the file ends before: truncated since its size was known
                raise ConnectionResetError(f"the file ends before offset {offset + count}")
            sent += done

    def abort(self) -> None:
        """Stop writing: the connection is being torn down (KILL, shutdown)."""
        self._stop.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # closed by the worker already, or the connection is gone

    def close(self) -> None:
        self._sock.close()


def pump_dump(
    next_parts: Callable[[], list[Any]],
    writer: SocketWriter,
    send_span: Callable[[FramedSpan, SocketWriter], None],
    may_send: Callable[[], bool],
    go_on: Callable[[], bool] = lambda: True,
    pause: Callable[[], None] = lambda: None,
) -> bool:
    """Write the dump's packets until it has nothing to send now (in a worker thread); True if
    anything was written. ``send_span`` writes a frame-cache span and sets its ``reached``.
    ``may_send`` is asked before each batch is written: False (the replica hung up) ends the
    dump there with ConnectionResetError, as a dump thread's next write to a closed socket
    fails. ``go_on`` is asked before each batch is read: False returns (the dump is to end
    with an error the shell sends), never in the middle of a packet. ``pause`` is called
    before each batch is read: it waits while the event loop's thread has work
    (:mod:`fakemaster.server.loop_gate`)."""
    wrote = False
    while go_on():
        pause()
        parts = next_parts()
        if not parts:
            return wrote
        if not may_send():
            raise ConnectionResetError("the replica hung up")
        buffers: list[Any] = []
        for part in parts:
            if isinstance(part, FramedSpan):
                writer.send_buffers(buffers)
                buffers = []
                send_span(part, writer)
            else:
                buffers.append(part)
        writer.send_buffers(buffers)
        wrote = True
        del parts, buffers  # nothing sent is held while the next batch is read
    return wrote
