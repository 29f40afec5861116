"""An asyncio replica client: the same core as :mod:`fakemaster.client.blocking`, over asyncio
streams, with the same delivery (whole committed groups, each with the resume position after
it), reconnect-and-resume and typed errors; see that module's docstring."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fakemaster.client.blocking import ReconnectPolicy
from fakemaster.client.changes import ChangeEvent, ChangeStream
from fakemaster.client.position import CommittedGroup, GroupAssembler, Position, ReceivedEvent
from fakemaster.client.protocol import (
    ClientConfig,
    ClientError,
    ConnectionLost,
    EventReceived,
    Ready,
    ReplicaConnection,
    StreamEnded,
)
from fakemaster.events import HeartbeatEvent

__all__ = ["AsyncReplica"]

_READ_SIZE = 1 << 16


@dataclass
class AsyncReplica:
    """Replicates from ``host``:``port`` (see :class:`~fakemaster.client.blocking.BlockingReplica`
    for the fields); iterate ``items()``, ``groups()``, ``events()`` or ``changes()`` with
    ``async for``."""

    host: str
    port: int
    config: ClientConfig = field(default_factory=ClientConfig)
    start: Position | None = None
    until: Callable[[Position], bool] | None = None
    catalogue: Mapping[str, Sequence[str]] | None = None
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    connections: int = 0
    heartbeats: int = 0
    acks_sent: int = 0
    errors: list[ClientError] = field(default_factory=list)
    ready: Ready | None = None

    def __post_init__(self) -> None:
        self.assembler = GroupAssembler(self.start or Position(), gtid_mode=self.config.gtid_mode)
        # Holds prepared XA groups' changes across reconnects (fakemaster.client.changes).
        self.change_stream = ChangeStream(self.catalogue)
        self._writer: asyncio.StreamWriter | None = None

    @property
    def position(self) -> Position:
        return self.assembler.position

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    async def __aenter__(self) -> AsyncReplica:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _done(self) -> bool:
        return self.until is not None and self.until(self.position)

    async def items(self) -> AsyncIterator[CommittedGroup | ReceivedEvent]:
        failures = 0
        while not self._done():
            try:
                async for item in self._session():
                    if isinstance(item, CommittedGroup):
                        failures = 0
                    yield item
                    if self._done():
                        return
                if self.config.non_blocking or self._done():
                    return
                raise ConnectionLost("the primary ended the dump with EOF")
            except ClientError as error:
                self.errors.append(error)
                failures += 1
                if not error.retryable or failures > self.reconnect.max_retries:
                    raise
            except OSError as error:
                self.errors.append(ConnectionLost(str(error)))
                failures += 1
                if failures > self.reconnect.max_retries:
                    raise ConnectionLost(f"{failures} connections failed: {error}") from error
            finally:
                await self.close()
                self.assembler.reset()
            await asyncio.sleep(
                min(self.reconnect.delay * 2 ** (failures - 1), self.reconnect.max_delay)
            )

    async def groups(self) -> AsyncIterator[CommittedGroup]:
        async for item in self.items():
            if isinstance(item, CommittedGroup):
                yield item

    async def events(self) -> AsyncIterator[ReceivedEvent]:
        async for item in self.items():
            if isinstance(item, CommittedGroup):
                for event in item.events:
                    yield event
            else:
                yield item

    async def changes(self) -> AsyncIterator[ChangeEvent]:
        stream = self.change_stream
        async for group in self.groups():
            for change in stream.feed(group):
                yield change

    async def _session(self) -> AsyncIterator[CommittedGroup | ReceivedEvent]:
        connection = ReplicaConnection(self.config, self.position)
        timeout = self.config.net_timeout
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), timeout
            )
        except TimeoutError:
            raise ConnectionLost(f"no connection within {timeout} s") from None
        self._writer = writer
        self.connections += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            try:
                data = await asyncio.wait_for(reader.read(_READ_SIZE), timeout)
            except TimeoutError:
                raise ConnectionLost(f"nothing received for {timeout} s") from None
            if not data:
                raise connection.connection_lost()
            happenings = connection.feed(data)
            outgoing = connection.data_to_send()
            if outgoing:
                writer.write(outgoing)
                await writer.drain()
            for happening in happenings:
                if isinstance(happening, EventReceived):
                    self.acks_sent += happening.acknowledged
                    event = happening.decoded.event
                    if isinstance(event, HeartbeatEvent):
                        self.heartbeats += 1
                        continue
                    for item in self.assembler.feed(event):
                        yield item
                elif isinstance(happening, Ready):
                    self.ready = happening
                elif isinstance(happening, StreamEnded):
                    return
            connection.raise_error()
            if self._done():
                return
