"""The binlog decoder: MariaDB's bytes to typed events.

The names here are imported on first use: importing one module of the decoder (the server
needs ``decoder.packets`` and ``decoder.gtid``, not the row decoder) loads only that module and
what it imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from decoder.binlog_file import iter_raw_events, read_binlog
    from decoder.core import decode_event
    from decoder.packets import CompressedInflater, CompressedPacketReader, PacketReader
    from decoder.stream import StreamDecoder

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "CompressedInflater": "decoder.packets",
    "CompressedPacketReader": "decoder.packets",
    "PacketReader": "decoder.packets",
    "StreamDecoder": "decoder.stream",
    "decode_event": "decoder.core",
    "iter_raw_events": "decoder.binlog_file",
    "read_binlog": "decoder.binlog_file",
}

__all__ = [
    "CompressedInflater",
    "CompressedPacketReader",
    "PacketReader",
    "StreamDecoder",
    "decode_event",
    "iter_raw_events",
    "read_binlog",
]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
