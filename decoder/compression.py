"""MariaDB's compressed record (mirror of encoder/compression.py)."""

from __future__ import annotations

import zlib

from decoder.primitives import Buffer
from fakemaster.vocabulary.constants import MAX_UNCOMPRESSED_LENGTH
from fakemaster.vocabulary.errors import DecodeError

__all__ = ["decompress_record"]


def decompress_record(
    buf: Buffer, pos: int = 0, max_length: int = MAX_UNCOMPRESSED_LENGTH
) -> bytes:
    """The bytes of the compressed record at ``buf[pos:]``, inflated to the length its header
    declares and never further; DecodeError for a declared length above ``max_length``, a
    stream that inflates to more or less, or one that does not fit in memory."""
    if pos >= len(buf):
        raise DecodeError("truncated: compressed record header missing", offset=pos)
    head = buf[pos]
    lenlen = head & 0x07
    if head & 0xE0 != 0x80 or not 1 <= lenlen <= 4:
        raise DecodeError(f"invalid compressed record header 0x{head:02x}", offset=pos)
    start = pos + 1 + lenlen
    if start > len(buf):
        raise DecodeError("truncated: compressed record length", offset=pos + 1)
    size = int.from_bytes(buf[pos + 1 : start], "big")
    if size > max_length:
        raise DecodeError(
            f"compressed record header says {size} bytes, more than the {max_length} allowed",
            offset=pos + 1,
        )
    try:
        inflater = zlib.decompressobj()
        # One byte more than declared tells a stream that inflates further, without holding it.
        data = inflater.decompress(buf[start:], size + 1)
    except zlib.error as exc:
        raise DecodeError(f"corrupt zlib stream: {exc}", offset=start) from exc
    except MemoryError:
        # The declared length is within max_length but not within this process's memory.
        raise DecodeError(
            f"compressed record of {size} bytes does not fit in memory", offset=start
        ) from None
    if size == 0 or len(data) != size or not inflater.eof:
        raise DecodeError(
            f"compressed record inflates to {len(data)} bytes, header says {size}", offset=start
        )
    if inflater.unused_data:
        # Bytes after the zlib stream would be lost on re-encoding.
        raise DecodeError(
            f"{len(inflater.unused_data)} bytes after the zlib stream",
            offset=len(buf) - len(inflater.unused_data),
        )
    return data
