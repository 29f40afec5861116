"""Connection phase: Handshake V10, HandshakeResponse41, auth switch, mysql_native_password.

Builders and parsers of each packet (the server needs the builders, tests and clients the
parsers), with MariaDB's variations: the server version carries the ``5.5.5-`` prefix, the
server clears CLIENT_MYSQL (bit 0) to say "I am MariaDB", and both sides put MariaDB's extended
capabilities (bits 32..63) in the last 4 of the otherwise-zero filler bytes; a client's extended
capabilities count only when it cleared CLIENT_MYSQL too.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass, field
from enum import IntFlag

from decoder.primitives import Buffer, read_packed_int
from encoder.primitives import packed_int
from fakemaster.protocol.charsets import UTF8MB4_GENERAL_CI
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.layouts import U16, U32
from fakemaster.vocabulary.packets import ServerStatus

__all__ = [
    "NATIVE_PASSWORD",
    "PROTOCOL_VERSION",
    "RESPONSE_HEAD_LENGTH",
    "SCRAMBLE_LENGTH",
    "SERVER_CAPABILITIES",
    "SERVER_MARIADB_CAPABILITIES",
    "AuthSwitchRequest",
    "Capability",
    "ClientProtocol",
    "HandshakeResponse",
    "HandshakeV10",
    "MariaDBCapability",
    "check_native_password",
    "native_password_response",
    "new_scramble",
]

PROTOCOL_VERSION = 10
SCRAMBLE_LENGTH = 20
NATIVE_PASSWORD = "mysql_native_password"


class Capability(IntFlag):
    MYSQL = 1 << 0  # CLIENT_LONG_PASSWORD for MySQL; a MariaDB server leaves it clear
    FOUND_ROWS = 1 << 1
    LONG_FLAG = 1 << 2
    CONNECT_WITH_DB = 1 << 3
    NO_SCHEMA = 1 << 4
    COMPRESS = 1 << 5
    ODBC = 1 << 6
    LOCAL_FILES = 1 << 7
    IGNORE_SPACE = 1 << 8
    PROTOCOL_41 = 1 << 9
    INTERACTIVE = 1 << 10
    SSL = 1 << 11
    IGNORE_SIGPIPE = 1 << 12
    TRANSACTIONS = 1 << 13
    RESERVED = 1 << 14
    SECURE_CONNECTION = 1 << 15
    MULTI_STATEMENTS = 1 << 16
    MULTI_RESULTS = 1 << 17
    PS_MULTI_RESULTS = 1 << 18
    PLUGIN_AUTH = 1 << 19
    CONNECT_ATTRS = 1 << 20
    PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
    CAN_HANDLE_EXPIRED_PASSWORDS = 1 << 22
    SESSION_TRACK = 1 << 23
    DEPRECATE_EOF = 1 << 24
    SSL_VERIFY_SERVER_CERT = 1 << 30
    REMEMBER_OPTIONS = 1 << 31


class MariaDBCapability(IntFlag):
    """MariaDB's capability bits 32..63, shifted down by 32."""

    PROGRESS = 1 << 0
    COM_MULTI = 1 << 1
    STMT_BULK_OPERATIONS = 1 << 2
    EXTENDED_METADATA = 1 << 3
    CACHE_METADATA = 1 << 4


# What MariaDB 10.11.19 advertises without TLS (captured: 0x81fff7fe, extended 0x1d).
REAL_SERVER_CAPABILITIES = 0x81FFF7FE
REAL_SERVER_MARIADB_CAPABILITIES = (
    MariaDBCapability.PROGRESS
    | MariaDBCapability.STMT_BULK_OPERATIONS
    | MariaDBCapability.EXTENDED_METADATA
    | MariaDBCapability.CACHE_METADATA
)
# Of those, what the fake master does not do, so it does not advertise them: with NO_SCHEMA a
# MariaDB server ignores the database in "db.table" names (a fake master honours it); no LOAD
# DATA LOCAL INFILE (LOCAL_FILES); no stored procedures whose results a prepared CALL would
# return (PS_MULTI_RESULTS), no COM_STMT_BULK_EXECUTE (STMT_BULK_OPERATIONS, which makes
# connectors send it; the other COM_STMT_* are fakemaster.core.prepared's). Every other bit is
# honoured, some because nothing the fake master runs depends on them (FOUND_ROWS without
# UPDATE, PROGRESS without long statements, CAN_HANDLE_EXPIRED_PASSWORDS without expired
# accounts), COMPRESS since it speaks the compressed protocol.
NOT_ADVERTISED_CAPABILITIES = (
    Capability.NO_SCHEMA | Capability.LOCAL_FILES | Capability.PS_MULTI_RESULTS
)
NOT_ADVERTISED_MARIADB_CAPABILITIES = MariaDBCapability.STMT_BULK_OPERATIONS
SERVER_CAPABILITIES = REAL_SERVER_CAPABILITIES & ~int(NOT_ADVERTISED_CAPABILITIES)
SERVER_MARIADB_CAPABILITIES = int(REAL_SERVER_MARIADB_CAPABILITIES) & ~int(
    NOT_ADVERTISED_MARIADB_CAPABILITIES
)

_RESPONSE_HEAD = struct.Struct("<IIB23s")
_HANDSHAKE_FIXED = struct.Struct("<I8sBHBHHB6sI")
RESPONSE_HEAD_LENGTH = _RESPONSE_HEAD.size  # 32: also the whole SSL request


@dataclass(frozen=True, slots=True)
class ClientProtocol:
    """What the connection's capabilities change in the responses (the session keeps one from
    its greeting on; fakemaster.protocol.resultset names it too, for the responses' users)."""

    capabilities: int
    mariadb_capabilities: int = 0

    @property
    def deprecate_eof(self) -> bool:
        return bool(self.capabilities & Capability.DEPRECATE_EOF)

    @property
    def session_track(self) -> bool:
        return bool(self.capabilities & Capability.SESSION_TRACK)

    @property
    def protocol_41(self) -> bool:
        return bool(self.capabilities & Capability.PROTOCOL_41)

    @property
    def extended_metadata(self) -> bool:
        return bool(self.mariadb_capabilities & MariaDBCapability.EXTENDED_METADATA)

    @property
    def cache_metadata(self) -> bool:
        return bool(self.mariadb_capabilities & MariaDBCapability.CACHE_METADATA)


def new_scramble() -> bytes:
    """20 random printable bytes, as MariaDB makes them (never NUL: the protocol NUL-ends them)."""
    return bytes(33 + b % 94 for b in os.urandom(SCRAMBLE_LENGTH))


def native_password_response(password: str | bytes, scramble: bytes) -> bytes:
    """What a client sends for mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))."""
    if not password:
        return b""
    secret = password.encode() if isinstance(password, str) else password
    stage1 = hashlib.sha1(secret).digest()
    stage2 = hashlib.sha1(stage1).digest()
    mask = hashlib.sha1(scramble[:SCRAMBLE_LENGTH] + stage2).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def check_native_password(password: str | bytes, scramble: bytes, response: bytes) -> bool:
    if not password:
        return response == b""
    return response == native_password_response(password, scramble)


@dataclass(frozen=True, slots=True)
class HandshakeV10:
    """The server's initial handshake packet (protocol 10) with MariaDB's extra capabilities."""

    server_version: str
    thread_id: int
    scramble: bytes
    capabilities: int = SERVER_CAPABILITIES
    charset: int = UTF8MB4_GENERAL_CI
    status: int = ServerStatus.AUTOCOMMIT
    mariadb_capabilities: int = SERVER_MARIADB_CAPABILITIES
    auth_plugin: str = NATIVE_PASSWORD
    protocol_version: int = PROTOCOL_VERSION

    def encode(self) -> bytes:
        if len(self.scramble) != SCRAMBLE_LENGTH:
            raise ValueError(f"the scramble must be {SCRAMBLE_LENGTH} bytes")
        fixed = _HANDSHAKE_FIXED.pack(
            self.thread_id,
            self.scramble[:8],
            0,
            self.capabilities & 0xFFFF,
            self.charset,
            self.status,
            self.capabilities >> 16 & 0xFFFF,
            SCRAMBLE_LENGTH + 1,
            b"",
            self.mariadb_capabilities,
        )
        return b"".join(
            (
                bytes((self.protocol_version,)),
                self.server_version.encode() + b"\0",
                fixed,
                self.scramble[8:] + b"\0",
                self.auth_plugin.encode() + b"\0",
            )
        )

    @classmethod
    def decode(cls, payload: Buffer) -> HandshakeV10:
        data = bytes(payload)
        if not data:
            raise DecodeError("empty handshake packet")
        end = data.find(b"\0", 1)
        if end < 0:
            raise DecodeError("server version is not NUL-terminated", offset=1)
        pos = end + 1
        if len(data) < pos + _HANDSHAKE_FIXED.size:
            raise DecodeError("truncated handshake packet", offset=len(data))
        (
            thread_id,
            scramble1,
            _filler,
            caps_low,
            charset,
            status,
            caps_high,
            auth_length,
            _reserved,
            mariadb_caps,
        ) = _HANDSHAKE_FIXED.unpack_from(data, pos)
        pos += _HANDSHAKE_FIXED.size
        rest_length = max(13, auth_length - 8)
        scramble2 = data[pos : pos + rest_length].rstrip(b"\0")
        pos += rest_length
        plugin_end = data.find(b"\0", pos)
        plugin = data[pos : plugin_end if plugin_end >= 0 else len(data)]
        return cls(
            protocol_version=data[0],
            server_version=data[1:end].decode(),
            thread_id=thread_id,
            scramble=scramble1 + scramble2,
            capabilities=caps_low | caps_high << 16,
            charset=charset,
            status=status,
            mariadb_capabilities=mariadb_caps,
            auth_plugin=plugin.decode(),
        )


@dataclass(frozen=True, slots=True)
class HandshakeResponse:
    """HandshakeResponse41 (or the 32-byte SSL request, when ``ssl_request`` is set)."""

    capabilities: int
    user: bytes = b""
    auth_response: bytes = b""
    max_packet_size: int = 16 * 1024 * 1024
    charset: int = UTF8MB4_GENERAL_CI
    database: bytes | None = None
    auth_plugin: str | None = None
    attributes: tuple[tuple[bytes, bytes], ...] = ()
    mariadb_capabilities: int = 0
    ssl_request: bool = False

    @property
    def is_mariadb_client(self) -> bool:
        return not self.capabilities & Capability.MYSQL

    @property
    def effective_mariadb_capabilities(self) -> int:
        return self.mariadb_capabilities if self.is_mariadb_client else 0

    def encode(self) -> bytes:
        reserved = bytes(19) + (
            U32.pack(self.mariadb_capabilities) if self.is_mariadb_client else bytes(4)
        )
        head = _RESPONSE_HEAD.pack(self.capabilities, self.max_packet_size, self.charset, reserved)
        if self.ssl_request:
            return head
        caps = self.capabilities
        parts = [head, self.user + b"\0"]
        if caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
            parts.append(packed_int(len(self.auth_response)) + self.auth_response)
        elif caps & Capability.SECURE_CONNECTION:
            parts.append(bytes((len(self.auth_response),)) + self.auth_response)
        else:
            parts.append(self.auth_response + b"\0")
        if caps & Capability.CONNECT_WITH_DB:
            parts.append((self.database or b"") + b"\0")
        if caps & Capability.PLUGIN_AUTH:
            parts.append((self.auth_plugin or "").encode() + b"\0")
        if caps & Capability.CONNECT_ATTRS:
            attrs = b"".join(
                packed_int(len(key)) + key + packed_int(len(value)) + value
                for key, value in self.attributes
            )
            parts.append(packed_int(len(attrs)) + attrs)
        return b"".join(parts)

    @classmethod
    def decode(cls, payload: Buffer) -> HandshakeResponse:
        """Parse a client's answer to the handshake. DecodeError: the server's "Bad handshake"."""
        data = bytes(payload)
        if len(data) < 4:
            raise DecodeError("handshake response shorter than its capability flags")
        caps = U16.unpack_from(data, 0)[0]
        if not caps & Capability.PROTOCOL_41:
            raise DecodeError("client does not speak protocol 4.1")
        if len(data) < RESPONSE_HEAD_LENGTH:
            raise DecodeError("truncated handshake response", offset=len(data))
        caps, max_packet, charset, reserved = _RESPONSE_HEAD.unpack_from(data, 0)
        mariadb_caps = U32.unpack_from(reserved, 19)[0]
        if len(data) == RESPONSE_HEAD_LENGTH and caps & Capability.SSL:
            return cls(
                capabilities=caps,
                max_packet_size=max_packet,
                charset=charset,
                mariadb_capabilities=mariadb_caps,
                ssl_request=True,
            )
        pos = RESPONSE_HEAD_LENGTH
        user, pos = _cstring(data, pos, "user name")
        auth: bytes
        if caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
            length, pos = read_packed_int(data, pos)
            auth, pos = _fixed(data, pos, length, "auth response")
        elif caps & Capability.SECURE_CONNECTION:
            length = _byte(data, pos)
            pos += 1
            auth, pos = _fixed(data, pos, length, "auth response")
        else:
            auth, pos = _cstring(data, pos, "auth response")
        database: bytes | None = None
        if caps & Capability.CONNECT_WITH_DB and pos < len(data):
            database, pos = _cstring(data, pos, "database name")
        plugin: str | None = None
        if caps & Capability.PLUGIN_AUTH and pos < len(data):
            end = data.find(b"\0", pos)
            raw_plugin = data[pos : end if end >= 0 else len(data)]
            pos = end + 1 if end >= 0 else len(data)
            plugin = raw_plugin.decode("utf-8", "replace")
        attributes: list[tuple[bytes, bytes]] = []
        if caps & Capability.CONNECT_ATTRS and pos < len(data):
            total, pos = read_packed_int(data, pos)
            end = pos + total
            if end > len(data):
                raise DecodeError("connection attributes run past the packet", offset=pos)
            while pos < end:
                key_length, pos = read_packed_int(data, pos)
                key, pos = _fixed(data, pos, key_length, "attribute name", limit=end)
                value_length, pos = read_packed_int(data, pos)
                value, pos = _fixed(data, pos, value_length, "attribute value", limit=end)
                attributes.append((key, value))
        return cls(
            capabilities=caps,
            user=user,
            auth_response=auth,
            max_packet_size=max_packet,
            charset=charset,
            database=database,
            auth_plugin=plugin,
            attributes=tuple(attributes),
            mariadb_capabilities=mariadb_caps,
        )


@dataclass(frozen=True, slots=True)
class AuthSwitchRequest:
    """The server's request to authenticate again with another plugin and scramble."""

    plugin: str
    data: bytes = field(default=b"")

    def encode(self) -> bytes:
        return b"\xfe" + self.plugin.encode() + b"\0" + self.data + b"\0"

    @classmethod
    def decode(cls, payload: Buffer) -> AuthSwitchRequest:
        data = bytes(payload)
        if not data or data[0] != 0xFE:
            raise DecodeError("not an auth switch request")
        end = data.find(b"\0", 1)
        if end < 0:
            raise DecodeError("auth switch plugin name is not NUL-terminated", offset=1)
        return cls(plugin=data[1:end].decode(), data=data[end + 1 :].rstrip(b"\0"))


def _byte(data: bytes, pos: int) -> int:
    if pos >= len(data):
        raise DecodeError("truncated handshake response", offset=pos)
    return data[pos]


def _cstring(data: bytes, pos: int, what: str) -> tuple[bytes, int]:
    end = data.find(b"\0", pos)
    if end < 0:
        raise DecodeError(f"{what} is not NUL-terminated", offset=pos)
    return data[pos:end], end + 1


def _fixed(
    data: bytes, pos: int, length: int, what: str, *, limit: int | None = None
) -> tuple[bytes, int]:
    end = pos + length
    if end > (len(data) if limit is None else limit):
        raise DecodeError(f"{what} runs past the packet", offset=pos)
    return data[pos:end], end
