"""The binlog encoder: typed events to MariaDB's bytes."""

from encoder.binlog_file import BinlogWriter
from encoder.core import encode_event
from encoder.packets import CompressedWriter, compress_frame, frame
from encoder.stream import StreamEncoder

__all__ = [
    "BinlogWriter",
    "CompressedWriter",
    "StreamEncoder",
    "compress_frame",
    "encode_event",
    "frame",
]
