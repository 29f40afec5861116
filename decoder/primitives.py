"""Integer and string forms of the binlog format (the mirror of encoder/primitives.py).

Readers take a buffer and a position and return ``(value, new_position)``; running past the end
raises DecodeError with the position, never IndexError.
"""

from __future__ import annotations

from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.layouts import U8, U16, U32, U64, Buffer

__all__ = [
    "U8",
    "U16",
    "U32",
    "U64",
    "Buffer",
    "name_text",
    "need",
    "read_bitmap",
    "read_bytes",
    "read_packed_int",
    "read_uint",
]


def need(buf: Buffer, pos: int, size: int, what: str) -> None:
    if pos + size > len(buf) or size < 0:
        raise DecodeError(
            f"truncated: {what} needs {size} bytes, {max(len(buf) - pos, 0)} left", offset=pos
        )


def read_packed_int(buf: Buffer, pos: int) -> tuple[int, int]:
    need(buf, pos, 1, "packed integer")
    first = buf[pos]
    if first < 251:
        return first, pos + 1
    if first == 0xFC:
        need(buf, pos + 1, 2, "packed integer")
        return U16.unpack_from(buf, pos + 1)[0], pos + 3
    if first == 0xFD:
        need(buf, pos + 1, 3, "packed integer")
        return int.from_bytes(buf[pos + 1 : pos + 4], "little"), pos + 4
    if first == 0xFE:
        need(buf, pos + 1, 8, "packed integer")
        return U64.unpack_from(buf, pos + 1)[0], pos + 9
    raise DecodeError(f"invalid packed integer prefix 0x{first:02x}", offset=pos)


def read_uint(buf: Buffer, pos: int, size: int, what: str = "integer") -> tuple[int, int]:
    need(buf, pos, size, what)
    return int.from_bytes(buf[pos : pos + size], "little"), pos + size


def read_bytes(buf: Buffer, pos: int, size: int, what: str = "bytes") -> tuple[bytes, int]:
    need(buf, pos, size, what)
    return bytes(buf[pos : pos + size]), pos + size


def name_text(raw: bytes | memoryview) -> str:
    return bytes(raw).decode("utf-8", "surrogateescape")


def read_bitmap(buf: Buffer, pos: int, bits: int) -> tuple[tuple[bool, ...], int]:
    size = (bits + 7) >> 3
    need(buf, pos, size, "bitmap")
    raw = int.from_bytes(buf[pos : pos + size], "little")
    return tuple(bool(raw >> i & 1) for i in range(bits)), pos + size
