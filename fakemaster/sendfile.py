"""A file region sent to a client's socket from a worker thread, with ``os.sendfile``.

The asyncio transport sends from the event loop's thread, so every byte every replica gets
would be copied by one core. Spans of the frame cache (:mod:`fakemaster.framed_cache`) go out
from worker threads instead: ``os.sendfile`` releases the GIL, and the kernel copies for many
replicas at once on as many cores as there are.

The worker writes to its own duplicate of the socket's descriptor, so the transport may close
its own at any time without the worker ever writing to a reused descriptor number; the
transport writes nothing meanwhile (its buffer is empty when a span starts, and the dump is
the only writer of a streaming connection). The socket stays non-blocking (a duplicate shares
that flag): the worker waits for room with ``poll`` and looks at its stop flag at least every
``POLL_SECONDS``.
"""

from __future__ import annotations

import os
import select
import socket
import threading

__all__ = ["POLL_SECONDS", "SpanSender"]

POLL_SECONDS = 0.25
_BLOCK = 1 << 30


class SpanSender:
    """Sends bytes of the file ``file_fd`` to the socket ``socket_fd`` (both duplicated: the
    file may be dropped from the cache, the socket closed, while the worker still runs)."""

    def __init__(self, socket_fd: int, file_fd: int) -> None:
        self._sock = socket.socket(fileno=os.dup(socket_fd))
        self._file_fd = os.dup(file_fd)
        self._stop = threading.Event()
        self.sent = 0

    def send(self, offset: int, count: int) -> int:
        """Blocks until ``count`` bytes from ``offset`` are sent (runs in a worker thread);
        ConnectionResetError when the connection broke or :meth:`abort` was called. Closes the
        duplicates either way."""
        fd = self._sock.fileno()
        file_fd = self._file_fd
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        try:
            while self.sent < count:
                if self._stop.is_set():
                    raise ConnectionResetError("the connection is closing")
                try:
                    self.sent += os.sendfile(
                        fd, file_fd, offset + self.sent, min(count - self.sent, _BLOCK)
                    )
                except (BlockingIOError, InterruptedError):
                    poller.poll(POLL_SECONDS * 1000)
                except (BrokenPipeError, ConnectionError) as error:
                    raise ConnectionResetError(str(error)) from None
            return self.sent
        finally:
            self._sock.close()
            os.close(file_fd)

    def abort(self) -> None:
        """Stop sending: the connection is being torn down (KILL, shutdown)."""
        self._stop.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed by the worker, or the connection is gone
