"""Send raw bytes to a server after a login and describe everything it answers, the same way
for the fake master and a real MariaDB: the outcome of a malformed command on the wire.

No verdict waits for silence: a probe either ends by itself (the server closes: a dump ended,
an error, COM_QUIT) or is followed by a COM_PING and a half-close, after which a server reads
the end of the stream and closes; only a hang meets the socket timeout.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from decoder.packets import PacketReader
from encoder.packets import frame
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    HandshakeResponse,
    HandshakeV10,
    native_password_response,
)
from tests.support.wire import BASE_CAPABILITIES

__all__ = ["Outcome", "packet", "probe"]

HANG = 60.0  # bounds a hang only

_EVENTS = re.compile(r"(?:EVENT )+")


def packet(payload: bytes, seq: int = 0, declared: int | None = None) -> bytes:
    """A packet on the wire; ``declared``: the length its header states, if not the truth."""
    length = len(payload) if declared is None else declared
    return length.to_bytes(3, "little") + bytes((seq,)) + payload


@dataclass(frozen=True)
class Outcome:
    answers: str  # each payload described, binlog events as one EVENTS
    end: str  # "closed" (FIN), "reset" (RST), "reset cutting a packet"


def describe(payload: bytes) -> str:
    if not payload:
        return "EMPTY"
    if payload[0] == 0xFF:
        errno = struct.unpack_from("<H", payload, 1)[0]
        return f"ERR {errno} {payload[9:].decode('utf-8', 'replace')}"
    if payload[0] == 0xFE and len(payload) < 9:
        return "EOF"
    if payload[0] == 0x00 and len(payload) >= 20:
        return "EVENT"
    if payload[0] == 0x00:
        return "OK"
    return f"P{payload[0]}/{len(payload)}"


class _Client:
    def __init__(self, port: int, user: str, password: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
        self.reader = PacketReader(check_sequence=False)
        greeting = HandshakeV10.decode(self.read())
        response = HandshakeResponse(
            capabilities=BASE_CAPABILITIES,
            user=user.encode(),
            auth_response=native_password_response(password, greeting.scramble),
            auth_plugin=NATIVE_PASSWORD,
            charset=45,
        )
        self.sock.sendall(frame(response.encode(), 1)[0])
        assert self.read()[:1] == b"\x00", "login refused"

    def read(self) -> bytes:
        while True:
            payload = self.reader.next_payload()
            if payload is not None:
                return payload
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("closed")
            self.reader.feed(data)

    def query(self, sql: str) -> None:
        """A statement whose whole answer is one packet or a small result set."""
        self.sock.sendall(frame(b"\x03" + sql.encode(), 0)[0])
        first = self.read()
        if first[0] in (0x00, 0xFF):
            return
        eofs = 0
        while eofs < 2:
            eofs += describe(self.read()) == "EOF"

    def until_closed(self) -> tuple[list[str], str]:
        answers: list[str] = []
        end = "closed"
        while True:
            payload = self.reader.next_payload()
            if payload is not None:
                answers.append(describe(payload))
                continue
            try:
                data = self.sock.recv(1 << 16)
            except ConnectionResetError:
                end = "reset"
                break
            if not data:
                break
            self.reader.feed(data)
        if self.reader.buffered:
            end += " cutting a packet"
        return answers, end


def probe(
    port: int,
    raw: bytes,
    *,
    setup: Sequence[str] = (),
    ping: bool = True,
    user: str = "root",
    password: str = "",
) -> Outcome:
    """Log in, run ``setup``, send ``raw``; then (``ping``) a COM_PING and a half-close.
    Everything the server sends until it closes, and how it closes."""
    client = _Client(port, user, password)
    try:
        for sql in setup:
            client.query(sql)
        client.sock.sendall(raw)
        if ping:
            with contextlib.suppress(OSError):
                client.sock.sendall(packet(b"\x0e"))
                client.sock.shutdown(socket.SHUT_WR)
        answers, end = client.until_closed()
    finally:
        client.sock.close()
    return Outcome(_EVENTS.sub("EVENTS ", " ".join(answers) + " ").strip(), end)
