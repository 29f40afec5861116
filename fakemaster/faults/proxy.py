"""A TCP proxy that applies a fault plan to the server->client bytes of each connection.

:class:`FaultProxy` listens on 127.0.0.1 (port 0: the system picks one), and for each client
opens a connection to the upstream server (the fake master or a real MariaDB), forwards the
client's bytes (unchanged, but for semi-sync ACKs a ``drop_acks`` fault drops) and runs the server's bytes through a
:class:`~fakemaster.faults.engine.FaultEngine`: it writes what the engine says, when it says,
and closes the client's connection with FIN (orderly) or RST (SO_LINGER 0) when a fault cuts
it. The upstream connection is closed with it. Dump sessions are counted over all connections
(a fault's ``session``): a replica that reconnects after a cut starts session 1.

A hold (a ``stall`` fault without a ``duration``) keeps the connection's stream at its point
until :meth:`FaultProxy.release` (or :meth:`BackgroundFaultProxy.release`): meanwhile the
proxy reads nothing more from the server, whose writes then block once the sockets' buffers
(the kernel's, at most ``net.ipv4.tcp_rmem`` and ``tcp_wmem``'s maxima) are full.

Use it as an async context manager::

    async with FaultProxy((host, port), plan) as proxy:
        ... connect to proxy.host, proxy.port ...

or from synchronous code in its own thread, like BackgroundFakeMaster::

    with BackgroundFaultProxy((host, port), plan) as proxy: ...
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any

from fakemaster.faults.engine import FaultEngine, Output
from fakemaster.faults.plan import CloseMode, Fault, FaultPlan
from fakemaster.server.loop_thread import LoopThread

__all__ = ["BackgroundFaultProxy", "FaultProxy"]

_READ_SIZE = 1 << 16
_QUEUE_ITEMS = 256  # outputs waiting to be written: the upstream is read no further ahead
_UPSTREAM_ENDED = None


class FaultProxy:
    """An asyncio proxy in front of ``upstream`` (host, port), applying ``plan``."""

    def __init__(
        self,
        upstream: tuple[str, int],
        plan: FaultPlan | Sequence[Fault] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.upstream = upstream
        self.plan = plan if isinstance(plan, FaultPlan) else FaultPlan(tuple(plan))
        self._listen = (host, port)
        self._clock = clock
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sessions = 0
        self.engines: list[FaultEngine] = []  # one per connection, in accept order
        self._released: dict[int, asyncio.Event] = {}  # by id(engine): a hold's release
        self.errors: list[BaseException] = []  # unexpected errors of connection handlers
        self.pieces = 0  # writes to clients so far (a re-sliced stream: one per piece)

    @property
    def host(self) -> str:
        return self._address()[0]

    @property
    def port(self) -> int:
        return self._address()[1]

    def _address(self) -> tuple[str, int]:
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the proxy is not listening")
        address = self._server.sockets[0].getsockname()
        return str(address[0]), int(address[1])

    @property
    def sessions(self) -> int:
        """How many dump sessions went through the proxy so far."""
        return self._sessions

    def set_plan(self, plan: FaultPlan | Sequence[Fault]) -> None:
        """The plan for connections accepted from now on (session numbers keep counting)."""
        self.plan = plan if isinstance(plan, FaultPlan) else FaultPlan(tuple(plan))

    def release(self) -> int:
        """End the holds in force (``stall`` faults without a ``duration``): their
        connections write what was kept and read the server again. Call it in the proxy's
        loop (BackgroundFaultProxy.release does). The number of holds ended."""
        ended = 0
        for engine in self.engines:
            event = self._released.get(id(engine))
            if event is not None and engine.holding and not engine.closed:
                event.set()
                ended += 1
        return ended

    def _next_session(self) -> int:
        session = self._sessions
        self._sessions += 1
        return session

    async def start(self) -> FaultProxy:
        host, port = self._listen
        self._server = await asyncio.start_server(self._handle, host, port)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- one connection -------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        _no_delay(writer)
        engine = FaultEngine(self.plan, clock=self._clock, next_session=self._next_session)
        self.engines.append(engine)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            _abort(writer)
            if task is not None:
                self._tasks.discard(task)
            return
        _no_delay(up_writer)
        queue: asyncio.Queue[Output | None] = asyncio.Queue(_QUEUE_ITEMS)
        released = self._released[id(engine)] = asyncio.Event()
        parts = [
            asyncio.create_task(self._client_to_server(engine, reader, up_writer)),
            asyncio.create_task(self._server_to_engine(engine, up_reader, queue, released)),
        ]
        try:
            await self._engine_to_client(queue, writer)
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            pass  # the proxy stops: the connection ends here (asyncio would log a cancel)
        except Exception as error:  # pragma: no cover - reported through self.errors
            self.errors.append(error)
        finally:
            for part in parts:
                part.cancel()
            await asyncio.gather(*parts, return_exceptions=True)
            if not writer.transport.is_closing():
                writer.close()
            _abort(up_writer)
            self._released.pop(id(engine), None)
            if task is not None:
                self._tasks.discard(task)

    async def _client_to_server(
        self, engine: FaultEngine, reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter
    ) -> None:
        try:
            while data := await reader.read(_READ_SIZE):
                forward = engine.from_client(data)
                if forward:
                    up_writer.write(forward)
                    await up_writer.drain()
            if up_writer.can_write_eof():
                up_writer.write_eof()
        except (ConnectionError, OSError):
            pass

    async def _server_to_engine(
        self,
        engine: FaultEngine,
        up_reader: asyncio.StreamReader,
        queue: asyncio.Queue[Output | None],
        released: asyncio.Event,
    ) -> None:
        try:
            while not engine.closed:
                if engine.holding:
                    # Nothing more is read from the server until the hold is released.
                    await released.wait()
                    released.clear()
                    for output in engine.release():
                        await queue.put(output)
                    continue
                deadline = engine.next_deadline()
                if deadline is None:
                    data = await up_reader.read(_READ_SIZE)
                else:
                    try:
                        data = await asyncio.wait_for(
                            up_reader.read(_READ_SIZE), max(0.0, deadline - self._clock())
                        )
                    except TimeoutError:
                        for output in engine.poll():
                            await queue.put(output)
                        continue
                if not data:
                    break
                for output in engine.from_server(data):
                    await queue.put(output)
        except (ConnectionError, OSError):
            pass
        finally:
            if not engine.closed:
                await queue.put(_UPSTREAM_ENDED)

    async def _engine_to_client(
        self, queue: asyncio.Queue[Output | None], writer: asyncio.StreamWriter
    ) -> None:
        while True:
            output = await queue.get()
            if output is _UPSTREAM_ENDED:
                # The server closed: so does the client's connection (after what was queued).
                await writer.drain()
                writer.close()
                return
            wait = output.at - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
            if output.data:
                self.pieces += 1
                writer.write(output.data)
                await writer.drain()
            if output.close is CloseMode.RST:
                _abort(writer)
                return
            if output.close is CloseMode.FIN:
                writer.close()
                with contextlib.suppress(ConnectionError, OSError):
                    await writer.wait_closed()
                return


def _no_delay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with RST: SO_LINGER on with a zero timeout, then close."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class BackgroundFaultProxy(LoopThread[FaultProxy]):
    """A :class:`FaultProxy` running in its own thread and event loop, for synchronous code."""

    def __init__(
        self,
        upstream: tuple[str, int],
        plan: FaultPlan | Sequence[Fault] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(lambda: FaultProxy(upstream, plan, **kwargs), "fault proxy")

    @property
    def proxy(self) -> FaultProxy | None:
        return self.service

    @property
    def sessions(self) -> int:
        return int(self.call(lambda: self._running.sessions))

    @property
    def engines(self) -> list[FaultEngine]:
        return list(self.call(lambda: list(self._running.engines)))

    @property
    def errors(self) -> list[BaseException]:
        return list(self._running.errors)

    def set_plan(self, plan: FaultPlan | Sequence[Fault]) -> None:
        self.call(lambda: self._running.set_plan(plan))

    def release(self) -> int:
        """See :meth:`FaultProxy.release` (run in the proxy's thread)."""
        return int(self.call(self._running.release))
