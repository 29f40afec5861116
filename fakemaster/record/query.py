"""A text-protocol SQL session, sans-IO: log in, run statements, keep their result rows.

The recorder asks a primary what a replica (and a CDC tool) asks it: ``SHOW GLOBAL
VARIABLES``, ``SHOW BINARY LOGS``... :class:`QueryConnection` logs in as
:class:`fakemaster.client.protocol.ReplicaConnection` does (mysql_native_password, the auth
switch) and sends its statements one after the other; rows come back as text cells (bytes or
None for NULL).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field

from decoder.packets import PacketReader, parse_err
from decoder.primitives import read_packed_int
from encoder.packets import frame
from fakemaster.client.protocol import (
    ProtocolError,
    TlsError,
    auth_answer,
    login_response,
    parse_text_row,
    query_error,
    ssl_request,
)
from fakemaster.client.tls import TlsLayer
from fakemaster.protocol.handshake import (
    Capability,
    HandshakeV10,
)
from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import EOF_HEADER, ERR_HEADER, OK_HEADER, ErrPacket

__all__ = ["QueryConnection", "QueryResult", "Row"]

Row = tuple[bytes | None, ...]


@dataclass(slots=True)
class QueryResult:
    """One statement's answer: column names and rows (empty for an OK)."""

    sql: str
    columns: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    error: ErrPacket | None = None

    def text_rows(self) -> list[tuple[str | None, ...]]:
        return [tuple(None if cell is None else cell.decode() for cell in row) for row in self.rows]


class QueryConnection:
    """Log in as ``user``/``password`` and run ``statements`` in order (see the module
    docstring). Feed it the bytes read, send :meth:`data_to_send` after each call; ``done``
    once every statement was answered, ``results`` then holds the answers. An ERR answer is
    raised (:class:`fakemaster.client.protocol.ServerRefused`), or with ``tolerate_errors``
    kept in its result's ``error``."""

    def __init__(
        self,
        user: str,
        password: str,
        statements: Sequence[str],
        *,
        tolerate_errors: bool = False,
        tls: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
    ) -> None:
        self.tolerate_errors = tolerate_errors
        self._tls_context = tls
        self._server_hostname = server_hostname
        self._tls: TlsLayer | None = None
        self._raw_out = bytearray()
        self.user = user
        self.password = password
        self.statements = list(statements)
        self.results: list[QueryResult] = []
        self.handshake: HandshakeV10 | None = None
        self._reader = PacketReader(check_sequence=False)
        self._out = bytearray()
        self._seq = 0
        self._phase = "greeting"
        self._result: QueryResult | None = None
        self._columns_left = -1  # -1: expecting the column count
        self._eof_seen = False

    @property
    def done(self) -> bool:
        return self._phase == "done"

    def data_to_send(self) -> bytes:
        data = bytes(self._out)
        self._out.clear()
        if self._tls is not None and self._tls.handshake_done:
            data = self._tls.encrypt(data)
        data, self._raw_out = bytes(self._raw_out) + data, bytearray()
        return data

    def feed(self, data: bytes) -> None:
        if self._tls is not None:
            if not self._tls.handshake_done:
                try:
                    self._raw_out += self._tls.handshake(data)
                except ssl.SSLError as error:
                    raise TlsError(f"TLS handshake failed: {error}") from None
                if not self._tls.handshake_done:
                    return
                self._login()
                data = b""
            data = self._tls.decrypt(data)
        self._reader.feed(data)
        while not self.done:
            try:
                payload = self._reader.next_payload()
                if payload is None:
                    return
                self._seq = (self._seq + 1) & 0xFF
                self._take(payload)
            except DecodeError as error:
                raise ProtocolError(f"malformed packet: {error}", error) from None

    def _send(self, payload: bytes, *, new_command: bool = False) -> None:
        if new_command:
            self._seq = 0
        packet, self._seq = frame(payload, self._seq)
        self._out += packet

    def _login(self) -> None:
        assert self.handshake is not None
        tls = self._tls is not None
        self._send(login_response(self.handshake, self.user, self.password, tls=tls))
        self._phase = "auth"

    def _take(self, payload: bytes) -> None:
        head = payload[0] if payload else None
        if self._phase == "greeting":
            if head == ERR_HEADER:
                raise query_error(parse_err(payload), "the connection")
            self.handshake = HandshakeV10.decode(payload)
            if self._tls_context is None:
                self._login()
                return
            if not self.handshake.capabilities & Capability.SSL:
                raise TlsError("TLS/SSL error: SSL is required, but the server does not support it")
            self._send(ssl_request(self.handshake))
            self._raw_out += self._out  # in the clear, before the TLS session
            self._out.clear()
            self._tls = TlsLayer(self._tls_context, self._server_hostname)
            self._raw_out += self._tls.handshake()
            self._phase = "tls"
        elif self._phase == "auth":
            if head == OK_HEADER:
                self._next_statement()
                return
            answer = auth_answer(payload, self.password) if payload else None
            if answer is None:
                raise ProtocolError(f"unexpected packet 0x{head or 0:02x} during the login")
            self._send(answer)
        else:
            self._answer(payload)

    def _next_statement(self) -> None:
        if not self.statements:
            self._phase = "done"
            return
        sql = self.statements.pop(0)
        self._result = QueryResult(sql)
        self._columns_left = -1
        self._eof_seen = False
        self._phase = "query"
        self._send(bytes((Command.QUERY,)) + sql.encode(), new_command=True)

    def _answer(self, payload: bytes) -> None:
        result = self._result
        assert result is not None
        head = payload[0]
        if head == ERR_HEADER and (self._columns_left < 0 or self._eof_seen):
            packet = parse_err(payload)
            if not self.tolerate_errors:
                raise query_error(packet, repr(result.sql))
            result.error = packet
            return self._finished()
        if self._columns_left < 0:
            if head == OK_HEADER:
                return self._finished()
            count, _ = read_packed_int(payload, 0)
            self._columns_left = count
            return None
        if self._columns_left:
            self._columns_left -= 1
            result.columns.append(_column_name(payload))
            return None
        if not self._eof_seen:
            if head != EOF_HEADER:
                raise ProtocolError("no EOF after the column definitions")
            self._eof_seen = True
            return None
        if head == EOF_HEADER and len(payload) < 9:
            return self._finished()
        result.rows.append(parse_text_row(payload, len(result.columns)))
        return None

    def _finished(self) -> None:
        assert self._result is not None
        self.results.append(self._result)
        self._result = None
        self._next_statement()


def _lenenc(payload: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = read_packed_int(payload, pos)
    if pos + length > len(payload):
        raise DecodeError("a length-encoded string runs past the packet", offset=pos)
    return payload[pos : pos + length], pos + length


def _column_name(payload: bytes) -> str:
    """The ``name`` of a column definition (catalog, schema, table, org_table, name, ...)."""
    pos = 0
    for _ in range(4):
        _, pos = _lenenc(payload, pos)
    name, _ = _lenenc(payload, pos)
    return name.decode(errors="replace")
