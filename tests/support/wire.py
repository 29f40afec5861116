"""Client side of the wire for the fake-master tests.

:class:`SessionDriver` talks to a sans-IO :class:`ServerSession` in memory; :class:`RawClient`
to a server over TCP (the fake master or a real MariaDB). Both speak through the project's own
handshake and packet modules, so what a test compares is bytes, not a driver's interpretation.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from decoder.packets import PacketReader
from encoder.packets import frame
from fakemaster.core.session import Action, SendBytes, ServerSession
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    Capability,
    HandshakeResponse,
    HandshakeV10,
    native_password_response,
)

# What the captured sessions used: a MySQL-flavoured 4.1 client with plugin auth.
BASE_CAPABILITIES = int(
    Capability.MYSQL
    | Capability.LONG_FLAG
    | Capability.PROTOCOL_41
    | Capability.TRANSACTIONS
    | Capability.SECURE_CONNECTION
    | Capability.MULTI_RESULTS
    | Capability.PLUGIN_AUTH
    | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
)


def packets(data: bytes) -> list[tuple[int, bytes]]:
    """(sequence number, payload) of each packet in ``data`` (no reassembly)."""
    out = []
    pos = 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 3], "little")
        out.append((data[pos + 3], data[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    assert pos == len(data), "trailing partial packet"
    return out


@dataclass
class Reply:
    actions: list[Action]

    @property
    def data(self) -> bytes:
        return b"".join(a.data for a in self.actions if isinstance(a, SendBytes))

    @property
    def packets(self) -> list[tuple[int, bytes]]:
        return packets(self.data)

    @property
    def payloads(self) -> list[bytes]:
        return [payload for _, payload in self.packets]

    def of_type(self, kind: type) -> list[Action]:
        return [a for a in self.actions if isinstance(a, kind)]


class SessionDriver:
    """A client in memory: frames payloads into a ServerSession and collects its actions."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.greeting = HandshakeV10.decode(packets(session.initial_bytes())[0][1])

    def send(self, payload: bytes, seq: int = 0) -> Reply:
        return Reply(self.session.receive_data(frame(payload, seq)[0]))

    def send_raw(self, data: bytes) -> Reply:
        return Reply(self.session.receive_data(data))

    def login(
        self,
        user: str = "repl",
        password: str = "secret",
        *,
        capabilities: int = BASE_CAPABILITIES,
        charset: int = 45,
        database: str | None = None,
        mariadb_capabilities: int = 0,
    ) -> Reply:
        # A database (even an empty name) is sent with CONNECT_WITH_DB.
        with_db = database is not None
        response = HandshakeResponse(
            capabilities=capabilities | (Capability.CONNECT_WITH_DB if with_db else 0),
            user=user.encode(),
            auth_response=native_password_response(password, self.greeting.scramble),
            charset=charset,
            database=database.encode() if database is not None else None,
            auth_plugin=NATIVE_PASSWORD,
            mariadb_capabilities=mariadb_capabilities,
        )
        return self.send(response.encode(), 1)

    def query(self, sql: str | bytes) -> Reply:
        raw = sql.encode() if isinstance(sql, str) else sql
        return self.send(b"\x03" + raw, 0)


def _status(payload: bytes) -> int:
    """The status flags of an OK (0x00 or 0xFE header) or a 5-byte EOF."""
    if payload[:1] == b"\xfe" and len(payload) == 5:
        return int.from_bytes(payload[3:5], "little")
    pos = 1
    for _ in range(2):  # affected rows, last insert id
        first = payload[pos]
        pos += 1 + {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first, 0)
    return int.from_bytes(payload[pos : pos + 2], "little")


def read_response(read: Callable[[], bytes], capabilities: int) -> list[bytes]:
    """The payloads of one command's response, read with ``read``: OK, ERR or a whole result set,
    several of them for a multi-statement query (while the server says more results follow)."""
    out: list[bytes] = []
    while True:
        final = _one_result(read, capabilities, out)
        if final[:1] not in (b"\x00", b"\xfe") or not _status(final) & 0x0008:
            return out


def _one_result(read: Callable[[], bytes], capabilities: int, out: list[bytes]) -> bytes:
    first = read()
    out.append(first)
    if first[:1] in (b"\x00", b"\xff"):
        return first
    out.extend(read() for _ in range(first[0]))
    if not capabilities & Capability.DEPRECATE_EOF:
        out.append(read())
    while True:
        payload = read()
        out.append(payload)
        if payload[:1] in (b"\xfe", b"\xff") and len(payload) < 0xFFFFFF:
            return payload


class RefusedAtConnect(Exception):
    """The server's first packet was an error (``Too many connections``, a host blocked), not
    a greeting: ``payload`` is it."""

    def __init__(self, payload: bytes) -> None:
        super().__init__(f"refused before the greeting: {payload!r}")
        self.payload = payload


class RawClient:
    """A blocking TCP client that logs in with mysql_native_password and returns raw payloads.
    A server that refuses the connection before its greeting raises :class:`RefusedAtConnect`."""

    def __init__(
        self,
        host: str,
        port: int,
        user: str,
        password: str,
        *,
        capabilities: int = BASE_CAPABILITIES,
        charset: int = 45,
        timeout: float = 60.0,  # bounds a hang only: a slow machine just waits longer
        database: str | None = None,
        mariadb_capabilities: int = 0,  # MariaDB's extended bits (needs no CLIENT_MYSQL)
    ) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if database is not None:  # even an empty name goes with CONNECT_WITH_DB
            capabilities |= Capability.CONNECT_WITH_DB
        self.capabilities = capabilities
        self._reader = PacketReader(check_sequence=False)
        self.greeting_payload = self.read()
        if self.greeting_payload[:1] == b"\xff":
            self.sock.close()
            raise RefusedAtConnect(self.greeting_payload)
        self.greeting = HandshakeV10.decode(self.greeting_payload)
        response = HandshakeResponse(
            capabilities=capabilities,
            user=user.encode(),
            auth_response=native_password_response(password, self.greeting.scramble),
            charset=charset,
            database=database.encode() if database is not None else None,
            auth_plugin=NATIVE_PASSWORD,
            mariadb_capabilities=mariadb_capabilities,
        )
        self.write(response.encode(), 1)
        self.login_reply = self.read()

    def write(self, payload: bytes, seq: int = 0) -> None:
        self.sock.sendall(frame(payload, seq)[0])

    def read(self) -> bytes:
        while True:
            payload = self._reader.next_payload()
            if payload is not None:
                return payload
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("server closed the connection")
            self._reader.feed(data)

    def payloads(self) -> Iterator[bytes]:
        while True:
            yield self.read()

    def query(self, sql: str) -> list[bytes]:
        """The payloads of a query's response: OK, ERR or a whole result set, several of them
        for a multi-statement query (while the server says more results follow)."""
        self.write(b"\x03" + sql.encode(), 0)
        return read_response(self.read, self.capabilities)

    def close(self) -> None:
        try:
            self.write(b"\x01", 0)
        except OSError:
            pass
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
