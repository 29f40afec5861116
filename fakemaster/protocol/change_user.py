"""COM_CHANGE_USER's body, read as MariaDB 10.11's parse_com_change_user_packet() reads it.

Layout after the command byte: user (NUL-terminated) | auth data (1-byte length first with
CLIENT_SECURE_CONNECTION, else NUL-terminated) | database (NUL-terminated) | [collation u16] |
[auth plugin name, NUL-terminated, with CLIENT_PLUGIN_AUTH] | [connection attributes].

A body that ends before the database, or (for a client that announced CLIENT_PLUGIN_AUTH)
before the plugin name, is refused with ER_UNKNOWN_COM_ERROR by the server: ``parse`` raises
DecodeError for it. The server then answers every well-formed request with an authentication
switch to the account's plugin and a new scramble, whatever plugin the client named.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakemaster.protocol.handshake import Capability
from fakemaster.vocabulary.errors import DecodeError

__all__ = ["ChangeUser"]


@dataclass(frozen=True, slots=True)
class ChangeUser:
    user: bytes
    auth_response: bytes
    database: bytes
    collation: int | None  # None: not sent (the session keeps its character set)
    plugin: bytes | None

    @classmethod
    def parse(cls, body: bytes, capabilities: int) -> ChangeUser:
        end = body.find(b"\0")
        if end < 0 or end + 1 >= len(body):
            raise DecodeError("COM_CHANGE_USER ends in its user name", offset=len(body))
        user = body[:end]
        pos = end + 1
        if capabilities & Capability.SECURE_CONNECTION:
            length = body[pos]
            auth = body[pos + 1 : pos + 1 + length]
            pos += 1 + length
        else:
            stop = body.find(b"\0", pos)
            stop = len(body) if stop < 0 else stop
            auth = body[pos:stop]
            pos = stop + 1
        if pos >= len(body):
            raise DecodeError("COM_CHANGE_USER ends before its database", offset=len(body))
        stop = body.find(b"\0", pos)
        stop = len(body) if stop < 0 else stop
        database = body[pos:stop]
        pos = stop + 1
        collation = None
        if pos + 1 < len(body):
            collation = body[pos] | body[pos + 1] << 8
            pos += 2
        plugin = None
        if capabilities & Capability.PLUGIN_AUTH:
            if pos >= len(body):
                raise DecodeError("COM_CHANGE_USER ends before its plugin name", offset=pos)
            stop = body.find(b"\0", pos)
            plugin = body[pos : len(body) if stop < 0 else stop]
        return cls(user, auth, database, collation, plugin)
