"""Large client input read off the event loop: a statement of megabytes never stalls the others.

Every connection's small commands are read and answered on the event loop, which costs less
than a thread hop. A client whose unread input has grown past :data:`OFF_LOOP_INPUT` bytes (a
big ``SELECT ... IN (...)``, a 16 MiB statement: the work grows with the text) is read in a
worker thread instead, while the loop goes on serving logins, pings and dumps.

The GIL decides how often the loop gets to run while a worker parses: a thread that wants the
GIL waits up to ``sys.getswitchinterval()`` (5 ms by default) for the running thread to drop
it, and a round trip of another client needs it a few times (read, answer, write). While a
worker runs, the interval is lowered to :data:`SWITCH_INTERVAL`, and put back when the last
worker is done, so a round trip waits a millisecond or two, not tens of milliseconds.

The garbage collector is the other thing that stops every thread: a statement of a million
elements makes millions of objects (tokens, operands), and each full collection walks all of
them with the GIL held, up to seconds at a time (measured: 2.3 s for 200,000 ORs; the total
was more than the parsing). While a worker runs, automatic collection is off; what the
statement made is freed by reference counting when it is done.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["OFF_LOOP_INPUT", "SWITCH_INTERVAL", "StatementWorkers"]

# Unread client bytes from which the reading goes to a worker thread: far above any command a
# login, a replica or a tool's usual query sends, far below what takes a millisecond to parse.
OFF_LOOP_INPUT = 16 << 10
# The GIL switch interval while a worker runs (seconds).
SWITCH_INTERVAL = 0.0005
# Big statements of different clients are read at the same time, up to this many.
WORKERS = 4

ResultT = TypeVar("ResultT")


class StatementWorkers:
    """The worker threads big input is read in, and the GIL switch interval while they run."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._running = 0
        self._saved_interval = sys.getswitchinterval()
        self._collecting = gc.isenabled()
        # Calls made so far (tests check that big input went through a worker).
        self.calls = 0

    async def run(self, work: Callable[[], ResultT]) -> ResultT:
        """``work()`` in a worker thread, the loop free meanwhile."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._workers, thread_name_prefix="fakemaster-statement"
            )
        self.calls += 1
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._timed_slices, work)

    def _timed_slices(self, work: Callable[[], ResultT]) -> ResultT:
        """``work()`` with the switch interval lowered and automatic collection off, put back
        when the last worker is done."""
        with self._lock:
            if self._running == 0:
                self._saved_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self._saved_interval, SWITCH_INTERVAL))
                self._collecting = gc.isenabled()
                gc.disable()
            self._running += 1
        try:
            return work()
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    sys.setswitchinterval(self._saved_interval)
                    if self._collecting:
                        gc.enable()

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
