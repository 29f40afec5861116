"""Integer and string forms of the binlog format (the mirror of decoder/primitives.py)."""

from __future__ import annotations

from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.layouts import U8, U16, U32, U64

__all__ = [
    "U8",
    "U16",
    "U32",
    "U64",
    "bitmap",
    "buffer_argument",
    "name_bytes",
    "packed_int",
    "uint",
]

_U16_PACK = U16.pack
_U32_PACK = U32.pack


def packed_int(value: int) -> bytes:
    """MySQL length-encoded integer (net_store_length)."""
    if not isinstance(value, int):
        raise EncodeError(f"packed integer {value!r} is not an int")
    if value < 0:
        raise EncodeError(f"packed integer cannot be negative: {value}")
    if value < 251:
        return bytes((value,))
    if value < 0x10000:
        return b"\xfc" + _U16_PACK(value)
    if value < 0x1000000:
        return b"\xfd" + _U32_PACK(value)[:3]
    if value < 1 << 64:
        return b"\xfe" + U64.pack(value)
    raise EncodeError(f"packed integer too large: {value}")


def uint(value: int, size: int) -> bytes:
    """Little-endian unsigned integer of ``size`` bytes."""
    try:
        return value.to_bytes(size, "little")
    except (OverflowError, AttributeError) as exc:
        raise EncodeError(f"{value!r} does not fit in {size} bytes") from exc


def buffer_argument(data: object, what: str) -> None:
    """EncodeError unless ``data`` (an argument named ``what``) is bytes, bytearray or
    memoryview: bytes given to an encoder to frame, compress, encrypt or write as they are."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise EncodeError(f"{what} must be bytes, not {type(data).__name__}")


def name_bytes(text: str) -> bytes:
    """File, database and table names: UTF-8, with undecodable bytes kept as they came."""
    return text.encode("utf-8", "surrogateescape")


def bitmap(bits: tuple[bool, ...] | list[bool]) -> bytes:
    """LSB-first bitmap, padding bits zero."""
    out = bytearray((len(bits) + 7) >> 3)
    for index, bit in enumerate(bits):
        if bit:
            out[index >> 3] |= 1 << (index & 7)
    return bytes(out)
