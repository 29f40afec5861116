"""The binlog decoder: MariaDB's bytes to typed events."""

from decoder.binlog_file import iter_raw_events, read_binlog
from decoder.core import decode_event
from decoder.packets import CompressedPacketReader, PacketReader
from decoder.stream import StreamDecoder

__all__ = [
    "CompressedPacketReader",
    "PacketReader",
    "StreamDecoder",
    "decode_event",
    "iter_raw_events",
    "read_binlog",
]
