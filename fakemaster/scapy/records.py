"""What a dissected capture is made of: one ``PacketRecord`` per logical MySQL packet, and a
``StreamProblem`` for every byte run the dissector could not make packets of.

``stream_records`` turns one dissected chunk of a direction (a ``ReplicationClient`` or
``ReplicationServer`` stream packet) into records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scapy.contrib.mysql import MySQLComQuery, MySQLErrPacket
from scapy.packet import Packet

from fakemaster.forms.jsonform import JsonValue, event_to_json
from fakemaster.forms.listing import describe
from fakemaster.scapy.events import BinlogEvent
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event

__all__ = ["PacketRecord", "StreamProblem", "stream_records"]


@dataclass(frozen=True)
class PacketRecord:
    """One logical MySQL packet of a capture."""

    time: float
    client: str  # "host:port" of the connection's client
    from_server: bool
    sequence_id: int
    chunks: int  # wire packets that carried it (more than 1 for payloads of 16 MiB and more)
    payload_length: int
    layer: str  # the name of the payload's scapy layer ("Raw" when none fits)
    summary: str
    packet: Packet  # the dissected packet (ReplicationClientPacket / ReplicationServerPacket)
    event: Event | None = None
    decode_error: str | None = None
    # The connection's number in the capture (1: the first one seen); a client address can
    # come back in a later connection.
    connection: int = 1

    def line(self, ctx: BinlogContext | None = None) -> str:
        arrow = "S>C" if self.from_server else "C>S"
        text = self.summary
        if self.event is not None:
            text = describe(self.event, ctx if ctx is not None else BinlogContext())[0]
            text = f"{type(self.event).__name__}: {text}"
        elif self.decode_error is not None:
            text = f"{text} (decode error: {self.decode_error})"
        return (
            f"{self.time:.6f} {self.client} {arrow} #{self.sequence_id} "
            f"len={self.payload_length} {self.layer}: {text}"
        )

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "time": self.time,
            "connection": self.connection,
            "client": self.client,
            "direction": "server" if self.from_server else "client",
            "sequence_id": self.sequence_id,
            "chunks": self.chunks,
            "payload_length": self.payload_length,
            "layer": self.layer,
            "summary": self.summary,
        }
        if self.event is not None:
            out["event"] = event_to_json(self.event)
        if self.decode_error is not None:
            out["decode_error"] = self.decode_error
        return out


# StreamProblem kinds.
MISSING = "missing"  # bytes the capture does not hold (a hole in the sequence numbers)
NOT_DISSECTED = "not dissected"  # bytes after a hole: the packet framing is lost there
INCOMPLETE = "incomplete"  # bytes at the end of a direction that make no whole packet
UNDECODED = "undecoded"  # a packet no layer knows, or an event the decoder refused


@dataclass(frozen=True)
class StreamProblem:
    """Bytes of one direction of one connection that did not become decoded packets."""

    connection: int
    client: str
    from_server: bool
    kind: str  # MISSING, NOT_DISSECTED, INCOMPLETE or UNDECODED
    offset: int  # the stream offset of the first byte concerned (0: the first after the SYN)
    length: int  # how many bytes
    detail: str = ""

    def line(self) -> str:
        direction = "server>client" if self.from_server else "client>server"
        text = (
            f"connection {self.connection} ({self.client}) {direction}: {self.kind}: "
            f"{self.length} bytes at stream offset {self.offset}"
        )
        return f"{text}: {self.detail}" if self.detail else text

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "connection": self.connection,
            "client": self.client,
            "direction": "server" if self.from_server else "client",
            "kind": self.kind,
            "offset": self.offset,
            "length": self.length,
            "detail": self.detail,
        }


def _summary(payload: Any) -> str:
    """scapy's summary, with the text a person looks for in the packets scapy's own MySQL
    layers leave to their class name."""
    if not payload:
        return ""
    if isinstance(payload, MySQLComQuery):
        return f"COM_QUERY {bytes(payload.query)!r}"
    if isinstance(payload, MySQLErrPacket):
        return f"ERR {payload.error_code} {bytes(payload.error_message)!r}"
    return str(payload.summary())


def stream_records(
    stream: Packet, *, time: float, client: str, from_server: bool, connection: int
) -> list[PacketRecord]:
    """The records of one dissected chunk of a direction."""
    out = []
    for item in stream.contents:
        payload: Any = item.payload
        event_layer = item.getlayer(BinlogEvent)
        out.append(
            PacketRecord(
                time=time,
                client=client,
                from_server=from_server,
                sequence_id=int(item.sequence_id),
                chunks=int(item.chunks),
                payload_length=int(getattr(item, "_logical_length", len(bytes(payload)))),
                layer=payload.name if payload else "empty",
                summary=_summary(payload),
                packet=item,
                event=event_layer.event if event_layer is not None else None,
                decode_error=event_layer.decode_error if event_layer is not None else None,
                connection=connection,
            )
        )
    return out
