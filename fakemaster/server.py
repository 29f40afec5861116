"""The asyncio shell of the fake master: sockets in, :class:`ServerSession` actions out.

Everything protocol-related happens in the sans-IO session and dump stream; this module only
moves bytes, waits, and keeps connections independent of each other: each has its own task,
writes wait for the socket to drain (a slow replica holds back only its own dump), and an
exception in one connection is recorded in :attr:`FakeMaster.errors` and ends only that
connection.

Use :class:`FakeMaster` from async code (``async with FakeMaster(config, store) as master``) or
:class:`BackgroundFakeMaster` from synchronous code (it runs the server in a thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import ssl
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Protocol

from fakemaster.config import ServerConfig
from fakemaster.connection import ServerConnection
from fakemaster.dump_framing import FramedSpan
from fakemaster.logs import log_loop_exception, logger
from fakemaster.protocol.resultset import SqlError
from fakemaster.protocol.state import BinlogCatalog, ServerState
from fakemaster.session import (
    Ack,
    Close,
    DumpRequest,
    EndDump,
    KillConnection,
    SendBytes,
    ServerSession,
    StartDump,
    StartTls,
)

__all__ = ["BackgroundFakeMaster", "DumpFactory", "DumpStreamLike", "FakeMaster"]

READ_SIZE = 1 << 16
# A large buffer is handed to the transport in slices of this size, each once the previous one
# drained: the transport copies what the socket does not take at once, and no more than this.
WRITE_SLICE = 256 << 10
# How long a dump replaced by a newer one (same server id) may take to get its ERR out.
END_DUMP_WAIT = 5.0


class DumpStreamLike(Protocol):
    """What the shell needs of ``fakemaster.dump.DumpStream``."""

    @property
    def is_finished(self) -> bool: ...

    def next_chunk(self) -> bytes | None:
        """The next packets to send (framed), or None when caught up with the binlog."""
        ...

    def heartbeat_packet(self) -> bytes: ...

    def on_semi_sync_ack(self, position: int, file_name: str) -> None: ...


DumpFactory = Callable[[DumpRequest], DumpStreamLike]


class _TlsLayer:
    """Server-side TLS over memory buffers: the shell keeps reading and writing the plain
    socket, so no byte the client sent before or during the TLS handshake gets lost."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._handshaken = False

    def receive(self, data: bytes) -> bytes:
        """Take bytes from the socket; the plaintext they complete (maybe none yet)."""
        if data:
            self._incoming.write(data)
        if not self._handshaken:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                return b""
            self._handshaken = True
        chunks = []
        while True:
            try:
                chunk = self._tls.read(READ_SIZE)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def send(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = self._tls.write(view)
            view = view[written:]

    def outgoing_bytes(self) -> bytes:
        return self._outgoing.read()


class _Connection:
    """One client: its session, stream writer and tasks."""

    def __init__(
        self,
        master: FakeMaster,
        protocol: ServerConnection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.master = master
        self.protocol = protocol
        self.session = protocol.session
        self.reader = reader
        self.writer = writer
        self.dump_task: asyncio.Task[None] | None = None
        self.wakeup = asyncio.Event()
        self.closed = False
        self.peer_closed = False
        self.tls: _TlsLayer | None = None
        # A plain dump reads the binlog in a worker thread; the call in flight, if any
        # (nothing else may touch the dump until it returns).
        self.dump_call: asyncio.Future[Any] | None = None
        # Whether a dump thread writes the dump (plain TCP), and whether one is writing now
        # (what a replica that stopped reading keeps the dump waiting in).
        self.dump_thread = False
        self.pumping = False
        # Set by another connection: end the dump with this error (as soon as no packet is
        # half sent), then close.
        self.end_error: SqlError | None = None
        # Set once the dump's first packets were handed to the transport (or it had none).
        self.dump_started = asyncio.Event()

    @property
    def thread_id(self) -> int:
        return self.session.thread_id

    @property
    def peer_is_local(self) -> bool:
        """The replica runs on this host (a loopback address)."""
        peer = self.writer.get_extra_info("peername")
        host = peer[0] if isinstance(peer, tuple) and peer else ""
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return False

    async def run(self) -> None:
        writer = self.writer
        loop = asyncio.get_running_loop()
        # connect_timeout bounds the whole login, not each read: a client trickling its
        # handshake response a byte at a time is cut off all the same.
        login_deadline = loop.time() + self.master.config.handshake_timeout
        try:
            writer.write(self.protocol.initial_bytes())
            await writer.drain()
            while not self.closed and not self.session.closed:
                timeout = None
                if self.session.sql is None:
                    timeout = max(0.0, login_deadline - loop.time())
                try:
                    data = await asyncio.wait_for(self._read(), timeout)
                except TimeoutError:
                    break
                if not data:
                    break
                await self.handle(self.protocol.receive_data(data))
            await self._linger()
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass  # the client's doing: it hung up or failed its TLS handshake
        except Exception as error:  # recorded before the client sees the connection close
            self.master.record_error(error)
        finally:
            self.master._collect(self.session)
            await self.close()

    async def _read(self) -> bytes:
        """Bytes from the client (decrypted once TLS runs; b"" when it hung up)."""
        while True:
            data = await self.reader.read(READ_SIZE)
            tls = self.tls
            if tls is None:
                return data
            if not data:
                return b""
            plain = tls.receive(data)
            self._flush_tls()
            if plain:
                return plain

    def write(self, data: bytes | bytearray | memoryview) -> None:
        tls = self.tls
        if tls is None:
            self.writer.write(data)
            return
        tls.send(data)
        self._flush_tls()

    def _flush_tls(self) -> None:
        assert self.tls is not None
        outgoing = self.tls.outgoing_bytes()
        if outgoing:
            self.writer.write(outgoing)

    async def _linger(self) -> None:
        """After a replica hangs up, a MariaDB dump thread lives on until it next tries to send
        (an event or a heartbeat): until then it is in the thread list, and the replica's
        "KILL <dump thread>" on STOP SLAVE finds it."""
        task = self.dump_task
        if self.closed or task is None or task.done():
            return
        # What the dump had to send when it was asked for goes out first, as it would from a
        # dump thread that started before the hang-up was seen (the read happens in a worker
        # thread, so the hang-up can come first here).
        started = asyncio.ensure_future(self.dump_started.wait())
        await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        self.peer_closed = True
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def handle(self, actions: list[Any]) -> None:
        for action in actions:
            if isinstance(action, SendBytes):
                self.write(action.data)
                await self.writer.drain()
            elif isinstance(action, Close):
                await self.close()
                return
            elif isinstance(action, KillConnection):
                await self.master._kill(action.thread_id, action.query_only)
            elif isinstance(action, EndDump):
                await self.master._end_dump(action.thread_id, action.error)
            elif isinstance(action, StartTls):
                context = self.master.config.ssl_context
                assert context is not None
                self.tls = _TlsLayer(context)
                leftover = self.tls.receive(action.early_data)
                self._flush_tls()
                await self.writer.drain()
                if leftover:  # the handshake response came with the end of the TLS handshake
                    await self.handle(self.protocol.receive_data(leftover))
            elif isinstance(action, StartDump):
                self.start_dump(action.request)
            elif isinstance(action, Ack):
                self.wakeup.set()  # the protocol handed it to the dump

    @property
    def dump(self) -> DumpStreamLike | None:
        dump: DumpStreamLike | None = self.protocol.dump
        return dump

    def start_dump(self, request: DumpRequest) -> None:
        dump = self.protocol.dump
        assert dump is not None
        # On plain TCP a dump thread writes the dump to the socket itself, and sends the
        # files it can from the frame cache.
        self.dump_thread = self.tls is None and self.protocol.dump_reads_off_loop
        if self.dump_thread and self.master.frame_cache is not None:
            self.protocol.allow_framed_spans()
        self.dump_task = asyncio.create_task(self._stream(dump, request))

    async def _next_parts(self) -> list[Any]:
        protocol = self.protocol
        if not protocol.dump_reads_off_loop:
            return protocol.dump_output()
        self.dump_call = call = asyncio.get_running_loop().run_in_executor(
            None, protocol.dump_output
        )
        try:
            parts: list[Any] = await call
        finally:
            if call.done():
                self.dump_call = None
        return parts

    async def _send_parts(self, parts: list[Any]) -> None:
        """Write ``parts`` through the transport (TLS, compressed connections), emptying the
        list: what was handed to the transport is no longer referenced here while the replica
        drains."""
        writer = self.writer
        parts.reverse()
        while parts:
            part = parts.pop()
            if not isinstance(part, memoryview) or len(part) <= WRITE_SLICE:
                # The dump's own bytes: handed over whole, the transport keeps only what the
                # socket does not take, and the dump keeps nothing.
                self.write(part)
            else:
                # A view of a large event: the transport would copy all the socket does not
                # take.
                for start in range(0, len(part), WRITE_SLICE):
                    self.write(part[start : start + WRITE_SLICE])
                    await writer.drain()
            del part
        await writer.drain()

    async def _pump(self) -> bool:
        """Let a dump thread write what the dump has to send now; True if it wrote."""
        from fakemaster.dump_thread import SocketWriter, pump_dump

        writer = self.writer
        transport = writer.transport
        if transport.is_closing():
            raise ConnectionResetError("the connection is closing")
        # What the transport holds goes first: with a high-water mark of 0, drain() returns
        # once its buffer is empty.
        high = transport.get_write_buffer_limits()[1]
        transport.set_write_buffer_limits(high=0)
        try:
            await writer.drain()
        finally:
            transport.set_write_buffer_limits(high=high)
        socket_writer = SocketWriter(
            transport.get_extra_info("socket").fileno(), copy_files=self.peer_is_local
        )

        def may_send() -> bool:
            return not (self.peer_closed or self.closed)

        def go_on() -> bool:
            return self.end_error is None and not self.closed

        self.dump_call = call = asyncio.get_running_loop().run_in_executor(
            self.master.sender_pool,
            pump_dump,
            self.protocol.dump_output,
            socket_writer,
            self.master.send_span,
            may_send,
            go_on,
        )
        self.pumping = True
        try:
            wrote: bool = await asyncio.shield(call)
        except asyncio.CancelledError:
            socket_writer.abort()
            raise
        finally:
            self.pumping = False
            if call.done():
                self.dump_call = None
                socket_writer.close()
            else:
                call.add_done_callback(lambda _: socket_writer.close())
        return wrote

    async def _stream(self, dump: DumpStreamLike, request: DumpRequest) -> None:
        writer = self.writer
        period = request.heartbeat_period_ns / 1e9 if request.heartbeat_period_ns > 0 else None
        try:
            while not self.closed:
                # Cleared before polling, so a binlog change after the poll is not missed.
                self.wakeup.clear()
                if self.end_error is not None:
                    await self._send_end_error(dump, self.end_error)
                    break
                if self.dump_thread:
                    wrote = await self._pump()
                    self.dump_started.set()
                    if wrote and not dump.is_finished:
                        continue
                else:
                    parts = await self._next_parts()
                    if parts:
                        if self.peer_closed:
                            break
                        await self._send_parts(parts)
                        self.dump_started.set()
                        # The transport copied what the socket did not take: no second copy
                        # may stay alive while a slow replica drains.
                        del parts
                        # drain() returns at once while the replica keeps up: without this
                        # yield a dump would hold the event loop until the binlog ends, and
                        # every other connection (logins, other dumps, KILL) would wait.
                        await asyncio.sleep(0)
                        continue
                    self.dump_started.set()
                if dump.is_finished:
                    break
                try:
                    await asyncio.wait_for(self.wakeup.wait(), period)
                except TimeoutError:
                    if self.peer_closed:
                        break
                    self.write(dump.heartbeat_packet())
                    await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception as error:
            self.master.record_error(error)
        finally:
            # A MariaDB dump thread ends its connection when the dump ends.
            await self.close()

    async def _send_end_error(self, dump: DumpStreamLike, error: SqlError) -> None:
        """The ERR that ends the dump (another replica took its server id), in the dump's
        sequence, between two of its packets."""
        # Optional in DumpStreamLike: a dump without it is just closed.
        end = getattr(dump, "end_with_error", None)
        packet = end(error.errno, error.message) if callable(end) else b""
        if packet:
            self.write(packet)
            await self.writer.drain()

    async def settle_dump(self) -> None:
        """Wait for the dump's call in a worker thread, if one is running."""
        call = self.dump_call
        if call is not None and not call.done():
            await asyncio.wait({call})

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.protocol.connection_lost()
        self.master._forget(self)
        task = self.dump_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        await self.settle_dump()
        try:
            self.protocol.close_dump()  # e.g. a semi-sync dump stops counting as a replica
        except Exception as error:
            self.master.record_error(error)
        writer = self.writer
        with contextlib.suppress(Exception):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    def abort(self) -> None:
        """Drop the socket at once (KILL, shutdown)."""
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


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
        self._connections: dict[int, _Connection] = {}
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

    def send_span(self, span: FramedSpan, writer: Any) -> None:
        """Write what the frame cache holds (or frames now) of ``span`` with ``writer`` (a
        dump thread's :class:`~fakemaster.dump_thread.SocketWriter`); sets span.reached. Runs
        in the dump thread."""
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
            writer.send_file(run.file.fileno(), start.framed, tip.framed - start.framed)
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
            connection = _Connection(self, protocol, reader, writer)
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

    def _forget(self, connection: _Connection) -> None:
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


class BackgroundFakeMaster:
    """A :class:`FakeMaster` running in its own thread and event loop, for synchronous code."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        store: Any = None,
        **kwargs: Any,
    ) -> None:
        self._args = (config, store)
        self._kwargs = kwargs
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self.master: FakeMaster | None = None

    def start(self) -> BackgroundFakeMaster:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="fakemaster", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise self._startup_error
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self.master = FakeMaster(*self._args, **self._kwargs)
            loop.run_until_complete(self.master.start())
        except BaseException as error:
            self._startup_error = error
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.master.stop())
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
        """Run ``function`` in the server's thread and return its result."""
        loop = self._loop
        assert loop is not None
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
    def _running(self) -> FakeMaster:
        if self.master is None:
            raise RuntimeError("the fake master is not running")
        return self.master

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

    def __enter__(self) -> BackgroundFakeMaster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
