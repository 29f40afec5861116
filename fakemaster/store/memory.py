"""Binlog files built in memory, the way a MariaDB 10.11 primary writes them."""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

from encoder.core import encode_body
from fakemaster.store.base import MAGIC_LEN, BinlogStore, UnknownBinlogFile
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    EventFlag,
    EventType,
    GtidFlag,
    event_type_name,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
    StopEvent,
    TableMapEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.groups import GroupTracker
from fakemaster.vocabulary.gtid_state import BinlogState
from fakemaster.vocabulary.header import CRC, FLAGS_OFFSET, HEADER, event_crc

__all__ = [
    "AppendedEvent",
    "AppendedGroup",
    "DEFAULT_SERVER_VERSION",
    "FileBytes",
    "MemoryBinlogStore",
    "event_list",
]

DEFAULT_SERVER_VERSION = "10.11.19-MariaDB-log"

# Plain ints: compared once per written event.
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
_GTID = int(EventType.GTID)
_XA_FLAGS = int(GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA)
# The events that change a stream's context (BinlogContext.observe).
_OBSERVED = (FormatDescriptionEvent, TableMapEvent)


class FileBytes(Protocol):
    """What the store keeps of a file's bytes: a ``bytearray`` here; a file on disk in
    :class:`~fakemaster.store.disk.DiskBinlogStore` (bytes are only appended, read by range,
    and one flag byte of the FDE cleared when the file closes)."""

    def __len__(self) -> int: ...

    def __iadd__(self, data: bytes, /) -> Self: ...

    def __getitem__(self, index: slice, /) -> bytes | bytearray: ...

    def __setitem__(self, index: slice, value: bytes, /) -> None: ...


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
        self._files: dict[str, FileBytes] = {}
        self._contexts: dict[str, BinlogContext] = {}
        self._number = first_file_number - 1
        self._state = BinlogState(initial_state)
        self._pending_checkpoint = False
        self._groups = GroupTracker()
        self._table_map_bodies = _TableMapBodies()
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
            try:
                return bytes(self._files[name][offset : offset + size])
            except KeyError:  # purged since the reader asked for its size
                raise UnknownBinlogFile(name) from None

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
            name, start, ends = self._write_all(batch, stamp=stamp)
        placed = []
        for end in ends:
            placed.append(AppendedEvent(name, start, end))
            start = end
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
        bodies: Sequence[bytes | None] | None = None,
    ) -> AppendedGroup:
        """Write one event group: a GTID event (next sequence number of the domain unless
        ``seq_no`` is given) followed by ``body``, every event carrying the GTID's server id.

        Without ``flags2`` it is what a server writes for that body: a transaction
        (TRANSACTIONAL|ALLOW_PARALLEL) when it ends with XID, a non-transactional group
        (ALLOW_PARALLEL) when it ends with a COMMIT query, XA PREPARE groups when it ends with
        XA_PREPARE, and a standalone DDL (STANDALONE|ALLOW_PARALLEL|DDL) otherwise.

        ``bodies``: per event of ``body``, its encoded body (what follows the header, without
        the CRC) when the caller has it already, exactly as the encoder writes it in this store
        (a 6-byte table id; None: encoded here). It is not checked against the event: the
        scenario compiler, which sizes rows events by their rows' bytes, passes its own.

        TypeError if an item of ``body`` is not an event; all or nothing, like :meth:`append`.
        """
        body = event_list(body, "append_transaction")
        if bodies is not None and len(bodies) != len(body):
            raise ValueError(f"{len(bodies)} bodies for {len(body)} events")
        domain = self.domain_id if domain_id is None else domain_id
        server = self.server_id if server_id is None else server_id
        with self._lock:
            seq = self._state.next_seq_no(domain) if seq_no is None else seq_no
            if flags2 is None:
                flags2 = _default_gtid_flags(body)
            if commit_id is not None:
                flags2 |= GtidFlag.GROUP_COMMIT_ID
            if xid is None and flags2 & _XA_FLAGS:
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
            group: list[Event] = [gtid_event, *body]
            if self._pending_checkpoint:
                group.append(
                    BinlogCheckpointEvent(
                        timestamp=when, server_id=self.server_id, file_name=self.current_file
                    )
                )
            # The GTID event and the body carry the GTID's server id, and ``when`` where they
            # have no timestamp (written so in their headers; the events are not copied).
            name, start, ends = self._write_all(
                group,
                stamp=False,
                group_header=(1 + len(body), server, when),
                bodies=None if bodies is None else [None, *bodies],
            )
            self._pending_checkpoint = False
            end = ends[len(body)]  # the checkpoint is not part of the group
        self._changed()
        return AppendedGroup(Gtid(domain, server, seq), name, start, end)

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
        encoded, _, _ = self._encode(header, MAGIC_LEN, ctx, stamp=False)
        self._contexts[name] = ctx
        self._files[name] = self._new_file(name, BINLOG_MAGIC + encoded)
        self._number += 1

    def _new_file(self, name: str, data: bytes) -> FileBytes:
        """Where the bytes of a new file ``name`` (its header events: ``data``) are kept."""
        return bytearray(data)

    def _close_file(self, name: str) -> None:
        # A closed file's FDE loses IN_USE in place; its CRC was computed with the flag clear.
        data = self._files[name]
        at = MAGIC_LEN + FLAGS_OFFSET
        data[at : at + 1] = bytes([data[at : at + 1][0] & ~EventFlag.BINLOG_IN_USE & 0xFF])
        index = self._indexes.get(name)
        if index is not None and index.fde is not None:
            index.fde = bytes(data[MAGIC_LEN : MAGIC_LEN + len(index.fde)])

    def _write(self, event: Event, *, stamp: bool = True) -> None:
        self._write_all([event], stamp=stamp)

    def _write_all(
        self,
        events: Sequence[Event],
        *,
        stamp: bool,
        group_header: tuple[int, int, int] | None = None,
        bodies: Sequence[bytes | None] | None = None,
    ) -> tuple[str, int, list[int]]:
        """Append ``events`` to the current file. Every event is encoded before any byte is
        written, so one that cannot be (EncodeError) leaves the file, its context and the GTID
        state as they were: a replica never sees half a batch. Returns the file, where the
        batch starts and where each event ends."""
        name = self.current_file
        data = self._files[name]
        ctx = self._contexts[name].copy() if len(events) > 1 else self._contexts[name]
        start = len(data)
        encoded, ends, gtids = self._encode(
            events, start, ctx, stamp=stamp, group_header=group_header, bodies=bodies
        )
        data += encoded  # one extend: readers see the batch whole or not at all
        self._contexts[name] = ctx
        for gtid in gtids:
            self._state.update(gtid)
        return name, start, ends

    def _encode(
        self,
        events: Sequence[Event],
        start: int,
        ctx: BinlogContext,
        *,
        stamp: bool,
        group_header: tuple[int, int, int] | None = None,
        bodies: Sequence[bytes | None] | None = None,
    ) -> tuple[bytes, list[int], list[Gtid]]:
        """The bytes of ``events`` written at ``start`` (end positions and CRCs filled in;
        ``ctx`` follows them), where each ends, and the GTIDs among them.

        ``group_header`` (count, server id, timestamp): the first ``count`` events are written
        with that server id, and that timestamp where theirs is 0 (an event group's).
        ``bodies``: the encoded bodies the caller has (see :meth:`append_transaction`). Each
        header is packed once, with its end position, and each CRC computed once.
        """
        chunks: list[bytes] = []
        ends: list[int] = []
        gtids: list[Gtid] = []
        stamped, group_server, group_time = group_header or (0, 0, 0)
        table_maps = self._table_map_bodies
        for index, event in enumerate(events):
            timestamp = event.timestamp
            if index < stamped:
                server_id = group_server
                timestamp = timestamp or group_time
            else:
                server_id = event.server_id
                if stamp and timestamp == 0:
                    timestamp = self._now()
            given = bodies[index] if bodies is not None and index < len(bodies) else None
            if given is not None:
                body = given
            elif type(event) is TableMapEvent:
                body = table_maps.body(event, ctx)
            else:
                body = encode_body(event, ctx)
            type_code = event.type_code
            if type_code == _FORMAT_DESCRIPTION:
                assert isinstance(event, FormatDescriptionEvent)
                has_crc = event.checksum_alg is not None
            else:
                has_crc = ctx.checksum
            length = HEADER_LEN + len(body) + (CHECKSUM_LEN if has_crc else 0)
            end = start + length
            try:
                head = HEADER.pack(
                    timestamp, type_code, server_id, length, end & 0xFFFFFFFF, event.flags
                )
            except struct.error:
                raise _header_error(timestamp, server_id, length, event) from None
            chunks.append(head)
            chunks.append(body)
            if has_crc:
                if type_code == _FORMAT_DESCRIPTION:
                    crc = event_crc(head + body, type_code)
                else:
                    crc = zlib.crc32(body, zlib.crc32(head))
                chunks.append(CRC.pack(crc))
            if isinstance(event, _OBSERVED):
                ctx.observe(event)
            ends.append(end)
            if type_code == _GTID and isinstance(event, GtidEvent):
                gtids.append(event.gtid)
            start = end
        return b"".join(chunks), ends, gtids


class _TableMapBodies:
    """The encoded bodies of the TABLE_MAPs written lately, by their fields: a history maps
    the same few tables again and again, and a TABLE_MAP's body depends only on its fields and
    the stream's table id size. Fields that cannot be hashed (a list given for a tuple) are
    encoded every time."""

    MAX_CACHED = 256

    def __init__(self) -> None:
        self._bodies: dict[tuple[Any, ...], bytes] = {}

    def body(self, event: TableMapEvent, ctx: BinlogContext) -> bytes:
        key = (
            ctx.table_id_size,
            event.table_id,
            event.table_flags,
            event.database,
            event.table,
            event.column_types,
            event.column_meta,
            event.nullable,
            event.optional_metadata,
        )
        try:
            return self._bodies[key]
        except KeyError:
            pass
        except TypeError:  # unhashable: a list or a dict somewhere in the fields
            return encode_body(event, ctx)
        body = encode_body(event, ctx)
        if len(self._bodies) >= self.MAX_CACHED:
            self._bodies.clear()
        self._bodies[key] = body
        return body


def _header_error(timestamp: int, server_id: int, length: int, event: Event) -> EncodeError:
    kind = event_type_name(event.type_code)
    if length >> 32:
        return EncodeError(f"event_length {length} does not fit its 4 bytes", event_type=kind)
    if not 0 <= timestamp <= 0xFFFFFFFF:
        return EncodeError(
            f"timestamp {timestamp} does not fit its 4 bytes",
            field="timestamp",
            value=timestamp,
            event_type=kind,
        )
    return EncodeError(
        f"server_id {server_id} does not fit its 4 bytes",
        field="server_id",
        value=server_id,
        event_type=kind,
    )


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
