"""The project's own replica client: connects to any MariaDB 10.x primary, real or fake, as a
MariaDB replica does, and hands over whole committed event groups, decoded events and change
events, resuming after faults from the last committed position.

* :mod:`fakemaster.client.protocol`: the sans-IO core of one connection (bytes in, bytes out);
* :mod:`fakemaster.client.login`: the login both it and ``record``'s SQL session use (the
  greeting, TLS, the auth switch, then the compressed protocol with
  ``ClientConfig(compress=True)``); :mod:`fakemaster.client.errors`: the typed errors;
* :mod:`fakemaster.client.position`: the resume position and the assembly of committed groups;
* :mod:`fakemaster.client.changes`: change events (operation, table, before/after, GTID...;
  DDL statements as ``ddl`` changes, XA transactions at their XA COMMIT);
* :mod:`fakemaster.client.blocking`: a socket shell that reconnects and resumes;
* :mod:`fakemaster.client.aio`: the same over asyncio streams;
* :mod:`fakemaster.client.tls`: TLS (``ClientConfig(tls=tls_context(ca=...))``), run inside
  the sans-IO core so that every shell has it. Logins take mysql_native_password and
  MariaDB's client_ed25519 (through the server's auth switch).

"""

from __future__ import annotations

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.changes import ChangeEvent, ChangeStream
from fakemaster.client.position import CommittedGroup, Position, ReceivedEvent
from fakemaster.client.protocol import (
    AuthError,
    BinlogUnavailable,
    ClientConfig,
    ClientError,
    ConnectionLost,
    ProtocolError,
    ReplicaConnection,
    ServerRefused,
    TlsError,
)
from fakemaster.client.shell import ReconnectPolicy
from fakemaster.client.tls import tls_context

__all__ = [
    "AuthError",
    "BinlogUnavailable",
    "BlockingReplica",
    "ChangeEvent",
    "ChangeStream",
    "ClientConfig",
    "ClientError",
    "CommittedGroup",
    "ConnectionLost",
    "Position",
    "ProtocolError",
    "ReceivedEvent",
    "ReconnectPolicy",
    "ReplicaConnection",
    "ServerRefused",
    "TlsError",
    "tls_context",
]
