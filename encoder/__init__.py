"""The binlog encoder: typed events to MariaDB's bytes.

The names here are imported on first use: importing one module of the encoder (the server
needs ``encoder.packets``, not the row encoder) loads only that module and what it imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from encoder.binlog_file import BinlogWriter
    from encoder.core import encode_event
    from encoder.packets import CompressedWriter, compress_frame, frame
    from encoder.stream import StreamEncoder

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BinlogWriter": "encoder.binlog_file",
    "CompressedWriter": "encoder.packets",
    "StreamEncoder": "encoder.stream",
    "compress_frame": "encoder.packets",
    "encode_event": "encoder.core",
    "frame": "encoder.packets",
}

__all__ = [
    "BinlogWriter",
    "CompressedWriter",
    "StreamEncoder",
    "compress_frame",
    "encode_event",
    "frame",
]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
