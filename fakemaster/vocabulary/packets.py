"""Client/server protocol packets of a replication connection, as typed values.

The encoder builds their payloads (encoder/packets.py), the decoder parses them
(decoder/packets.py); both use these classes. Payload layouts (MySQL protocol 4.1):

* OK: ``00|fe affected_rows(lenenc) last_insert_id(lenenc) status(2) warnings(2) info``
* ERR: ``ff errno(2) ['#' sqlstate(5)] message``
* EOF: ``fe warnings(2) status(2)``
* semi-sync ACK (replica to master, seq 0): ``ef position(8) file_name``
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntFlag

from fakemaster.vocabulary.errors import FakemasterError

__all__ = [
    "EOF_HEADER",
    "EOF_PACKET",
    "ERR_HEAD",
    "ERR_HEADER",
    "OK_HEADER",
    "OK_STATUS_WARNINGS",
    "PACKET_HEADER",
    "SEMI_SYNC_ACK_HEAD",
    "SEMI_SYNC_ACK_REQUESTED",
    "SEMI_SYNC_HEADER_LEN",
    "SERVER_STATUS_AUTOCOMMIT",
    "SQLSTATE_MARKER",
    "EofPacket",
    "ErrPacket",
    "OkPacket",
    "SemiSyncAck",
    "ServerError",
    "ServerStatus",
]

# Every packet: length (low 3 bytes) | sequence number << 24, then the payload.
PACKET_HEADER = struct.Struct("<I")
OK_HEADER = 0x00
SQLSTATE_MARKER = b"#"  # before the SQLSTATE of an ERR payload
EOF_HEADER = 0xFE
ERR_HEADER = 0xFF
SEMI_SYNC_HEADER_LEN = 2  # 0xEF + flag, after the 0x00 of every event packet
SEMI_SYNC_ACK_REQUESTED = 0x01
SERVER_STATUS_AUTOCOMMIT = 0x0002
# The fixed parts of the payloads above.
OK_STATUS_WARNINGS = struct.Struct("<HH")  # after the two packed integers
ERR_HEAD = struct.Struct("<BH")
EOF_PACKET = struct.Struct("<BHH")
SEMI_SYNC_ACK_HEAD = struct.Struct("<BQ")


class ServerStatus(IntFlag):
    """The status flags of OK and EOF packets (SERVER_STATUS_* / SERVER_* in mysql_com.h)."""

    IN_TRANS = 0x0001
    AUTOCOMMIT = SERVER_STATUS_AUTOCOMMIT
    MORE_RESULTS_EXISTS = 0x0008
    QUERY_NO_GOOD_INDEX_USED = 0x0010
    QUERY_NO_INDEX_USED = 0x0020
    CURSOR_EXISTS = 0x0040
    LAST_ROW_SENT = 0x0080
    DB_DROPPED = 0x0100
    NO_BACKSLASH_ESCAPES = 0x0200
    METADATA_CHANGED = 0x0400
    QUERY_WAS_SLOW = 0x0800
    PS_OUT_PARAMS = 0x1000
    IN_TRANS_READONLY = 0x2000
    SESSION_STATE_CHANGED = 0x4000
    # MariaDB's own: sql_mode has ANSI_QUOTES (not in MySQL's list).
    ANSI_QUOTES = 0x8000


@dataclass(frozen=True, slots=True)
class OkPacket:
    """An OK packet (or the 0xFE OK that ends a result set for CLIENT_DEPRECATE_EOF)."""

    affected_rows: int = 0
    last_insert_id: int = 0
    status_flags: int = SERVER_STATUS_AUTOCOMMIT
    warnings: int = 0
    # Everything after the warnings, raw (human info text, or session-state data).
    info: bytes = b""
    # 0xFE: an OK that ends a result set or a dump for a client with CLIENT_DEPRECATE_EOF.
    header: int = OK_HEADER


@dataclass(frozen=True, slots=True)
class ErrPacket:
    """An ERR packet: error number, SQLSTATE (or none) and message."""

    errno: int
    # None: no '#'+SQLSTATE marker (pre-4.1 clients, or errors sent before the handshake).
    sqlstate: str | None = "HY000"
    message: str = ""


@dataclass(frozen=True, slots=True)
class EofPacket:
    """An EOF packet: warnings and status flags."""

    warnings: int = 0
    status_flags: int = SERVER_STATUS_AUTOCOMMIT


@dataclass(frozen=True, slots=True)
class SemiSyncAck:
    """A replica's acknowledgement: the end position of the acknowledged event and its file."""

    position: int
    file_name: str


class ServerError(FakemasterError):
    """The server ended a command (e.g. a binlog dump) with an ERR packet."""

    def __init__(self, packet: ErrPacket) -> None:
        self.packet = packet
        state = f" ({packet.sqlstate})" if packet.sqlstate is not None else ""
        super().__init__(f"server error {packet.errno}{state}: {packet.message}")
