"""Binlog files built in memory, the way a MariaDB 10.11 primary writes them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from encoder.core import encode_event
from fakemaster.constants import BINLOG_MAGIC, CHECKSUM_LEN, ChecksumAlg, EventFlag, GtidFlag
from fakemaster.context import BinlogContext
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
from fakemaster.gtid_state import BinlogState
from fakemaster.header import CRC, FLAGS_OFFSET, LOG_POS_OFFSET, TYPE_CODE_OFFSET, event_crc
from fakemaster.layouts import U32
from fakemaster.store.base import MAGIC_LEN, BinlogStore, UnknownBinlogFile
from fakemaster.store.groups import GroupTracker

__all__ = [
    "AppendedEvent",
    "AppendedGroup",
    "DEFAULT_SERVER_VERSION",
    "MemoryBinlogStore",
    "event_list",
]

DEFAULT_SERVER_VERSION = "10.11.19-MariaDB-log"


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

    # Readers take the writers' lock: a file list, a size or a range is read between two
    # changes, never in the middle of one (a file is published whole, a batch appended whole).

    def file_names(self) -> list[str]:
        with self._lock:
            return list(self._files)

    def _physical_size(self, name: str) -> int:
        with self._lock:
            return len(self._files[name])

    def file_size(self, name: str) -> int:
        with self._lock:
            try:
                return len(self._files[name])
            except KeyError:
                raise UnknownBinlogFile(name) from None

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        with self._lock:
            return bytes(self._files[name][offset : offset + size])

    def file_identity(self, name: str) -> Hashable | None:
        # File numbers only grow: a name is never given to a second file.
        return name

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

    def restart(self, server_id: int | None = None) -> str:
        """A clean server restart: STOP ends the current file; the next one's FDE has a creation
        time (replicas drop their temporary tables). With ``server_id``, the server comes back
        with that id: the STOP has the old one, the new file's header events the new one (as
        MariaDB 10.11 writes them). Returns the new file's name."""
        with self._lock:
            old = self.current_file
            self._write(StopEvent(server_id=self.server_id))
            if server_id is not None:
                self.server_id = server_id
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
        """Build the next file's magic and header events (FDE, GTID_LIST, BINLOG_CHECKPOINT),
        then publish its name and bytes in one step: a reader that finds the file finds its
        FORMAT_DESCRIPTION (a dump reading a name whose header is not written yet fails with
        1236 "Failed to find format descriptor event")."""
        name = self._file_name(self._number + 1)
        now = self._now()
        gtids = self._state.gtid_list()
        header: list[Event] = [
            FormatDescriptionEvent(
                timestamp=now,
                server_id=self.server_id,
                flags=EventFlag.BINLOG_IN_USE,
                server_version=self.server_version,
                create_timestamp=created,
                checksum_alg=ChecksumAlg.CRC32 if self.checksum else ChecksumAlg.OFF,
            ),
            GtidListEvent(
                timestamp=now,
                server_id=self.server_id,
                gtids=gtids,
                padding=b"" if gtids else b"\x00\x00",
            ),
            BinlogCheckpointEvent(
                timestamp=now, server_id=self.server_id, file_name=checkpoint or name
            ),
        ]
        ctx = BinlogContext()
        encoded, _, _ = self._encode(header, name, MAGIC_LEN, ctx, stamp=False)
        self._contexts[name] = ctx
        self._files[name] = bytearray(BINLOG_MAGIC + encoded)
        self._number += 1

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
        encoded, placed, gtids = self._encode(events, name, len(data), ctx, stamp=stamp)
        data += encoded  # one extend: readers see the batch whole or not at all
        self._contexts[name] = ctx
        for gtid in gtids:
            self._state.update(gtid)
        return placed

    def _encode(
        self,
        events: Sequence[Event],
        name: str,
        start: int,
        ctx: BinlogContext,
        *,
        stamp: bool,
    ) -> tuple[bytes, list[AppendedEvent], list[Gtid]]:
        """The bytes of ``events`` written at ``start`` of file ``name`` (end positions and
        CRCs filled in; ``ctx`` follows them), where each goes, and the GTIDs among them."""
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
        return b"".join(chunks), placed, gtids


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
