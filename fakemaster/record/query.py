"""A text-protocol SQL session, sans-IO: log in, run statements, keep their result rows.

The recorder asks a primary what a replica (and a CDC tool) asks it: ``SHOW GLOBAL
VARIABLES``, ``SHOW BINARY LOGS``... :class:`QueryConnection` logs in as
:class:`fakemaster.client.protocol.ReplicaConnection` does (the same
:class:`fakemaster.client.login.Login`) and sends its statements one after the other; rows come back as text cells (bytes or
None for NULL).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field

from decoder.packets import parse_err
from decoder.primitives import read_packed_int
from fakemaster.client.errors import ProtocolError, query_error
from fakemaster.client.login import Login
from fakemaster.client.protocol import parse_text_row
from fakemaster.protocol.handshake import HandshakeV10
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
        compress: bool = False,
    ) -> None:
        self.tolerate_errors = tolerate_errors
        self._login = Login(
            user, password, tls=tls, server_hostname=server_hostname, compress=compress
        )
        self.user = user
        self.password = password
        self.statements = list(statements)
        self.results: list[QueryResult] = []
        self._querying = False
        self._done = False
        self._result: QueryResult | None = None
        self._columns_left = -1  # -1: expecting the column count
        self._eof_seen = False

    @property
    def handshake(self) -> HandshakeV10 | None:
        return self._login.handshake

    @property
    def done(self) -> bool:
        return self._done

    def data_to_send(self) -> bytes:
        return self._login.data_to_send()

    def feed(self, data: bytes) -> None:
        login = self._login
        login.feed(data)
        while not self.done:
            payload = login.next_payload()
            if login.done and not self._querying:
                self._querying = True
                self._next_statement()
                continue
            if payload is None:
                return
            try:
                self._answer(payload)
            except DecodeError as error:
                raise ProtocolError(f"malformed packet: {error}", error) from None

    def _next_statement(self) -> None:
        if not self.statements:
            self._done = True
            return
        sql = self.statements.pop(0)
        self._result = QueryResult(sql)
        self._columns_left = -1
        self._eof_seen = False
        self._login.send(bytes((Command.QUERY,)) + sql.encode(), new_command=True)

    def _answer(self, payload: bytes) -> None:
        result = self._result
        assert result is not None
        if not payload:
            raise DecodeError("an empty packet where an answer was expected")
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
