"""MariaDB's compressed record (QUERY_COMPRESSED text, ROWS_COMPRESSED rows area).

``0x80 | lenlen``, the uncompressed length big-endian in ``lenlen`` bytes, then a zlib stream
(zlib ``compress()`` at the default level, as the server writes it).
"""

from __future__ import annotations

import zlib

from encoder.primitives import buffer_argument
from fakemaster.vocabulary.errors import EncodeError

__all__ = ["compress_record"]


def compress_record(data: bytes) -> bytes:
    buffer_argument(data, "the data to compress")
    size = len(data)
    lenlen = max(1, (size.bit_length() + 7) // 8)
    if lenlen > 4:
        raise EncodeError("compressed record longer than 4 GiB")
    return bytes((0x80 | lenlen,)) + size.to_bytes(lenlen, "big") + zlib.compress(data)
