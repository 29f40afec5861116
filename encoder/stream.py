"""Event streams as bytes: a binlog file's or a binlog dump's (mirror of decoder/stream.py).

Sans-IO: each call returns the bytes to write next. The network form follows the master's
rules: one packet (or split packets) per event, sequence numbers from ``first_sequence`` mod
256, the semi-sync header on every event packet when enabled, and the sequence restarting at 1
after an event whose ACK is requested.
"""

from __future__ import annotations

from encoder.core import encode_event
from encoder.packets import (
    binlog_packet_parts,
    encode_eof,
    encode_err,
    encode_ok,
    frame,
    frame_parts,
)
from encoder.primitives import buffer_argument
from fakemaster.vocabulary.constants import BINLOG_MAGIC
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.layouts import Buffer
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket

__all__ = ["StreamEncoder"]


class StreamEncoder:
    def __init__(
        self,
        *,
        network: bool = False,
        semi_sync: bool = False,
        first_sequence: int = 1,
        ctx: BinlogContext | None = None,
        write_magic: bool = True,
    ) -> None:
        self.ctx = ctx if ctx is not None else BinlogContext()
        self.network = network
        self.semi_sync = semi_sync
        self.sequence = first_sequence
        self._magic_pending = write_magic and not network

    def event(self, event: Event, *, ack_requested: bool = False) -> bytes:
        return self.raw_event(encode_event(event, self.ctx), ack_requested=ack_requested)

    def raw_event(self, data: Buffer, *, ack_requested: bool = False) -> bytes:
        """Already encoded event bytes (the context is not updated)."""
        buffer_argument(data, "the event")
        if not self.network:
            if ack_requested:
                raise EncodeError("a binlog file has no semi-sync ACK requests")
            if self._magic_pending:
                self._magic_pending = False
                return BINLOG_MAGIC + data
            return bytes(data)
        parts = binlog_packet_parts(data, semi_sync=self.semi_sync, ack_requested=ack_requested)
        packets, self.sequence = frame_parts(parts, self.sequence)
        if ack_requested:
            self.sequence = 1
        return b"".join(packets)

    def end(self, packet: EofPacket | OkPacket | None = None) -> bytes:
        """The EOF (or 0xFE OK) that ends a non-blocking dump."""
        self._require_network()
        if isinstance(packet, OkPacket):
            payload = encode_ok(packet)
        else:
            payload = encode_eof(packet if packet is not None else EofPacket())
        data, self.sequence = frame(payload, self.sequence)
        return data

    def error(self, packet: ErrPacket) -> bytes:
        """The ERR packet that ends a dump."""
        self._require_network()
        data, self.sequence = frame(encode_err(packet), self.sequence)
        return data

    def _require_network(self) -> None:
        if not self.network:
            raise EncodeError("only a network stream ends with a packet")
