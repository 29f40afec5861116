"""A binlog file's events found by a walk of their headers, not decoded: every event's offset
and type code (``_event_heads``), and its GTIDs read from their bytes when every one is a
common GTID (``_CommonGtids``), so that the columnar path decodes only the events that carry
state.
"""

from __future__ import annotations

import io
import os
import struct
from array import array
from typing import Any, NamedTuple

from fakemaster.spark import changes
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    EventType,
    GtidFlag,
)
from fakemaster.vocabulary.events import FormatDescriptionEvent
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET, HEADER, SERVER_ID_OFFSET
from fakemaster.vocabulary.layouts import GTID_BODY_MIN, GTID_FIXED, U32

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "_CommonGtids",
    "_apply_gtid",
    "_event_heads",
    "_frames_gtids",
]


# HEADER's first four fields: timestamp, type code, server id, event length.
_HEADER = struct.Struct(HEADER.format[:5])


def _event_heads(source: Any) -> tuple[Any, Any, _CommonGtids | None] | None:
    """The offset and type code of every event of a binlog file (a path or a BytesIO), from a
    walk of the headers, and its GTIDs when every one is a common GTID (``_common_gtids``);
    None when the walk cannot tell (no magic, an encrypted file, a length that does not
    frame): the decoder then decodes every event."""
    import mmap

    import numpy as np

    if isinstance(source, io.BytesIO):
        return _walk(source.getbuffer())
    with open(source, "rb") as f:
        if os.fstat(f.fileno()).st_size < len(BINLOG_MAGIC):
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = _walk(memoryview(data))
    return found if found is None else (np.asarray(found[0]), np.asarray(found[1]), found[2])


class _CommonGtids(NamedTuple):
    """A file's GTIDs read from its bytes, not decoded: every one the common GTID (a 19-byte
    body without commit id or XA, zero padding), so that what the change events take from it
    (server id, timestamp, domain-server-seq) lies at fixed places."""

    offsets: Any  # int64 array, ascending
    length: int  # the events' length (every one the same: 38, or 42 with a CRC)
    server_ids: list[int]
    ts_ms: list[int]
    texts: list[str]


def _common_gtids(data: Any, offsets: Any) -> _CommonGtids | None:
    """The GTIDs at ``offsets`` of ``data`` (whole events, framed by the walk), or None when
    one of them is not a common GTID (the decoder then decodes them, and says what is wrong
    with one). Each GTID's CRC and length are checked by the decoder all the same."""
    import numpy as np

    buf = np.frombuffer(data, np.uint8)
    try:
        if not len(offsets):
            return _CommonGtids(offsets, 0, [], [], [])
        at = EVENT_LENGTH_OFFSET
        lengths = buf[offsets[:, None] + np.arange(at, at + U32.size)].view("<u4").ravel()
        length = int(lengths[0])
        if length not in _COMMON_GTID_LENGTHS or (lengths != length).any():
            return None
        head = buf[offsets[:, None] + np.arange(_COMMON_GTID_LENGTHS[0])]  # header and body
        flags, padding = head[:, _GTID_FLAGS_AT], head[:, _GTID_FLAGS_AT + 1 :]
        if (flags & (GtidFlag.GROUP_COMMIT_ID | _XA_FLAGS)).any() or padding.any():
            return None

        def numbers(at: int, dtype: str) -> list[int]:
            width = np.dtype(dtype).itemsize
            values: list[int] = head[:, at : at + width].copy().view(dtype).ravel().tolist()
            return values

        servers = numbers(SERVER_ID_OFFSET, "<u4")
        seqs = numbers(HEADER_LEN, "<u8")
        domains = numbers(HEADER_LEN + 8, "<u4")
        texts = list(map(changes.gtid_text, domains, servers, seqs))
        ts_ms = [t * 1000 for t in numbers(0, "<u4")]
        return _CommonGtids(offsets, length, servers, ts_ms, texts)
    finally:
        del buf  # (the caller releases the buffer: no export may be left)


_XA_FLAGS = GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA
# A common GTID event: the header, seq_no, domain_id, flags2, zero padding to GTID_BODY_MIN;
# then a CRC or not.
_COMMON_GTID_LENGTHS = (HEADER_LEN + GTID_BODY_MIN, HEADER_LEN + GTID_BODY_MIN + CHECKSUM_LEN)
_GTID_FLAGS_AT = HEADER_LEN + GTID_FIXED.size - 1


def _frames_gtids(fde: FormatDescriptionEvent, gtids: _CommonGtids) -> bool:
    """Whether the file's FDE agrees with where ``_common_gtids`` read the GTIDs' fields (a
    19-byte header; a CRC after each event when it says CRC32)."""
    crc = fde.checksum_alg == ChecksumAlg.CRC32
    return fde.header_length == HEADER_LEN and (
        not gtids.texts or gtids.length == _COMMON_GTID_LENGTHS[crc]
    )


def _apply_gtid(state: changes.FileState, gtids: _CommonGtids, k: int) -> None:
    """What GTID ``k`` of ``gtids`` sets in ``state`` (no XA in a common GTID)."""
    changes.start_group(state, gtids.texts[k], gtids.server_ids[k], gtids.ts_ms[k])


def _walk(data: Any) -> tuple[Any, Any, _CommonGtids | None] | None:
    import numpy as np

    try:
        if bytes(data[: len(BINLOG_MAGIC)]) != BINLOG_MAGIC:
            return None
        offsets = array("q")
        types = bytearray()
        unpack = _HEADER.unpack_from
        size = len(data)
        pos = len(BINLOG_MAGIC)
        header_len = HEADER_LEN  # (a local: read per event)
        encrypted = int(EventType.START_ENCRYPTION)
        while pos + header_len <= size:
            _, code, _, length = unpack(data, pos)
            if length < header_len or code == encrypted:
                return None
            offsets.append(pos)
            types.append(code)
            pos += length
        if pos != size:
            return None  # a partial event: the decoder says what is wrong
        every = np.frombuffer(offsets, np.int64).copy()
        codes = np.frombuffer(bytes(types), np.uint8)
        return every, codes, _common_gtids(data, every[codes == int(EventType.GTID)])
    finally:
        if isinstance(data, memoryview):
            data.release()
