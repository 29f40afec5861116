"""TLS for the replica client, sans-IO: the protocol object runs an :class:`ssl.SSLObject` over
memory buffers, so the blocking shell, the asyncio shell, ``record`` and the streaming source
get TLS without knowing it (they move bytes as before).

The client's TLS modes are MariaDB's client's (``--ssl``, ``--ssl-verify-server-cert``, and
MySQL's ``--ssl-mode`` names for them):

* ``tls_context(verify=True)`` (``VERIFY_IDENTITY``): the server's certificate must chain to
  ``ca`` (the system's CAs without one) and name the host;
* ``tls_context(verify=False)`` (``REQUIRED``): encrypted, the certificate not checked;
* no context (``ClientConfig.tls`` None, ``DISABLED``): plain, as before.

A client given a context never falls back to plain: a server that does not offer TLS is an
error (2026, as the mariadb client says it).
"""

from __future__ import annotations

import ssl
from pathlib import Path

__all__ = ["TlsLayer", "tls_context"]


def tls_context(
    *,
    ca: str | Path | None = None,
    verify: bool = True,
    cert: str | Path | None = None,
    key: str | Path | None = None,
) -> ssl.SSLContext:
    """A client context: verify the server against ``ca`` (or the system's CAs) and its
    name when ``verify``; ``cert``/``key``: a client certificate (``REQUIRE X509`` accounts)."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if cert is not None:
        context.load_cert_chain(cert, key)
    return context


class TlsLayer:
    """One connection's TLS session over memory buffers: ciphertext in and out, plaintext
    through :meth:`decrypt` and :meth:`encrypt`."""

    def __init__(self, context: ssl.SSLContext, server_hostname: str | None) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        name = server_hostname if context.check_hostname else None
        self._object = context.wrap_bio(self._incoming, self._outgoing, server_hostname=name)
        self.handshake_done = False

    def handshake(self, ciphertext: bytes = b"") -> bytes:
        """Feed ``ciphertext`` to the handshake; the bytes to send. :attr:`handshake_done`
        tells when it finished. ssl.SSLError (a bad certificate...) is raised."""
        if ciphertext:
            self._incoming.write(ciphertext)
        try:
            self._object.do_handshake()
            self.handshake_done = True
        except ssl.SSLWantReadError:
            pass
        return self._outgoing.read()

    def decrypt(self, ciphertext: bytes) -> bytes:
        """The plaintext that ``ciphertext`` completes (maybe none yet)."""
        self._incoming.write(ciphertext)
        chunks = []
        while True:
            try:
                chunk = self._object.read(1 << 16)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def encrypt(self, plaintext: bytes) -> bytes:
        if plaintext:
            self._object.write(plaintext)
        return self._outgoing.read()

    @property
    def pending(self) -> bytes:
        """Ciphertext the session wants sent (a TLS 1.3 ticket answer, an alert)."""
        return self._outgoing.read()
