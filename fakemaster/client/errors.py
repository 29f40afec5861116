"""The replica client's errors, typed: each says whether a new connection can help
(``retryable``)."""

from __future__ import annotations

from fakemaster.vocabulary.errcodes import (
    ER_ABORTING_CONNECTION,
    ER_CON_COUNT_ERROR,
    ER_CONNECTION_KILLED,
    ER_MASTER_FATAL_ERROR_READING_BINLOG,
    ER_NET_ERROR_ON_WRITE,
    ER_NET_READ_ERROR,
    ER_NET_READ_INTERRUPTED,
    ER_NET_WRITE_INTERRUPTED,
    ER_SERVER_SHUTDOWN,
    ER_TOO_MANY_USER_CONNECTIONS,
)
from fakemaster.vocabulary.errors import DecodeError, FakemasterError
from fakemaster.vocabulary.packets import ErrPacket

__all__ = [
    "AuthError",
    "BinlogUnavailable",
    "ClientError",
    "ConnectionLost",
    "ProtocolError",
    "ServerRefused",
    "TlsError",
    "query_error",
]

_CONNECTION_ERRORS = frozenset(
    {
        ER_CON_COUNT_ERROR,
        ER_SERVER_SHUTDOWN,
        ER_ABORTING_CONNECTION,
        ER_NET_READ_ERROR,
        ER_NET_READ_INTERRUPTED,
        ER_NET_ERROR_ON_WRITE,
        ER_NET_WRITE_INTERRUPTED,
        ER_TOO_MANY_USER_CONNECTIONS,
        ER_CONNECTION_KILLED,
    }
)


class ClientError(FakemasterError):
    """A replica connection failed. ``retryable``: a new connection may get past it."""

    retryable = True


class ConnectionLost(ClientError):
    """The connection closed or timed out (a client's 2013 "Lost connection")."""


class ProtocolError(ClientError):
    """Bytes from the server that are not what the protocol allows here: a malformed packet,
    an event whose length or CRC32 is wrong. Reconnecting re-reads them."""

    def __init__(self, message: str, cause: DecodeError | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class ServerRefused(ClientError):
    """The server answered a command with an ERR packet."""

    def __init__(self, packet: ErrPacket, during: str) -> None:
        self.packet = packet
        self.during = during
        state = f" ({packet.sqlstate})" if packet.sqlstate is not None else ""
        super().__init__(f"{during}: server error {packet.errno}{state}: {packet.message}")
        self.retryable = packet.errno in _CONNECTION_ERRORS

    @property
    def errno(self) -> int:
        return self.packet.errno


class TlsError(ClientError):
    """TLS was asked for and could not be had: the server does not offer it, or its
    certificate or name did not verify (the mariadb client's 2026). Not retried."""

    retryable = False


class AuthError(ServerRefused):
    """The server refused the login (1045 access denied, an unsupported auth plugin...)."""

    retryable = False


class BinlogUnavailable(ServerRefused):
    """ERR 1236 during the dump: the position is gone (purged) or the binlog is damaged. A
    real replica stops with it ("Got fatal error 1236 from master ..."); so does this client."""

    def __init__(self, packet: ErrPacket, during: str) -> None:
        super().__init__(packet, during)
        self.retryable = False


def query_error(packet: ErrPacket, during: str) -> ServerRefused:
    if packet.errno == ER_MASTER_FATAL_ERROR_READING_BINLOG:
        return BinlogUnavailable(packet, during)
    return ServerRefused(packet, during)
