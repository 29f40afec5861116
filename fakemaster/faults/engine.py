"""The fault engine: one connection's server->client bytes, with a fault plan applied. Sans-IO.

The shell (:mod:`fakemaster.faults.proxy`, or a test) hands the engine what each side sends:
:meth:`FaultEngine.from_client` (watched, to see the handshake's capabilities and the
COM_BINLOG_DUMP that starts a dump session, and returned for the shell to forward: unchanged but
for the semi-sync ACKs a ``drop_acks`` fault drops) and :meth:`FaultEngine.from_server`, which returns
:class:`Output` instructions: bytes to write to the client, the time (on the engine's clock)
before which they must not be written, and whether to close the client's connection after them
(FIN or RST). :meth:`FaultEngine.poll` fires faults due at a time (``time`` points) when no
bytes come; :meth:`FaultEngine.next_deadline` says when to call it.

A ``stall`` without a ``duration`` is a *hold*: from its point on the engine returns nothing
(it keeps what it would write, closes included) until the shell calls
:meth:`FaultEngine.release`, which returns what it kept. While :attr:`FaultEngine.holding`,
the shell reads no more from the server, so the server's writes block once the sockets'
buffers are full: a hold that cannot end on its own, whatever the scheduling.

Before a dump, and on connections that switch to TLS or the compressed protocol (the engine
cannot read them), the bytes go through unchanged and at once. So do the bytes of a dump
session the plan has no fault for: a plan costs nothing where it does not apply.

In a dump session the engine follows the packets: split packets (a logical payload of
0xFFFFFF-byte chunks ended by a shorter one), the semi-sync header (``0x00 0xEF flag`` before
each event, recognised on the first event packet), event packets (the OK byte), EOF and ERR.
It holds the bytes of a packet until the packet is whole (a logical payload: all its chunks),
then decides: which event it is (its index in the session, heartbeats not counted), which
event group (GTID event to the event that ends the group, as the server's binlog readers
decide it: :class:`fakemaster.vocabulary.groups.GroupTracker`), the faults due in it and at which
byte. Packets it adds or drops (a duplicate, an ERR, a withheld heartbeat) shift the sequence
numbers of the packets after them so the client sees an unbroken sequence; after an event that
asked for a semi-sync ACK the server (and the replica) restart at 1, and so does the shift.
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from encoder.packets import encode_eof, encode_err, frame
from fakemaster.faults.plan import (
    EVENT_KINDS,
    CloseMode,
    Fault,
    FaultKind,
    FaultPlan,
    PointKind,
    Where,
)
from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    MAX_PACKET_PAYLOAD,
    PACKET_HEADER_LEN,
    SEMI_SYNC_MAGIC,
    Command,
    EventType,
)
from fakemaster.vocabulary.groups import GroupTracker
from fakemaster.vocabulary.layouts import GTID_FIXED
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    ERR_HEADER,
    OK_HEADER,
    SEMI_SYNC_ACK_REQUESTED,
    EofPacket,
    ErrPacket,
)

__all__ = ["ACTIVATIONS", "EVENT_CHANGES", "Applied", "FaultEngine", "Output"]

# The command bytes that start a dump session (MySQL's COM_BINLOG_DUMP_GTID too: a MariaDB
# primary answers it with an error).
_DUMP_COMMANDS = (bytes((Command.BINLOG_DUMP,)), bytes((Command.BINLOG_DUMP_GTID,)))
_CLIENT_COMPRESS = 0x20
_CLIENT_SSL = 0x800
_HEARTBEATS = frozenset({EventType.HEARTBEAT, EventType.HEARTBEAT_V2})
_EVENT_SIZE_AT = 9  # event_size in the event header
_SERVER_ID_AT = 5
_LOG_POS_AT = 13
_EOF_MAX = 9  # an EOF payload is shorter than this (a longer 0xFE payload is not an EOF)
_BANDWIDTH_SLICES = 50  # a rate-limited stream goes out in pieces of rate/50 bytes (20 ms)
# The regimes under which nothing more goes out.
_SILENCING = frozenset({FaultKind.BLACKHOLE, FaultKind.ERROR, FaultKind.EOF})


@dataclass(frozen=True, slots=True)
class Output:
    """An instruction for the shell: write ``data`` to the client, not before time ``at`` (on
    the engine's clock; outputs come in order and their times never go back), then close the
    client's connection if ``close`` says so (FIN: an orderly close, RST: an abortive one)."""

    data: bytes
    at: float
    close: CloseMode | None = None


@dataclass(frozen=True, slots=True)
class Applied:
    """A fault the engine applied: at which byte of the session's output it took effect
    (for an event fault, where the event's packet starts), and what it did."""

    fault: Fault
    offset: int
    note: str = ""


@dataclass(slots=True)
class _Regime:
    fault: Fault
    until: float


@dataclass(slots=True)
class _Unit:
    """One logical packet of the dump: its chunks' sequence numbers and its payload."""

    seqs: list[int]
    payload: bytes
    raw: bytes


@dataclass(slots=True)
class _ClientScanner:
    """Finds the client's packets' sequence numbers and first payload bytes, without keeping
    their payloads."""

    head: bytearray = field(default_factory=bytearray)
    skip: int = 0
    want: int = 0  # payload bytes still to collect into ``first``
    first: bytearray = field(default_factory=bytearray)
    seq: int = 0
    length: int = 0

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """(seq, first bytes of the payload, at most 4) of each packet whose start is read."""
        view = memoryview(data)
        while view:
            if self.skip:
                take = min(self.skip, len(view))
                self.skip -= take
                view = view[take:]
                continue
            if self.want:
                take = min(self.want, len(view))
                self.first += view[:take]
                self.want -= take
                view = view[take:]
                if not self.want:
                    yield self.seq, bytes(self.first)
                    self.skip = self.length - len(self.first)
                continue
            take = min(PACKET_HEADER_LEN - len(self.head), len(view))
            self.head += view[:take]
            view = view[take:]
            if len(self.head) == PACKET_HEADER_LEN:
                self.length = int.from_bytes(self.head[:3], "little")
                self.seq = self.head[3]
                self.head.clear()
                self.first.clear()
                self.want = min(4, self.length)
                if not self.want:
                    yield self.seq, b""


def _wrong_heartbeat(event: bytes, fault: Fault) -> bytes:
    """A HEARTBEAT event with the fault's position (header log_pos) and/or file name; its
    CRC32 recomputed if it had a valid one."""
    has_crc = _event_has_crc(event)
    end = len(event) - (CHECKSUM_LEN if has_crc else 0)
    header = bytearray(event[:HEADER_LEN])
    body = event[HEADER_LEN:end]
    if fault.params["file"] is not None:
        body = fault.params["file"].encode("ascii")
    if fault.params["position"] is not None:
        header[_LOG_POS_AT : _LOG_POS_AT + 4] = int(fault.params["position"]).to_bytes(4, "little")
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if has_crc else 0)
    header[_EVENT_SIZE_AT : _EVENT_SIZE_AT + 4] = size.to_bytes(4, "little")
    changed = bytes(header) + body
    if has_crc:
        changed += zlib.crc32(changed).to_bytes(CHECKSUM_LEN, "little")
    return changed


def _event_has_crc(event: bytes) -> bool:
    return len(event) >= HEADER_LEN + CHECKSUM_LEN and zlib.crc32(
        event[:-CHECKSUM_LEN]
    ) == int.from_bytes(event[-CHECKSUM_LEN:], "little")


# --- the kinds that change one event: (fault, event) -> (the event, a note, copies to add) ---

EventChange = Callable[[Fault, bytes], tuple[bytes, str, int]]


def _truncate(fault: Fault, event: bytes) -> tuple[bytes, str, int]:
    keep = fault.params["keep"]
    keep = len(event) // 2 if keep is None else keep
    keep = max(1, min(keep, len(event) - 1))
    return event[:keep], f"kept {keep} of {len(event)} bytes", 0


def _corrupt_crc(fault: Fault, event: bytes) -> tuple[bytes, str, int]:
    changed = bytearray(event)
    has_crc = _event_has_crc(event)
    offset = fault.params["offset"]
    if fault.params["target"] == "crc":
        if not has_crc:
            return event, "not applied: the event has no valid CRC32", 0
        at = len(event) - CHECKSUM_LEN + (offset or 0)
    else:
        end = len(event) - (CHECKSUM_LEN if has_crc else 0)
        at = min(HEADER_LEN if offset is None else offset, end - 1)
    changed[at] ^= int(fault.params["mask"])
    return bytes(changed), f"flipped event byte {at}", 0


def _duplicate(fault: Fault, event: bytes) -> tuple[bytes, str, int]:
    return event, "", int(fault.params["count"])


# What each event kind (kinds.py: changes_one_event) does to the event at its point.
EVENT_CHANGES: Mapping[FaultKind, EventChange] = MappingProxyType(
    {
        FaultKind.CORRUPT_CRC: _corrupt_crc,
        FaultKind.TRUNCATE: _truncate,
        FaultKind.DUPLICATE: _duplicate,
    }
)


class FaultEngine:
    """One connection's faults (see the module docstring).

    ``plan``: the faults (a :class:`FaultPlan` or a sequence of :class:`Fault`); only those of
    this connection's dump session apply. ``clock``: the time source (seconds; monotonic).
    ``next_session``: called when the connection starts a dump, returns its session index (the
    proxy counts dumps over all its connections); by default this engine's own count from 0.
    """

    def __init__(
        self,
        plan: FaultPlan | Sequence[Fault] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        next_session: Callable[[], int] | None = None,
    ) -> None:
        self.plan = plan if isinstance(plan, FaultPlan) else FaultPlan(tuple(plan))
        self._clock = clock
        sessions = iter(range(1 << 62))
        self._next_session = next_session or (lambda: next(sessions))
        self.session: int | None = None  # the current (or last) dump session's index
        self.opaque = False  # TLS or compression: nothing is followed
        self.closed = False
        self.applied: list[Applied] = []
        self.pending: list[Fault] = []  # this session's faults not applied (yet)
        self.dropped_acks = 0  # semi-sync ACKs a drop_acks fault kept from the server
        self._client_buffer = bytearray()  # client bytes of an unfinished packet (drop_acks)
        self._filter_acks = False
        self._client = _ClientScanner()
        self._first_client_packet = True
        self._in_dump = False
        self._follow = False  # in a dump session that has faults
        self._last_at = -math.inf
        self._held: list[Output] | None = None  # a hold in force: what it keeps
        self._reset_session(0.0)

    # --- the shell's calls --------------------------------------------------------------------

    def from_client(self, data: bytes) -> bytes:
        """Bytes the client sent; what to forward to the server: the same bytes, but for the
        semi-sync ACKs a ``drop_acks`` fault drops (a partial packet is held meanwhile)."""
        if self.opaque:
            return data
        if self._in_dump:
            return self._client_in_dump(data) if self._filter_acks else data
        for seq, first in self._client.feed(data):
            if self._first_client_packet:
                self._first_client_packet = False
                if len(first) == 4:
                    capabilities = int.from_bytes(first, "little")
                    if capabilities & (_CLIENT_SSL | _CLIENT_COMPRESS):
                        self.opaque = True
                        return data
            elif seq == 0 and first[:1] in _DUMP_COMMANDS:
                self._start_dump()
                break
        return data

    def _client_in_dump(self, data: bytes) -> bytes:
        buf = self._client_buffer
        buf += data
        kept = bytearray()
        now = self._clock()
        while len(buf) >= PACKET_HEADER_LEN:
            end = PACKET_HEADER_LEN + int.from_bytes(buf[:3], "little")
            if len(buf) < end:
                break
            packet = bytes(buf[:end])
            del buf[:end]
            is_ack = packet[3] == 0 and packet[4:5] == bytes((SEMI_SYNC_MAGIC,))
            if is_ack and self._active(FaultKind.DROP_ACKS, now) is not None:
                self.dropped_acks += 1
                continue
            kept += packet
        return bytes(kept)

    def from_server(self, data: bytes) -> list[Output]:
        """Bytes the server sent; what to write to the client, and when."""
        if self.closed:
            return []
        now = self._clock()
        if not self._follow:
            return self._passthrough(bytes(data), now)
        self._buffer += data
        out = self._fire_time_faults(now)
        while not self.closed and self._follow:
            unit = self._next_unit()
            if unit is None:
                break
            out += self._unit(unit, now)
        if not self._follow and not self.closed and self._buffer:
            # The dump ended (the server's EOF or ERR): what follows is not followed.
            rest = bytes(self._buffer)
            self._buffer.clear()
            out += self._passthrough(rest, now)
        return out

    def poll(self) -> list[Output]:
        """Fire the faults whose time has come (call at :meth:`next_deadline`)."""
        if self.closed or not self._follow:
            return []
        return self._fire_time_faults(self._clock())

    def next_deadline(self) -> float | None:
        """When the next ``time`` fault is due (engine clock), or None."""
        if self.closed or not self._follow:
            return None
        times = [
            self._dump_start + float(fault.at.value)
            for fault in self.pending
            if fault.at.kind is PointKind.TIME
        ]
        return min(times, default=None)

    @property
    def holding(self) -> bool:
        """Whether a hold (a ``stall`` without a ``duration``) is in force: the shell should
        read no more from the server until it calls :meth:`release`."""
        return self._held is not None

    def release(self) -> list[Output]:
        """End the hold in force (if any): what it kept, to write from now on, in order."""
        held, self._held = self._held, None
        if not held:
            return []
        now = self._clock()
        out = [Output(output.data, max(output.at, now), output.close) for output in held]
        self._last_at = max(self._last_at, out[-1].at)
        return out

    @property
    def in_dump(self) -> bool:
        return self._in_dump

    @property
    def events(self) -> int:
        """Events of the current dump session seen so far (heartbeats not counted; only
        counted in a session that has faults)."""
        return self._event_index

    @property
    def transactions(self) -> int:
        """Event groups (GTID events) of the current dump session seen so far."""
        return self._transaction + 1

    # --- sessions -----------------------------------------------------------------------------

    def _reset_session(self, now: float) -> None:
        self._buffer = bytearray()
        self._dump_start = now
        self._out_offset = 0  # bytes of this session's output so far
        self._event_index = 0
        self._transaction = -1
        self._group_pos = -1  # the event's index in its group, -1 outside a group
        self._group_gtid: tuple[int, int, int] | None = None
        self._tracker = GroupTracker()
        self._prefix: int | None = None  # 1, or 3 with the semi-sync header
        self._shift = 0
        self._out_next = 1  # the sequence number the client expects next
        self._regimes: list[_Regime] = []
        self._stall_until = -math.inf
        self._bandwidth_free = -math.inf

    def _start_dump(self) -> None:
        now = self._clock()
        self._in_dump = True
        self.session = self._next_session()
        self._reset_session(now)
        self.pending = list(self.plan.for_session(self.session))
        self._follow = bool(self.pending)
        self._filter_acks = any(fault.kind is FaultKind.DROP_ACKS for fault in self.pending)

    def _end_dump(self) -> None:
        if self._client_buffer:
            self._client_buffer.clear()
        self._filter_acks = False
        self._in_dump = False
        self._follow = False
        self._client = _ClientScanner()

    # --- packets ------------------------------------------------------------------------------

    def _next_unit(self) -> _Unit | None:
        buf = self._buffer
        index = 0
        seqs = []
        while True:
            if len(buf) < index + PACKET_HEADER_LEN:
                return None
            length = int.from_bytes(buf[index : index + 3], "little")
            seqs.append(buf[index + 3])
            index += PACKET_HEADER_LEN + length
            if len(buf) < index:
                return None
            if length < MAX_PACKET_PAYLOAD:
                break
        raw = bytes(buf[:index])
        del buf[:index]
        if len(seqs) == 1:
            payload = raw[PACKET_HEADER_LEN:]
        else:
            parts = []
            at = 0
            while at < len(raw):
                length = int.from_bytes(raw[at : at + 3], "little")
                parts.append(raw[at + PACKET_HEADER_LEN : at + PACKET_HEADER_LEN + length])
                at += PACKET_HEADER_LEN + length
            payload = b"".join(parts)
        return _Unit(seqs, payload, raw)

    def _frame(self, payload: bytes, seq: int) -> tuple[bytes, int, int]:
        """``payload`` framed from ``seq``: bytes, packets, next seq."""
        data, next_seq = frame(payload, seq)
        return data, (next_seq - seq) & 0xFF or 256, next_seq

    def _unit(self, unit: _Unit, now: float) -> list[Output]:
        payload = unit.payload
        head = payload[:1]
        if head == bytes((OK_HEADER,)) and len(payload) > HEADER_LEN:
            return self._event_unit(unit, now)
        if head == bytes((ERR_HEADER,)) or (
            head == bytes((EOF_HEADER,)) and len(payload) < _EOF_MAX
        ):
            self._end_dump()
        # Not an event: only byte points can fall in it.
        data = self._renumbered(unit)
        first = (unit.seqs[0] + self._shift) & 0xFF
        self._out_next = (unit.seqs[-1] + self._shift + 1) & 0xFF
        return self._deliver(data, self._byte_activations(len(data)), now, first)

    def _renumbered(self, unit: _Unit) -> bytes:
        if not self._shift:
            return unit.raw
        data, _, _ = self._frame(unit.payload, (unit.seqs[0] + self._shift) & 0xFF)
        return data

    def _event_unit(self, unit: _Unit, now: float) -> list[Output]:
        payload = unit.payload
        if self._prefix is None:
            size = int.from_bytes(payload[3 + _EVENT_SIZE_AT : 3 + _EVENT_SIZE_AT + 4], "little")
            semi = payload[1] == SEMI_SYNC_MAGIC and size == len(payload) - 3
            self._prefix = 3 if semi else 1
        prefix = payload[: self._prefix]
        event = payload[self._prefix :]
        acked = self._prefix == 3 and prefix[2] == SEMI_SYNC_ACK_REQUESTED
        type_code = event[4]
        if type_code in _HEARTBEATS:
            if self._active(FaultKind.WITHHOLD_HEARTBEAT, now):
                self._shift = (self._shift - len(unit.seqs)) & 0xFF
                return []
            wrong = self._active(FaultKind.WRONG_HEARTBEAT, now)
            if wrong is not None and type_code == EventType.HEARTBEAT:
                changed = _wrong_heartbeat(event, wrong)
                data, packets, _ = self._frame(
                    prefix + changed, (unit.seqs[0] + self._shift) & 0xFF
                )
                first = (unit.seqs[0] + self._shift) & 0xFF
                self._shift = (self._shift + packets - len(unit.seqs)) & 0xFF
                self._out_next = (unit.seqs[-1] + self._shift + 1) & 0xFF
                return self._deliver(data, self._byte_activations(len(data)), now, first)
            data = self._renumbered(unit)
            first = (unit.seqs[0] + self._shift) & 0xFF
            self._out_next = (unit.seqs[-1] + self._shift + 1) & 0xFF
            return self._deliver(data, self._byte_activations(len(data)), now, first)
        index = self._event_index
        self._event_index += 1
        ends_group = False
        if type_code == EventType.GTID:
            self._transaction += 1
            self._group_pos = 0
            self._tracker.feed(type_code, event, False)
            if len(event) >= HEADER_LEN + GTID_FIXED.size:
                seq_no, domain, _ = GTID_FIXED.unpack_from(event, HEADER_LEN)
                server_id = int.from_bytes(event[_SERVER_ID_AT : _SERVER_ID_AT + 4], "little")
                self._group_gtid = (domain, server_id, seq_no)
        elif self._group_pos >= 0:
            self._group_pos += 1
            ends_group = self._tracker.feed(type_code, event, _event_has_crc(event))
        due = [fault for fault in self.pending if self._at_event(fault, index, ends_group)]
        if ends_group:
            self._group_pos = -1
        for fault in due:
            self.pending.remove(fault)

        # The event's packets, changed by the event faults due.
        notes: dict[int, str] = {}
        copies = 0
        changed = event
        for number, fault in enumerate(due):
            if fault.kind in EVENT_KINDS:
                changed, notes[number], added = EVENT_CHANGES[fault.kind](fault, changed)
                copies += added
        start = self._out_offset
        shift_before = self._shift
        if changed is event and not self._shift:
            data = unit.raw
        else:
            old = len(unit.seqs)
            data, packets, _ = self._frame(prefix + changed, (unit.seqs[0] + self._shift) & 0xFF)
            self._shift = (self._shift + packets - old) & 0xFF
        out_next = (unit.seqs[-1] + self._shift + 1) & 0xFF
        if acked:
            # The server and the replica restart their counts after the ACK request.
            self._shift = 0
            out_next = 1
        for _ in range(copies):
            copy_prefix = prefix[:2] + b"\x00" if len(prefix) == 3 else prefix
            more, packets, out_next = self._frame(copy_prefix + changed, out_next)
            data += more
            self._shift = (self._shift + packets) & 0xFF
        self._out_next = out_next

        activations: list[tuple[int, Fault]] = []
        for number, fault in enumerate(due):
            if fault.kind in EVENT_KINDS:
                self.applied.append(Applied(fault, start, notes.get(number, "")))
            else:
                activations.append((self._position(fault, len(data)), fault))
        activations += self._byte_activations(len(data))
        activations.sort(key=lambda item: item[0])
        return self._deliver(data, activations, now, (unit.seqs[0] + shift_before) & 0xFF)

    def _at_event(self, fault: Fault, index: int, ends_group: bool) -> bool:
        point = fault.at
        if point.kind is PointKind.EVENT:
            return point.value == index
        if point.kind not in (PointKind.TRANSACTION, PointKind.GTID) or self._group_pos < 0:
            return False
        if point.kind is PointKind.TRANSACTION:
            if point.value != self._transaction:
                return False
        elif point.gtid != self._group_gtid:
            return False
        if point.where is Where.BEFORE:
            return self._group_pos == 0
        if point.where is Where.AFTER:
            return ends_group
        return self._group_pos == point.offset or (
            ends_group and 1 <= self._group_pos < point.offset
        )

    def _position(self, fault: Fault, length: int) -> int:
        """Where in the event's output bytes a (non-event) fault at an event point fires."""
        point = fault.at
        if point.kind is PointKind.EVENT:
            if point.where is Where.AFTER:
                return length
            if point.where is Where.INSIDE:
                return min(point.offset, length - 1)
            return 0
        if point.where is Where.AFTER:
            return length
        return min(point.into, length - 1)

    def _byte_activations(self, length: int) -> list[tuple[int, Fault]]:
        start = self._out_offset
        found = []
        for fault in list(self.pending):
            if fault.at.kind is PointKind.BYTE:
                value = int(fault.at.value)
                if start <= value < start + length:
                    found.append((value - start, fault))
                    self.pending.remove(fault)
        return found

    # --- delivery -----------------------------------------------------------------------------

    def _fire_time_faults(self, now: float) -> list[Output]:
        due = [
            fault
            for fault in self.pending
            if fault.at.kind is PointKind.TIME and now >= self._dump_start + float(fault.at.value)
        ]
        out: list[Output] = []
        for fault in due:
            self.pending.remove(fault)
            if not self.closed:
                out += self._activate(fault, now)
        return out

    def _deliver(
        self,
        data: bytes,
        activations: list[tuple[int, Fault]],
        now: float,
        seq_before: int | None = None,
    ) -> list[Output]:
        """``data`` (one packet, or an event and its copies) with the faults that fire inside
        it; ``seq_before`` is its first sequence number (``_out_next`` is the one after it):
        an ERR before the packet takes its number."""
        out: list[Output] = []
        done = 0
        for position, fault in activations:
            if self.closed:
                return out
            out += self._shape(data[done:position], now)
            done = position
            if position == 0 and seq_before is not None:
                self._out_next = seq_before
            out += self._activate(fault, now)
        if not self.closed:
            out += self._shape(data[done:], now)
        return out

    def _activate(self, fault: Fault, now: float) -> list[Output]:
        self.applied.append(Applied(fault, self._out_offset))
        return ACTIVATIONS[fault.kind](self, fault, now)

    def _cut(self, fault: Fault, now: float) -> list[Output]:
        return self._close(CloseMode(fault.params["close"]), now)

    def _stall(self, fault: Fault, now: float) -> list[Output]:
        duration = fault.params.get("duration")
        if duration is None:
            if self._held is None:
                self._held = []
            return []
        self._stall_until = max(self._stall_until, now + float(duration))
        return []

    def _send_err(self, fault: Fault, now: float) -> list[Output]:
        preset = fault.error_packet()
        payload = encode_err(ErrPacket(preset.errno, preset.sqlstate, preset.message))
        seq = self._out_next if preset.seq is None else preset.seq
        return self._send_last(fault, payload, seq, now)

    def _send_eof(self, fault: Fault, now: float) -> list[Output]:
        return self._send_last(fault, encode_eof(EofPacket()), self._out_next, now)

    def _send_last(self, fault: Fault, payload: bytes, seq: int, now: float) -> list[Output]:
        """``payload`` as a packet, then the close the fault asks for (or silence)."""
        data, _, self._out_next = self._frame(payload, seq)
        out = self._shape(data, now)
        close = CloseMode(fault.params["close"])
        if close is CloseMode.NONE:
            self._regimes.append(_Regime(fault, math.inf))  # nothing more goes out
            return out
        return out + self._close(close, now)

    def _start_regime(self, fault: Fault, now: float) -> list[Output]:
        """From now on, for the fault's duration, the engine reads it where it sends what the
        kind changes (``_active(kind)``, ``_SILENCING``)."""
        duration = fault.params.get("duration")
        kind = fault.kind
        until = math.inf if kind is FaultKind.BLACKHOLE or duration is None else now + duration
        self._regimes.append(_Regime(fault, until))
        return []

    def _close(self, mode: CloseMode, now: float) -> list[Output]:
        self.closed = True
        self._follow = False
        return self._kept([Output(b"", max(now, self._last_at), mode)])

    def _kept(self, out: list[Output]) -> list[Output]:
        """``out``, or nothing while a hold keeps it."""
        if self._held is None:
            return out
        self._held += out
        return []

    def _active(self, kind: FaultKind, now: float) -> Fault | None:
        for regime in self._regimes:
            if regime.fault.kind is kind and now < regime.until:
                return regime.fault
        return None

    def _blackholed(self, now: float) -> bool:
        return any(
            regime.fault.kind in _SILENCING and now < regime.until for regime in self._regimes
        )

    def _shape(self, data: bytes, now: float) -> list[Output]:
        """``data`` under the regimes in force: dropped, delayed, sliced, paced."""
        if not data:
            return []
        self._out_offset += len(data)
        if self._blackholed(now):
            return []
        base = now
        latency = self._active(FaultKind.LATENCY, now)
        if latency is not None:
            base += float(latency.params["delay"])
        base = max(base, self._stall_until)
        trickle = self._active(FaultKind.TRICKLE, now)
        bandwidth = self._active(FaultKind.BANDWIDTH, now)
        if trickle is None and bandwidth is None:
            at = max(base, self._last_at)
            self._last_at = at
            return self._kept([Output(data, at)])
        size = len(data)
        interval = 0.0
        rate = 0
        if trickle is not None:
            size = int(trickle.params["size"])
            interval = float(trickle.params["interval"])
        if bandwidth is not None:
            rate = int(bandwidth.params["rate"])
            size = min(size, max(1, rate // _BANDWIDTH_SLICES))
        out = []
        for start in range(0, len(data), size):
            piece = data[start : start + size]
            at = max(base, self._last_at + interval)
            if rate:
                at = max(at, self._bandwidth_free)
                self._bandwidth_free = at + len(piece) / rate
            self._last_at = at
            out.append(Output(piece, at))
        return self._kept(out)

    def _passthrough(self, data: bytes, now: float) -> list[Output]:
        if not data:
            return []
        at = max(now, self._last_at)
        self._last_at = at
        return self._kept([Output(data, at)])


# What each kind that acts at its point does there (the event kinds: EVENT_CHANGES). A regime
# lasts its duration and does its work where the engine reads it: ``_active(FaultKind.X)`` or
# ``_SILENCING`` (tests/test_checklists.py checks that every regime kind is read somewhere).
Activation = Callable[[FaultEngine, Fault, float], list[Output]]
ACTIVATIONS: Mapping[FaultKind, Activation] = MappingProxyType(
    {
        FaultKind.CUT: FaultEngine._cut,
        FaultKind.STALL: FaultEngine._stall,
        FaultKind.ERROR: FaultEngine._send_err,
        FaultKind.EOF: FaultEngine._send_eof,
        FaultKind.BLACKHOLE: FaultEngine._start_regime,
        FaultKind.TRICKLE: FaultEngine._start_regime,
        FaultKind.BANDWIDTH: FaultEngine._start_regime,
        FaultKind.LATENCY: FaultEngine._start_regime,
        FaultKind.WITHHOLD_HEARTBEAT: FaultEngine._start_regime,
        FaultKind.WRONG_HEARTBEAT: FaultEngine._start_regime,
        FaultKind.DROP_ACKS: FaultEngine._start_regime,
    }
)
