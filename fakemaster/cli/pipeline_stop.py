"""How ``pipeline stream`` runs its query to the end: SIGINT/SIGTERM stop it after the batch
being applied (never inside one), with one line saying where it stopped and how to resume; an
error ends it with one line, never a Py4J or Java stack trace.

The handler only sets a flag: the main thread waits for the batch in hand to be applied, then
stops the query from the Python side (Spark's log level turned off first: stopping a query
interrupts its thread, which Spark logs as errors). A batch that Spark plans after the signal
is refused before anything is written (:meth:`StreamStop.enter`), so it is read again on
resume; the materialiser's batch ids make any replay idempotent.
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["STOPPED", "StreamStop", "error_line", "stopped_line"]

STOPPED = 0
"""The exit status of a stream stopped by SIGINT or SIGTERM (after a whole batch)."""

_POLL = 0.5  # seconds between the main thread's looks at the query and the flag

_SOURCE_ERROR = re.compile(r"StreamSourceError: (.+)")


class _Stopping(Exception):
    """A batch planned after the signal: not applied (read again on resume)."""


class StreamStop:
    """The flag the signal handlers set and the batches check."""

    def __init__(self, quiet: Callable[[], None] | None = None) -> None:
        """``quiet``: turns Spark's logging off (called before a batch is refused or the
        query stopped: Spark logs either as an error with its stack)."""
        self.quiet = quiet
        self.requested: str | None = None
        self._idle = threading.Condition()
        self._busy = False

    def request(self, signum: int, _frame: FrameType | None) -> None:
        self.requested = signal.Signals(signum).name

    @contextmanager
    def handlers(self) -> Iterator[None]:
        """SIGINT and SIGTERM set the flag while the query runs (restored afterwards); only
        the main thread can take signals, so elsewhere nothing changes."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.request) for sig in signals}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Around one batch's application: refused once a stop was asked."""
        with self._idle:
            if self.requested is not None:
                if self.quiet is not None:
                    self.quiet()
                raise _Stopping(f"stopping on {self.requested}")
            self._busy = True
        try:
            yield
        finally:
            with self._idle:
                self._busy = False
                self._idle.notify_all()

    def run(self, query: Any) -> bool:
        """Wait for the query; True when it ended on a stop request (after a whole batch)."""
        with self.handlers():
            while query.isActive and self.requested is None:
                try:
                    query.awaitTermination(_POLL)
                except Exception:  # the query failed: the caller reads query.exception()
                    break
            if self.requested is None:
                return False
            with self._idle:
                while self._busy:
                    self._idle.wait()
                if self.quiet is not None:
                    self.quiet()
                query.stop()
        return True


def stopped_line(query: Any, position_path: str, signal_name: str, resume: str) -> str:
    """Where the stream stopped and how to resume: the source's offset after the last batch
    (the query's last progress), else the materialised position (before any batch of this
    run)."""
    where = _last_offset(query)
    if where is None:
        try:
            with open(position_path.removeprefix("file://"), encoding="utf-8") as handle:
                position = json.load(handle)
            gtid = position["gtid_binlog_pos"] or "-"
            where = f"{position['file']}:{position['pos']} gtid {gtid}"
        except (OSError, ValueError, KeyError):
            where = "before its first batch"
    return f"[pipeline] stopped on {signal_name} at {where}; resume with: {resume}"


def _last_offset(query: Any) -> str | None:
    try:
        progress = query.lastProgress
        offset: Any = progress["sources"][0]["endOffset"] if progress else None
        if offset is None:
            return None
        if isinstance(offset, str):
            offset = json.loads(offset)
        return f"{offset['file']}:{offset['pos']} gtid {offset['gtid'] or '-'}"
    except (LookupError, TypeError, ValueError):
        return None


def error_line(failure: Any) -> str:
    """A query's failure in one line: the source's own error when it is one, else the first
    line of Spark's message."""
    text = str(getattr(failure, "desc", None) or failure)
    found = _SOURCE_ERROR.search(text)
    if found is not None:
        return f"error: {found.group(1).strip()}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), text)
    return f"error: {first}"
