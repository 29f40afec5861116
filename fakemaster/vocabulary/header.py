"""The 19-byte v4 event header and the CRC32 rule, shared by encoder, decoder and server.

::

    timestamp u32 | type_code u8 | server_id u32 | event_length u32 | log_pos u32 | flags u16

An event is the header, its body and, when the stream has checksums, a CRC32 of both.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, EventFlag, EventType

__all__ = [
    "CRC",
    "EVENT_LENGTH_OFFSET",
    "FLAGS_OFFSET",
    "HEADER",
    "LOG_POS_OFFSET",
    "SERVER_ID_OFFSET",
    "TIMESTAMP_OFFSET",
    "TYPE_CODE_OFFSET",
    "EventHeader",
    "event_crc",
]

HEADER = struct.Struct("<IBIIIH")
# Where each field of HEADER starts, for reading or patching one field of an event's bytes.
TIMESTAMP_OFFSET = 0
TYPE_CODE_OFFSET = 4
SERVER_ID_OFFSET = 5
EVENT_LENGTH_OFFSET = 9
LOG_POS_OFFSET = 13
FLAGS_OFFSET = 17
CRC = struct.Struct("<I")

assert HEADER.size == HEADER_LEN and CRC.size == CHECKSUM_LEN
assert [struct.calcsize("<" + HEADER.format[1:end]) for end in range(1, 7)] == [
    TIMESTAMP_OFFSET,
    TYPE_CODE_OFFSET,
    SERVER_ID_OFFSET,
    EVENT_LENGTH_OFFSET,
    LOG_POS_OFFSET,
    FLAGS_OFFSET,
]

# Plain ints: event_crc runs once per event.
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
_IN_USE = int(EventFlag.BINLOG_IN_USE)


class EventHeader(NamedTuple):
    timestamp: int
    type_code: int
    server_id: int
    event_length: int
    log_pos: int
    flags: int


def event_crc(event_without_crc: bytes | bytearray | memoryview, type_code: int) -> int:
    """CRC32 of an event's bytes; an FDE's is taken with LOG_EVENT_BINLOG_IN_USE_F clear."""
    if type_code == _FORMAT_DESCRIPTION and event_without_crc[FLAGS_OFFSET] & _IN_USE:
        cleared = bytearray(event_without_crc)
        cleared[FLAGS_OFFSET] &= ~_IN_USE & 0xFF
        return zlib.crc32(cleared) & 0xFFFFFFFF
    return zlib.crc32(event_without_crc) & 0xFFFFFFFF
