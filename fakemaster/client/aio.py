"""An asyncio replica client: the same core as :mod:`fakemaster.client.blocking`, over asyncio
streams, with the same delivery (whole committed groups, each with the resume position after
it), reconnect-and-resume and typed errors; see that module's docstring."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

from fakemaster.client.changes import ChangeEvent
from fakemaster.client.position import CommittedGroup, ReceivedEvent
from fakemaster.client.protocol import ClientError, ConnectionLost, ReplicaConnection
from fakemaster.client.shell import ReplicaShell

__all__ = ["AsyncReplica"]

_READ_SIZE = 1 << 16


@dataclass
class AsyncReplica(ReplicaShell):
    """Replicates from ``host``:``port`` (see :class:`~fakemaster.client.blocking.BlockingReplica`
    for the fields); iterate ``items()``, ``groups()``, ``events()`` or ``changes()`` with
    ``async for``."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._writer: asyncio.StreamWriter | None = None

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
            except (ClientError, OSError) as error:
                failures = self._failed(error, failures)
            finally:
                await self.close()
                self.assembler.reset()
            await asyncio.sleep(self.reconnect.backoff(failures))

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
        connection = ReplicaConnection(self.config, self.position, server_hostname=self.host)
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
            for item in self._hand_over(happenings):
                if item is None:  # the dump ended
                    return
                yield item
            connection.raise_error()
            if self._done():
                return
