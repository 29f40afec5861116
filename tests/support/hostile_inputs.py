"""Hostile decoder inputs, and the cases that feed them to the decoder (run by
test_hostile_files.py in a child process under a memory limit).

Each case reads its input from a file and returns what the decoder produced; the child reports
the exception that came out instead, if any.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from decoder import StreamDecoder, decode_event, read_binlog
from decoder.mysql_json import parse_mysql_json
from encoder import encode_event
from encoder.compression import compress_record
from fakemaster.vocabulary.constants import BINLOG_MAGIC, HEADER_LEN, ColumnType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import QueryEvent, TableMapEvent, WriteRowsEvent
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET

__all__ = [
    "CASES",
    "ROWS_TABLE_MAP",
    "compressed_query_event",
    "compressed_rows_event",
    "huge_length_file",
    "record",
    "shared_json_chain",
    "zeros_zlib_stream",
]

# An unchecksummed stream, so a rewritten body needs no new CRC.
_CTX = BinlogContext(checksum=False)
ROWS_TABLE_MAP = TableMapEvent(
    table_id=42,
    database="db",
    table="t",
    column_types=(ColumnType.LONG, ColumnType.BLOB),
    column_meta=(0, 4),
    nullable=(True, True),
)


def huge_length_file() -> bytes:
    """23 bytes: the magic and one event header whose length field claims 4 GiB - 1."""
    header = bytearray(HEADER_LEN)
    header[4] = 2  # QUERY
    struct.pack_into("<I", header, EVENT_LENGTH_OFFSET, 0xFFFFFFFF)
    return BINLOG_MAGIC + bytes(header)


def record(declared: int, stream: bytes) -> bytes:
    """A compressed record (MariaDB's layout) whose header declares ``declared`` bytes."""
    return bytes((0x80 | 4,)) + declared.to_bytes(4, "big") + stream


def zeros_zlib_stream(size: int) -> Iterator[bytes]:
    """A zlib stream of ``size`` zero bytes, made in 1 MiB steps (never held inflated)."""
    compressor = zlib.compressobj(9)
    step = bytes(1 << 20)
    for start in range(0, size, len(step)):
        yield compressor.compress(step[: min(len(step), size - start)])
    yield compressor.flush()


def _with_record(event: bytes, genuine: bytes, hostile: bytes) -> bytes:
    """``event`` (ending with the compressed record ``genuine``) with ``hostile`` instead."""
    assert event.endswith(genuine)
    rewritten = bytearray(event[: len(event) - len(genuine)] + hostile)
    struct.pack_into("<I", rewritten, EVENT_LENGTH_OFFSET, len(rewritten))
    return bytes(rewritten)


def compressed_query_event(hostile_record: bytes) -> bytes:
    """A QUERY_COMPRESSED event whose compressed statement is ``hostile_record``."""
    query = b"INSERT INTO t VALUES (1)"
    event = encode_event(QueryEvent(database="db", query=query, compressed=True), _CTX.copy())
    return _with_record(event, compress_record(query), hostile_record)


def compressed_rows_event(hostile_record: bytes) -> bytes:
    """A WRITE_ROWS_COMPRESSED_V1 event (for ROWS_TABLE_MAP) with ``hostile_record`` as rows."""
    ctx = _CTX.copy()
    ctx.observe(ROWS_TABLE_MAP)
    row = (1, b"abc")
    event = WriteRowsEvent(
        table_id=42, compressed=True, width=2, columns_present=b"\x03", rows=(row,)
    )
    raw = encode_event(event, ctx)
    # The rows area is one row: null bitmap (no NULLs; unused bits are one), INT, BLOB length
    # and bytes.
    genuine = compress_record(b"\xfc" + struct.pack("<i", 1) + b"\x03\x00\x00\x00abc")
    return _with_record(raw, genuine, hostile_record)


def shared_json_chain(levels: int) -> bytes:
    """A binary JSON document of ``levels`` nested small arrays, each holding the next one
    twice (two offsets to the same bytes): 10 bytes a level, 2**levels values expanded."""
    inner = struct.pack("<HH", 0, 4)  # the innermost array: empty
    for _ in range(levels):
        header = 4 + 2 * 3
        entry = bytes((0x02,)) + struct.pack("<H", header)
        inner = struct.pack("<HH", 2, header + len(inner)) + entry + entry + inner
    return bytes((0x02,)) + inner


def _read_file(path: str) -> list[Any]:
    return [type(event).__name__ for _, event in read_binlog(path)]


def _decode_stream(path: str) -> Any:
    """The sans-IO reader: fed the whole file, then told the input has ended."""
    stream = StreamDecoder()
    stream.feed(Path(path).read_bytes())
    events = list(stream)
    stream.finish()
    return events


def _decode_query(path: str) -> Any:
    return decode_event(Path(path).read_bytes(), _CTX.copy()).query[:16]


def _decode_rows(path: str) -> Any:
    ctx = _CTX.copy()
    ctx.observe(ROWS_TABLE_MAP)
    return decode_event(Path(path).read_bytes(), ctx).rows


def _parse_json(path: str) -> Any:
    return parse_mysql_json(Path(path).read_bytes())


CASES = {
    "read_binlog": _read_file,
    "stream": _decode_stream,
    "decode_query": _decode_query,
    "decode_rows": _decode_rows,
    "parse_json": _parse_json,
}
