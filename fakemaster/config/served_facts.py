"""What the served binlog bytes tell about the server that wrote them (sans-IO).

A real primary's ``SELECT @@version`` and the FORMAT_DESCRIPTION of its binlog say the same
thing, because one server wrote both. A fake master serving somebody else's binlog files must
not contradict them either: :class:`FactsScanner` reads the served events and collects what
they prove about their writer (:class:`ServedFacts`):

* the newest FORMAT_DESCRIPTION: server version, checksum algorithm, server id;
* events logged under another server id than their file's FDE: replicated events, which a
  server writes with ``log_slave_updates=ON``;
* the newest TABLE_MAP that settles ``binlog_row_metadata`` (see :func:`row_metadata_of`);
* the QUERY events' charset status variable, whose third id is the logging session's
  ``collation_server`` (the global one unless the session changed it);
* the largest event, which ``max_allowed_packet`` must let through.

Scanning is linear and incremental: each :meth:`FactsScanner.refresh` reads only the bytes
appended since the previous one (a closed file is read once), decodes only FDE, TABLE_MAP and
QUERY events, and keeps a bounded state. The source is anything with the
:class:`fakemaster.store.BinlogStore` reading API.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from decoder.core import decode_event
from decoder.encryption import FileDecryption
from fakemaster.vocabulary.columns import BLOB_TYPES, NUMERIC_TYPES, VARCHAR_TYPES
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    ColumnType,
    EventType,
    OptionalMetadata,
    QueryStatus,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import FakemasterError
from fakemaster.vocabulary.events import FormatDescriptionEvent, QueryEvent, TableMapEvent
from fakemaster.vocabulary.header import (
    EVENT_LENGTH_OFFSET,
    HEADER,
    SERVER_ID_OFFSET,
    TYPE_CODE_OFFSET,
)
from fakemaster.vocabulary.layouts import QUERY_POST_HEADER

__all__ = [
    "BinlogSource",
    "FactsScanner",
    "RowMetadata",
    "ServedFacts",
    "row_metadata_of",
]

MAGIC_LEN = len(BINLOG_MAGIC)
SCAN_CHUNK = 1 << 16
# Blocks read as they are (not cut at event boundaries) by the walk.
RAW_SCAN_CHUNK = 1 << 20
# Events whose bodies can tell something (START_ENCRYPTION starts the decryption).
_TELLING_TYPES = frozenset(
    int(type_code)
    for type_code in (
        EventType.FORMAT_DESCRIPTION,
        EventType.TABLE_MAP,
        EventType.QUERY,
        EventType.QUERY_COMPRESSED,
        EventType.START_ENCRYPTION,
    )
)
_TABLE_MAP = int(EventType.TABLE_MAP)
# The telling types as flags by type code, as _pass_untelling takes them.
_TELLING_FLAGS = bytes(1 if type_code in _TELLING_TYPES else 0 for type_code in range(256))
# An event's type code, server id and length, read together (they follow each other).
_TYPE_SERVER_LENGTH = struct.Struct("<BII")
assert TYPE_CODE_OFFSET + 1 == SERVER_ID_OFFSET and SERVER_ID_OFFSET + 4 == EVENT_LENGTH_OFFSET
_LENGTH = struct.Struct("<I")
# The event header as the walk reads it: its length, the type code's, server id's and length's
# offsets.
_LAYOUT = (HEADER_LEN, TYPE_CODE_OFFSET, SERVER_ID_OFFSET, EVENT_LENGTH_OFFSET)
# Entries of each memo before it starts again (a bound on what a hostile binlog can make it keep).
_MEMO_SIZE = 4096


class RowMetadata:
    """The values of ``binlog_row_metadata``."""

    NO_LOG = "NO_LOG"
    MINIMAL = "MINIMAL"
    FULL = "FULL"


# Columns that MINIMAL describes (checked on MariaDB 10.11.19, one table per type): numeric
# ones get a SIGNEDNESS bit, character ones (CHAR, BINARY, INET6 and UUID are STRING; VARCHAR,
# VARBINARY; BLOB, TEXT, JSON; GEOMETRY) a charset. ENUM, SET, BIT and temporal columns get
# nothing, so a table of only those has no optional metadata under MINIMAL either.
_CHARACTER_TYPES = BLOB_TYPES | VARCHAR_TYPES  # BLOB_TYPES has JSON and GEOMETRY too
# A STRING column's first metadata byte is its real type: ENUM and SET are not characters.
_NOT_CHARACTER_STRINGS = frozenset({ColumnType.ENUM, ColumnType.SET})


def row_metadata_of(table_map: TableMapEvent) -> str | None:
    """The ``binlog_row_metadata`` setting that wrote this TABLE_MAP, or None when the event
    cannot tell.

    FULL always writes COLUMN_NAME; MINIMAL writes only SIGNEDNESS, the charsets and
    GEOMETRY_TYPE; NO_LOG writes nothing. No optional metadata settles NO_LOG only for a table
    that MINIMAL would have described (it has a numeric or a character column).
    """
    kinds = {entry.kind for entry in table_map.optional_metadata}
    if OptionalMetadata.COLUMN_NAME in kinds:
        return RowMetadata.FULL
    if kinds:
        return RowMetadata.MINIMAL
    for column_type, meta in zip(table_map.column_types, table_map.column_meta, strict=False):
        if column_type in NUMERIC_TYPES or column_type in _CHARACTER_TYPES:
            return RowMetadata.NO_LOG
        if column_type == ColumnType.STRING and meta & 0xFF not in _NOT_CHARACTER_STRINGS:
            return RowMetadata.NO_LOG
    return None


@dataclass(frozen=True, slots=True)
class ServedFacts:
    """What the served events prove; None (or empty) where they tell nothing.

    ``evidence`` says where each fact was read (for error messages), by variable name.
    """

    server_version: str | None = None
    checksum_alg: int | None = None
    server_id: int | None = None
    # The first server id seen on an event that its file's FDE does not share.
    foreign_server_id: int | None = None
    row_metadata: str | None = None
    # The newest QUERY's session collation_server, and every one seen (a bounded set: ids).
    server_collation_id: int | None = None
    server_collation_ids: frozenset[int] = frozenset()
    largest_event: int = 0
    evidence: dict[str, str] = field(default_factory=dict, compare=False)


class BinlogSource(Protocol):
    """The reading side of :class:`fakemaster.store.BinlogStore`."""

    def file_names(self) -> list[str]: ...

    def file_size(self, name: str) -> int: ...

    def read(self, name: str, offset: int, max_bytes: int = ...) -> bytes: ...


class _FileCursor:
    """Where the scan of one file stands, and what it must remember to go on."""

    __slots__ = ("name", "offset", "context", "decryption", "fde_server_id", "stopped")

    def __init__(self, name: str) -> None:
        self.name = name
        self.offset = MAGIC_LEN
        self.context = BinlogContext()
        self.decryption: FileDecryption | None = None
        self.fde_server_id: int | None = None
        # Bytes that are not events, or encrypted ones without their key: the rest of the file
        # tells nothing (the dump would fail there as well).
        self.stopped = False


def _pass_untelling_in_python(
    data: bytes | bytearray | memoryview,
    pos: int,
    largest: int,
    foreign_from: int | None,
    telling: bytes,
    table_map: int,
    table_maps: dict[bytes, tuple[str | None, str, str]] | None,
    row_metadata: str | None,
    body_start: int,
    crc_len: int,
    layout: tuple[int, int, int, int],
) -> tuple[int, int]:
    """Where the walk from ``pos`` stops, and whether to look at the event there (1) or the
    block's whole events end there (0): events no larger than ``largest``, of the FDE's server
    id or 0 (when ``foreign_from`` is that id; None: any), of a type not ``telling``, or a
    TABLE_MAP whose body ``table_maps`` knows and that tells no other ``row_metadata``, are
    passed over. The C extension's ``pass_untelling`` does the same (``_facts_accel.c``)."""
    header_len, type_offset = layout[0], layout[1]
    unpack_header = _TYPE_SERVER_LENGTH.unpack_from
    size = len(data)
    while pos + header_len <= size:
        type_code, server_id, length = unpack_header(data, pos + type_offset)
        if length < header_len or pos + length > size:
            return pos, 0
        if length > largest or (
            foreign_from is not None and server_id != foreign_from and server_id != 0
        ):
            return pos, 1
        if telling[type_code]:
            if type_code != table_map or table_maps is None:
                return pos, 1
            known = table_maps.get(bytes(data[pos + body_start : pos + length - crc_len]))
            if known is None or (known[0] is not None and known[0] != row_metadata):
                return pos, 1
        pos += length
    return pos, 0


_PassUntelling = Callable[
    [
        bytes | bytearray | memoryview,
        int,
        int,
        int | None,
        bytes,
        int,
        dict[bytes, tuple[str | None, str, str]] | None,
        str | None,
        int,
        int,
        tuple[int, int, int, int],
    ],
    tuple[int, int],
]
_pass_untelling: _PassUntelling
try:
    from fakemaster.config._facts_accel import pass_untelling as _pass_untelling
except ImportError:  # built without its extension (no compiler where it was installed)
    _pass_untelling = _pass_untelling_in_python

# Whether the start-up scan passes over events in C (the package's extension was built).
ACCELERATED = _pass_untelling is not _pass_untelling_in_python


def _facts_accel_pass_untelling() -> _PassUntelling:
    """The C walk itself (the tests hold it to :func:`_pass_untelling_in_python`)."""
    from fakemaster.config._facts_accel import pass_untelling

    return pass_untelling


class FactsScanner:
    """Collects :class:`ServedFacts` from a binlog source, incrementally.

    ``keys`` decrypt files written with ``encrypt_binlog=ON`` (without them only what precedes
    the encryption, and event sizes, are read).
    """

    def __init__(self, source: BinlogSource, keys: BinlogKeys | None = None) -> None:
        self.source = source
        self.keys = keys
        self._facts = ServedFacts()
        self._evidence: dict[str, str] = {}
        self._cursor: _FileCursor | None = None
        # What TABLE_MAP bodies and QUERY status variables told, by their bytes.
        self._table_maps: dict[bytes, tuple[str | None, str, str]] = {}
        self._collations: dict[bytes, int | None] = {}

    @property
    def facts(self) -> ServedFacts:
        return self._facts

    def refresh(self) -> bool:
        """Read what was appended since the last call; True if the facts changed."""
        names = self.source.file_names()
        if not names:
            return False
        before = self._facts
        cursor = self._cursor
        # Files are only appended (and purged from the front): a cursor whose file is gone
        # was before every remaining one.
        index = names.index(cursor.name) if cursor is not None and cursor.name in names else -1
        if cursor is None or index < 0:
            index = 0
            cursor = self._cursor = _FileCursor(names[0])
        while True:
            self._scan(cursor)
            if index + 1 >= len(names):
                break
            index += 1
            cursor = self._cursor = _FileCursor(names[index])
        changed = self._facts != before
        # A fact may change and change back within one refresh (FULL, MINIMAL, FULL): equal
        # facts, but the evidence is the newest event's.
        if changed or self._facts.evidence != self._evidence:
            self._facts = replace(self._facts, evidence=dict(self._evidence))
        return changed

    # --- reading --------------------------------------------------------------------------

    def _scan(self, cursor: _FileCursor) -> None:
        source = self.source
        try:
            end = source.file_size(cursor.name)
        except Exception:  # noqa: BLE001 - purged meanwhile, or unreadable: nothing to learn
            return
        # A store hands out its bytes as they are (read_bytes): the walk below finds the event
        # boundaries itself, so the store need not walk the headers first. An event that does
        # not fit in a block, or bytes that are not an event, are read with read(), which
        # returns a whole event however large, or raises.
        read_bytes = getattr(source, "read_bytes", None)
        while cursor.offset < end:
            pos = 0
            if read_bytes is not None:
                try:
                    block = read_bytes(cursor.name, cursor.offset, RAW_SCAN_CHUNK)
                except Exception:  # noqa: BLE001 - as below
                    block = b""
                if block:
                    pos = self._walk(cursor, block)
            if pos == 0:
                try:
                    block = source.read(cursor.name, cursor.offset, SCAN_CHUNK)
                except Exception:  # noqa: BLE001 - unreadable bytes prove nothing; the dump reports
                    cursor.stopped = True
                    cursor.offset = end
                    return
                if not block:
                    return
                pos = self._walk(cursor, block)
                if pos == 0:
                    return
            cursor.offset += pos

    def _walk(self, cursor: _FileCursor, block: bytes) -> int:
        """Take in the whole events of ``block``; the bytes they take. Only the events that can
        tell something are looked at (every one in an encrypted file, whose types are hidden):
        the rest are passed over by :func:`_pass_untelling` (in C when built)."""
        view = memoryview(block)
        pass_untelling = _pass_untelling
        base = cursor.offset
        pos = 0
        while True:
            # Refreshed after every event looked at: what makes the next one worth a look.
            fde_server_id = cursor.fde_server_id
            servers = self._facts.foreign_server_id is None and fde_server_id is not None
            # A TABLE_MAP whose body was seen before and told nothing new is passed over
            # (single-row transactions map their table in every one).
            every = cursor.decryption is not None
            pos, look = pass_untelling(
                block,
                pos,
                0 if every else self._facts.largest_event,  # 0: every event is looked at
                fde_server_id if servers else None,
                _TELLING_FLAGS,
                _TABLE_MAP,
                self._table_maps if not every and not cursor.stopped else None,
                self._facts.row_metadata,
                HEADER_LEN + cursor.context.table_id_size,
                _crc_len(cursor),
                _LAYOUT,
            )
            if not look:
                return pos
            length = _LENGTH.unpack_from(block, pos + EVENT_LENGTH_OFFSET)[0]
            self._event(cursor, base + pos, view[pos : pos + length])
            pos += length

    def _event(self, cursor: _FileCursor, offset: int, event: memoryview) -> None:
        """Take in one event (a view into the block read; copied only when decoded)."""
        size = len(event)
        if size > self._facts.largest_event:
            self._facts = replace(self._facts, largest_event=size)
            self._evidence["max_allowed_packet"] = (
                f"the event of {size} bytes at {cursor.name}:{offset}"
            )
        if cursor.stopped:
            return
        if cursor.decryption is not None:
            try:
                event = memoryview(cursor.decryption.decrypt(offset, bytes(event)))
            except FakemasterError:
                cursor.stopped = True
                return
        elif FileDecryption.starts(event):
            try:
                cursor.decryption = FileDecryption(self.keys, bytes(event), offset)
            except FakemasterError:
                cursor.stopped = True
            return
        _, type_code, server_id, _, _, _ = HEADER.unpack_from(event, 0)
        if type_code == EventType.FORMAT_DESCRIPTION:
            self._format_description(cursor, bytes(event))
            return
        if (
            cursor.fde_server_id is not None
            and server_id not in (0, cursor.fde_server_id)
            and self._facts.foreign_server_id is None
        ):
            self._facts = replace(self._facts, foreign_server_id=server_id)
            self._evidence["log_slave_updates"] = (
                f"the event of server id {server_id} at {cursor.name}:{offset}, in a file "
                f"written by server id {cursor.fde_server_id}"
            )
        if type_code == EventType.TABLE_MAP:
            self._table_map(cursor, offset, bytes(event))
        elif type_code in (EventType.QUERY, EventType.QUERY_COMPRESSED):
            self._query(cursor, offset, bytes(event))

    def _decode(self, cursor: _FileCursor, offset: int, data: bytes) -> object | None:
        try:
            event = decode_event(data, cursor.context, offset=offset, verify_checksum=False)
        except FakemasterError:
            return None  # a damaged event proves nothing; serving it is the dump's business
        # Only the current event matters here: keep the context from growing with table ids.
        cursor.context.table_maps.clear()
        return event

    def _format_description(self, cursor: _FileCursor, data: bytes) -> None:
        event = self._decode(cursor, 0, data)
        if not isinstance(event, FormatDescriptionEvent):
            cursor.stopped = True
            return
        cursor.fde_server_id = event.server_id
        where = f"the FORMAT_DESCRIPTION of {cursor.name}"
        alg = event.checksum_alg
        self._facts = replace(
            self._facts,
            server_version=event.server_version,
            server_id=event.server_id,
            checksum_alg=alg if alg in (ChecksumAlg.OFF, ChecksumAlg.CRC32) else None,
        )
        for name in ("version", "server_id", "binlog_checksum"):
            self._evidence[name] = where

    def _table_map(self, cursor: _FileCursor, offset: int, data: bytes) -> None:
        # Tables are mapped again in every transaction with the same body: decoded once.
        key = data[HEADER_LEN + cursor.context.table_id_size : len(data) - _crc_len(cursor)]
        known = self._table_maps.get(key)
        if known is None:
            event = self._decode(cursor, offset, data)
            if not isinstance(event, TableMapEvent):
                return
            known = (row_metadata_of(event), event.database, event.table)
            if len(self._table_maps) >= _MEMO_SIZE:
                self._table_maps.clear()
            self._table_maps[key] = known
        setting, database, table = known
        if setting is None or setting == self._facts.row_metadata:
            return
        self._facts = replace(self._facts, row_metadata=setting)
        self._evidence["binlog_row_metadata"] = (
            f"the TABLE_MAP of `{database}`.`{table}` at {cursor.name}:{offset}"
        )

    def _query(self, cursor: _FileCursor, offset: int, data: bytes) -> None:
        # Sessions log the same status variables query after query: read once per value.
        if len(data) < HEADER_LEN + QUERY_POST_HEADER.size:
            return  # a damaged event proves nothing; serving it is the dump's business
        status_length = QUERY_POST_HEADER.unpack_from(data, HEADER_LEN)[4]
        start = HEADER_LEN + QUERY_POST_HEADER.size
        key = data[start : start + status_length]
        if key in self._collations:
            collation_id = self._collations[key]
        else:
            collation_id = self._collation_of(cursor, offset, data)
            if len(self._collations) >= _MEMO_SIZE:
                self._collations.clear()
            self._collations[key] = collation_id
        if collation_id is None:
            return
        facts = self._facts
        if collation_id != facts.server_collation_id:
            self._facts = replace(
                facts,
                server_collation_id=collation_id,
                server_collation_ids=facts.server_collation_ids | {collation_id},
            )
            self._evidence["collation_server"] = f"the QUERY at {cursor.name}:{offset}"

    def _collation_of(self, cursor: _FileCursor, offset: int, data: bytes) -> int | None:
        event = self._decode(cursor, offset, data)
        if not isinstance(event, QueryEvent):
            return None
        for status in event.status_vars:
            if status.code == QueryStatus.CHARSET:
                return int(status.value[2])
        return None


def _crc_len(cursor: _FileCursor) -> int:
    return CHECKSUM_LEN if cursor.context.checksum else 0
