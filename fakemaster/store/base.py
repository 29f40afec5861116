"""The binlog files a fake master serves: built in memory, or a directory of real binlog files.

A store is an ordered list of binlog files (``mysql-bin.000001``, ...). Readers take whole
events by offset ranges (:meth:`BinlogStore.read`), never a whole file. What the dump thread
needs besides the bytes is derived from event headers only, lazily: each file's FORMAT_DESCRIPTION
and GTID_LIST (the GTID state at the start of the file), the GTIDs the file holds, and the end of
the last complete event of the active (last) file.

Two backends:

* :class:`MemoryBinlogStore` builds files like a MariaDB 10.11 primary: every file starts with
  FORMAT_DESCRIPTION, GTID_LIST and BINLOG_CHECKPOINT, events get their real end positions,
  transactions get GTIDs, :meth:`~MemoryBinlogStore.rotate` writes a real ROTATE.
* :class:`DirectoryBinlogStore` serves the files listed in ``<basename>.index`` byte for byte.
  The last file may be growing (another process appends to it, or rotates to a new file): call
  :meth:`~BinlogStore.poll` (or :meth:`~DirectoryBinlogStore.start_watching`) to pick changes up.

Changes are announced without asyncio: :attr:`BinlogStore.version` increases and the callbacks
registered with :meth:`BinlogStore.subscribe` are called (from the thread that made the change).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from decoder.control import fde_has_checksum, fde_server_version
from decoder.gtid import read_gtid_list
from encoder.core import encode_event
from fakemaster.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    EventFlag,
    EventType,
    GtidFlag,
)
from fakemaster.context import BinlogContext
from fakemaster.errors import DecodeError, FakemasterError
from fakemaster.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
    StopEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.gtid_state import BinlogState, GtidPosition
from fakemaster.header import (
    CRC,
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    SERVER_ID_OFFSET,
    TYPE_CODE_OFFSET,
    event_crc,
)
from fakemaster.layouts import FDE_FIXED, GTID_FIXED, GTID_FLAGS2_OFFSET, QUERY_POST_HEADER, U32

MAGIC_LEN = len(BINLOG_MAGIC)
# The dump thread reads events with max_allowed_packet raised to its ceiling (1 GiB).
MAX_EVENT_SIZE = 1 << 30
DEFAULT_SERVER_VERSION = "10.11.19-MariaDB-log"
SCAN_CHUNK = 1 << 16

_FDE_ALG_FROM_END = 1 + CHECKSUM_LEN  # the alg byte precedes the CRC of a checksum-capable FDE
_GTID_FLAGS2_AT = HEADER_LEN + GTID_FLAGS2_OFFSET

GROUP_PART_TYPES = frozenset(
    {
        EventType.GTID,
        EventType.INTVAR,
        EventType.RAND,
        EventType.USER_VAR,
        EventType.TABLE_MAP,
        EventType.ANNOTATE_ROWS,
    }
)


class BinlogReadError(FakemasterError):
    """Bytes at a read position that are not a whole event (what ``read_log_event`` reports).

    ``message`` is the MariaDB text; ``last_byte`` is how far the server would have read.
    """

    BOGUS = "bogus data in log event"
    TOO_LARGE = "log event entry exceeded max_allowed_packet; Increase max_allowed_packet on master"
    TRUNCATED = "binlog truncated in the middle of event; consider out of disk space on master"

    def __init__(self, message: str, file_name: str, offset: int, last_byte: int) -> None:
        self.message = message
        self.file_name = file_name
        self.offset = offset
        self.last_byte = last_byte
        super().__init__(f"{file_name} at {offset}: {message}")


class UnknownBinlogFile(FakemasterError, KeyError):
    """A file name that is not in the binlog index."""


@dataclass(frozen=True, slots=True)
class AppendedEvent:
    """Where an appended event went: its file and its byte range there."""

    file_name: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class AppendedGroup:
    """An appended transaction (event group): its GTID and its byte range."""

    gtid: Gtid
    file_name: str
    start: int
    end: int


def is_commit_or_rollback(event: bytes | bytearray | memoryview, checksum: bool) -> bool:
    """Whether a QUERY event's text is exactly COMMIT or ROLLBACK (``peek_is_commit_rollback``:
    the bytes before the CRC end with the database name's NUL and the statement)."""
    end = len(event) - (CHECKSUM_LEN if checksum else 0)
    if end < HEADER_LEN + QUERY_POST_HEADER.size or end < 9:
        return False
    return bytes(event[end - 7 : end]) == b"\x00COMMIT" or bytes(event[end - 9 : end]) == (
        b"\x00ROLLBACK"
    )


class GroupTracker:
    """Finds the event that ends each event group, in event order.

    A group opened by a standalone GTID ends with the first event that is not part of a group
    (``Log_event::is_part_of_group``); a transaction ends with XID, XA_PREPARE or a QUERY that
    is COMMIT or ROLLBACK. Without GTIDs (old binlogs) the same transaction ends count.
    """

    __slots__ = ("standalone",)

    def __init__(self) -> None:
        self.standalone = False

    def feed(self, type_code: int, event: bytes | bytearray | memoryview, checksum: bool) -> bool:
        """True if this event ends a group."""
        if type_code == EventType.GTID:
            self.standalone = bool(
                len(event) > _GTID_FLAGS2_AT and event[_GTID_FLAGS2_AT] & GtidFlag.STANDALONE
            )
            return False
        if self.standalone:
            if type_code in GROUP_PART_TYPES:
                return False
            self.standalone = False
            return True
        if type_code in (EventType.XID, EventType.XA_PREPARE):
            return True
        return type_code == EventType.QUERY and is_commit_or_rollback(event, checksum)


def fde_checksum_alg(fde: bytes | bytearray | memoryview) -> int:
    """The checksum algorithm a whole FORMAT_DESCRIPTION event declares (UNDEF for a server
    that predates checksums)."""
    version = fde_server_version(fde)
    if not fde_has_checksum(version) or len(fde) < HEADER_LEN + FDE_FIXED.size + _FDE_ALG_FROM_END:
        return ChecksumAlg.UNDEF
    return int(fde[len(fde) - _FDE_ALG_FROM_END])


def parse_gtid_list_event(
    event: bytes | bytearray | memoryview, checksum: bool
) -> tuple[Gtid, ...]:
    """The GTIDs of a whole GTID_LIST event (DecodeError if it cannot hold its count)."""
    end = len(event) - (CHECKSUM_LEN if checksum else 0)
    return read_gtid_list(memoryview(event)[HEADER_LEN:end])[0]


class _FileIndex:
    """What is known about one binlog file, found by walking event headers."""

    __slots__ = (
        "name",
        "scanned",
        "scan_stopped",
        "fde",
        "checksum_alg",
        "gtid_list",
        "gtid_list_read",
        "gtid_offsets",
        "gtid_ends",
        "gtid_domains",
        "gtid_servers",
        "gtid_seqs",
        "gtid_flags",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.scanned = MAGIC_LEN  # offset of the first event not yet walked
        self.scan_stopped = False  # a corrupt header ends the walk
        self.fde: bytes | None = None
        self.checksum_alg: int = ChecksumAlg.UNDEF
        self.gtid_list: tuple[Gtid, ...] | None = None
        self.gtid_list_read = False
        self.gtid_offsets = array("Q")
        self.gtid_ends = array("Q")
        self.gtid_domains = array("L")
        self.gtid_servers = array("L")
        self.gtid_seqs = array("Q")
        self.gtid_flags = array("B")


@dataclass(frozen=True, slots=True)
class GtidInFile:
    """A GTID event of a binlog file: its GTID, flags2 and byte range."""

    gtid: Gtid
    flags2: int
    start: int
    end: int


class BinlogStore:
    """Ordered binlog files; subclasses provide the bytes (see the module docstring)."""

    basename: str

    def __init__(self, basename: str) -> None:
        self.basename = basename
        self._version = 0
        self._subscribers: list[Callable[[int], None]] = []
        self._indexes: dict[str, _FileIndex] = {}
        self._lock = threading.RLock()
        # The semi-sync state of the primary serving this store (fakemaster.dump keeps it here
        # so that it lives exactly as long as the store).
        self.semi_sync: Any = None

    # --- what subclasses provide ----------------------------------------------------------

    def file_names(self) -> list[str]:
        """The binlog files in the index, oldest first."""
        raise NotImplementedError

    def _physical_size(self, name: str) -> int:
        raise NotImplementedError

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes at ``offset`` (fewer at the end of the file)."""
        raise NotImplementedError

    def poll(self) -> bool:
        """Look for changes made outside this object; True (and subscribers notified) if any."""
        return False

    # --- change notification --------------------------------------------------------------

    @property
    def version(self) -> int:
        """Increases whenever events are appended, files rotated or purged."""
        return self._version

    def subscribe(self, callback: Callable[[int], None]) -> Callable[[], None]:
        """Call ``callback(version)`` after every change; returns the function that stops it."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _changed(self) -> None:
        with self._lock:
            self._version += 1
            version = self._version
            subscribers = list(self._subscribers)
        for callback in subscribers:
            callback(version)

    # --- files ----------------------------------------------------------------------------

    def has_file(self, name: str) -> bool:
        return name in self.file_names()

    def first_file(self) -> str | None:
        names = self.file_names()
        return names[0] if names else None

    def last_file(self) -> str | None:
        names = self.file_names()
        return names[-1] if names else None

    def is_last(self, name: str) -> bool:
        return self.last_file() == name

    def next_file(self, name: str) -> str | None:
        names = self.file_names()
        try:
            index = names.index(name)
        except ValueError:
            return None
        return names[index + 1] if index + 1 < len(names) else None

    def _require(self, name: str) -> None:
        if not self.has_file(name):
            raise UnknownBinlogFile(name)

    def file_size(self, name: str) -> int:
        """Bytes a reader may use: the whole file once it is closed (not the last one), up to
        the end of the last complete event for the last file."""
        self._require(name)
        if not self.is_last(name):
            return self._physical_size(name)
        index = self._index(name)
        self._scan(index, self._physical_size(name))
        return index.scanned

    def binary_logs(self) -> list[tuple[str, int]]:
        """SHOW BINARY LOGS: (name, size) of every file, oldest first."""
        return [(name, self.file_size(name)) for name in self.file_names()]

    def master_status(self) -> tuple[str, int]:
        """SHOW MASTER STATUS: the last file and its size."""
        last = self.last_file()
        if last is None:
            raise UnknownBinlogFile("no binlog files")
        return last, self.file_size(last)

    # --- events ---------------------------------------------------------------------------

    def read(self, name: str, offset: int, max_bytes: int = 1 << 20) -> bytes:
        """Whole events starting at ``offset``: as many as fit in ``max_bytes``, but at least one
        when one is complete (however large); b'' at the end of the readable part.

        BinlogReadError when the bytes at ``offset`` are not a valid event header or the event
        runs past the readable end (``offset`` not at an event boundary, or a file truncated by
        a crash).
        """
        end = self.file_size(name)
        if offset >= end:
            return b""
        data = self._read_range(name, offset, min(max(max_bytes, HEADER_LEN), end - offset))
        pos = 0
        size = len(data)
        unpack_length = U32.unpack_from
        while pos + HEADER_LEN <= size:
            length = unpack_length(data, pos + EVENT_LENGTH_OFFSET)[0]
            if length < HEADER_LEN or pos + length > size:
                break
            pos += length
        if pos:
            return data if pos == size else data[:pos]
        return self._read_one(name, offset, end, data)

    def _read_one(self, name: str, offset: int, end: int, head: bytes) -> bytes:
        if len(head) < HEADER_LEN:
            raise BinlogReadError(BinlogReadError.TRUNCATED, name, offset, end)
        length = U32.unpack_from(head, EVENT_LENGTH_OFFSET)[0]
        if length < HEADER_LEN:
            raise BinlogReadError(BinlogReadError.BOGUS, name, offset, offset + HEADER_LEN)
        if length > MAX_EVENT_SIZE:
            raise BinlogReadError(BinlogReadError.TOO_LARGE, name, offset, offset + HEADER_LEN)
        if offset + length > end:
            raise BinlogReadError(BinlogReadError.TRUNCATED, name, offset, end)
        return self._read_range(name, offset, length)

    def iter_events(self, name: str, start: int = MAGIC_LEN) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of every readable event from ``start``."""
        pos = start
        while True:
            data = self.read(name, pos, SCAN_CHUNK)
            if not data:
                return
            view = memoryview(data)
            index = 0
            while index < len(data):
                length = U32.unpack_from(data, index + EVENT_LENGTH_OFFSET)[0]
                yield pos + index, bytes(view[index : index + length])
                index += length
            pos += len(data)

    # --- per-file index (headers only) ----------------------------------------------------

    def _index(self, name: str) -> _FileIndex:
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = _FileIndex(name)
        return index

    def _scan(self, index: _FileIndex, limit: int) -> None:
        """Walk event headers from where the last walk stopped up to ``limit``, recording the
        FDE, the GTID_LIST and the GTID events; stops before an incomplete event."""
        if index.scan_stopped or index.scanned >= limit:
            return
        with self._lock:
            pos = index.scanned
            name = index.name
            while pos < limit:
                data = self._read_range(name, pos, min(SCAN_CHUNK, limit - pos))
                consumed = self._scan_block(index, pos, data, limit)
                if consumed == 0:
                    break
                pos += consumed
            index.scanned = pos

    def _scan_block(self, index: _FileIndex, base: int, data: bytes, limit: int) -> int:
        """Record the events that start in ``data`` (file offset ``base``); returns the bytes
        of whole events walked, skipping over events that continue past ``data``."""
        pos = 0
        size = len(data)
        while pos + HEADER_LEN <= size:
            length = U32.unpack_from(data, pos + EVENT_LENGTH_OFFSET)[0]
            start = base + pos
            if length < HEADER_LEN or length > MAX_EVENT_SIZE:
                index.scan_stopped = True
                return pos
            if start + length > limit:
                return pos
            type_code = data[pos + TYPE_CODE_OFFSET]
            if type_code == EventType.GTID:
                body = data[pos + HEADER_LEN : pos + HEADER_LEN + GTID_FIXED.size]
                if len(body) < GTID_FIXED.size:
                    body = self._read_range(index.name, start + HEADER_LEN, GTID_FIXED.size)
                if len(body) == GTID_FIXED.size:
                    seq_no, domain_id, flags2 = GTID_FIXED.unpack(body)
                    server_id = U32.unpack_from(data, pos + SERVER_ID_OFFSET)[0]
                    index.gtid_offsets.append(start)
                    index.gtid_ends.append(start + length)
                    index.gtid_domains.append(domain_id)
                    index.gtid_servers.append(server_id)
                    index.gtid_seqs.append(seq_no)
                    index.gtid_flags.append(flags2)
            elif type_code == EventType.FORMAT_DESCRIPTION and index.fde is None:
                index.fde = self._read_range(index.name, start, length)
                index.checksum_alg = fde_checksum_alg(index.fde)
            elif type_code == EventType.GTID_LIST and not index.gtid_list_read:
                event = self._read_range(index.name, start, length)
                index.gtid_list_read = True
                try:
                    index.gtid_list = parse_gtid_list_event(
                        event, index.checksum_alg == ChecksumAlg.CRC32
                    )
                except DecodeError:
                    index.gtid_list = None
            elif (
                index.fde is not None
                and not index.gtid_list_read
                and type_code
                not in (
                    EventType.START_ENCRYPTION,
                    EventType.BINLOG_CHECKPOINT,
                )
            ):
                # An old binlog: no GTID_LIST right after the FDE.
                index.gtid_list_read = True
            pos += length
            if pos > size:
                return pos
        return pos

    def _scanned(self, name: str) -> _FileIndex:
        """The file's index, walked to the readable end."""
        self._require(name)
        index = self._index(name)
        self._scan(index, self.file_size(name))
        return index

    def _header_index(self, name: str) -> _FileIndex:
        """The file's index, walked at least past its first events (FDE, GTID_LIST)."""
        self._require(name)
        index = self._index(name)
        if index.fde is None or not index.gtid_list_read:
            limit = self.file_size(name)
            probe = min(limit, index.scanned + SCAN_CHUNK)
            self._scan(index, probe)
            if index.fde is None or not index.gtid_list_read:
                self._scan(index, limit)
        return index

    def format_description(self, name: str) -> bytes | None:
        """The file's FORMAT_DESCRIPTION event as stored."""
        return self._header_index(name).fde

    def checksum_alg(self, name: str) -> int:
        """The file's checksum algorithm (from its FDE; UNDEF without one)."""
        return self._header_index(name).checksum_alg

    def gtid_list(self, name: str) -> tuple[Gtid, ...] | None:
        """The GTIDs of the file's GTID_LIST event (the binlog state before the file), or None
        for a file without one."""
        return self._header_index(name).gtid_list

    def file_gtids(self, name: str) -> list[GtidInFile]:
        """The GTID events of the file, in order."""
        index = self._scanned(name)
        return [
            GtidInFile(
                Gtid(index.gtid_domains[i], index.gtid_servers[i], index.gtid_seqs[i]),
                index.gtid_flags[i],
                index.gtid_offsets[i],
                index.gtid_ends[i],
            )
            for i in range(len(index.gtid_offsets))
        ]

    def end_state(self) -> BinlogState:
        """The binlog state after the last event: the last file's GTID_LIST, then its GTIDs."""
        last = self.last_file()
        state = BinlogState()
        if last is None:
            return state
        state.load(self.gtid_list(last) or ())
        index = self._scanned(last)
        for i in range(len(index.gtid_offsets)):
            state.update(Gtid(index.gtid_domains[i], index.gtid_servers[i], index.gtid_seqs[i]))
        return state

    def gtid_binlog_pos(self) -> str:
        return self.end_state().pos_string()

    def gtid_binlog_state(self) -> str:
        return self.end_state().state_string()

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        """``BINLOG_GTID_POS(file, pos)``: the GTID position of a replica that has everything
        before ``position``; None (SQL NULL) for an unknown file or a position that is not an
        event boundary. An empty file name means the first file; positions below 4 mean 4."""
        name = file_name if file_name else self.first_file()
        if name is None or not self.has_file(name):
            return None
        position = max(position, MAGIC_LEN)
        index = self._header_index(name)
        if index.gtid_list is None:
            return ""
        end = self.file_size(name)
        if position > end:
            return None
        state = GtidPosition(index.gtid_list)
        self._scan(index, min(end, position + 1))
        walk_from = MAGIC_LEN
        for i in range(len(index.gtid_offsets)):
            if index.gtid_offsets[i] >= position:
                break
            state.update(Gtid(index.gtid_domains[i], index.gtid_servers[i], index.gtid_seqs[i]))
            walk_from = index.gtid_offsets[i]
        if not self._is_boundary(name, walk_from, position, end):
            return None
        return str(state)

    def _is_boundary(self, name: str, start: int, position: int, end: int) -> bool:
        pos = start
        while pos < position:
            head = self._read_range(name, pos, HEADER_LEN)
            if len(head) < HEADER_LEN:
                return False
            length = U32.unpack_from(head, EVENT_LENGTH_OFFSET)[0]
            if length < HEADER_LEN:
                return False
            pos += length
        return pos == position and pos <= end

    # --- purging --------------------------------------------------------------------------

    def purge_to(self, name: str) -> list[str]:
        """PURGE BINARY LOGS TO ``name``: forget every file before it; returns their names."""
        raise NotImplementedError


# --- in memory --------------------------------------------------------------------------


class MemoryBinlogStore(BinlogStore):
    """Binlog files built in memory, the way a MariaDB 10.11 primary writes them.

    ``clock`` gives event timestamps (seconds) for events appended with timestamp 0, and the
    FDE's creation time of the first file (as after a server start). ``initial_state`` is the
    GTID state before the first file (its GTID_LIST), for a history that was purged already.
    """

    def __init__(
        self,
        *,
        server_id: int = 1,
        server_version: str = DEFAULT_SERVER_VERSION,
        basename: str = "mysql-bin",
        checksum: bool = True,
        domain_id: int = 0,
        first_file_number: int = 1,
        clock: Callable[[], float] = time.time,
        initial_state: Iterable[Gtid] = (),
    ) -> None:
        super().__init__(basename)
        self.server_id = server_id
        self.server_version = server_version
        self.checksum = checksum
        self.domain_id = domain_id
        self.clock = clock
        self._files: dict[str, bytearray] = {}
        self._contexts: dict[str, BinlogContext] = {}
        self._number = first_file_number - 1
        self._state = BinlogState(initial_state)
        self._pending_checkpoint = False
        self._groups = GroupTracker()
        self._start_file(created=self._now(), checkpoint=None)

    # --- BinlogStore ----------------------------------------------------------------------

    def file_names(self) -> list[str]:
        return list(self._files)

    def _physical_size(self, name: str) -> int:
        return len(self._files[name])

    def file_size(self, name: str) -> int:
        try:
            return len(self._files[name])
        except KeyError:
            raise UnknownBinlogFile(name) from None

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        data = self._files[name]
        return bytes(data[offset : offset + size])

    def end_state(self) -> BinlogState:
        return self._state.copy()

    def purge_to(self, name: str) -> list[str]:
        self._require(name)
        purged: list[str] = []
        with self._lock:
            for existing in list(self._files):
                if existing == name:
                    break
                del self._files[existing]
                self._contexts.pop(existing, None)
                self._indexes.pop(existing, None)
                purged.append(existing)
        if purged:
            self._changed()
        return purged

    # --- writing --------------------------------------------------------------------------

    @property
    def current_file(self) -> str:
        return next(reversed(self._files))

    @property
    def position(self) -> int:
        """The end of the current file: where the next event goes."""
        return len(self._files[self.current_file])

    def next_gtid(self, domain_id: int | None = None, server_id: int | None = None) -> Gtid:
        """The GTID the next transaction of the domain gets (nothing is reserved)."""
        domain = self.domain_id if domain_id is None else domain_id
        server = self.server_id if server_id is None else server_id
        return Gtid(domain, server, self._state.next_seq_no(domain))

    def append(self, events: Iterable[Event], *, stamp: bool = True) -> list[AppendedEvent]:
        """Write events at the end of the current file, each with its real end position in its
        header (and timestamp ``clock()`` if ``stamp`` and it has none). Returns where they went.

        TypeError if an item is not an event; all or nothing: an event that cannot be encoded
        (EncodeError) leaves the store as it was.
        """
        batch = event_list(events, "append")
        with self._lock:
            placed = self._write_all(batch, stamp=stamp)
        if placed:
            self._changed()
        return placed

    def append_transaction(
        self,
        body: Sequence[Event],
        *,
        domain_id: int | None = None,
        server_id: int | None = None,
        seq_no: int | None = None,
        flags2: int | None = None,
        commit_id: int | None = None,
        xid: XaXid | None = None,
        timestamp: int | None = None,
    ) -> AppendedGroup:
        """Write one event group: a GTID event (next sequence number of the domain unless
        ``seq_no`` is given) followed by ``body``, every event carrying the GTID's server id.

        Without ``flags2`` it is what a server writes for that body: a transaction
        (TRANSACTIONAL|ALLOW_PARALLEL) when it ends with XID, a non-transactional group
        (ALLOW_PARALLEL) when it ends with a COMMIT query, XA PREPARE groups when it ends with
        XA_PREPARE, and a standalone DDL (STANDALONE|ALLOW_PARALLEL|DDL) otherwise.

        TypeError if an item of ``body`` is not an event; all or nothing, like :meth:`append`.
        """
        body = event_list(body, "append_transaction")
        domain = self.domain_id if domain_id is None else domain_id
        server = self.server_id if server_id is None else server_id
        with self._lock:
            seq = self._state.next_seq_no(domain) if seq_no is None else seq_no
            if flags2 is None:
                flags2 = _default_gtid_flags(body)
            if commit_id is not None:
                flags2 |= GtidFlag.GROUP_COMMIT_ID
            if xid is None and flags2 & (GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA):
                last = body[-1] if body else None
                xid = last.xid if isinstance(last, XaPrepareEvent) else XaXid(1, b"", b"")
            when = int(self.clock()) if timestamp is None else timestamp
            gtid_event = GtidEvent(
                timestamp=when,
                server_id=server,
                flags=EventFlag.SUPPRESS_USE,
                seq_no=seq,
                domain_id=domain,
                flags2=flags2,
                commit_id=commit_id,
                xid=xid,
            )
            group: list[Event] = [gtid_event]
            group += [
                dataclasses.replace(event, server_id=server, timestamp=event.timestamp or when)
                for event in body
            ]
            if self._pending_checkpoint:
                group.append(
                    BinlogCheckpointEvent(
                        timestamp=when, server_id=self.server_id, file_name=self.current_file
                    )
                )
            placed = self._write_all(group, stamp=False)
            self._pending_checkpoint = False
            first = placed[0]
            last_placed = placed[len(body)]  # the checkpoint is not part of the group
        self._changed()
        return AppendedGroup(
            Gtid(domain, server, seq), first.file_name, first.start, last_placed.end
        )

    def rotate(self) -> str:
        """FLUSH BINARY LOGS: a ROTATE ends the current file, the next one starts. Returns the
        new file's name."""
        with self._lock:
            old = self.current_file
            new = self._file_name(self._number + 1)
            self._write(RotateEvent(server_id=self.server_id, position=4, next_file=new))
            self._close_file(old)
            self._start_file(created=0, checkpoint=old)
            self._pending_checkpoint = True
        self._changed()
        return new

    def restart(self) -> str:
        """A clean server restart: STOP ends the current file; the next one's FDE has a creation
        time (replicas drop their temporary tables). Returns the new file's name."""
        with self._lock:
            old = self.current_file
            self._write(StopEvent(server_id=self.server_id))
            self._close_file(old)
            self._start_file(created=self._now(), checkpoint=old)
            self._pending_checkpoint = True
        self._changed()
        return self.current_file

    # --- internals ------------------------------------------------------------------------

    def _now(self) -> int:
        return int(self.clock())

    def _file_name(self, number: int) -> str:
        return f"{self.basename}.{number:06d}"

    def _start_file(self, *, created: int, checkpoint: str | None) -> None:
        self._number += 1
        name = self._file_name(self._number)
        self._files[name] = bytearray(BINLOG_MAGIC)
        self._contexts[name] = BinlogContext()
        now = self._now()
        gtids = self._state.gtid_list()
        self._write(
            FormatDescriptionEvent(
                timestamp=now,
                server_id=self.server_id,
                flags=EventFlag.BINLOG_IN_USE,
                server_version=self.server_version,
                create_timestamp=created,
                checksum_alg=ChecksumAlg.CRC32 if self.checksum else ChecksumAlg.OFF,
            ),
            stamp=False,
        )
        self._write(
            GtidListEvent(
                timestamp=now,
                server_id=self.server_id,
                gtids=gtids,
                padding=b"" if gtids else b"\x00\x00",
            ),
            stamp=False,
        )
        self._write(
            BinlogCheckpointEvent(
                timestamp=now, server_id=self.server_id, file_name=checkpoint or name
            ),
            stamp=False,
        )

    def _close_file(self, name: str) -> None:
        # A closed file's FDE loses IN_USE in place; its CRC was computed with the flag clear.
        data = self._files[name]
        data[MAGIC_LEN + FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
        index = self._indexes.get(name)
        if index is not None and index.fde is not None:
            index.fde = bytes(data[MAGIC_LEN : MAGIC_LEN + len(index.fde)])

    def _write(self, event: Event, *, stamp: bool = True) -> AppendedEvent:
        return self._write_all([event], stamp=stamp)[0]

    def _write_all(self, events: Sequence[Event], *, stamp: bool) -> list[AppendedEvent]:
        """Append ``events`` to the current file. Every event is encoded before any byte is
        written, so one that cannot be (EncodeError) leaves the file, its context and the GTID
        state as they were: a replica never sees half a batch."""
        name = self.current_file
        data = self._files[name]
        ctx = self._contexts[name].copy() if len(events) > 1 else self._contexts[name]
        start = len(data)
        chunks: list[bytearray] = []
        placed: list[AppendedEvent] = []
        gtids: list[Gtid] = []
        for event in events:
            if stamp and event.timestamp == 0:
                event = dataclasses.replace(event, timestamp=self._now())
            has_crc = (
                event.checksum_alg is not None
                if isinstance(event, FormatDescriptionEvent)
                else ctx.checksum
            )
            encoded = bytearray(encode_event(event, ctx))
            end = start + len(encoded)
            U32.pack_into(encoded, LOG_POS_OFFSET, end & 0xFFFFFFFF)
            if has_crc:
                crc_at = len(encoded) - CHECKSUM_LEN
                crc = event_crc(memoryview(encoded)[:crc_at], encoded[TYPE_CODE_OFFSET])
                CRC.pack_into(encoded, crc_at, crc)
            chunks.append(encoded)
            placed.append(AppendedEvent(name, start, end))
            if isinstance(event, GtidEvent):
                gtids.append(event.gtid)
            start = end
        data += b"".join(chunks)
        self._contexts[name] = ctx
        for gtid in gtids:
            self._state.update(gtid)
        return placed


def event_list(events: Any, what: str) -> list[Event]:
    """``events`` as a list; TypeError naming the argument, or its first item, when that is
    not an iterable of events (raised at the call, before anything is written)."""
    if isinstance(events, Event):
        raise TypeError(
            f"{what} takes an iterable of events, got a single {type(events).__name__} "
            "(put it in a list)"
        )
    if isinstance(events, (str, bytes, bytearray, dict)):
        raise TypeError(f"{what} takes an iterable of events, not {_described(events)}")
    try:
        items = list(events)
    except TypeError:
        raise TypeError(f"{what} takes an iterable of events, not {_described(events)}") from None
    for index, item in enumerate(items):
        if not isinstance(item, Event):
            raise TypeError(f"{what}: item {index} is not an event but {_described(item)}")
    return items


def _described(value: Any) -> str:
    text = repr(value)
    if len(text) > 100:
        text = text[:90] + "..."
    return f"{type(value).__name__} {text}"


def _default_gtid_flags(body: Sequence[Event]) -> int:
    last = body[-1] if body else None
    if isinstance(last, XidEvent):
        return GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
    if isinstance(last, XaPrepareEvent):
        return GtidFlag.PREPARED_XA | GtidFlag.TRANSACTIONAL | GtidFlag.ALLOW_PARALLEL
    if isinstance(last, QueryEvent) and last.query in (b"COMMIT", b"ROLLBACK"):
        return int(GtidFlag.ALLOW_PARALLEL)
    return GtidFlag.STANDALONE | GtidFlag.ALLOW_PARALLEL | GtidFlag.DDL


# --- a directory of real binlog files -----------------------------------------------------


class DirectoryBinlogStore(BinlogStore):
    """The binlog files listed in ``<basename>.index`` in ``directory``, served as they are.

    Index lines may be absolute paths or relative ones (``./mysql-bin.000001``); files are
    looked up by base name in ``directory`` when the listed path does not exist. The last file
    may grow; :meth:`poll` notices appended bytes and new index entries. Files stay on disk:
    at most ``max_open_files`` are kept open, reads are by offset.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        basename: str | None = None,
        *,
        max_open_files: int = 8,
    ) -> None:
        self.directory = Path(directory)
        if basename is None:
            basename = self._guess_basename(self.directory)
        super().__init__(basename)
        self.index_path = self.directory / f"{basename}.index"
        self.max_open_files = max_open_files
        self._names: list[str] = []
        self._paths: dict[str, Path] = {}
        self._purged: set[str] = set()
        self._handles: dict[str, BinaryIO] = {}
        self._index_stamp: tuple[int, int] | None = None
        self._last_size: int | None = None
        self._watcher: threading.Thread | None = None
        self._watch_stop = threading.Event()
        self._read_index()
        last = self.last_file()
        self._last_size = self._physical_size(last) if last else None

    @staticmethod
    def _guess_basename(directory: Path) -> str:
        indexes = sorted(directory.glob("*.index"))
        if len(indexes) != 1:
            found = ", ".join(path.name for path in indexes) or "none"
            raise FileNotFoundError(
                f"expected exactly one *.index file in {directory} (found: {found}); "
                "give the binlog basename"
            )
        return indexes[0].name[: -len(".index")]

    def _read_index(self) -> bool:
        stat = self.index_path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._index_stamp:
            return False
        self._index_stamp = stamp
        names: list[str] = []
        paths: dict[str, Path] = {}
        for line in self.index_path.read_text(errors="surrogateescape").splitlines():
            entry = line.strip()
            if not entry:
                continue
            listed = Path(entry)
            name = listed.name
            if listed.is_absolute() and listed.exists():
                path = listed
            else:
                path = self.directory / name
            names.append(name)
            paths[name] = path
        changed = names != self._names
        self._names = names
        self._paths = paths
        for stale in set(self._handles) - set(paths):
            self._handles.pop(stale).close()
        return changed

    def file_names(self) -> list[str]:
        return [name for name in self._names if name not in self._purged]

    def _path(self, name: str) -> Path:
        try:
            return self._paths[name]
        except KeyError:
            raise UnknownBinlogFile(name) from None

    def _physical_size(self, name: str) -> int:
        return self._path(name).stat().st_size

    def _handle(self, name: str) -> BinaryIO:
        handle = self._handles.pop(name, None)
        if handle is None:
            handle = open(self._path(name), "rb")  # noqa: SIM115 - kept open for later reads
            while len(self._handles) >= self.max_open_files:
                oldest = next(iter(self._handles))
                self._handles.pop(oldest).close()
        self._handles[name] = handle  # most recently used last
        return handle

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        with self._lock:
            handle = self._handle(name)
            handle.seek(offset)
            return handle.read(size)

    def poll(self) -> bool:
        """Re-read the index and the last file's size; True (subscribers notified) if either
        changed."""
        with self._lock:
            changed = False
            try:
                changed = self._read_index()
            except FileNotFoundError:
                pass
            last = self.last_file()
            size = self._physical_size(last) if last else None
            if size != self._last_size:
                self._last_size = size
                changed = True
        if changed:
            self._changed()
        return changed

    def purge_to(self, name: str) -> list[str]:
        """Hide every file before ``name`` (the files on disk are left alone)."""
        self._require(name)
        purged: list[str] = []
        with self._lock:
            for existing in self.file_names():
                if existing == name:
                    break
                self._purged.add(existing)
                self._indexes.pop(existing, None)
                purged.append(existing)
        if purged:
            self._changed()
        return purged

    def start_watching(self, interval: float = 0.1) -> None:
        """Poll in a daemon thread every ``interval`` seconds until :meth:`close`."""
        if self._watcher is not None:
            return
        self._watch_stop.clear()

        def watch() -> None:
            while not self._watch_stop.wait(interval):
                try:
                    self.poll()
                except OSError:
                    pass

        self._watcher = threading.Thread(target=watch, name="binlog-dir-watch", daemon=True)
        self._watcher.start()

    def subscribe(self, callback: Callable[[int], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(callback)
        self.start_watching()
        return unsubscribe

    def close(self) -> None:
        self._watch_stop.set()
        watcher = self._watcher
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout=5)
        self._watcher = None
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()

    def __enter__(self) -> DirectoryBinlogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
