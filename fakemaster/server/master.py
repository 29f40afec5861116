"""The asyncio shell of the fake master: the listening server and its connections.

Everything protocol-related happens in the sans-IO session and dump stream (:mod:`fakemaster.core`); the shell only
moves bytes, waits, and keeps connections independent of each other: each has its own task
(:class:`~fakemaster.server.socket_connection.SocketConnection`), a slow replica holds back only its
own dump, and an exception in one connection is recorded in :attr:`FakeMaster.errors` and ends
only that connection. This module holds what connections share: the listening socket, the
registry of connections (KILL, a dump replaced by one with the same server id), binlog change
notifications and the frame cache (each connection has its own dump thread:
:meth:`SocketConnection.dump_thread`, gone when its client leaves).

Use :class:`FakeMaster` from async code (``async with FakeMaster(config, store) as master``) or
:class:`BackgroundFakeMaster` from synchronous code (it runs the server in a thread).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.connection import ServerConnection
from fakemaster.core.session import DumpRequest, ServerSession
from fakemaster.server.logs import log_loop_exception, logger
from fakemaster.server.loop_gate import LoopGate, gate_of
from fakemaster.server.loop_thread import LoopThread
from fakemaster.server.socket_connection import READ_SIZE, DumpStreamLike, SocketConnection
from fakemaster.server.statement_worker import StatementWorkers
from fakemaster.sql.state import BinlogPositions, ServerState

if TYPE_CHECKING:  # loaded by the first dump and the first error, not to listen (issue #25)
    from fakemaster.core.dump.framing import FramedSpan
    from fakemaster.protocol.resultset import SqlError

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
        positions: BinlogPositions | None = None,
    ) -> None:
        self.config = config or ServerConfig()
        self.store = store
        self._dump_factory = dump_factory
        self._positions_given = positions is not None
        if positions is None and store is not None and hasattr(store, "binary_logs"):
            positions = store
        self.state = ServerState(self.config, positions, tables=_table_catalogue(store))
        _gate_releases(store, self.state)
        # Exceptions raised inside connection handlers (the server keeps running).
        self.errors: list[BaseException] = []
        self._server: asyncio.Server | None = None
        self._connections: dict[int, SocketConnection] = {}
        self._handlers: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._frame_cache: Any = None
        # Dump and framing threads step aside while the loop works, if it has a gate
        # (fakemaster.server.loop_gate); set at start().
        self.loop_gate: LoopGate = gate_of(None)
        # Where big statements are read, off the loop every connection shares.
        self.statement_workers = StatementWorkers()

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

    def send_span(self, span: FramedSpan, writer: Any, *, local: bool = True) -> None:
        """Write what the frame cache holds (or frames now) of ``span`` with ``writer`` (a
        sender thread's :class:`~fakemaster.server.sender.SocketWriter`); sets span.reached
        (see :func:`fakemaster.server.frame_cache.send_span`). Runs in the sender thread."""
        cache = self.frame_cache
        if cache is not None:
            from fakemaster.server.frame_cache import send_span

            send_span(cache, span, writer, local=local)

    @property
    def frame_cache(self) -> Any:
        """The :class:`~fakemaster.server.frame_cache.FrameCache` of the served store (made at the
        first dump), or None when turned off or the store cannot name its files."""
        if self._frame_cache is None and self.config.frame_cache_bytes > 0:
            identity = getattr(self.store, "file_identity", None)
            if callable(identity):
                from fakemaster.server.frame_cache import FrameCache

                self._frame_cache = FrameCache(
                    self.store,
                    max_bytes=self.config.frame_cache_bytes,
                    directory=self.config.frame_cache_dir,
                    thread_niceness=self.config.dump_thread_niceness,
                    pause=self.loop_gate.wait,
                )
        return self._frame_cache

    async def start(self) -> FakeMaster:
        if self._server is not None:
            return self
        self._loop = asyncio.get_running_loop()
        self.loop_gate = gate_of(self._loop)
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
        self.statement_workers.shutdown()
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

    # -- server-side faults (docs/faults.md, hooks) --------------------------------------

    def dumps(self) -> list[tuple[int, int, str | None]]:
        """The running dumps: (thread id, the replica's server id, the file it reads)."""
        found: list[tuple[int, int, str | None]] = []
        for thread_id, connection in self._connections.items():
            dump = connection.dump
            if dump is None or connection.closed:
                continue
            request = getattr(dump, "request", None)
            server_id = int(getattr(request, "server_id", 0) or 0)
            name = getattr(dump, "file_name", None)
            found.append((thread_id, server_id, name if isinstance(name, str) else None))
        return found

    def purge_to(self, name: str, *, force: bool = False) -> list[str]:
        """``PURGE BINARY LOGS TO name``; returns the names of the purged files.

        Like a real primary (``log_in_use``), the purge stops at the first file a running
        dump reads. ``force`` purges it anyway (a fault no real primary makes: the dump then
        ends with ERR 1236 when it next reads the file)."""
        store = self.store
        if store is None:
            raise RuntimeError("the fake master serves no binlog")
        target = name
        if not force:
            in_use = {file for _, _, file in self.dumps() if file is not None}
            for existing in store.file_names():
                if existing == name:
                    break
                if existing in in_use:
                    target = existing
                    break
        return list(store.purge_to(target))

    def release(self, count: int = 1) -> int:
        """Serving a scenario live (:class:`scenarios.live.ScenarioStore`): write its next
        ``count`` transactions into the binlog; the number written. Call it in the server's
        thread (BackgroundFakeMaster.release does)."""
        release = getattr(self.store, "release", None)
        if release is None:
            raise TypeError("release() needs a fake master serving a scenario")
        return int(release(count))

    def release_all(self) -> int:
        """Write every transaction of the served scenario not released yet."""
        pending = getattr(self.store, "pending", None)
        if pending is None:
            raise TypeError("release_all() needs a fake master serving a scenario")
        return self.release(int(pending))

    async def kill_dump(
        self, *, thread_id: int | None = None, server_id: int | None = None
    ) -> list[int]:
        """KILL the dump of connection ``thread_id``, or the dumps of the replicas with
        ``server_id``, by the path SQL ``KILL`` takes (the socket closes, no packet); returns
        the thread ids killed."""
        if (thread_id is None) == (server_id is None):
            raise ValueError("name either thread_id or server_id")
        killed = [
            thread
            for thread, replica, _ in self.dumps()
            if thread == thread_id or (server_id is not None and replica == server_id)
        ]
        for thread in killed:
            await self._kill(thread, query_only=True)
        return killed

    async def restart(self, server_id: int | None = None, store: Any = None) -> None:
        """A restart of the primary, or a failover to a new one on the same port: every
        connection is closed with FIN (no packet, as a real primary's shutdown does), then
        the new identity is served: ``server_id`` (default: the same) and ``store`` (default:
        the same binlog; for a failover, a store with the same domain and new file names and
        positions). Kept, a store that can (``restart()`` of a memory store) ends its file with
        STOP (with the old server id) and starts the next one with the new server id, as a
        restarted MariaDB does. A store that cannot (a directory) must already say the new
        server id in its last file: ConfigError otherwise (after the connections were closed).
        Global variables set by clients are reset, as by a restart."""
        if self._server is None:
            raise RuntimeError("the fake master is not running")
        for connection in list(self._connections.values()):
            await connection.close()
        if server_id is not None:
            self.config = replace(self.config, server_id=server_id)
        if store is None or store is self.store:
            restart_binlog = getattr(self.store, "restart", None)
            if callable(restart_binlog):
                if server_id is not None and hasattr(self.store, "server_id"):
                    # The STOP that ends the file carries the old server id (the server that
                    # stopped wrote it); the new file (its FORMAT_DESCRIPTION) and the next
                    # transactions the new one, as a primary restarted with another id writes.
                    restart_binlog(server_id=server_id)
                else:
                    restart_binlog()
        else:
            if self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None
            if self._frame_cache is not None:
                self._frame_cache.close()
                self._frame_cache = None
            self.store = store
            subscribe = getattr(store, "subscribe", None)
            if callable(subscribe):
                unsubscribe = subscribe(self.notify_binlog_changed)
                self._unsubscribe = unsubscribe if callable(unsubscribe) else None
            start_watching = getattr(store, "start_watching", None)
            if callable(start_watching):
                start_watching()
        positions = self.state.positions
        if not self._positions_given:
            positions = self.store if hasattr(self.store, "binary_logs") else None
        state = ServerState(self.config, positions, tables=_table_catalogue(self.store))
        _gate_releases(self.store, state)
        state.check_served()
        state.on_config_error = self.record_error
        state.set_port(self.port)
        self.state = state

    def _make_dump(self, request: DumpRequest) -> DumpStreamLike:
        if self._dump_factory is not None:
            return self._dump_factory(request)
        from fakemaster.core.dump.stream import (
            DumpStream,  # the binlog side is optional for SQL-only use
        )

        # The dump's own events (fake ROTATE, heartbeats) carry the server id it reports.
        config = replace(self.config, server_id=int(self.state.globals["server_id"] or 0))
        stream: DumpStreamLike = DumpStream(self.store, request, config)
        return stream


def _table_catalogue(store: Any) -> Any:
    """The tables a store serves over SQL: its own ``table_catalogue`` (a scenario's), else
    what its binlog tells (:mod:`fakemaster.sql.tables.binlog_catalogue`, loaded when a client
    first asks about tables), None for no store."""
    own = getattr(store, "table_catalogue", None)
    if own is not None:
        return own
    if callable(getattr(store, "iter_events", None)) and callable(
        getattr(store, "file_names", None)
    ):
        from fakemaster.server.lazy_catalogue import LazyBinlogCatalogue

        return LazyBinlogCatalogue(store)
    return None


def _gate_releases(store: Any, state: ServerState) -> None:
    """A scenario's store releases nothing while a client holds FLUSH TABLES WITH READ LOCK,
    and what waited is released at the last UNLOCK TABLES."""
    if hasattr(store, "hold") and callable(getattr(store, "resume", None)):
        store.hold = lambda: bool(state.read_locks)
        state.on_unlocked = store.resume


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
    def errors(self) -> list[BaseException]:
        return self._running.errors

    def notify_binlog_changed(self) -> None:
        self._running.notify_binlog_changed()

    def _await(self, coroutine: Any) -> Any:
        loop = self._loop
        assert loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def dumps(self) -> list[tuple[int, int, str | None]]:
        """See :meth:`FakeMaster.dumps`."""
        master = self._running
        return list(self.call(master.dumps))

    def purge_to(self, name: str, *, force: bool = False) -> list[str]:
        """See :meth:`FakeMaster.purge_to`."""
        master = self._running
        return list(self.call(lambda: master.purge_to(name, force=force)))

    def release(self, count: int = 1) -> int:
        """See :meth:`FakeMaster.release` (run in the server's thread)."""
        master = self._running
        return int(self.call(lambda: master.release(count)))

    def release_all(self) -> int:
        """See :meth:`FakeMaster.release_all` (run in the server's thread)."""
        master = self._running
        return int(self.call(master.release_all))

    def kill_dump(self, *, thread_id: int | None = None, server_id: int | None = None) -> list[int]:
        """See :meth:`FakeMaster.kill_dump`."""
        master = self._running
        return list(self._await(master.kill_dump(thread_id=thread_id, server_id=server_id)))

    def restart(self, server_id: int | None = None, store: Any = None) -> None:
        """See :meth:`FakeMaster.restart`."""
        master = self._running
        self._await(master.restart(server_id, store))
