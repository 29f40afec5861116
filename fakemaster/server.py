"""The asyncio shell of the fake master: the listening server and its connections.

Everything protocol-related happens in the sans-IO session and dump stream; the shell only
moves bytes, waits, and keeps connections independent of each other: each has its own task
(:class:`~fakemaster.socket_connection.SocketConnection`), a slow replica holds back only its
own dump, and an exception in one connection is recorded in :attr:`FakeMaster.errors` and ends
only that connection. This module holds what connections share: the listening socket, the
registry of connections (KILL, a dump replaced by one with the same server id), binlog change
notifications, the frame cache and the dump threads.

Use :class:`FakeMaster` from async code (``async with FakeMaster(config, store) as master``) or
:class:`BackgroundFakeMaster` from synchronous code (it runs the server in a thread).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from fakemaster.config import ServerConfig
from fakemaster.connection import ServerConnection
from fakemaster.dump_framing import FramedSpan
from fakemaster.logs import log_loop_exception, logger
from fakemaster.loop_thread import LoopThread
from fakemaster.protocol.resultset import SqlError
from fakemaster.protocol.state import BinlogCatalog, ServerState
from fakemaster.session import DumpRequest, ServerSession
from fakemaster.socket_connection import READ_SIZE, DumpStreamLike, SocketConnection

DumpFactory = Callable[[DumpRequest], DumpStreamLike]

__all__ = ["BackgroundFakeMaster", "DumpFactory", "DumpStreamLike", "FakeMaster"]

# How long a dump replaced by a newer one (same server id) may take to get its ERR out.
END_DUMP_WAIT = 5.0


class FakeMaster:
    """An asyncio server that MariaDB replicas and replication clients take for a primary."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        store: Any = None,
        *,
        dump_factory: DumpFactory | None = None,
        catalog: BinlogCatalog | None = None,
    ) -> None:
        self.config = config or ServerConfig()
        self.store = store
        self._dump_factory = dump_factory
        if catalog is None and store is not None and hasattr(store, "binary_logs"):
            catalog = store
        self.state = ServerState(self.config, catalog)
        # Exceptions raised inside connection handlers (the server keeps running).
        self.errors: list[BaseException] = []
        self._server: asyncio.Server | None = None
        self._connections: dict[int, SocketConnection] = {}
        self._handlers: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._frame_cache: Any = None
        self._sender_pool: ThreadPoolExecutor | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self.config.host

    @property
    def port(self) -> int:
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the fake master is not running")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def sender_pool(self) -> ThreadPoolExecutor:
        """The threads that send frame-cache spans: one per replica sending one (a replica
        that stopped reading keeps its thread waiting), as many as connections may be."""
        if self._sender_pool is None:
            connections = int(self.state.globals["max_connections"] or 0)
            self._sender_pool = ThreadPoolExecutor(
                max_workers=max(8, connections + 2), thread_name_prefix="fakemaster-sendfile"
            )
        return self._sender_pool

    def send_span(self, span: FramedSpan, writer: Any, *, local: bool = True) -> None:
        """Write what the frame cache holds (or frames now) of ``span`` with ``writer`` (a
        dump thread's :class:`~fakemaster.dump_thread.SocketWriter`); sets span.reached. Runs
        in the dump thread.

        To a ``local`` replica (same host) the bytes go as a view of the cache file mapped in
        memory, to a remote one with ``sendfile``. Measured on loopback, ``sendfile`` was the
        slowest (1.3x-1.5x MariaDB's time with 20 replicas: the receiver copies page-cache
        pages that are not in the CPU's cache), a copy through a small buffer better, and the
        mapped view, one copy into the socket, the fastest (about 1.0x); across a network
        ``sendfile`` saves that copy."""
        from fakemaster.framed_cache import span_end

        cache = self.frame_cache
        acquired = cache.acquire(span) if cache is not None else None
        if acquired is None:
            return
        run, start = acquired
        try:
            tip = run.tip
            if tip.offset <= start.offset:
                tip = cache.extend(run, start)
            if tip.framed <= start.framed:
                return
            cache.prefetch(run, tip)  # the next part is framed while this one is sent
            count = tip.framed - start.framed
            if local:
                writer.send_buffers([run.view(start.framed, count)])
            else:
                writer.send_file(run.file.fileno(), start.framed, count)
            span.reached = span_end(start, tip)
        finally:
            cache.release(run)

    @property
    def frame_cache(self) -> Any:
        """The :class:`~fakemaster.framed_cache.FrameCache` of the served store (made at the
        first dump), or None when turned off or the store cannot name its files."""
        if self._frame_cache is None and self.config.frame_cache_bytes > 0:
            identity = getattr(self.store, "file_identity", None)
            if callable(identity):
                from fakemaster.framed_cache import FrameCache

                self._frame_cache = FrameCache(
                    self.store,
                    max_bytes=self.config.frame_cache_bytes,
                    directory=self.config.frame_cache_dir,
                )
        return self._frame_cache

    async def start(self) -> FakeMaster:
        if self._server is not None:
            return self
        self._loop = asyncio.get_running_loop()
        if self._loop.get_exception_handler() is None:
            # asyncio's own handler writes to stderr from the loop: a full pipe would freeze it.
            self._loop.set_exception_handler(log_loop_exception)
        # Before listening: a configuration contradicting the served binlog stops here.
        self.state.check_served()
        self.state.on_config_error = self.record_error
        self._server = await asyncio.start_server(
            self._accept, self.config.host, self.config.port, limit=READ_SIZE
        )
        self.state.set_port(self.port)
        subscribe = getattr(self.store, "subscribe", None)
        if callable(subscribe):
            unsubscribe = subscribe(self.notify_binlog_changed)
            self._unsubscribe = unsubscribe if callable(unsubscribe) else None
        # A store changed by another process (a directory a primary writes) is watched from
        # a thread of the shell's: the store itself starts none.
        start_watching = getattr(self.store, "start_watching", None)
        if callable(start_watching):
            start_watching()
        return self

    async def stop(self) -> None:
        server = self._server
        if server is None:
            return
        self._server = None
        server.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for connection in list(self._connections.values()):
            connection.abort()
            await connection.close()
        handlers = list(self._handlers)
        if handlers:
            await asyncio.wait(handlers, timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)
        if self._sender_pool is not None:
            self._sender_pool.shutdown(wait=False)
            self._sender_pool = None
        if self._frame_cache is not None:
            self._frame_cache.close()
            self._frame_cache = None

    async def __aenter__(self) -> FakeMaster:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def serve_forever(self) -> None:
        await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    # -- binlog changes --------------------------------------------------------------------

    def notify_binlog_changed(self, *_args: object) -> None:
        """Wake every dump waiting for new events; safe to call from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._wake_dumps()
        else:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake_dumps)

    def _wake_dumps(self) -> None:
        for connection in self._connections.values():
            if connection.dump is not None:
                connection.wakeup.set()

    # -- connections -----------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            writer.transport.set_write_buffer_limits(high=self.config.write_buffer_high_water)
            peer = writer.get_extra_info("peername")
            host = str(peer[0]) if isinstance(peer, tuple) and peer else "localhost"
            session = ServerSession(self.state, peer_host=host)
            protocol = ServerConnection(session, self._make_dump)
            connection = SocketConnection(self, protocol, reader, writer)
            self._connections[session.thread_id] = connection
            await connection.run()
        except Exception as error:
            self.record_error(error)
            with contextlib.suppress(Exception):
                writer.transport.abort()
        finally:
            self._handlers.discard(task)

    def record_error(self, error: BaseException) -> None:
        """Keep an exception raised while serving (the server goes on) and log it."""
        self.errors.append(error)
        logger.error("internal error in a connection:", exc_info=error)

    def _collect(self, session: ServerSession) -> None:
        for error in session.internal_errors:
            self.record_error(error)
        session.internal_errors.clear()

    def _forget(self, connection: SocketConnection) -> None:
        if self._connections.get(connection.thread_id) is connection:
            del self._connections[connection.thread_id]

    async def _kill(self, thread_id: int, query_only: bool) -> None:
        connection = self._connections.get(thread_id)
        if connection is None:
            return
        if query_only and connection.dump is None:
            return  # nothing runs on an idle connection
        # Like a killed MariaDB dump thread: the socket just closes, no packet.
        connection.abort()
        await connection.close()

    async def _end_dump(self, thread_id: int, error: SqlError) -> None:
        """End the dump of ``thread_id`` with ``error`` (its dump task sends the ERR packet
        between two packets), then close the connection (the packet is flushed first). A
        replica that does not read for END_DUMP_WAIT seconds is cut off without it."""
        connection = self._connections.get(thread_id)
        if connection is None:
            return
        task = connection.dump_task
        if task is None or task.done():
            await connection.close()
            return
        connection.end_error = error
        connection.wakeup.set()
        finished, _ = await asyncio.wait({task}, timeout=END_DUMP_WAIT)
        if not finished:
            connection.abort()
            await connection.close()

    def _make_dump(self, request: DumpRequest) -> DumpStreamLike:
        if self._dump_factory is not None:
            return self._dump_factory(request)
        from fakemaster.dump import DumpStream  # the binlog side is optional for SQL-only use

        # The dump's own events (fake ROTATE, heartbeats) carry the server id it reports.
        config = replace(self.config, server_id=int(self.state.globals["server_id"] or 0))
        stream: DumpStreamLike = DumpStream(self.store, request, config)
        return stream


class BackgroundFakeMaster(LoopThread[FakeMaster]):
    """A :class:`FakeMaster` running in its own thread and event loop, for synchronous code."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        store: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(lambda: FakeMaster(config, store, **kwargs), "fake master")

    @property
    def master(self) -> FakeMaster | None:
        return self.service

    @property
    def host(self) -> str:
        return self._running.host

    @property
    def port(self) -> int:
        return self._running.port

    @property
    def errors(self) -> list[BaseException]:
        return self._running.errors

    def notify_binlog_changed(self) -> None:
        self._running.notify_binlog_changed()
