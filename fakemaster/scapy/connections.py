"""The TCP connections of a capture, each dissected apart from the others.

A ``Connection`` is one TCP connection (its 4-tuple, from SYN to FIN or RST): both directions
are put back in order by sequence numbers (``reassembly.TcpDirection``) and dissected with the
replication stream layers and one ``ConnectionState`` that only this connection's packets
change, so what one connection says (a dump request, a checksum, compression) never changes how
another one's bytes read. What cannot be dissected is reported as ``StreamProblem``s: holes in
the sequence numbers and the bytes after them, a direction ending inside a packet, packets no
layer knows, events the decoder refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scapy.config import conf
from scapy.packet import Packet, Raw

from fakemaster.scapy.reassembly import TcpDirection
from fakemaster.scapy.records import (
    INCOMPLETE,
    MISSING,
    NOT_DISSECTED,
    UNDECODED,
    PacketRecord,
    StreamProblem,
    stream_records,
)
from fakemaster.scapy.stream import ReplicationClient, ReplicationServer

__all__ = ["Connection"]


@dataclass
class _Side:
    """One direction: its reassembly, and the reassembled bytes not dissected yet."""

    stream: type[ReplicationClient] | type[ReplicationServer]
    tcp: TcpDirection = field(default_factory=TcpDirection)
    waiting: bytearray = field(default_factory=bytearray)
    offset: int = 0  # the stream offset of waiting[0]


def _split_padding(pkt: Packet) -> tuple[Packet, bytes]:
    """The stream packet without the bytes it handed back (padding), and those bytes."""
    pad = pkt.getlayer(conf.padding_layer)
    if pad is None or pad.underlayer is None:
        return pkt, b""
    rest = bytes(pad.load)
    del pad.underlayer.payload
    return pkt, rest


class Connection:
    """One TCP connection between ``client`` and the server, numbered ``number``."""

    def __init__(self, number: int, client: str) -> None:
        self.number = number
        self.client = client
        self.sides = (_Side(ReplicationClient), _Side(ReplicationServer))
        self.session: dict[str, Any] = {}  # the connection's ConnectionState lives here
        self.ended = False  # a FIN or RST was seen
        self.problems: list[StreamProblem] = []

    @property
    def started(self) -> bool:
        """Whether any byte or end of this connection was seen."""
        return self.ended or any(side.tcp.delivered or side.tcp.pending for side in self.sides)

    def syn(self, from_server: bool, seq: int) -> None:
        self.sides[from_server].tcp.syn(seq)

    def segment(
        self, from_server: bool, seq: int, data: bytes, flags: str, time: float
    ) -> list[PacketRecord]:
        """The packets that a segment of the connection completes."""
        side = self.sides[from_server]
        records = self._dissect(from_server, side.tcp.segment(seq, data), time)
        if "F" in flags:
            side.tcp.fin(seq, len(data))
        if "F" in flags or "R" in flags:
            self.ended = True
        return records

    def close(self) -> None:
        """The end of the connection (or of the capture): report what was left over."""
        for from_server, side in enumerate(self.sides):
            gaps, after = side.tcp.close()
            for gap in gaps:
                self._problem(bool(from_server), MISSING, gap.offset, gap.length)
            left = len(side.waiting)
            if gaps and (left or after):
                detail = "a packet cut by missing bytes, and all after it (the framing is lost)"
                size = left + len(after)
                self._problem(bool(from_server), NOT_DISSECTED, side.offset, size, detail)
            elif left:
                detail = "the direction ends inside a packet"
                self._problem(bool(from_server), INCOMPLETE, side.offset, left, detail)
            side.waiting.clear()

    def _dissect(self, from_server: bool, data: bytes, time: float) -> list[PacketRecord]:
        side = self.sides[from_server]
        side.waiting += data
        records: list[PacketRecord] = []
        while side.waiting:
            pkt = side.stream.tcp_reassemble(bytes(side.waiting), {}, self.session)
            if pkt is None:
                break
            pkt, rest = _split_padding(pkt)
            used = len(side.waiting) - len(rest)
            if used <= 0:
                break
            if isinstance(pkt, Raw):  # not the stream it claimed to be (a compressed one)
                detail = "not packets of the protocol the connection uses"
                self._problem(from_server, UNDECODED, side.offset, used, detail)
            else:
                found = stream_records(
                    pkt, time=time, client=self.client, from_server=from_server,
                    connection=self.number,
                )  # fmt: skip
                self._undecoded(found, side.offset, used)
                records += found
            del side.waiting[:used]
            side.offset += used
        return records

    def _undecoded(self, records: list[PacketRecord], offset: int, length: int) -> None:
        """A problem for each packet of a chunk (``length`` bytes at ``offset``) that no layer
        knows or whose event the decoder refused."""
        for record in records:
            if record.decode_error is not None:
                detail = f"packet #{record.sequence_id}: {record.decode_error}"
            elif Raw in record.packet:
                detail = f"packet #{record.sequence_id}: no layer knows it ({record.layer})"
            else:
                continue
            self._problem(record.from_server, UNDECODED, offset, length, detail)

    def _problem(
        self, from_server: bool, kind: str, offset: int, length: int, detail: str = ""
    ) -> None:
        self.problems.append(
            StreamProblem(self.number, self.client, from_server, kind, offset, length, detail)
        )
