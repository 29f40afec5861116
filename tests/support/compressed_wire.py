"""A raw client of the compressed protocol, for the fake master and for a real MariaDB alike.

:class:`CompressedClient` logs in with CLIENT_COMPRESS over plain packets, then sends compressed
packets it builds itself (zlib straight from the standard library, not the project's
``CompressedWriter``) and keeps every byte it receives, so tests compare what two servers
sent byte for byte. It reads the inner payloads with ``CompressedPacketReader`` only to know
where a response ends.
"""

from __future__ import annotations

import json
import socket
import struct
import zlib
from pathlib import Path
from typing import Any

from decoder.packets import CompressedPacketReader, PacketReader
from encoder.packets import frame
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    Capability,
    HandshakeResponse,
    HandshakeV10,
    native_password_response,
)
from tests.support.wire import BASE_CAPABILITIES, read_response

COMPRESSED_CAPABILITIES = BASE_CAPABILITIES | Capability.COMPRESS

__all__ = [
    "CAPTURE_DIR",
    "COMPRESSED_CAPABILITIES",
    "CompressedClient",
    "compressed_packet",
    "inner_stream",
    "load_capture",
    "result_ends",
    "split_compressed",
]


def compressed_packet(body: bytes, seq: int, *, deflate: bool = False) -> bytes:
    """One compressed packet: the 7-byte header and ``body``, deflated if asked."""
    if deflate:
        packed = zlib.compress(body)
        return struct.pack("<I", len(packed) | seq << 24) + len(body).to_bytes(3, "little") + packed
    return struct.pack("<I", len(body) | seq << 24) + b"\0\0\0" + body


def split_compressed(data: bytes) -> list[tuple[int, int, bytes, bytes]]:
    """(sequence number, stated inflated length, body as sent, body inflated) of each
    compressed packet of ``data``, walking the headers."""
    out = []
    pos = 0
    while pos < len(data):
        word = struct.unpack_from("<I", data, pos)[0]
        size, seq = word & 0xFFFFFF, word >> 24
        inflated = int.from_bytes(data[pos + 4 : pos + 7], "little")
        body = data[pos + 7 : pos + 7 + size]
        assert len(body) == size, "trailing partial compressed packet"
        out.append((seq, inflated, body, zlib.decompress(body) if inflated else body))
        pos += 7 + size
    return out


class CompressedClient:
    def __init__(
        self,
        host: str,
        port: int,
        user: str,
        password: str,
        *,
        capabilities: int = COMPRESSED_CAPABILITIES,
        timeout: float = 60.0,
    ) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.capabilities = capabilities
        plain = PacketReader(check_sequence=False)
        self.greeting = HandshakeV10.decode(self._read_plain(plain))
        response = HandshakeResponse(
            capabilities=capabilities,
            user=user.encode(),
            auth_response=native_password_response(password, self.greeting.scramble),
            auth_plugin=NATIVE_PASSWORD,
        )
        self.sock.sendall(frame(response.encode(), 1)[0])
        self.login_reply = self._read_plain(plain)
        self.reader = CompressedPacketReader(check_sequence=False)
        self.reader.feed(plain.detach())
        self.received = bytearray()  # every byte after the login's OK

    def _read_plain(self, reader: PacketReader) -> bytes:
        while (payload := reader.next_payload()) is None:
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("server closed the connection during the login")
            reader.feed(data)
        return payload

    # -- sending ---------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def command(self, payload: bytes, *, deflate: bool = False) -> bytes:
        """Send one command as one compressed packet (sequence 0, inner sequence 0); the bytes
        sent."""
        data = compressed_packet(frame(payload, 0)[0], 0, deflate=deflate)
        self.send_raw(data)
        return data

    # -- receiving -------------------------------------------------------------------------

    def _recv(self) -> bytes:
        data = self.sock.recv(1 << 20)
        self.received += data
        return data

    def read(self) -> bytes:
        while (payload := self.reader.next_payload()) is None:
            data = self._recv()
            if not data:
                raise ConnectionError("server closed the connection")
            self.reader.feed(data)
        return payload

    def take_received(self) -> bytes:
        data = bytes(self.received)
        self.received.clear()
        return data

    def response(self) -> list[bytes]:
        """The payloads of one command's response: OK, ERR or a result set, several results
        while the server says more follow."""
        return read_response(self.read, self.capabilities)

    def query(self, sql: str | bytes, *, deflate: bool = False) -> tuple[bytes, bytes]:
        """(bytes sent, bytes received) of a COM_QUERY and its whole response."""
        raw = sql.encode() if isinstance(sql, str) else sql
        sent = self.command(b"\x03" + raw, deflate=deflate)
        self.response()
        return sent, self.take_received()

    def until_closed(self) -> bytes:
        """Everything the server sends until it closes the connection."""
        try:
            while self._recv():
                pass
        except ConnectionResetError:
            pass
        return self.take_received()

    def close(self) -> None:
        try:
            self.command(b"\x01")
        except OSError:
            pass
        self.sock.close()

    def __enter__(self) -> CompressedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- the golden capture of a real server (scripts/capture-compressed-protocol.py) ---------------

CAPTURE_DIR = Path(__file__).resolve().parents[1] / "golden" / "compressed_protocol"


def load_capture() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((CAPTURE_DIR / "capture.json").read_text())
    return document


def inner_stream(data: bytes) -> bytes:
    """The packets carried by the compressed packets of ``data``, joined."""
    return b"".join(plain for _, _, _, plain in split_compressed(data))


def result_ends(packets: bytes, capabilities: int) -> list[int]:
    """Where each result of a response ends in ``packets`` (plain packets, 4-byte headers):
    after an OK or ERR, or after the EOF (or OK) that ends a result set's rows."""
    ends = []
    pos = 0
    state = "first"
    columns = 0
    while pos < len(packets):
        size = int.from_bytes(packets[pos : pos + 3], "little")
        payload = packets[pos + 4 : pos + 4 + size]
        pos += 4 + size
        if size == 0xFFFFFF:
            continue  # a longer payload goes on in the next packet
        if state == "first":
            if payload[:1] in (b"\x00", b"\xff"):
                ends.append(pos)
                continue
            columns, state = payload[0], "columns"
        elif state == "columns":
            columns -= 1
            if columns == 0:
                state = "rows" if capabilities & Capability.DEPRECATE_EOF else "eof"
        elif state == "eof":
            state = "rows"
        elif payload[:1] in (b"\xfe", b"\xff"):
            ends.append(pos)
            state = "first"
    return ends
