"""Where a replica stands, and the event groups it has received whole.

:class:`Position` is the resume position: the last *committed* event group's GTID per domain
(what MariaDB's ``@slave_connect_state`` takes) and the file/position just after the event that
committed it (its XID, COMMIT, or the single event of a standalone group), or just after the
last event outside any group (FORMAT_DESCRIPTION, GTID_LIST...) when that came later. A replica that
reconnects from it gets the first event group it has not finished, and none it finished.

:class:`GroupAssembler` turns the events of a dump, in order, into whole committed groups
(:class:`CommittedGroup`) and advances the position after each. The events of a group are held
until the group commits; a group cut off by a lost connection is dropped by
:meth:`GroupAssembler.reset` (the next connection re-sends it from its start). Events outside a
group (ROTATE, FORMAT_DESCRIPTION, GTID_LIST, BINLOG_CHECKPOINT) are handed over at once.

Two guards against events received twice: an event whose end position (header ``log_pos``)
does not move past the previous event's in the same file is a copy and is dropped (a resend by
a relay or a retrying proxy), and in GTID mode a group whose GTID is not after the GTID of its
domain in the position the connection started from was committed already (a primary never
sends one: the guard is against relays) and is dropped as a whole. Within a connection GTIDs
are not compared (with ``@slave_gtid_strict_mode=0`` a primary may send a lower sequence
number after a higher one, and the group is new).

Group boundaries follow the server's rule (``fakemaster.vocabulary.groups``,
``Log_event::is_part_of_group``): a standalone GTID group ends with its first event that is not
part of a group; a transaction ends with XID, XA_PREPARE, or a QUERY that is COMMIT or ROLLBACK.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from fakemaster.vocabulary.constants import GtidFlag
from fakemaster.vocabulary.errors import FakemasterError
from fakemaster.vocabulary.events import (
    Event,
    GtidEvent,
    QueryEvent,
    RotateEvent,
    XaPrepareEvent,
    XidEvent,
)
from fakemaster.vocabulary.groups import GROUP_PART_TYPES
from fakemaster.vocabulary.layouts import Buffer

__all__ = [
    "CommittedGroup",
    "GroupAssembler",
    "Position",
    "ReceivedEvent",
    "format_gtids",
    "parse_gtids",
]

_GTID = re.compile(r"^\s*(\d+)-(\d+)-(\d+)\s*$")


def parse_gtids(text: str) -> dict[int, tuple[int, int]]:
    """``"0-1-5,1-1-3"`` as ``{domain: (server_id, seq_no)}``; ValueError for bad text."""
    state: dict[int, tuple[int, int]] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        match = _GTID.match(part)
        if match is None:
            raise ValueError(f"not a GTID: {part!r}")
        domain, server, seq = (int(value) for value in match.groups())
        if domain in state:
            raise ValueError(f"two GTIDs of domain {domain} in {text!r}")
        state[domain] = (server, seq)
    return state


def format_gtids(state: Mapping[int, tuple[int, int]]) -> str:
    """The GTID list text MariaDB writes (domains in ascending order)."""
    return ",".join(f"{domain}-{server}-{seq}" for domain, (server, seq) in sorted(state.items()))


@dataclass(frozen=True, slots=True)
class Position:
    """A replica's resume position (see the module docstring).

    ``gtids``: the last committed GTID of each domain as ``((domain, server_id, seq_no), ...)``
    in domain order. ``file``: the binlog file ("" before the first event: the dump then starts
    at the first file); ``position``: the offset in it of the first event not yet committed.
    """

    gtids: tuple[tuple[int, int, int], ...] = ()
    file: str = ""
    position: int = 4

    @classmethod
    def from_gtids(cls, text: str) -> Position:
        state = parse_gtids(text)
        return cls(gtids=tuple((d, s, q) for d, (s, q) in sorted(state.items())))

    @property
    def gtid_state(self) -> dict[int, tuple[int, int]]:
        return {domain: (server, seq) for domain, server, seq in self.gtids}

    @property
    def gtid_text(self) -> str:
        """The value of ``@slave_connect_state`` / ``gtid_slave_pos``."""
        return format_gtids(self.gtid_state)

    def after_gtid(self, domain: int, server_id: int, seq_no: int) -> Position:
        state = self.gtid_state
        state[domain] = (server_id, seq_no)
        return replace(self, gtids=tuple((d, s, q) for d, (s, q) in sorted(state.items())))

    def at(self, file: str, position: int) -> Position:
        return replace(self, file=file, position=position)

    def has(self, domain: int, seq_no: int) -> bool:
        """Whether the group ``domain``-*-``seq_no`` is at or before this position."""
        mine = self.gtid_state.get(domain)
        return mine is not None and seq_no <= mine[1]

    def covers(self, other: Position) -> bool:
        """Whether every domain of ``other`` is reached here (GTIDs only)."""
        return all(self.has(domain, seq) for domain, _server, seq in other.gtids)

    def to_dict(self) -> dict[str, object]:
        return {"gtids": self.gtid_text, "file": self.file, "position": self.position}


@dataclass(frozen=True, slots=True)
class ReceivedEvent:
    """A decoded event of a dump with where it lies: its file, its end position there (the
    header's ``log_pos``; 0 for the artificial events a dump starts with) and, inside a group,
    the group's GTID."""

    event: Event
    file: str
    end_position: int
    gtid: tuple[int, int, int] | None = None
    #: The event's bytes as the connection received them (header to CRC; empty when the
    #: events were not given with their bytes, e.g. to :meth:`GroupAssembler.feed_all`).
    raw: Buffer = field(default=b"", compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CommittedGroup:
    """An event group received whole: its events (GTID event first), its GTID (None for a
    group without one, in binlogs of servers without GTIDs) and the position after it."""

    events: tuple[ReceivedEvent, ...]
    gtid: tuple[int, int, int] | None
    position: Position

    @property
    def gtid_text(self) -> str | None:
        return None if self.gtid is None else "-".join(str(n) for n in self.gtid)


class PositionError(FakemasterError):
    """Events that cannot belong where they arrived (a ROTATE inside a group...)."""


@dataclass
class GroupAssembler:
    """Whole committed groups out of the events of one or more dump sessions, in order.

    ``position`` is the resume position after the last group handed over. Call :meth:`reset`
    when a connection is lost (the unfinished group is dropped) and :meth:`feed` with each
    event; it returns the groups that committed and the events outside groups, in order.
    """

    position: Position = field(default_factory=Position)
    gtid_mode: bool = True
    copies_dropped: int = 0
    groups_skipped: int = 0
    _file: str = ""
    _last_end: int = 0
    _pending: list[ReceivedEvent] | None = None
    _gtid: tuple[int, int, int] | None = None
    _standalone: bool = False
    _skip: bool = False
    _floor: Position | None = None

    def __post_init__(self) -> None:
        self._floor = self.position

    def reset(self) -> None:
        """A new connection: forget the unfinished group and the current file."""
        self._floor = self.position
        self._pending = None
        self._gtid = None
        self._standalone = False
        self._skip = False
        self._file = ""
        self._last_end = 0

    @property
    def in_group(self) -> bool:
        return self._pending is not None

    @property
    def file(self) -> str:
        return self._file

    def feed(self, event: Event, raw: Buffer = b"") -> list[CommittedGroup | ReceivedEvent]:
        """``raw``: the event's bytes, kept in its :class:`ReceivedEvent` (optional)."""
        if isinstance(event, RotateEvent):
            return [self._rotate(event, raw)]
        end = event.log_pos
        if end:
            if self._file and end <= self._last_end:
                self.copies_dropped += 1
                return []
            self._last_end = end
        if isinstance(event, GtidEvent):
            return self._begin(event, end, raw)
        if self._pending is None:
            if isinstance(event, (XidEvent, XaPrepareEvent)) or _is_commit(event):
                raise PositionError(f"{type(event).__name__} outside an event group")
            if isinstance(event, QueryEvent) or _is_group_part(event):
                # A group without a GTID event (a binlog of a server without GTIDs).
                self._pending = []
                self._gtid = None
                self._standalone = isinstance(event, QueryEvent) and not _is_begin(event)
                if self._standalone:
                    return self._commit(ReceivedEvent(event, self._file, end, raw=raw))
            else:
                if end and self._file:
                    # Outside a group (FORMAT_DESCRIPTION, GTID_LIST, BINLOG_CHECKPOINT...) the
                    # position moves past the event, as a replica's executed position does: a
                    # binlog with no group after them (its transactions changed no row) is
                    # still read to its end.
                    self.position = self.position.at(self._file, end)
                return [ReceivedEvent(event, self._file, end, raw=raw)]
        received = ReceivedEvent(event, self._file, end, self._gtid, raw)
        if self._standalone:
            if _is_group_part(event):
                self._pending.append(received)
                return []
            return self._commit(received)
        if isinstance(event, (XidEvent, XaPrepareEvent)) or _is_commit(event):
            return self._commit(received)
        self._pending.append(received)
        return []

    def _rotate(self, event: RotateEvent, raw: Buffer) -> ReceivedEvent:
        if self._pending is not None and event.log_pos:
            raise PositionError("a ROTATE event inside an event group")
        self._file = event.next_file
        self._last_end = 0
        received = ReceivedEvent(event, event.next_file, event.log_pos, raw=raw)
        if self._pending is None and self.position.file != event.next_file:
            # Outside a group a ROTATE moves the resume position (fake ROTATEs at the start
            # of a dump name where it starts; real ones the next file).
            if event.log_pos or not self.position.file:
                self.position = self.position.at(event.next_file, event.position)
        return received

    def _begin(
        self, event: GtidEvent, end: int, raw: Buffer
    ) -> list[CommittedGroup | ReceivedEvent]:
        if self._pending is not None:
            # A group left unfinished in this same stream (a server never does this; a copy
            # of a GTID event does): drop what was held, the new group replaces it.
            self.copies_dropped += 1
        self._gtid = (event.domain_id, event.server_id, event.seq_no)
        self._standalone = bool(event.flags2 & GtidFlag.STANDALONE)
        floor = self._floor
        self._skip = (
            self.gtid_mode and floor is not None and floor.has(event.domain_id, event.seq_no)
        )
        self._pending = [ReceivedEvent(event, self._file, end, self._gtid, raw)]
        return []

    def _commit(self, last: ReceivedEvent) -> list[CommittedGroup | ReceivedEvent]:
        assert self._pending is not None
        events = (*self._pending, last)
        gtid = self._gtid
        skip = self._skip
        self._pending = None
        self._gtid = None
        self._standalone = False
        self._skip = False
        if skip:
            self.groups_skipped += 1
            return []
        position = self.position
        if gtid is not None:
            position = position.after_gtid(*gtid)
        if self._file and last.end_position:
            position = position.at(self._file, last.end_position)
        self.position = position
        return [CommittedGroup(events, gtid, position)]

    def feed_all(self, events: Iterable[Event]) -> list[CommittedGroup | ReceivedEvent]:
        out: list[CommittedGroup | ReceivedEvent] = []
        for event in events:
            out += self.feed(event)
        return out


def _is_group_part(event: Event) -> bool:
    """An event of a group's body (GTID, INTVAR, RAND, USER_VAR, TABLE_MAP, ANNOTATE_ROWS): the
    class's type code, so an UnknownEvent carrying one of those codes is not taken for one."""
    return event.TYPE in GROUP_PART_TYPES


def _is_commit(event: Event) -> bool:
    return isinstance(event, QueryEvent) and event.query in (b"COMMIT", b"ROLLBACK")


def _is_begin(event: QueryEvent) -> bool:
    return event.query in (b"BEGIN", b"XA START")
