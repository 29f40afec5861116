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
from collections.abc import Iterator
from dataclasses import dataclass

from fakemaster.client.changes import ChangeEvent
from fakemaster.client.position import CommittedGroup, ReceivedEvent
from fakemaster.client.protocol import ClientError, ConnectionLost, ReplicaConnection
from fakemaster.client.shell import ReconnectPolicy, ReplicaShell

__all__ = ["BlockingReplica", "ReconnectPolicy"]

_READ_SIZE = 1 << 16


@dataclass
class BlockingReplica(ReplicaShell):
    """Replicates from ``host``:``port`` starting after ``start`` (see the module docstring).

    ``until``: stop (end the iteration) once the position satisfies it, e.g.
    ``lambda p: p.covers(target)``. A non-blocking dump (``config.non_blocking``) also ends at
    the primary's EOF. ``catalogue``: column names of tables whose TABLE_MAPs do not carry them.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._socket: socket.socket | None = None

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
            except (ClientError, OSError) as error:
                failures = self._failed(error, failures)
            finally:
                self.close()
                self.assembler.reset()
            time.sleep(self.reconnect.backoff(failures))

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

    # --- one connection -------------------------------------------------------------------

    def _session(self) -> Iterator[CommittedGroup | ReceivedEvent]:
        """One connection, until the dump ends (EOF) or fails (raises)."""
        connection = ReplicaConnection(self.config, self.position, server_hostname=self.host)
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
            for item in self._hand_over(happenings):
                if item is None:  # the dump ended
                    return
                yield item
            connection.raise_error()
            if self._done():  # e.g. a condition on heartbeats, which hand over nothing
                return
