"""A blocking replica client: a socket around :class:`~fakemaster.client.protocol.ReplicaConnection`
that reconnects and resumes.

Delivery: only whole committed event groups are handed over (:meth:`BlockingReplica.groups`,
and the events and change events made of them), each with the resume position after it. When
a connection is lost, fails a read for ``net_timeout`` seconds (a half-open or silent stream),
or the server sends something malformed, the unfinished group is dropped and the client
reconnects from the position after the last group it handed over: nothing is lost and,
within one client, nothing is handed over twice. Across client restarts, a consumer that
stores :attr:`BlockingReplica.position` together with what it applied (atomically) and starts
the next client from it gets exactly once; one that stores it later gets at-least-once and can
drop repeats by GTID (or by ``(gtid, row_index)`` for change events).

Errors a new connection cannot get past stop the client, typed: :class:`AuthError`,
:class:`BinlogUnavailable` (ERR 1236: purged, damaged binlog), other refusals; and any error
once ``max_retries`` connections in a row failed without handing over a group.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

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

__all__ = ["BlockingReplica", "ReconnectPolicy"]

_READ_SIZE = 1 << 16


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """``max_retries`` connections in a row that hand over nothing before the last error is
    raised; ``delay`` seconds before each reconnect (doubling up to ``max_delay``)."""

    max_retries: int = 10
    delay: float = 0.05
    max_delay: float = 2.0


@dataclass
class BlockingReplica:
    """Replicates from ``host``:``port`` starting after ``start`` (see the module docstring).

    ``until``: stop (end the iteration) once the position satisfies it, e.g.
    ``lambda p: p.covers(target)``. A non-blocking dump (``config.non_blocking``) also ends at
    the primary's EOF. ``catalogue``: column names of tables whose TABLE_MAPs do not carry them.
    """

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
        self._socket: socket.socket | None = None

    @property
    def position(self) -> Position:
        """The position after the last group handed over."""
        return self.assembler.position

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> BlockingReplica:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- iteration ------------------------------------------------------------------------

    def items(self) -> Iterator[CommittedGroup | ReceivedEvent]:
        """Committed groups and the events outside groups, in stream order."""
        failures = 0
        while not self._done():
            try:
                for item in self._session():
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
                self.close()
                self.assembler.reset()
            delay = min(self.reconnect.delay * 2 ** (failures - 1), self.reconnect.max_delay)
            time.sleep(delay)

    def groups(self) -> Iterator[CommittedGroup]:
        for item in self.items():
            if isinstance(item, CommittedGroup):
                yield item

    def events(self) -> Iterator[ReceivedEvent]:
        """Every event: those outside groups as they come, those of a group once it committed."""
        for item in self.items():
            if isinstance(item, CommittedGroup):
                yield from item.events
            else:
                yield item

    def changes(self) -> Iterator[ChangeEvent]:
        stream = self.change_stream
        for group in self.groups():
            yield from stream.feed(group)

    def _done(self) -> bool:
        return self.until is not None and self.until(self.position)

    # --- one connection -------------------------------------------------------------------

    def _session(self) -> Iterator[CommittedGroup | ReceivedEvent]:
        """One connection, until the dump ends (EOF) or fails (raises)."""
        connection = ReplicaConnection(self.config, self.position)
        sock = socket.create_connection((self.host, self.port), timeout=self.config.net_timeout)
        self._socket = sock
        self.connections += 1
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            try:
                data = sock.recv(_READ_SIZE)
            except TimeoutError:
                raise ConnectionLost(f"nothing received for {self.config.net_timeout} s") from None
            if not data:
                raise connection.connection_lost()
            happenings = connection.feed(data)
            outgoing = connection.data_to_send()
            if outgoing:
                sock.sendall(outgoing)
            for happening in happenings:
                if isinstance(happening, EventReceived):
                    self.acks_sent += happening.acknowledged
                    event = happening.decoded.event
                    if isinstance(event, HeartbeatEvent):
                        self.heartbeats += 1
                        continue
                    yield from self.assembler.feed(event)
                elif isinstance(happening, Ready):
                    self.ready = happening
                elif isinstance(happening, StreamEnded):
                    return
            connection.raise_error()
            if self._done():  # e.g. a condition on heartbeats, which hand over nothing
                return
