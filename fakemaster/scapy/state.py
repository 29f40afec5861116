"""What one replication connection has told so far, shared by both directions of a capture.

``tcp_reassemble`` gets a dict proper to one TCP connection (``connections.Connection``'s, or
scapy's ``TCPSession``'s when sniffing with ``install``); the client direction records the dump request and the session variables that
change the server's packets in a ``ConnectionState`` there, and the server direction reads it
(binlog event packets after a dump, the semi-sync header, the events' ``BinlogContext``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from fakemaster.vocabulary.context import BinlogContext

__all__ = ["STATE_KEY", "ConnectionState", "current_state", "following", "state_of"]

STATE_KEY = "fakemaster.replication"
# SET @rpl_semi_sync_slave=1 / SET @slave_connect_state='0-1-5' (as a replica sends them).
_SEMI_SYNC = re.compile(rb"@rpl_semi_sync_slave\s*=\s*(\d+)", re.IGNORECASE)
_CONNECT_STATE = re.compile(rb"@slave_connect_state\s*=\s*'([^']*)'", re.IGNORECASE)
# SET @master_binlog_checksum='NONE' | 'CRC32' | @@global.binlog_checksum (the server's own).
_CHECKSUM = re.compile(rb"@master_binlog_checksum\s*=\s*'?([@.\w]+)", re.IGNORECASE)


@dataclass
class ConnectionState:
    dump_requested: bool = False
    semi_sync: bool = False
    connect_state: str | None = None  # MariaDB GTID dump: @slave_connect_state
    ctx: BinlogContext = field(default_factory=BinlogContext)
    # The server's answer to a COM_QUERY, as it comes: None (no result set expected), "first"
    # (OK, ERR or a column count), "columns" (column definitions), "after_columns" (an EOF
    # unless CLIENT_DEPRECATE_EOF), "rows" (rows until EOF/OK or ERR).
    result_set: str | None = None
    columns_left: int = 0
    # @master_binlog_checksum as the replica set it (None: never): the events before the
    # first FORMAT_DESCRIPTION (the fake ROTATE) have a CRC unless it is NONE or unset. An
    # expression (@@global.binlog_checksum) is taken for CRC32, MariaDB's default.
    master_binlog_checksum: str | None = None
    # MariaDB's MARIADB_CLIENT_EXTENDED_METADATA: column definitions carry extended type info.
    extended_metadata: bool = False
    # MARIADB_CLIENT_CACHE_METADATA: a column count is followed by a metadata-follows byte.
    cache_metadata: bool = False
    # CLIENT_COMPRESS in the handshake response: from the server's OK that ends the login on,
    # both directions are compressed packets (``compressed``); the inner bytes of a direction
    # that do not make a whole packet yet wait in ``inner_left`` (client, server).
    compress_requested: bool = False
    login_answered: bool = False
    compressed: bool = False
    inner_left: list[bytes] = field(default_factory=lambda: [b"", b""])

    def start_dump(self) -> None:
        """A dump was requested: the events that follow start a new binlog context."""
        self.dump_requested = True
        value = (self.master_binlog_checksum or "NONE").upper()
        self.ctx = BinlogContext(checksum=value != "NONE")

    def observe_command(self) -> None:
        """A command other than COM_QUERY: its answer is an OK or ERR."""
        self.result_set = None

    def observe_query(self, query: bytes) -> None:
        self.result_set = "first"
        if (match := _SEMI_SYNC.search(query)) is not None:
            self.semi_sync = int(match.group(1)) != 0
        if (match := _CHECKSUM.search(query)) is not None:
            self.master_binlog_checksum = match.group(1).decode("ascii", "replace")
        if (match := _CONNECT_STATE.search(query)) is not None:
            self.connect_state = match.group(1).decode("ascii", "replace")


_CURRENT: ContextVar[ConnectionState | None] = ContextVar("fakemaster_scapy_state", default=None)


def state_of(session: dict[str, Any] | None) -> ConnectionState:
    """The connection's state in scapy's bidirectional session dict (created on first use)."""
    if session is None:
        return ConnectionState()
    found = session.get(STATE_KEY)
    if not isinstance(found, ConnectionState):
        found = session[STATE_KEY] = ConnectionState()
    return found


def current_state() -> ConnectionState | None:
    """The state of the connection being dissected (None outside ``following``)."""
    return _CURRENT.get()


@contextmanager
def following(state: ConnectionState) -> Iterator[ConnectionState]:
    token = _CURRENT.set(state)
    try:
        yield state
    finally:
        _CURRENT.reset(token)
