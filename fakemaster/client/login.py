"""The login of one client connection, sans-IO: the greeting, the TLS upgrade, the handshake
response and the auth switch (mysql_native_password, MariaDB's client_ed25519), then the
compressed protocol when asked for.

:class:`Login` is shared by the replica connection (:mod:`fakemaster.client.protocol`) and the
recorder's SQL session (:mod:`fakemaster.record.query`): they feed it the bytes read and take
from it the payloads that follow the login; it owns the connection's bytes both ways (TLS
included), so everything they send goes through :meth:`Login.send`.

Compression (``compress=True``, the mariadb client's ``--compress``): the client asks for
CLIENT_COMPRESS when the server offers it (a server that does not gets a plain connection, as
the mariadb client does) and from the OK of the login on both directions are compressed
packets (the 7-byte header of ``encoder.packets.compress_frame``): each command the client
sends is one flush of a ``CompressedWriter`` numbered from 0, and the server's answer is read
through a ``CompressedInflater`` that expects the next numbers. During a semi-sync dump the
primary restarts its numbers after each event it wants acknowledged, so there they are not
checked (nor are the inner packets' numbers, which MariaDB does not check either).
"""

from __future__ import annotations

import ssl
from enum import Enum

from decoder.packets import CompressedInflater, PacketReader, parse_err
from encoder.packets import CompressedWriter, frame
from fakemaster.client.errors import AuthError, ProtocolError, ServerRefused, TlsError
from fakemaster.client.tls import TlsLayer
from fakemaster.protocol.ed25519 import ED25519_PLUGIN, ed25519_response
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    AuthSwitchRequest,
    Capability,
    HandshakeResponse,
    HandshakeV10,
    native_password_response,
)
from fakemaster.vocabulary.errcodes import ER_NOT_SUPPORTED_AUTH_MODE
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import EOF_HEADER, ERR_HEADER, OK_HEADER, ErrPacket

__all__ = [
    "CLIENT_CAPABILITIES",
    "Login",
    "LoginPhase",
    "auth_answer",
    "login_response",
    "ssl_request",
]

# What the client asks for: MariaDB's own client library's core set, without a database or
# CLIENT_DEPRECATE_EOF (result sets end with EOF packets); SSL when a TLS context is
# configured, COMPRESS when asked for and offered.
CLIENT_CAPABILITIES = (
    Capability.MYSQL
    | Capability.LONG_FLAG
    | Capability.PROTOCOL_41
    | Capability.TRANSACTIONS
    | Capability.SECURE_CONNECTION
    | Capability.MULTI_RESULTS
    | Capability.PLUGIN_AUTH
    | Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA
)


class LoginPhase(Enum):
    # The values name the phase in "connection closed by the server during the ..." messages.
    GREETING = "greeting"
    TLS = "TLS handshake"
    AUTH = "auth"
    DONE = "done"


def login_response(
    handshake: HandshakeV10,
    user: str,
    password: str,
    attributes: tuple[tuple[bytes, bytes], ...] = (),
    *,
    tls: bool = False,
    compress: bool = False,
) -> bytes:
    """The handshake response a replica sends to ``handshake``: the client capabilities the
    server shares, mysql_native_password, and connect attributes when given and the server
    takes them (with ``tls``, the response sent inside TLS after the SSL request; with
    ``compress``, CLIENT_COMPRESS if the server offers it)."""
    caps = _capabilities(handshake, tls=tls, compress=compress)
    if attributes and handshake.capabilities & Capability.CONNECT_ATTRS:
        caps |= Capability.CONNECT_ATTRS
    response = HandshakeResponse(
        capabilities=int(caps),
        user=user.encode(),
        auth_response=native_password_response(password, handshake.scramble),
        auth_plugin=NATIVE_PASSWORD,
        attributes=attributes,
    )
    return response.encode()


def ssl_request(handshake: HandshakeV10, *, compress: bool = False) -> bytes:
    """The 32-byte SSL request that asks the server to start TLS (with the capabilities of
    the response that follows it)."""
    caps = _capabilities(handshake, tls=True, compress=compress)
    return HandshakeResponse(capabilities=int(caps), ssl_request=True).encode()


def _capabilities(handshake: HandshakeV10, *, tls: bool, compress: bool = False) -> int:
    caps = CLIENT_CAPABILITIES & (handshake.capabilities | Capability.MYSQL)
    if compress:
        caps |= handshake.capabilities & Capability.COMPRESS
    return caps | Capability.SSL if tls else caps


def auth_answer(payload: bytes, password: str) -> bytes | None:
    """The answer to a login reply that is neither OK nor anything unexpected: the native
    password response to an auth switch. Raises AuthError for an ERR or another plugin; None
    for any other packet (the caller says what is unexpected)."""
    head = payload[0]
    if head == ERR_HEADER:
        raise AuthError(parse_err(payload), "the login")
    if head != EOF_HEADER:
        return None
    switch = AuthSwitchRequest.decode(payload)
    if switch.plugin == ED25519_PLUGIN:
        # The scramble is 32 random bytes: taken whole (a trailing NUL is part of it).
        raw = bytes(payload)
        return ed25519_response(password, raw[raw.index(0, 1) + 1 :][:32])
    if switch.plugin != NATIVE_PASSWORD:
        raise AuthError(
            ErrPacket(
                ER_NOT_SUPPORTED_AUTH_MODE,
                "08004",
                f"auth plugin {switch.plugin!r} is not supported",
            ),
            "the login",
        )
    return native_password_response(password, switch.data)


class Login:
    """One connection's bytes from the greeting on (see the module docstring).

    Feed it what was read (:meth:`feed`), take the payloads that follow the login with
    :meth:`next_payload` (it answers the login's own packets itself and returns None when it
    needs more bytes, and once right after the login succeeded: :attr:`done` then tells), and
    send :meth:`data_to_send` after every call. ``tls``: an SSL context to require TLS with;
    ``server_hostname``: the name its certificate must carry; ``compress``: ask for the
    compressed protocol (:attr:`compressed` tells, after the login, whether it is on).
    """

    def __init__(
        self,
        user: str,
        password: str,
        *,
        attributes: tuple[tuple[bytes, bytes], ...] = (),
        tls: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        compress: bool = False,
    ) -> None:
        self.user = user
        self.password = password
        self.attributes = attributes
        self.phase = LoginPhase.GREETING
        self.handshake: HandshakeV10 | None = None
        self._tls_context = tls
        self._server_hostname = server_hostname
        self._tls: TlsLayer | None = None
        # Bytes sent as they are, before what _out holds: the SSL request (in the clear) and
        # the TLS handshake's own records.
        self._raw_out = bytearray()
        self._out = bytearray()
        self._reader = PacketReader(check_sequence=False)
        self._seq = 0
        self._compress = compress
        self.compressed = False
        self._inflater: CompressedInflater | None = None  # once compression is on
        self._compressed_seq = 0

    @property
    def done(self) -> bool:
        return self.phase is LoginPhase.DONE

    # --- bytes both ways ------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        self._reader.feed(self.plaintext(data))

    def plaintext(self, data: bytes) -> bytes:
        """``data`` read from the connection as the protocol sees it (decrypted under TLS),
        for a caller that reads packets itself after the login (see :meth:`detach`)."""
        tls = self._tls
        if tls is None:
            return self._inflate(data)
        if not tls.handshake_done:
            try:
                self._raw_out += tls.handshake(data)
            except ssl.SSLError as error:
                raise TlsError(f"TLS handshake failed: {error}") from None
            if not tls.handshake_done:
                return b""
            self._send_login()
            data = b""
        return self._inflate(tls.decrypt(data))

    def _inflate(self, data: bytes) -> bytes:
        if self._inflater is None or not data:
            return data
        try:
            return self._inflater.feed(data)
        except DecodeError as error:
            raise ProtocolError(f"malformed compressed packet: {error}", error) from None

    def detach(self) -> bytes:
        """The bytes fed (as :meth:`plaintext` gives them) not yet returned in a payload; the
        caller reads the rest of the connection itself from then on."""
        return self._reader.detach()

    def send(self, payload: bytes, *, new_command: bool = False, check_answer: bool = True) -> None:
        """Queue ``payload`` as the next packet (sequence 0 for a new command). On a
        compressed connection ``check_answer`` False: the numbers of the compressed packets
        read from now on are not checked (see the module docstring)."""
        if new_command:
            self._seq = self._compressed_seq = 0
        packet, self._seq = frame(payload, self._seq)
        if self._inflater is None:
            self._out += packet
            return
        writer = CompressedWriter(sequence=self._compressed_seq)
        writer.write_packets(packet)
        writer.flush()
        self._out += writer.take()
        self._compressed_seq = writer.sequence
        self._inflater.expect_sequence(writer.sequence if check_answer else None)

    def data_to_send(self) -> bytes:
        data = bytes(self._out)
        self._out.clear()
        if self._tls is not None and self._tls.handshake_done:
            data = self._tls.encrypt(data)
        if self._raw_out:
            data = bytes(self._raw_out) + data
            self._raw_out.clear()
        return data

    # --- packets --------------------------------------------------------------------------

    def next_payload(self) -> bytes | None:
        """The next payload after the login, or None (see the class docstring). Errors:
        :class:`ProtocolError` for malformed packets, :class:`AuthError`, :class:`TlsError`,
        :class:`ServerRefused` (an ERR greeting, e.g. 1040 too many connections)."""
        while True:
            try:
                payload = self._reader.next_payload()
            except DecodeError as error:
                raise ProtocolError(f"malformed packet: {error}", error) from None
            if payload is None:
                return None
            self._seq = (self._seq + 1) & 0xFF
            if self.done:
                return payload
            phase = self.phase
            try:
                self._login_step(payload)
            except DecodeError as error:
                raise ProtocolError(f"malformed {phase.value} packet: {error}", error) from None
            if self.done:
                return None
            if self.phase is LoginPhase.TLS:
                return None  # the rest comes through TLS

    def _login_step(self, payload: bytes) -> None:
        if self.phase is LoginPhase.GREETING:
            self._greeting(payload)
        else:
            self._auth_reply(payload)

    def _greeting(self, payload: bytes) -> None:
        if payload[:1] == bytes((ERR_HEADER,)):
            raise ServerRefused(parse_err(payload), "the connection")  # e.g. 1040 too many
        handshake = HandshakeV10.decode(payload)
        self.handshake = handshake
        context = self._tls_context
        if context is None:
            self._send_login()
            return
        if not handshake.capabilities & Capability.SSL:
            raise TlsError("TLS/SSL error: SSL is required, but the server does not support it")
        self.send(ssl_request(handshake, compress=self._compress))
        self._raw_out += self._out  # the request goes in the clear, before the TLS session
        self._out.clear()
        self._tls = TlsLayer(context, self._server_hostname)
        self._raw_out += self._tls.handshake()
        self.phase = LoginPhase.TLS

    def _send_login(self) -> None:
        assert self.handshake is not None
        self.compressed = self._compress and bool(self.handshake.capabilities & Capability.COMPRESS)
        self.send(
            login_response(
                self.handshake,
                self.user,
                self.password,
                self.attributes,
                tls=self._tls is not None,
                compress=self._compress,
            )
        )
        self.phase = LoginPhase.AUTH

    def _auth_reply(self, payload: bytes) -> None:
        if payload and payload[0] == OK_HEADER:
            self.phase = LoginPhase.DONE
            if self.compressed:
                # The server compresses what it sends after this OK.
                self._inflater = CompressedInflater()
                self._reader.feed(self._inflate(self._reader.detach()))
            return
        answer = auth_answer(payload, self.password) if payload else None
        if answer is None:
            head = payload[0] if payload else 0
            raise AuthError(
                ErrPacket(
                    ER_NOT_SUPPORTED_AUTH_MODE, "08004", f"unexpected auth packet 0x{head:02x}"
                ),
                "the login",
            )
        self.send(answer)
