"""Writing binlog files (mirror of decoder/binlog_file.py)."""

from __future__ import annotations

import os
from types import TracebackType
from typing import BinaryIO, Protocol

from encoder.core import encode_event
from encoder.encryption import FileEncryption
from encoder.primitives import U32, buffer_argument
from fakemaster.vocabulary.constants import BINLOG_MAGIC, CHECKSUM_LEN, HEADER_LEN, EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import Event, FormatDescriptionEvent, StartEncryptionEvent
from fakemaster.vocabulary.header import CRC, LOG_POS_OFFSET, TYPE_CODE_OFFSET, event_crc

__all__ = ["BinlogWriter", "Target", "Writable", "with_log_pos"]


class Writable(Protocol):
    def write(self, data: bytes | bytearray | memoryview, /) -> object: ...

    def flush(self) -> object: ...


Target = str | os.PathLike[str] | Writable


def with_log_pos(data: bytes, log_pos: int, has_crc: bool) -> bytes:
    """``data`` (one encoded event) with its header's log_pos replaced, CRC recomputed.

    A CRC is only recomputed if the old one was valid, so deliberately corrupt events stay so.
    """
    patched = bytearray(data)
    U32.pack_into(patched, LOG_POS_OFFSET, log_pos)
    if has_crc and len(data) >= HEADER_LEN + CHECKSUM_LEN:
        end = len(data) - CHECKSUM_LEN
        type_code = data[TYPE_CODE_OFFSET]
        if CRC.unpack_from(data, end)[0] == event_crc(memoryview(data)[:end], type_code):
            CRC.pack_into(patched, end, event_crc(memoryview(patched)[:end], type_code))
    return bytes(patched)


class BinlogWriter:
    """A binlog file written event by event: the magic, then each event's bytes.

    ``target`` is a path (created or truncated, closed by ``close``) or a binary file object
    (written from its current position, left open). ``offset`` is the file offset of the next
    event. With ``fix_positions`` each event's header log_pos is set to its end offset (mod 2^32,
    as the server's 4-byte field holds it) in the bytes written; the event object is left as
    given. Otherwise events are written exactly as given, for byte-exact re-encoding.
    With ``encryption`` (the keys), the events written after a StartEncryptionEvent are
    encrypted as MariaDB's ``encrypt_binlog`` does (``write_raw`` bytes never are).
    """

    def __init__(
        self,
        target: Target,
        *,
        fix_positions: bool = False,
        ctx: BinlogContext | None = None,
        write_magic: bool = True,
        offset: int = 0,
        encryption: BinlogKeys | None = None,
    ) -> None:
        if not isinstance(offset, int) or offset < 0:
            raise EncodeError(f"offset must be an int >= 0, not {offset!r}")
        self._encryption = FileEncryption(encryption) if encryption is not None else None
        self._owned: BinaryIO | None = None
        if isinstance(target, str | os.PathLike):
            self._owned = open(target, "wb")
            target = self._owned
        self._file: Writable = target
        self.fix_positions = fix_positions
        self.ctx = ctx if ctx is not None else BinlogContext()
        self.offset = offset
        if write_magic:
            self.write_raw(BINLOG_MAGIC)

    def write(self, event: Event) -> int:
        """Encode and write ``event``; returns the end offset (the next event's offset)."""
        if isinstance(event, FormatDescriptionEvent):
            has_crc = event.checksum_alg is not None
        else:
            has_crc = self.ctx.checksum
        data = encode_event(event, self.ctx)
        end = self.offset + len(data)
        if self.fix_positions:
            data = with_log_pos(data, end & 0xFFFFFFFF, has_crc)
        if self._encryption is not None:
            if self._encryption.active:
                data = self._encryption.encrypt(self.offset, data)
            elif isinstance(event, StartEncryptionEvent) and not event.flags & EventFlag.IGNORABLE:
                self._encryption.begin(event)
        self._file.write(data)
        self.offset = end
        return end

    def write_raw(self, data: bytes | bytearray | memoryview) -> int:
        """Write bytes as they are (the context is not updated); returns the end offset."""
        buffer_argument(data, "raw bytes")
        self._file.write(data)
        self.offset += len(data)
        return self.offset

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if self._owned is not None:
            self._owned.close()
        else:
            self._file.flush()

    def __enter__(self) -> BinlogWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
