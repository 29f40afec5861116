"""Dissect a capture file of replication connections, one record per MySQL packet.

``dissect_pcap(path)`` finds the server port (the destination of the first SYN, unless
given), reassembles every TCP connection in both directions with scapy's ``TCPSession`` and
the replication streams, and returns one ``PacketRecord`` per logical MySQL packet in capture
order; binlog events carry the typed event the decoder made of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scapy.contrib.mysql import (
    MYSQL_PORT,
    MySQLClient,
    MySQLComQuery,
    MySQLErrPacket,
    MySQLServer,
)
from scapy.layers.inet import TCP
from scapy.packet import Packet, bind_layers
from scapy.sendrecv import sniff
from scapy.sessions import TCPSession
from scapy.utils import PcapReader

from fakemaster.forms.jsonform import JsonValue, event_to_json
from fakemaster.forms.listing import describe
from fakemaster.scapy.events import BinlogEvent
from fakemaster.scapy.stream import ReplicationClient, ReplicationServer, install, uninstall
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event

__all__ = ["PacketRecord", "dissect_pcap", "server_port", "truncated_frames"]


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


def server_port(path: str | Path) -> int | None:
    """The destination port of the capture's first SYN (None: no connection starts in it)."""
    with PcapReader(str(path)) as reader:
        for pkt in reader:
            if TCP in pkt and pkt[TCP].flags.S and not pkt[TCP].flags.A:
                return int(pkt[TCP].dport)
    return None


def truncated_frames(path: str | Path) -> int:
    """How many frames the capture holds shorter than they were on the wire (a snap length, or
    a kernel capture of loopback, which cuts 64 KiB segments to 65,535 bytes): their streams
    cannot be reassembled, and what follows the cut dissects as garbage."""
    count = 0
    with PcapReader(str(path)) as reader:
        for pkt in reader:
            wirelen = getattr(pkt, "wirelen", None)
            if wirelen is not None and wirelen > len(pkt):
                count += 1
    return count


def _address(pkt: Packet, src: bool) -> str:
    ip = pkt[TCP].underlayer
    host = ip.src if src else ip.dst
    port = pkt[TCP].sport if src else pkt[TCP].dport
    return f"{host}:{port}"


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


def _records(pkt: Packet) -> list[PacketRecord]:
    stream = pkt.getlayer(ReplicationServer) or pkt.getlayer(ReplicationClient)
    if stream is None:
        return []
    from_server = isinstance(stream, ReplicationServer)
    client = _address(pkt, src=not from_server)
    out = []
    for item in stream.contents:
        payload: Any = item.payload
        event_layer = item.getlayer(BinlogEvent)
        out.append(
            PacketRecord(
                time=float(pkt.time),
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
            )
        )
    return out


def dissect_pcap(path: str | Path, port: int | None = None) -> list[PacketRecord]:
    """Every MySQL packet of the capture's connections to ``port`` (found when None)."""
    if port is None:
        port = server_port(path)
        if port is None:
            return []
    install(port)
    try:
        packets = sniff(offline=str(path), session=TCPSession, quiet=True)
    finally:
        uninstall(port)
        if port == MYSQL_PORT:  # scapy's own MySQL streams are bound there by default
            bind_layers(TCP, MySQLClient, dport=MYSQL_PORT)
            bind_layers(TCP, MySQLServer, sport=MYSQL_PORT)
    return [record for pkt in packets for record in _records(pkt)]
