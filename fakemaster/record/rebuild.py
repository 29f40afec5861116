"""Binlog files rebuilt from the events of a binlog dump, as ``mariadb-binlog --raw`` writes
them (sans-IO: events in, file writes out).

A primary's dump by file/position sends, for each file it reads from: a *fake* ROTATE naming
the file (``log_pos`` 0, LOG_EVENT_ARTIFICIAL_F), the file's FORMAT_DESCRIPTION (its ``log_pos``
set to 0 when the dump starts past it: a *fake* FDE, not part of the bytes at that point), then
the file's events as they are on disk, a real ROTATE (or STOP) last. Heartbeats and other
artificial events (``log_pos`` 0) are not in any file. :class:`BinlogRebuilder` turns that
sequence back into the files:

* a fake ROTATE naming a new file starts it (the 4-byte magic); naming the current file (a
  reconnection) it changes nothing;
* a FORMAT_DESCRIPTION with ``log_pos`` 0 is not written (a new dump resumes in the middle of a
  file that has its own already), but it sets the checksum of what follows;
* every other event with a ``log_pos`` is appended, after checking that it lands where its
  ``log_pos`` says it ends (a dump that does not send the file's bytes as they are, an
  encrypted binlog sent decrypted for one, cannot be recorded byte for byte) and, when the
  stream has checksums, that its CRC32 is right (the decoder checks it);
* the events are also assembled into committed groups (:class:`GroupAssembler`), so that
  :attr:`resume_position` is after the last whole group: a lost connection leaves a group cut
  off, which :meth:`reconnected` truncates, and the next dump sends it again from its start.

The primary sends the FORMAT_DESCRIPTION of the file it is still writing with
LOG_EVENT_BINLOG_IN_USE_F clear (a MariaDB 10.11 does; the flag is not in the CRC).
:meth:`finish` sets it again in the last file unless a ROTATE or STOP ended that file: the
files are then the primary's, byte for byte, and a replay serves them as it sent them.
"""

from __future__ import annotations

from dataclasses import dataclass

from decoder.core import decode_event
from fakemaster.client.position import GroupAssembler, Position, PositionError
from fakemaster.vocabulary.constants import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    HEADER_LEN,
    EventFlag,
    EventType,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError, FakemasterError
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    HeartbeatEvent,
    RotateEvent,
    UnknownEvent,
)
from fakemaster.vocabulary.header import CRC, FLAGS_OFFSET, HEADER, EventHeader, event_crc

__all__ = [
    "BinlogRebuilder",
    "DamagedEvent",
    "RecordError",
    "RecordedFile",
    "Truncate",
    "Write",
    "FileAction",
]

MAGIC_LEN = len(BINLOG_MAGIC)
_ROTATE = int(EventType.ROTATE)
_STOP = int(EventType.STOP)
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
_HEARTBEAT = int(EventType.HEARTBEAT)
_ARTIFICIAL = int(EventFlag.ARTIFICIAL)
_IN_USE = int(EventFlag.BINLOG_IN_USE)
_START_ENCRYPTION = int(EventType.START_ENCRYPTION)
# The events a recording decodes: those that start, end or make up event groups, and those
# that set how the next ones read (FDE, TABLE_MAP).
_DECODED = frozenset(
    int(code)
    for code in (
        EventType.FORMAT_DESCRIPTION,
        EventType.ROTATE,
        EventType.STOP,
        EventType.GTID,
        EventType.GTID_LIST,
        EventType.BINLOG_CHECKPOINT,
        EventType.QUERY,
        EventType.QUERY_COMPRESSED,
        EventType.XID,
        EventType.XA_PREPARE,
        EventType.INTVAR,
        EventType.RAND,
        EventType.USER_VAR,
        EventType.TABLE_MAP,
        EventType.ANNOTATE_ROWS,
    )
)


class RecordError(FakemasterError):
    """A dump that cannot be rebuilt into the primary's files byte for byte."""


class DamagedEvent(RecordError):
    """An event whose length or CRC32 is wrong as received (nothing of it was written): a new
    dump from :attr:`BinlogRebuilder.resume_position` reads it again."""


@dataclass(frozen=True, slots=True)
class Write:
    """Write ``data`` at ``offset`` of ``file`` (offset 0: a new file, created)."""

    file: str
    offset: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Truncate:
    """Cut ``file`` to ``size`` bytes."""

    file: str
    size: int


FileAction = Write | Truncate


@dataclass(slots=True)
class RecordedFile:
    """One rebuilt file: its name, size, whether a ROTATE or STOP event ended it, and the
    size after its last whole event group (where a recording may end or resume)."""

    name: str
    size: int = MAGIC_LEN
    closed: bool = False
    committed: int = MAGIC_LEN
    fde_flags: int | None = None


class BinlogRebuilder:
    """The files of one recording (see the module docstring). ``checksum``: whether the dump
    was asked for checksums (the events before the first FORMAT_DESCRIPTION have them then)."""

    def __init__(self, checksum: bool = True, *, strict_gtids: bool = False) -> None:
        # The primary runs with gtid_strict_mode=ON: its binlog cannot hold a GTID whose seq_no
        # is not above the last of its domain, so one that is was damaged on the way (under a
        # valid CRC: a relay that rewrote it). Without strict mode such a GTID is legal, and a
        # real replica takes it: so is it recorded.
        self.strict_gtids = strict_gtids
        self.files: list[RecordedFile] = []
        self._by_name: dict[str, RecordedFile] = {}
        self._current: RecordedFile | None = None
        self._ctx = BinlogContext(checksum=checksum)
        self.assembler = GroupAssembler(Position(), gtid_mode=False)
        self.events_written = 0
        self.skipped = 0  # fake ROTATEs and FDEs, heartbeats, other artificial events

    # --- where the recording stands -------------------------------------------------------

    @property
    def current(self) -> RecordedFile | None:
        return self._current

    @property
    def resume_position(self) -> Position:
        """Where a new dump starts: after the last whole group of the current file (the first
        file when nothing was received yet), with the GTIDs of the groups so far."""
        position = self.assembler.position
        current = self._current
        if current is None:
            return position.at("", MAGIC_LEN)
        return position.at(current.name, current.committed)

    @property
    def gtids(self) -> Position:
        """The GTID of the last whole group of each domain recorded."""
        return self.assembler.position

    def set_checksum(self, checksum: bool) -> None:
        """The checksum setting a new connection negotiated (before its first FDE)."""
        self._ctx.checksum = checksum

    # --- events in, writes out ----------------------------------------------------------

    def feed(self, data: bytes) -> list[FileAction]:
        """One event of the dump (its bytes as sent, CRC included); the writes it makes."""
        if len(data) < HEADER_LEN:
            raise RecordError(f"an event of {len(data)} bytes, shorter than its header")
        header = EventHeader(*HEADER.unpack_from(data))
        if header.type_code == _HEARTBEAT:
            self.skipped += 1
            return []
        current = self._current
        offset = current.size if current is not None else 0
        try:
            event = self._decode(data, header, offset)
        except DecodeError as error:
            where = f"{current.name} at {offset}" if current is not None else "before any file"
            raise DamagedEvent(f"a damaged event in {where}: {error}") from None
        if isinstance(event, HeartbeatEvent):
            self.skipped += 1
            return []
        if self.strict_gtids and isinstance(event, GtidEvent) and header.log_pos:
            self._check_gtid_order(event, current, offset)
        if header.type_code == _ROTATE and (header.log_pos == 0 or header.flags & _ARTIFICIAL):
            assert isinstance(event, RotateEvent)
            self.skipped += 1
            actions = self._fake_rotate(event)
            self.assembler.feed(event)
            return actions
        if header.log_pos == 0:
            # A fake FDE (a dump starting past it) or another artificial event.
            self.skipped += 1
            return []
        if header.type_code == _START_ENCRYPTION:
            raise RecordError(
                f"{current.name if current else 'the binlog'} is encrypted (encrypt_binlog=ON): "
                "a primary sends its events decrypted, which cannot be recorded byte for byte"
            )
        if current is None:
            raise RecordError(
                f"a {event.__class__.__name__} before the dump named its first file "
                "(no fake ROTATE first)"
            )
        if current.closed:
            raise RecordError(
                f"a {event.__class__.__name__} after the ROTATE or STOP that ended {current.name}"
            )
        end = offset + len(data)
        if header.log_pos != end & 0xFFFFFFFF:  # a 32-bit field: past 4 GiB it wraps
            raise RecordError(
                f"{current.name}: an event of {len(data)} bytes at {offset} says it ends at "
                f"{header.log_pos}, not {end}: the dump does not send the file's bytes as they "
                "are (events left out, or an encrypted binlog sent decrypted?)"
            )
        if isinstance(event, FormatDescriptionEvent):
            if offset != MAGIC_LEN:
                raise RecordError(f"{current.name}: a FORMAT_DESCRIPTION at {offset}, not 4")
            current.fde_flags = header.flags
        current.size = end
        self.events_written += 1
        if header.type_code in (_ROTATE, _STOP):
            current.closed = True
        try:
            self.assembler.feed(event)
        except PositionError as error:
            raise RecordError(f"{current.name} at {offset}: {error}") from None
        if not self.assembler.in_group:
            current.committed = end
        return [Write(current.name, offset, bytes(data))]

    def _check_gtid_order(
        self, event: GtidEvent, current: RecordedFile | None, offset: int
    ) -> None:
        """DamagedEvent for a GTID out of order in its domain (``strict_gtids``), in the words
        of MariaDB's ER_GTID_STRICT_OUT_OF_ORDER (1950)."""
        last = self.assembler.position.gtid_state.get(event.domain_id)
        if last is None or event.seq_no > last[1]:
            return
        where = f"{current.name} at {offset}" if current is not None else "before any file"
        raise DamagedEvent(
            f"a damaged event in {where}: GTID {event.domain_id}-{event.server_id}-"
            f"{event.seq_no} would create an out-of-order sequence number with existing GTID "
            f"{event.domain_id}-{last[0]}-{last[1]}, and the primary runs gtid_strict_mode=ON"
        )

    def _fake_rotate(self, event: RotateEvent) -> list[FileAction]:
        name = event.next_file
        current = self._current
        if current is not None and current.name == name:
            return []  # a new dump of the same file (a reconnection)
        if name in self._by_name:
            raise RecordError(f"the dump went back to {name}, recorded already")
        if event.position != MAGIC_LEN:
            raise RecordError(
                f"the dump moved to {name} at {event.position}: a recording holds whole files "
                "from their start"
            )
        if current is not None:
            if current.committed != current.size:
                raise RecordError(f"{current.name} ends inside an event group")
            current.closed = True
        recorded = RecordedFile(name)
        self.files.append(recorded)
        self._by_name[name] = recorded
        self._current = recorded
        return [Write(name, 0, BINLOG_MAGIC)]

    def _decode(self, data: bytes, header: EventHeader, offset: int) -> Event:
        """The event, decoded when it matters for files and groups; else (rows events...)
        an UnknownEvent with its header, its length and CRC32 checked: a recording needs no
        row decoded (and some cannot be without the schema, MariaDB 5.3 temporal columns)."""
        if header.type_code in _DECODED or header.log_pos == 0:
            # Artificial events (log_pos 0) are not written; a primary does not fix the CRC
            # of the fake FDE of a file without checksums (MariaDB fixes it only when the
            # file's algorithm is CRC32), so theirs is not checked.
            return decode_event(
                data,
                self._ctx,
                offset=offset,
                verify_checksum=header.log_pos != 0,
                allow_unknown=True,
            )
        if header.event_length != len(data):
            raise DecodeError(
                f"event length field says {header.event_length}, event has {len(data)} bytes",
                offset=offset,
            )
        if self._ctx.checksum:
            if len(data) < HEADER_LEN + CHECKSUM_LEN:
                raise DecodeError("truncated: no room for the CRC", offset=offset)
            stored = CRC.unpack_from(data, len(data) - CHECKSUM_LEN)[0]
            computed = event_crc(data[:-CHECKSUM_LEN], header.type_code)
            if stored != computed:
                raise DecodeError(
                    f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                    offset=offset + len(data) - CHECKSUM_LEN,
                )
        return UnknownEvent(
            timestamp=header.timestamp,
            server_id=header.server_id,
            log_pos=header.log_pos,
            flags=header.flags,
            code=header.type_code,
        )

    # --- connections and the end ----------------------------------------------------------

    def reconnected(self) -> list[FileAction]:
        """A connection was lost: drop the group it cut off (the next dump, from
        :attr:`resume_position`, sends it again)."""
        self.assembler.reset()
        current = self._current
        if current is None or current.size == current.committed:
            return []
        current.size = current.committed
        current.closed = False
        return [Truncate(current.name, current.size)]

    def finish(self) -> list[FileAction]:
        """The recording ends: drop a group left unfinished, and mark the last file, unless a
        ROTATE or STOP ended it, as the file the primary is still writing (IN_USE)."""
        actions = self.reconnected()
        current = self._current
        if current is not None and not current.closed and current.fde_flags is not None:
            flags = current.fde_flags | _IN_USE
            if flags != current.fde_flags:
                current.fde_flags = flags
                offset = MAGIC_LEN + FLAGS_OFFSET
                actions.append(Write(current.name, offset, bytes((flags & 0xFF,))))
        return actions
