"""Diagnostics through :mod:`logging`, never blocking the event loop.

The library logs to the ``fakemaster`` logger and adds no handler of its own but a
``NullHandler`` (so Python's last-resort handler never writes to stderr from the loop).
:func:`log_to_stream_in_background` is what a program (the CLI) uses to show the records: the
loop only puts them on a bounded queue, a thread writes them, and when the stream stops taking
them (stderr an unread pipe) records are dropped instead of the server freezing.
"""

from __future__ import annotations

import asyncio
import logging
import logging.handlers
import queue
import sys
from typing import Any, TextIO

__all__ = [
    "LOGGER_NAME",
    "BackgroundLog",
    "DroppingQueueHandler",
    "log_loop_exception",
    "log_to_stream_in_background",
    "logger",
]

LOGGER_NAME = "fakemaster"
logger = logging.getLogger(LOGGER_NAME)
logger.addHandler(logging.NullHandler())

# Records waiting for the writer thread; beyond this they are dropped (and counted).
DEFAULT_QUEUE_SIZE = 10_000


class DroppingQueueHandler(logging.handlers.QueueHandler):
    """A QueueHandler that never waits: a record that finds the queue full is dropped."""

    def __init__(self, records: queue.Queue[Any]) -> None:
        super().__init__(records)
        self.dropped = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


class _Listener(logging.handlers.QueueListener):
    def __init__(self, records: queue.Queue[Any], writer: logging.Handler) -> None:
        super().__init__(records, writer, respect_handler_level=False)
        self._records = records

    def enqueue_sentinel(self) -> None:
        # Waits for room (stop() runs once the server is gone, and the queue may be full).
        # None is QueueListener's end marker.
        self._records.put(None)


class BackgroundLog:
    """The handler on the ``fakemaster`` logger and the thread writing its records."""

    def __init__(self, handler: DroppingQueueHandler, listener: logging.handlers.QueueListener):
        self.handler = handler
        self._listener = listener

    @property
    def dropped(self) -> int:
        return self.handler.dropped

    def stop(self) -> None:
        """Detach the handler and let the thread write what is queued, then end it (this
        waits for the stream: call it when the server no longer runs)."""
        logger.removeHandler(self.handler)
        self._listener.stop()


def log_to_stream_in_background(
    stream: TextIO | None = None,
    *,
    level: int = logging.INFO,
    queue_size: int = DEFAULT_QUEUE_SIZE,
    fmt: str = "%(message)s",
) -> BackgroundLog:
    """Show the ``fakemaster`` logger's records on ``stream`` (stderr) from a thread."""
    records: queue.Queue[Any] = queue.Queue(queue_size)
    writer = logging.StreamHandler(stream if stream is not None else sys.stderr)
    writer.setFormatter(logging.Formatter(fmt))
    handler = DroppingQueueHandler(records)
    listener = _Listener(records, writer)
    listener.start()
    logger.addHandler(handler)
    logger.setLevel(level)
    return BackgroundLog(handler, listener)


def log_loop_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """An event loop exception handler: what asyncio would print goes to the logger."""
    error = context.get("exception")
    message = context.get("message", "unhandled exception in the event loop")
    logger.error("%s", message, exc_info=error if isinstance(error, BaseException) else None)
