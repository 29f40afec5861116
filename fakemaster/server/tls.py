"""Server-side TLS over memory buffers, for the asyncio shell (:mod:`fakemaster.server.master`)."""

from __future__ import annotations

import ssl

__all__ = ["TlsLayer"]

# Plaintext read from the TLS layer at a time.
_PLAINTEXT_CHUNK = 1 << 16


class TlsLayer:
    """Server-side TLS over memory buffers: the shell keeps reading and writing the plain
    socket, so no byte the client sent before or during the TLS handshake gets lost."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._handshaken = False

    def receive(self, data: bytes) -> bytes:
        """Take bytes from the socket; the plaintext they complete (maybe none yet)."""
        if data:
            self._incoming.write(data)
        if not self._handshaken:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                return b""
            self._handshaken = True
        chunks = []
        while True:
            try:
                chunk = self._tls.read(_PLAINTEXT_CHUNK)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def send(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = self._tls.write(view)
            view = view[written:]

    def outgoing_bytes(self) -> bytes:
        return self._outgoing.read()
