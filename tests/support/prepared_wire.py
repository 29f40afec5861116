"""A client of the prepared-statement commands (COM_STMT_*) over a :class:`RawClient`, for the
differential tests: it builds the packets from the protocol's documented layouts (written here,
independently of the fake's own ``fakemaster.protocol.binary``) and reads each response whole,
as raw payloads, so that two servers' answers can be compared byte for byte.
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from fakemaster.protocol.handshake import Capability
from tests.support.wire import RawClient

COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_SEND_LONG_DATA = 0x18
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A
COM_STMT_FETCH = 0x1C
COM_PING = 0x0E
_CURSOR_EXISTS = 0x0040


@dataclass(frozen=True)
class Param:
    """A parameter as a client binds it: wire type, unsigned, value bytes (None: NULL)."""

    type: int
    value: bytes | None
    unsigned: bool = False


def _lenenc(data: bytes) -> bytes:
    assert len(data) < 251
    return bytes((len(data),)) + data


def int_param(value: int, type_: int = 8, width: int = 8, unsigned: bool = False) -> Param:
    return Param(type_, value.to_bytes(width, "little", signed=not unsigned), unsigned)


def str_param(value: str, type_: int = 253) -> Param:
    return Param(type_, _lenenc(value.encode()))


def double_param(value: float) -> Param:
    return Param(5, struct.pack("<d", value))


def datetime_param(value: dt.datetime, type_: int = 12) -> Param:
    fields = struct.pack(
        "<HBBBBBI",
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
    )
    return Param(type_, bytes((11,)) + fields)


NULL = Param(6, None)


def execute_body(statement_id: int, params: Sequence[Param], *, flags: int = 0) -> bytes:
    body = struct.pack("<IBI", statement_id, flags, 1)
    if params:
        bitmap = bytearray((len(params) + 7) // 8)
        for index, param in enumerate(params):
            if param.value is None:
                bitmap[index // 8] |= 1 << (index % 8)
        body += bytes(bitmap) + b"\x01"
        body += b"".join(struct.pack("<BB", p.type, 0x80 if p.unsigned else 0) for p in params)
        body += b"".join(p.value for p in params if p.value is not None)
    return body


class PreparedClient:
    """COM_STMT_* over a logged-in RawClient; every method returns the response's payloads."""

    def __init__(self, client: RawClient, *, cache_metadata: bool = False) -> None:
        self.client = client
        # MARIADB_CLIENT_CACHE_METADATA: a "metadata follows" byte after the column count.
        self.cache_metadata = cache_metadata
        self.deprecate_eof = bool(client.capabilities & Capability.DEPRECATE_EOF)
        # Statement ids are the server's (counted across its connections): the answers show
        # each as its order among this client's statements (#1, #2 ...), so that two servers
        # that handed out different numbers compare equal.
        self.ids: list[int] = []

    @property
    def last_id(self) -> int:
        """The real id of the statement prepared last."""
        return self.ids[-1]

    def _normalised(self, payloads: list[bytes]) -> list[bytes]:
        def ordinal(match: re.Match[bytes]) -> bytes:
            number = int(match.group(1))
            if number in self.ids:
                return b"(#%d)" % (self.ids.index(number) + 1)
            return match.group(0)

        return [
            re.sub(rb"\((\d+)\)", ordinal, payload) if payload[:1] == b"\xff" else payload
            for payload in payloads
        ]

    def _eof(self) -> list[bytes]:
        return [] if self.deprecate_eof else [self.client.read()]

    def prepare(self, sql: str) -> list[bytes]:
        self.client.write(bytes((COM_STMT_PREPARE,)) + sql.encode(), 0)
        first = self.client.read()
        if first[:1] != b"\x00":
            return self._normalised([first])
        self.ids.append(int(struct.unpack_from("<I", first, 1)[0]))
        out = [first[:1] + struct.pack("<I", len(self.ids)) + first[5:]]
        columns, params = struct.unpack_from("<HH", first, 5)
        for count in (params, columns):
            if count:
                out += [self.client.read() for _ in range(count)]
                out += self._eof()
        return out

    def execute(self, statement_id: int, params: Sequence[Param], *, flags: int = 0) -> list[bytes]:
        return self.execute_raw(execute_body(statement_id, params, flags=flags))

    def execute_raw(self, body: bytes) -> list[bytes]:
        return self._normalised(self._execute_raw(body))

    def _execute_raw(self, body: bytes) -> list[bytes]:
        self.client.write(bytes((COM_STMT_EXECUTE,)) + body, 0)
        first = self.client.read()
        out = [first]
        if first[:1] in (b"\x00", b"\xff"):
            return out
        count = first[0]
        if self.cache_metadata and first[1:2] == b"\x00":
            count = 0  # the definitions sent before still hold
        out += [self.client.read() for _ in range(count)]
        if not self.deprecate_eof or body[4] & 1:  # an EOF, or (a cursor) an OK in its place
            eof = self.client.read()
            out.append(eof)
            if eof[:1] == b"\xfe" and int.from_bytes(eof[3:5], "little") & _CURSOR_EXISTS:
                return out
        out += self._rows()
        return out

    def _rows(self) -> list[bytes]:
        out = []
        while True:
            payload = self.client.read()
            out.append(payload)
            if payload[:1] == b"\xff" or (payload[:1] == b"\xfe" and len(payload) < 0xFFFFFF):
                return out

    def fetch(self, statement_id: int, rows: int) -> list[bytes]:
        self.client.write(struct.pack("<BII", COM_STMT_FETCH, statement_id, rows), 0)
        return self._normalised(self._rows())

    def one_packet(self, payload: bytes) -> list[bytes]:
        """A command answered with one packet (OK or ERR): COM_STMT_RESET, a malformed one."""
        self.client.write(payload, 0)
        return self._normalised([self.client.read()])

    def no_answer(self, payload: bytes) -> list[bytes]:
        """A command MariaDB does not answer (CLOSE, SEND_LONG_DATA), then a COM_PING: what is
        read is the ping's OK, or whatever the server wrongly answered first."""
        self.client.write(payload, 0)
        self.client.write(bytes((COM_PING,)), 0)
        return self._normalised([self.client.read()])
