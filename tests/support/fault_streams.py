"""Dump streams for the fault engine's tests, built independently of the engine.

An event list is framed into the bytes a primary sends after COM_BINLOG_DUMP (sequence numbers
from 1; with semi-sync, ``0x00 0xEF flag`` before each event and the count restarting at 1 after
an event that asks for an ACK). The tests frame the *expected* stream of a fault (an event
repeated, changed, removed, an ERR added) with the same framer, so the expected bytes never
come from the engine's own renumbering.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from hypothesis import strategies as st

from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import MAX_PACKET_PAYLOAD, EventType, GtidFlag

__all__ = [
    "CLIENT_PREFIX",
    "DumpEvent",
    "Stream",
    "dump_command",
    "event_bytes",
    "frame_payloads",
    "streams",
]

_HEADER = struct.Struct("<IBIIIH")


def event_bytes(type_code: int, body: bytes, *, server_id: int = 1, crc: bool = True) -> bytes:
    size = _HEADER.size + len(body) + (4 if crc else 0)
    event = _HEADER.pack(0, type_code, server_id, size, 0, 0) + body
    return event + struct.pack("<I", zlib.crc32(event)) if crc else event


@dataclass(frozen=True)
class DumpEvent:
    event: bytes
    ack: bool = False  # with semi-sync: the event asks for an ACK
    group: int = -1  # the index of the GTID group it belongs to (-1: none)
    group_pos: int = -1
    ends_group: bool = False
    gtid: str | None = None

    @property
    def type_code(self) -> int:
        return self.event[4]

    @property
    def heartbeat(self) -> bool:
        return self.type_code == EventType.HEARTBEAT


def frame_payloads(payloads: list[tuple[bytes, bool]], first_seq: int = 1) -> bytes:
    """Packets for (payload, ack requested) pairs, split at 0xFFFFFF bytes."""
    out = bytearray()
    seq = first_seq
    for payload, ack in payloads:
        rest = payload
        while True:
            chunk = rest[:MAX_PACKET_PAYLOAD]
            rest = rest[MAX_PACKET_PAYLOAD:]
            out += struct.pack("<I", len(chunk) | seq << 24) + chunk
            seq = (seq + 1) & 0xFF
            if len(chunk) < MAX_PACKET_PAYLOAD:
                break
        if ack:
            seq = 1
    return bytes(out)


@dataclass(frozen=True)
class Stream:
    events: tuple[DumpEvent, ...]
    semi_sync: bool = False
    crc: bool = True

    def payload(self, event: DumpEvent, *, ack: bool | None = None) -> bytes:
        flag = event.ack if ack is None else ack
        prefix = bytes((0, 0xEF, 1 if flag else 0)) if self.semi_sync else b"\x00"
        return prefix + event.event

    def payloads(self, events: list[DumpEvent] | None = None) -> list[tuple[bytes, bool]]:
        chosen = list(self.events) if events is None else events
        return [(self.payload(e), self.semi_sync and e.ack) for e in chosen]

    def wire(self) -> bytes:
        return frame_payloads(self.payloads())

    def counted(self) -> list[int]:
        """Indices (into ``events``) of the events the engine counts (not heartbeats)."""
        return [i for i, e in enumerate(self.events) if not e.heartbeat]

    def packet_bounds(self) -> list[tuple[int, int]]:
        """(start, end) of each event's packets in ``wire()``."""
        bounds = []
        at = 0
        for payload, _ in self.payloads():
            chunks = len(payload) // MAX_PACKET_PAYLOAD + 1
            size = len(payload) + 4 * chunks
            bounds.append((at, at + size))
            at += size
        return bounds


CLIENT_PREFIX = b""  # a test connection's client bytes before the dump: see dump_command


def dump_command(file_name: bytes = b"mysql-bin.000001") -> bytes:
    """A handshake response (seq 1, no TLS, no compression) then COM_BINLOG_DUMP (seq 0)."""
    response = struct.pack("<IIB23x", 0x000FA685, 1 << 24, 33) + b"repl\x00\x00"
    dump = BinlogDump(position=4, flags=0, server_id=2, file_name=file_name).encode()
    return (
        struct.pack("<I", len(response) | 1 << 24) + response + struct.pack("<I", len(dump)) + dump
    )


def _gtid_body(seq: int, domain: int, standalone: bool) -> bytes:
    flags = GtidFlag.STANDALONE if standalone else 0
    return struct.pack("<QIB", seq, domain, flags) + bytes(6)


@st.composite
def streams(
    draw: st.DrawFn, *, min_groups: int = 0, max_groups: int = 6, semi_sync: bool | None = None
) -> Stream:
    """A dump: fake ROTATE, FORMAT_DESCRIPTION, then GTID groups (transactions of 1-4 row
    events ended by XID or a COMMIT query, or standalone DDL groups), with heartbeats between
    them; optionally with the semi-sync header."""
    crc = draw(st.booleans())
    semi = draw(st.booleans()) if semi_sync is None else semi_sync
    server_id = draw(st.integers(1, 5))

    def ev(type_code: int, body: bytes) -> bytes:
        return event_bytes(type_code, body, server_id=server_id, crc=crc)

    events = [
        DumpEvent(ev(EventType.ROTATE, struct.pack("<Q", 4) + b"mysql-bin.000001")),
        DumpEvent(ev(EventType.FORMAT_DESCRIPTION, bytes(80) + (b"\x01" if crc else b"\x00"))),
    ]
    seq = draw(st.integers(1, 1 << 40))
    for group in range(draw(st.integers(min_groups, max_groups))):
        if draw(st.booleans()):
            events.append(DumpEvent(ev(EventType.HEARTBEAT, b"mysql-bin.000001")))
        domain = draw(st.integers(0, 2))
        gtid = f"{domain}-{server_id}-{seq + group}"
        standalone = draw(st.integers(0, 3)) == 0
        members = [ev(EventType.GTID, _gtid_body(seq + group, domain, standalone))]
        if standalone:
            members.append(ev(EventType.QUERY, bytes(13) + b"d\x00CREATE TABLE t (a int)"))
        else:
            for _ in range(draw(st.integers(1, 4))):
                kind = draw(st.sampled_from([EventType.TABLE_MAP, EventType.WRITE_ROWS_V1]))
                members.append(ev(kind, draw(st.binary(min_size=1, max_size=40))))
            if draw(st.booleans()):
                members.append(ev(EventType.XID, struct.pack("<Q", group)))
            else:
                members.append(ev(EventType.QUERY, bytes(13) + b"d\x00COMMIT"))
        ack = semi and draw(st.booleans())
        for pos, member in enumerate(members):
            last = pos == len(members) - 1
            events.append(DumpEvent(member, ack and last, group, pos, last, gtid))
    return Stream(tuple(events), semi, crc)
