"""The loop gate: dump threads step aside while the event loop's thread has work.

Dump and framing threads and the event loop's thread share one GIL. A thread that wants it
waits up to ``sys.getswitchinterval()`` (5 ms) for each holder to drop it, so with twenty dump
threads busy a login (answered on the loop, which takes and drops the GIL at every system call)
waited behind many of them: 145-176 ms at most against MariaDB's 20-87 ms
(bench/README.md, issue #25). Lowering the dump threads' OS priority instead starved the
dumps on a loaded machine (15x MariaDB's time with 4 CPU hogs).

So the threads run level with the loop, and the loop is favoured only while it has work: the
gate is closed from the moment the loop's selector returns until the loop waits in it again
(:class:`GatedSelector`), and a dump thread calls :meth:`LoopGate.wait` between batches,
which returns at once while the gate is open and otherwise waits, without the GIL, until it
opens. A gate never stays closed to the dumps longer than ``bound`` seconds, even if the loop
never waits again (a long callback), so dumps never starve.

A loop made without :func:`new_gated_loop` (an application's own) has no gate:
:func:`gate_of` gives an always open one, and the dumps run as before.
"""

from __future__ import annotations

import asyncio
import selectors
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["DEFAULT_BOUND", "GatedSelector", "LoopGate", "gate_of", "new_gated_loop"]

# Long enough for a login's round of loop work (a handshake, an OK), short against a dump.
DEFAULT_BOUND = 0.02


class LoopGate:
    """Closed while the loop works (:meth:`close` / :meth:`open`, loop thread); :meth:`wait`
    (any other thread) returns once it is open or was closed ``bound`` seconds ago."""

    def __init__(
        self, bound: float = DEFAULT_BOUND, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.bound = bound
        self._clock = clock
        self._open = threading.Event()
        self._open.set()
        # When the gate stops holding the dumps back: bound seconds after it closed.
        self._deadline = 0.0

    @property
    def is_open(self) -> bool:
        return self._open.is_set()

    def close(self) -> None:
        if self._open.is_set():
            self._deadline = self._clock() + self.bound
            self._open.clear()

    def open(self) -> None:
        self._open.set()

    def wait(self) -> None:
        """Return when the gate is open, or at once if it closed ``bound`` seconds ago."""
        # The common case, one attribute read: a dump thread asks this once per batch.
        if self._open.is_set():
            return
        remaining = self._deadline - self._clock()
        if remaining > 0:
            self._open.wait(remaining)


class GatedSelector(selectors.BaseSelector):
    """A selector that opens ``gate`` while the loop waits in it and closes it when the
    loop wakes up (the loop then runs its callbacks)."""

    def __init__(self, gate: LoopGate, inner: selectors.BaseSelector | None = None) -> None:
        self.gate = gate
        self._inner = inner if inner is not None else selectors.DefaultSelector()

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.modify(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        # The gate opens only when the loop is about to sleep: a look without waiting first
        # (the loop polls with timeout 0 while callbacks are ready, and a login's work comes in
        # several rounds), so the dump threads are not woken between the rounds of one login.
        ready = self._inner.select(0)
        if ready or timeout is not None and timeout <= 0:
            self.gate.close()
            return ready
        self.gate.open()
        try:
            return self._inner.select(timeout)
        finally:
            self.gate.close()

    def close(self) -> None:
        self.gate.open()
        self._inner.close()

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._inner.get_map()


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopGate] = weakref.WeakKeyDictionary()
_ALWAYS_OPEN = LoopGate()


def new_gated_loop(bound: float = DEFAULT_BOUND) -> asyncio.AbstractEventLoop:
    """An event loop whose dump threads step aside while it works (see the module docstring);
    a loop factory for ``asyncio.Runner``."""
    gate = LoopGate(bound)
    loop = asyncio.SelectorEventLoop(GatedSelector(gate))
    _GATES[loop] = gate
    return loop


def gate_of(loop: asyncio.AbstractEventLoop | None) -> LoopGate:
    """The gate of a loop made by :func:`new_gated_loop`; for any other, one never closed."""
    return _ALWAYS_OPEN if loop is None else _GATES.get(loop, _ALWAYS_OPEN)
