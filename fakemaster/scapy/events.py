"""Binlog events as scapy layers: the 19-byte header as fields, the body through the codec.

``BinlogEvent`` shows and crafts the header (``fakemaster.vocabulary.header``'s layout) and carries the
body and CRC as bytes; what the body means comes from the project's decoder
(``BinlogEvent.decode``), and a typed event becomes a layer through the encoder
(``event_layer``), so no body layout is defined twice. ``BinlogEventPacket`` is a dump's packet
payload: the ``0x00`` byte, then the event; ``SemiSyncBinlogEventPacket`` has the semi-sync
header (``0xef`` + flags) in between.

While a replication stream is dissected (``stream.py``, or ``decoding_with``), each ``BinlogEvent`` is decoded
with that connection's ``BinlogContext`` as it is dissected, in stream order: the result is in
``.event`` (or the DecodeError's text in ``.decode_error``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from scapy.fields import (
    ByteEnumField,
    FlagsField,
    LEIntField,
    StrLenField,
    XByteField,
)
from scapy.packet import Packet, bind_layers

from decoder import decode_event
from encoder import encode_event
from fakemaster.scapy.state import current_state
from fakemaster.vocabulary.constants import HEADER_LEN, SEMI_SYNC_MAGIC, EventFlag, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.header import (
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    HEADER,
    LOG_POS_OFFSET,
    SERVER_ID_OFFSET,
    TIMESTAMP_OFFSET,
    TYPE_CODE_OFFSET,
)
from fakemaster.vocabulary.packets import OK_HEADER, SEMI_SYNC_ACK_REQUESTED, SEMI_SYNC_HEADER_LEN

__all__ = [
    "EVENT_FLAG_NAMES",
    "EVENT_TYPE_NAMES",
    "BinlogEvent",
    "BinlogEventPacket",
    "SemiSyncBinlogEventPacket",
    "decoding_with",
    "event_layer",
]

EVENT_TYPE_NAMES = {int(code): code.name for code in EventType}
EVENT_FLAG_NAMES = [EventFlag(1 << bit).name or f"BIT{bit}" for bit in range(16)]
_LENGTH = struct.Struct("<I")  # HEADER's event_length, patched by post_build

_DECODE_CONTEXT: ContextVar[BinlogContext | None] = ContextVar("fakemaster_scapy_ctx", default=None)


@contextmanager
def decoding_with(ctx: BinlogContext) -> Iterator[BinlogContext]:
    """Decode every ``BinlogEvent`` dissected inside the block with ``ctx``, in order."""
    token = _DECODE_CONTEXT.set(ctx)
    try:
        yield ctx
    finally:
        _DECODE_CONTEXT.reset(token)


def _body_length(pkt: Any) -> int:
    if pkt.event_length is None:
        return 0
    return max(0, int(pkt.event_length) - HEADER_LEN)


class BinlogEvent(Packet):
    """One event: header fields, then ``data`` (the body and, with checksums, the CRC32)."""

    name = "Binlog event"
    fields_desc = [
        LEIntField("timestamp", 0),
        ByteEnumField("type_code", 0, EVENT_TYPE_NAMES),
        LEIntField("server_id", 1),
        LEIntField("event_length", None),
        LEIntField("log_pos", 0),
        FlagsField("flags", 0, -16, EVENT_FLAG_NAMES),
        StrLenField("data", b"", length_from=_body_length),
    ]
    # Set on dissection while a stream context is active (decoding_with).
    event: Event | None = None
    decode_error: str | None = None

    def do_build(self) -> bytes:
        # Always through post_build, even for a dissected (cached) packet.
        return self.post_build(self.self_build(), self.do_build_payload())

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.event_length is None:
            end = EVENT_LENGTH_OFFSET + _LENGTH.size
            pkt = pkt[:EVENT_LENGTH_OFFSET] + _LENGTH.pack(len(pkt)) + pkt[end:]
        return pkt + pay

    def post_dissection(self, pkt: Packet) -> None:
        ctx = _DECODE_CONTEXT.get()
        if ctx is None and (state := current_state()) is not None:
            ctx = state.ctx
        if ctx is not None:
            try:
                self.event = self.decode(ctx)
            except DecodeError as exc:
                self.decode_error = str(exc)

    def copy(self) -> BinlogEvent:
        clone: BinlogEvent = super().copy()
        clone.event = self.event
        clone.decode_error = self.decode_error
        return clone

    def decode(self, ctx: BinlogContext | None = None) -> Event:
        """The typed event, by the project's decoder (which updates ``ctx`` from it)."""
        return decode_event(self.event_bytes(), ctx if ctx is not None else BinlogContext())

    def event_bytes(self) -> bytes:
        """This event's bytes alone (not what a dissection left after it as padding)."""
        return self.post_build(self.self_build(), b"")

    def mysummary(self) -> str:
        text = self.sprintf("%type_code% log_pos=%log_pos%")
        if self.event is not None:
            return f"{text} {type(self.event).__name__}"
        return text


# The header fields are fakemaster.vocabulary.header's HEADER, field for field (sizes and offsets).
assert [field.sz for field in BinlogEvent.fields_desc[:6]] == [
    struct.calcsize("<" + code) for code in HEADER.format[1:]
]
assert [sum(field.sz for field in BinlogEvent.fields_desc[:index]) for index in range(6)] == [
    TIMESTAMP_OFFSET,
    TYPE_CODE_OFFSET,
    SERVER_ID_OFFSET,
    EVENT_LENGTH_OFFSET,
    LOG_POS_OFFSET,
    FLAGS_OFFSET,
]


def event_layer(event: Event, ctx: BinlogContext | None = None) -> BinlogEvent:
    """The layer of a typed event: its bytes are the encoder's (``ctx`` updated likewise)."""
    return BinlogEvent(encode_event(event, ctx if ctx is not None else BinlogContext()))


class BinlogEventPacket(Packet):
    """A binlog dump packet's payload: ``0x00`` then the event."""

    name = "Binlog event packet"
    fields_desc = [XByteField("header", OK_HEADER)]


class SemiSyncBinlogEventPacket(Packet):
    """A binlog dump packet on a semi-sync connection: ``0x00 0xef flags`` then the event."""

    name = "Binlog event packet (semi-sync)"
    fields_desc = [
        XByteField("header", OK_HEADER),
        XByteField("semi_sync_magic", SEMI_SYNC_MAGIC),
        FlagsField("semi_sync_flags", 0, 8, ["ACK_REQUESTED"]),  # bit 0
    ]

    @property
    def ack_requested(self) -> bool:
        return bool(int(self.semi_sync_flags) & SEMI_SYNC_ACK_REQUESTED)


assert SEMI_SYNC_ACK_REQUESTED == 1 << 0
assert len(SemiSyncBinlogEventPacket().self_build()) == 1 + SEMI_SYNC_HEADER_LEN
bind_layers(BinlogEventPacket, BinlogEvent)
bind_layers(SemiSyncBinlogEventPacket, BinlogEvent)
