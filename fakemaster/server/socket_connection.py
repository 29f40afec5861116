"""The socket shell of one client connection: its asyncio task, socket and dump task.

Everything protocol-related happens in :class:`fakemaster.core.connection.ServerConnection`; this
module moves bytes, waits, runs the dump (through the transport, or on plain TCP in a sender
thread: :mod:`fakemaster.server.sender`), and keeps the connection independent of the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import ssl
import struct
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

from fakemaster.core.connection import ServerConnection
from fakemaster.core.session import (
    Ack,
    Close,
    DumpRequest,
    EndDump,
    KillConnection,
    SendBytes,
    StartDump,
    StartTls,
)
from fakemaster.server.statement_worker import OFF_LOOP_INPUT
from fakemaster.server.tls import TlsLayer

if TYPE_CHECKING:
    from fakemaster.core.dump.framing import FramedSpan
    from fakemaster.protocol.resultset import SqlError
    from fakemaster.server.master import FakeMaster

__all__ = ["READ_SIZE", "WRITE_SLICE", "DumpStreamLike", "SocketConnection"]

READ_SIZE = 1 << 16
# A large buffer is handed to the transport in slices of this size, each once the previous one
# drained: the transport copies what the socket does not take at once, and no more than this.
WRITE_SLICE = 256 << 10


class DumpStreamLike(Protocol):
    """What the shell needs of ``fakemaster.core.dump.stream.DumpStream``."""

    @property
    def is_finished(self) -> bool: ...

    def next_chunk(self) -> bytes | None:
        """The next packets to send (framed), or None when caught up with the binlog."""
        ...

    def heartbeat_packet(self) -> bytes: ...

    def on_semi_sync_ack(self, position: int, file_name: str) -> None: ...


class SocketConnection:
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
        self.tls: TlsLayer | None = None
        # A plain dump reads the binlog in a worker thread; the call in flight, if any
        # (nothing else may touch the dump until it returns).
        self.dump_call: asyncio.Future[Any] | None = None
        # Whether a sender thread writes the dump (plain TCP), and whether one is writing now
        # (what a replica that stopped reading keeps the dump waiting in).
        self.sender_writes = False
        self.pumping = False
        # The thread that writes this connection's dump, started at its first batch and shut
        # down when the connection closes, as a MariaDB dump thread ends with its connection.
        # A pool shared by all connections kept every thread it ever started: after a load
        # test of 90 replicas, 90 parked threads stayed until the server stopped.
        self._dump_thread: ThreadPoolExecutor | None = None
        # Set by another connection: end the dump with this error (as soon as no packet is
        # half sent), then close.
        self.end_error: SqlError | None = None
        # Input being read in a worker thread (a big statement), if any: nothing else may
        # touch the session until it returns.
        self.statement_call: asyncio.Future[Any] | None = None
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
                await self.handle(await self._receive(data))
            await self._linger()
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass  # the client's doing: it hung up or failed its TLS handshake
        except Exception as error:  # recorded before the client sees the connection close
            self.master.record_error(error)
        finally:
            self.master._collect(self.session)
            await self.close()

    async def _receive(self, data: bytes) -> list[Any]:
        """The session's answer to ``data``: on the loop for the small commands nearly every
        client sends, in a worker thread once the input waiting to be read is large (see
        :mod:`fakemaster.server.statement_worker`); the dump starts on the loop either way."""
        protocol = self.protocol
        if protocol.session.pending_input + len(data) < OFF_LOOP_INPUT:
            return protocol.receive_data(data)
        session = self.session
        call = asyncio.ensure_future(
            self.master.statement_workers.run(lambda: session.receive_data(data))
        )
        self.statement_call = call
        try:
            actions = await asyncio.shield(call)
        finally:
            self.statement_call = None
        return protocol.take_actions(actions)

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
                self.tls = TlsLayer(context)
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
        # On plain TCP a sender thread writes the dump to the socket itself, and sends the
        # files it can from the frame cache.
        self.sender_writes = self.tls is None and self.protocol.dump_reads_off_loop
        if self.sender_writes and self.master.frame_cache is not None:
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

    def dump_thread(self) -> ThreadPoolExecutor:
        """This connection's dump thread (one worker, below the loop's priority:
        ServerConfig.dump_thread_niceness), started on first use."""
        if self.closed:  # close() shut it down already: none is started again
            raise ConnectionResetError("the connection is closing")
        if self._dump_thread is None:
            from fakemaster.server.sender import lower_thread_priority

            self._dump_thread = ThreadPoolExecutor(
                max_workers=1,
                thread_name_prefix=f"fakemaster-dump-{self.thread_id}",
                initializer=lower_thread_priority,
                initargs=(self.master.config.dump_thread_niceness,),
            )
        return self._dump_thread

    async def _pump(self) -> bool:
        """Let a sender thread write what the dump has to send now; True if it wrote."""
        from fakemaster.server.sender import SocketWriter, pump_dump

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
        socket_writer = SocketWriter(transport.get_extra_info("socket").fileno())
        local = self.peer_is_local

        def send_span(span: FramedSpan, writer: SocketWriter) -> None:
            self.master.send_span(span, writer, local=local)

        def may_send() -> bool:
            return not (self.peer_closed or self.closed)

        def go_on() -> bool:
            return self.end_error is None and not self.closed

        self.dump_call = call = asyncio.get_running_loop().run_in_executor(
            self.dump_thread(),
            pump_dump,
            self.protocol.dump_output,
            socket_writer,
            send_span,
            may_send,
            go_on,
            self.master.loop_gate.wait,
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
                # It ends soon (aborted above): then its socket goes, and its error (the
                # abort's) is taken, not logged as never retrieved.
                def finished(done: asyncio.Future[Any]) -> None:
                    if not done.cancelled():
                        done.exception()
                    socket_writer.close()

                call.add_done_callback(finished)
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
                if self.sender_writes:
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
        statement = self.statement_call
        if statement is not None and not statement.done():
            # KILL or shutdown while a worker reads a big statement: the session is the
            # worker's until it returns (its answer then goes nowhere).
            await asyncio.wait({statement})
        self.protocol.connection_lost()
        self.master._forget(self)
        task = self.dump_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        await self.settle_dump()
        if self._dump_thread is not None:
            # Its call returned (settled above, or aborted and ending): the thread exits now
            # rather than wait for work that will never come.
            self._dump_thread.shutdown(wait=False)
            self._dump_thread = None
        try:
            self.protocol.close_dump()  # e.g. a semi-sync dump stops counting as a replica
        except Exception as error:
            self.master.record_error(error)
        writer = self.writer
        if self.session.unread_input and not self.peer_closed:
            reset_on_close(writer)
        with contextlib.suppress(Exception):
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    def abort(self) -> None:
        """Drop the socket at once (KILL, shutdown)."""
        transport = self.writer.transport
        if not transport.is_closing():
            transport.abort()


def reset_on_close(writer: asyncio.StreamWriter) -> None:
    """Close the socket as a kernel closes one with unread input: a reset (RST) once what
    the transport holds is written, dropping what the kernel had not sent yet."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
