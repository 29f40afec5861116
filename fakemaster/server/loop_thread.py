"""An asyncio service run in a thread of its own, for synchronous code.

:class:`LoopThread` starts a new event loop in a daemon thread, builds the service there (an
object with ``start()`` and ``stop()`` coroutines: the fake master, the fault proxy), and stops
it on :meth:`LoopThread.stop` or at the end of a ``with`` block; :meth:`LoopThread.call` runs a
function in the service's thread, where the service's state may be read and changed safely.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["AsyncService", "LoopThread"]


class AsyncService(Protocol):
    """A server started and stopped in an event loop, listening on ``host``:``port``."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    def start(self) -> Awaitable[Any]: ...

    def stop(self) -> Awaitable[Any]: ...


ServiceT = TypeVar("ServiceT", bound=AsyncService)
LoopThreadT = TypeVar("LoopThreadT", bound="LoopThread[Any]")


class LoopThread(Generic[ServiceT]):
    """``make()`` run in a thread and event loop of its own (see the module docstring)."""

    def __init__(self, make: Callable[[], ServiceT], name: str) -> None:
        self._make = make
        self._name = name
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self.service: ServiceT | None = None

    def start(self: LoopThreadT) -> LoopThreadT:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise self._startup_error
        return self

    def _run(self) -> None:
        from fakemaster.server.loop_gate import new_gated_loop

        loop = new_gated_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self.service = service = self._make()
            loop.run_until_complete(service.start())
        except BaseException as error:  # handed to the thread that called start()
            self._startup_error = error
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(service.stop())
            loop.close()

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None

    def call(self, function: Callable[[], Any]) -> Any:
        """Run ``function`` in the service's thread and return its result (or raise its
        exception)."""
        loop = self._loop
        if loop is None:
            raise RuntimeError(f"the {self._name} thread is not running")
        done = threading.Event()
        box: list[Any] = []

        def run() -> None:
            try:
                box.append((True, function()))
            except BaseException as error:  # handed back to the caller
                box.append((False, error))
            done.set()

        loop.call_soon_threadsafe(run)
        done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    @property
    def _running(self) -> ServiceT:
        if self.service is None:
            raise RuntimeError(f"the {self._name} thread is not running")
        return self.service

    @property
    def host(self) -> str:
        return self._running.host

    @property
    def port(self) -> int:
        return self._running.port

    def __enter__(self: LoopThreadT) -> LoopThreadT:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
