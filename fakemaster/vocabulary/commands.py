"""The replication commands a replica sends, as typed values: their layouts are defined here
once, for the server that parses them (``fakemaster.core.session``), the client that sends them
(``fakemaster.client.protocol``), the scapy layers that dissect them and the tests.

* COM_REGISTER_SLAVE (0x15): server_id(4) host user password (1-byte lengths) port(2) rank(4)
  master_id(4)
* COM_BINLOG_DUMP (0x12): position(4) flags(2) server_id(4) file name (rest of the packet)
* COM_BINLOG_DUMP_GTID (0x1e, MySQL): flags(2) server_id(4) name_len(4) name position(8)
  [data_len(4) GTID set, when flags has GTID_DUMP_THROUGH_GTID]

Each ``parse`` takes the body after the command byte (the server dispatches on that byte
first) and reads malformed bodies as a MariaDB 10.11 primary does; ``body`` is its inverse (what
a client library's "execute command" call takes), ``encode`` the whole payload, command byte
first. (MariaDB's GTID dump is a COM_QUERY ``SET
@slave_connect_state='...'`` followed by an ordinary COM_BINLOG_DUMP.)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import ClassVar

from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.layouts import U32, U64

__all__ = [
    "BINLOG_DUMP_HEAD",
    "BINLOG_DUMP_GTID_HEAD",
    "GTID_DUMP_THROUGH_GTID",
    "REGISTER_SLAVE_TAIL",
    "BinlogDump",
    "BinlogDumpGtid",
    "RegisterSlave",
    "ReplicationCommand",
    "parse_command",
]

# COM_BINLOG_DUMP: position u32 | flags u16 | server_id u32, then the file name.
BINLOG_DUMP_HEAD = struct.Struct("<IHI")
# COM_BINLOG_DUMP_GTID: flags u16 | server_id u32 | name_len u32.
BINLOG_DUMP_GTID_HEAD = struct.Struct("<HII")
# MySQL's COM_BINLOG_DUMP_GTID flag BINLOG_THROUGH_GTID: a GTID set (data_len + data) follows
# the position.
GTID_DUMP_THROUGH_GTID = 0x04
# COM_REGISTER_SLAVE after the three strings: port u16 | rank u32 | master_id u32.
REGISTER_SLAVE_TAIL = struct.Struct("<HII")

# COM_REGISTER_SLAVE's strings in order, each with the length it must stay under and the message
# MariaDB's register_slave() answers (ER_UNKNOWN_ERROR) when it does not, or is cut off.
_REGISTER_STRINGS = (
    ("Failed to register slave: too long 'report-host'", 766),
    ("Failed to register slave: too long 'report-user'", 385),
    ("Failed to register slave; too long 'report-password'", 97),
)
_REGISTER_TRUNCATED = "Wrong parameters to function register_slave"


def _short_string(value: bytes) -> bytes:
    """A string with its 1-byte length first."""
    return bytes((len(value),)) + value


@dataclass(frozen=True, kw_only=True)
class RegisterSlave:
    """COM_REGISTER_SLAVE: who the replica says it is (SHOW SLAVE HOSTS)."""

    COMMAND: ClassVar[Command] = Command.REGISTER_SLAVE

    server_id: int
    host: bytes = b""
    user: bytes = b""
    password: bytes = b""
    port: int = 0
    rank: int = 0
    master_id: int = 0

    @classmethod
    def parse(cls, body: bytes) -> RegisterSlave:
        """The body after the command byte. A malformed body raises DecodeError whose
        ``reason`` is the message MariaDB answers with (ERR 1105)."""
        if len(body) < U32.size:
            raise DecodeError(_REGISTER_STRINGS[0][0], offset=len(body))
        server_id = U32.unpack_from(body, 0)[0]
        pos = U32.size
        strings: list[bytes] = []
        for message, limit in _REGISTER_STRINGS:
            if pos >= len(body):
                raise DecodeError(message, offset=pos)
            length = body[pos]
            pos += 1
            if pos + length > len(body) or length >= limit:
                raise DecodeError(message, offset=pos)
            strings.append(body[pos : pos + length])
            pos += length
        if pos + REGISTER_SLAVE_TAIL.size > len(body):
            raise DecodeError(_REGISTER_TRUNCATED, offset=pos)
        port, rank, master_id = REGISTER_SLAVE_TAIL.unpack_from(body, pos)
        host, user, password = strings
        return cls(
            server_id=server_id,
            host=host,
            user=user,
            password=password,
            port=port,
            rank=rank,
            master_id=master_id,
        )

    def body(self) -> bytes:
        return b"".join(
            (
                U32.pack(self.server_id),
                _short_string(self.host),
                _short_string(self.user),
                _short_string(self.password),
                REGISTER_SLAVE_TAIL.pack(self.port, self.rank, self.master_id),
            )
        )

    def encode(self) -> bytes:
        return bytes((self.COMMAND,)) + self.body()


@dataclass(frozen=True, kw_only=True)
class BinlogDump:
    """COM_BINLOG_DUMP: stream the binlog from ``position`` of ``file_name`` (raw, as sent:
    the server reads it up to its first NUL; empty in MariaDB's GTID mode)."""

    COMMAND: ClassVar[Command] = Command.BINLOG_DUMP

    position: int = 4
    flags: int = 0  # DumpFlag
    server_id: int = 0
    file_name: bytes = b""

    @classmethod
    def parse(cls, body: bytes) -> BinlogDump:
        """The body after the command byte. MariaDB reads the fixed fields without a length
        check: missing bytes read as zero here, and nothing is malformed."""
        size = BINLOG_DUMP_HEAD.size
        position, flags, server_id = BINLOG_DUMP_HEAD.unpack(body[:size].ljust(size, b"\0"))
        return cls(position=position, flags=flags, server_id=server_id, file_name=body[size:])

    def body(self) -> bytes:
        return BINLOG_DUMP_HEAD.pack(self.position, self.flags, self.server_id) + self.file_name

    def encode(self) -> bytes:
        return bytes((self.COMMAND,)) + self.body()


@dataclass(frozen=True, kw_only=True)
class BinlogDumpGtid:
    """MySQL's COM_BINLOG_DUMP_GTID: stream the binlog from ``position`` of ``file_name``, or
    (flag GTID_DUMP_THROUGH_GTID) after the encoded GTID set ``gtid_set``."""

    COMMAND: ClassVar[Command] = Command.BINLOG_DUMP_GTID

    flags: int = 0
    server_id: int = 0
    file_name: bytes = b""
    position: int = 4
    gtid_set: bytes = b""  # written and read only with GTID_DUMP_THROUGH_GTID

    @classmethod
    def parse(cls, body: bytes) -> BinlogDumpGtid:
        """The body after the command byte; DecodeError when it ends before the position. A
        GTID set cut short is taken as far as it goes."""
        if len(body) < BINLOG_DUMP_GTID_HEAD.size:
            raise DecodeError("truncated COM_BINLOG_DUMP_GTID", offset=len(body))
        flags, server_id, name_length = BINLOG_DUMP_GTID_HEAD.unpack_from(body, 0)
        pos = BINLOG_DUMP_GTID_HEAD.size
        name = body[pos : pos + name_length]
        pos += name_length
        if len(body) < pos + U64.size:
            raise DecodeError("truncated COM_BINLOG_DUMP_GTID position", offset=len(body))
        position = U64.unpack_from(body, pos)[0]
        pos += U64.size
        gtid_set = b""
        if flags & GTID_DUMP_THROUGH_GTID and len(body) >= pos + U32.size:
            size = U32.unpack_from(body, pos)[0]
            gtid_set = body[pos + U32.size : pos + U32.size + size]
        return cls(
            flags=flags, server_id=server_id, file_name=name, position=position, gtid_set=gtid_set
        )

    def body(self) -> bytes:
        parts = [
            BINLOG_DUMP_GTID_HEAD.pack(self.flags, self.server_id, len(self.file_name)),
            self.file_name,
            U64.pack(self.position),
        ]
        if self.flags & GTID_DUMP_THROUGH_GTID:
            parts += (U32.pack(len(self.gtid_set)), self.gtid_set)
        return b"".join(parts)

    def encode(self) -> bytes:
        return bytes((self.COMMAND,)) + self.body()


ReplicationCommand = RegisterSlave | BinlogDump | BinlogDumpGtid
_BY_COMMAND: dict[int, type[ReplicationCommand]] = {
    Command.REGISTER_SLAVE: RegisterSlave,
    Command.BINLOG_DUMP: BinlogDump,
    Command.BINLOG_DUMP_GTID: BinlogDumpGtid,
}


def parse_command(payload: bytes) -> ReplicationCommand:
    """A whole command payload (command byte first) as its typed value; DecodeError for any
    other command or a malformed body."""
    kind = _BY_COMMAND.get(payload[0]) if payload else None
    if kind is None:
        raise DecodeError("not a replication command", offset=0)
    return kind.parse(payload[1:])
