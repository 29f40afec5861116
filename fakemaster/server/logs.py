"""Diagnostics through :mod:`logging`, never blocking the event loop.

The library logs to the ``fakemaster`` logger and adds no handler of its own but a
``NullHandler`` (so Python's last-resort handler never writes to stderr from the loop).
:func:`log_to_stream_in_background` is what a program (the CLI) uses to show the records: the
loop only puts them on a bounded queue, a thread writes them, and when the stream stops taking
them (stderr an unread pipe) records are dropped instead of the server freezing.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import queue
import sys
import threading
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


class DroppingQueueHandler(logging.Handler):
    """Puts each record, formatted, on a queue and never waits: a record that finds the queue
    full is dropped (and counted). What :class:`logging.handlers.QueueHandler` does, without
    importing :mod:`logging.handlers` (and pickle) before ``serve`` listens (issue #7)."""

    def __init__(self, records: queue.Queue[Any]) -> None:
        super().__init__()
        self.queue = records
        self.dropped = 0

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        """A copy of the record with its message formatted and nothing left to format (no
        arguments, no exception object: the writer thread only writes the text)."""
        message = self.format(record)
        record = copy.copy(record)
        record.message = message
        record.msg = message
        record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return record

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.enqueue(self.prepare(record))
        except Exception:
            self.handleError(record)


class _Listener:
    """The thread that takes the records off the queue and hands them to ``writer``; None on
    the queue ends it (stop() puts it there, waiting for room: it runs once the server is gone,
    and the queue may be full)."""

    def __init__(self, records: queue.Queue[Any], writer: logging.Handler) -> None:
        self._records = records
        self._writer = writer
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="fakemaster-log", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            record = self._records.get()
            if record is None:
                return
            self._writer.handle(record)

    def stop(self) -> None:
        if self._thread is not None:
            self._records.put(None)
            self._thread.join()
            self._thread = None


class BackgroundLog:
    """The handler on the ``fakemaster`` logger and the thread writing its records."""

    def __init__(self, handler: DroppingQueueHandler, listener: _Listener):
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
