"""Reading binlog files event by event (mirror of encoder/binlog_file.py).

A file is read in blocks of 256 KiB and cut into events by their headers' length fields, so
memory holds a block and one event, never the file; a pipe or socket file is read one event at
a time (an event is given out as soon as it is complete).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Protocol

from decoder.core import (
    _FDE,
    _MALFORMED,
    _VIEW_MIN,
    CRC_RESIDUE,
    DECODERS,
    _crc32,
    _new_header,
    _unpack_header,
    decode_event,
)
from decoder.encryption import FileDecryption
from decoder.stream import check_magic, event_length
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    EventFlag,
    EventType,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.header import (
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    TYPE_CODE_OFFSET,
    EventHeader,
)
from fakemaster.vocabulary.layouts import U32 as _LENGTH

__all__ = ["Inline", "Readable", "Source", "iter_raw_blocks", "iter_raw_events", "read_binlog"]


class Readable(Protocol):
    """A binary file, pipe or socket file: ``read`` may return fewer bytes than asked."""

    def read(self, size: int, /) -> bytes | None: ...


Source = str | os.PathLike[str] | Readable
# (read buffer, where the next event starts, its offset) -> where the taker stopped, its offset
Inline = Callable[[bytes, int, int], tuple[int, int]]
# A file is read in blocks of this size; an event larger than a block is read directly.
_READ_BUFFER = 1 << 18
# The first read of an event's body asks for at most this much; later reads double.
_FIRST_CHUNK = 1 << 20


def _read_exact(fileobj: Readable, size: int) -> bytes:
    """Up to ``size`` bytes; fewer only at end of file (raw files may return short reads).

    ``size`` comes from an event header, which a damaged or hostile file can set to 4 GiB:
    reading asks for at most what has already arrived (and a first chunk), so the memory
    held never exceeds twice the bytes the file actually has.
    """
    data = fileobj.read(min(size, _FIRST_CHUNK)) or b""
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = fileobj.read(min(size - got, max(got, _FIRST_CHUNK)))
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _starts_encryption(data: bytes) -> bool:
    """FileDecryption.starts on plain ints (it runs once per event until a START_ENCRYPTION)."""
    return data[TYPE_CODE_OFFSET] == _START_ENCRYPTION and not data[FLAGS_OFFSET] & _IGNORABLE


_START_ENCRYPTION = int(EventType.START_ENCRYPTION)
_TABLE_MAP = int(EventType.TABLE_MAP)
_IGNORABLE = int(EventFlag.IGNORABLE)


def _raw_events(
    fileobj: Readable,
    allow_truncated_tail: bool,
    expect_magic: bool,
    offset: int,
    keys: BinlogKeys | None = None,
) -> Iterator[tuple[int, bytes]]:
    """Events read one by one (header, then the rest): for pipes and sockets, whose events are
    given out as soon as they are complete."""
    decryption: FileDecryption | None = None
    if expect_magic:
        magic = _read_exact(fileobj, len(BINLOG_MAGIC))
        check_magic(magic, offset)
        if len(magic) < len(BINLOG_MAGIC):
            if allow_truncated_tail:
                return
            raise DecodeError(
                f"not a binlog file: {len(magic)} bytes, no complete magic", offset=offset
            )
        offset += len(BINLOG_MAGIC)
    while True:
        header = _read_exact(fileobj, HEADER_LEN)
        if not header:
            return
        if len(header) < HEADER_LEN:
            if allow_truncated_tail:
                return
            raise DecodeError(
                f"truncated event: {len(header)} of the {HEADER_LEN} header bytes", offset=offset
            )
        length = event_length(header, 0, offset)
        rest = _read_exact(fileobj, length - HEADER_LEN)
        if len(rest) < length - HEADER_LEN:
            if allow_truncated_tail:
                return
            raise DecodeError(
                f"truncated event: {HEADER_LEN + len(rest)} of {length} bytes", offset=offset
            )
        data = header + rest
        if decryption is not None:
            data = decryption.decrypt(offset, data)
        elif _starts_encryption(header):
            decryption = FileDecryption(keys, data, offset)
        yield offset, data
        offset += length


def _magic_length(buf: bytes, offset: int, allow_truncated_tail: bool) -> int | None:
    """The length of the binlog magic that starts ``buf`` (the file's first bytes, at
    ``offset``), checked; None for a file too short to hold it when ``allow_truncated_tail``
    (a file still being written: nothing to read yet)."""
    magic = buf[: len(BINLOG_MAGIC)]
    check_magic(magic, offset)
    if len(magic) < len(BINLOG_MAGIC):
        if allow_truncated_tail:
            return None
        raise DecodeError(
            f"not a binlog file: {len(magic)} bytes, no complete magic", offset=offset
        )
    return len(BINLOG_MAGIC)


def _file_blocks(
    fileobj: Readable,
    allow_truncated_tail: bool,
    expect_magic: bool,
    offset: int,
    keys: BinlogKeys | None = None,
    inline: Inline | None = None,
) -> Iterator[list[tuple[int, bytes]]]:
    """The same events as :func:`_raw_events`, read from a regular file in blocks of
    ``_READ_BUFFER`` bytes (one read per block, not two per event) and given out a block at a
    time: the ``(offset, event bytes)`` of the events that end in the block, framed in one
    loop. An event larger than what is left of the block is completed by :func:`_read_exact`
    (and given out alone). An error (truncation, a bad length) is raised after the events
    framed before it have been given out.

    ``inline(buf, pos, offset)``, when given, is called on the read buffer wherever the next
    event starts (outside an encrypted part), once the events framed before it have been given
    out: it takes the events it can from there (decoding them itself) and returns where it
    stopped, ``(pos, offset)``; the event there is then framed and given out as usual."""
    decryption: FileDecryption | None = None
    buf = _read_exact(fileobj, _READ_BUFFER)
    pos = 0
    if expect_magic:
        magic_length = _magic_length(buf, offset, allow_truncated_tail)
        if magic_length is None:
            return
        pos = magic_length
        offset += magic_length
    unpack_length = _LENGTH.unpack_from
    block: list[tuple[int, bytes]] = []
    append = block.append
    while True:
        size = len(buf)
        # The events wholly in the block, in one loop (the common case: no decryption).
        if decryption is None:
            while pos + HEADER_LEN <= size:
                if inline is not None:
                    if block:  # in order: what was framed before goes first
                        yield block
                        block = []
                        append = block.append
                    pos, offset = inline(buf, pos, offset)
                    if pos + HEADER_LEN > size:
                        break
                length = unpack_length(buf, pos + EVENT_LENGTH_OFFSET)[0]
                end = pos + length
                if (
                    length < HEADER_LEN
                    or end > size
                    or buf[pos + TYPE_CODE_OFFSET] == (_START_ENCRYPTION)
                ):
                    break
                append((offset, buf[pos:end]))
                pos = end
                offset += length
        if block:
            yield block
            block = []
            append = block.append
        if size - pos < HEADER_LEN:
            buf = buf[pos:] + _read_exact(fileobj, _READ_BUFFER)
            pos = 0
            if len(buf) < HEADER_LEN:
                if not buf or allow_truncated_tail:
                    return
                raise DecodeError(
                    f"truncated event: {len(buf)} of the {HEADER_LEN} header bytes",
                    offset=offset,
                )
        length = unpack_length(buf, pos + EVENT_LENGTH_OFFSET)[0]
        if length < HEADER_LEN:
            length = event_length(buf, pos, offset)  # raises
        end = pos + length
        if end <= len(buf):
            data = buf[pos:end]
            pos = end
        else:
            data = buf[pos:]
            data += _read_exact(fileobj, length - len(data))
            buf = b""
            pos = 0
            if len(data) < length:
                if allow_truncated_tail:
                    return
                raise DecodeError(f"truncated event: {len(data)} of {length} bytes", offset=offset)
        if decryption is not None:
            data = decryption.decrypt(offset, data)
        elif data[TYPE_CODE_OFFSET] == _START_ENCRYPTION and _starts_encryption(data):
            decryption = FileDecryption(keys, data, offset)
        append((offset, data))
        offset += length


def iter_raw_blocks(
    source: Source,
    *,
    allow_truncated_tail: bool = False,
    expect_magic: bool = True,
    offset: int = 0,
    keys: BinlogKeys | None = None,
    inline: Inline | None = None,
) -> Iterator[list[tuple[int, bytes]]]:
    """The events of :func:`iter_raw_events`, given out as lists (a file's events a read block
    at a time, a pipe's one at a time): one generator step per block, not per event. For a
    path, ``inline`` takes the events it can straight from the read buffer (see
    :func:`_file_blocks`); those are not given out."""
    if isinstance(source, str | os.PathLike):
        with open(source, "rb", buffering=0) as fileobj:
            yield from _file_blocks(
                fileobj, allow_truncated_tail, expect_magic, offset, keys, inline
            )
    else:
        for event in _raw_events(source, allow_truncated_tail, expect_magic, offset, keys):
            yield [event]


def iter_raw_events(
    source: Source,
    *,
    allow_truncated_tail: bool = False,
    expect_magic: bool = True,
    offset: int = 0,
    keys: BinlogKeys | None = None,
) -> Iterator[tuple[int, bytes]]:
    """``(offset, event bytes)`` for each event of a binlog file, checked only for framing.

    ``source`` is a path or a binary file object read from its current position, whose file
    offset is ``offset``. A file that ends inside an event raises DecodeError at the event's
    offset, unless ``allow_truncated_tail`` (a file still being written): then the partial
    event is left unread. The events after a START_ENCRYPTION come decrypted with ``keys``;
    without them an encrypted event raises DecodeError (see decoder.encryption.FileDecryption;
    the nonce is at the file's start, so an encrypted file is read from its beginning).
    """
    if isinstance(source, str | os.PathLike):
        with open(source, "rb", buffering=0) as fileobj:
            for block in _file_blocks(fileobj, allow_truncated_tail, expect_magic, offset, keys):
                yield from block
    else:
        yield from _raw_events(source, allow_truncated_tail, expect_magic, offset, keys)


def read_binlog(
    source: Source,
    *,
    verify_checksum: bool = True,
    allow_truncated_tail: bool = False,
    allow_unknown: bool = False,
    ctx: BinlogContext | None = None,
    keys: BinlogKeys | None = None,
) -> Iterator[tuple[int, Event]]:
    """``(offset, event)`` for each event of a binlog file, decoded with one context per file
    (an encrypted file's events decrypted with ``keys``): what ``decode_event`` gives for each
    event of :func:`iter_raw_events`.

    The events are framed a block at a time; a small event of a known type is decoded here
    (header, CRC32, body decoder), everything else (FORMAT_DESCRIPTION, large or unknown
    events, and any event the short way finds wrong, so that the error is decode_event's) by
    ``decode_event``.
    """
    if ctx is None:
        ctx = BinlogContext()
    decoders = DECODERS
    unpack_header = _unpack_header
    crc32 = _crc32
    new_header = _new_header
    table_maps = ctx.table_maps
    # Only an FDE (decoded by decode_event) changes these: read again after decode_event.
    trailer = CHECKSUM_LEN if ctx.checksum else 0
    check = trailer and verify_checksum
    start = max(ctx.fde.header_length, HEADER_LEN)
    for block in iter_raw_blocks(source, allow_truncated_tail=allow_truncated_tail, keys=keys):
        for offset, data in block:
            size = len(data)
            type_code = data[TYPE_CODE_OFFSET]
            body_decoder = decoders.get(type_code) if size < _SHORT_MAX else None
            if body_decoder is not None and type_code != _FDE:
                fields = unpack_header(data, 0)
                end = size - trailer
                if (
                    fields[3] == size
                    and start <= end
                    and not (check and crc32(data) != CRC_RESIDUE)
                ):
                    try:
                        event = body_decoder(data[start:end], new_header(EventHeader, fields), ctx)
                    except _FAILURES:
                        pass  # decode_event says what is wrong
                    else:
                        if type_code == _TABLE_MAP:  # (BinlogContext.observe)
                            table_maps[event.table_id] = event  # type: ignore[attr-defined,assignment]
                        yield offset, event
                        continue
            yield offset, decode_event(data, ctx, offset, verify_checksum, allow_unknown)
            table_maps = ctx.table_maps
            trailer = CHECKSUM_LEN if ctx.checksum else 0
            check = trailer and verify_checksum
            start = max(ctx.fde.header_length, HEADER_LEN)


# Events up to this size are decoded by read_binlog's own loop (decode_event's cut-off for
# slicing an event's bytes rather than viewing them).
_SHORT_MAX = _VIEW_MIN
_FAILURES = (DecodeError, *_MALFORMED)
