"""The 19-byte v4 event header and the CRC32 rule, shared by encoder and decoder."""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

HEADER = struct.Struct("<IBIIIH")
CRC = struct.Struct("<I")
FLAGS_OFFSET = 17
IN_USE = 0x0001


class EventHeader(NamedTuple):
    timestamp: int
    type_code: int
    server_id: int
    event_length: int
    log_pos: int
    flags: int


def event_crc(event_without_crc: bytes | bytearray | memoryview, type_code: int) -> int:
    """CRC32 of an event's bytes; an FDE's is taken with LOG_EVENT_BINLOG_IN_USE_F clear."""
    if type_code == 15 and event_without_crc[FLAGS_OFFSET] & IN_USE:
        cleared = bytearray(event_without_crc)
        cleared[FLAGS_OFFSET] &= ~IN_USE & 0xFF
        return zlib.crc32(cleared) & 0xFFFFFFFF
    return zlib.crc32(event_without_crc) & 0xFFFFFFFF
