"""Dissect a capture file of replication connections, one record per MySQL packet.

``dissect_pcap(path)`` finds the server port (the destination of the first SYN, unless
given), follows every TCP connection to it apart from the others (``connections.Connection``:
keyed by its 4-tuple, both directions together, a new SYN on a finished 4-tuple a new
connection), and returns a ``Dissection``: one ``PacketRecord`` per logical MySQL packet in
capture order, binlog events carrying the typed event the decoder made of them, and in
``problems`` every byte run that did not become decoded packets (missing bytes, a direction
ending inside a packet, undecodable packets). Nothing is dropped silently.
"""

from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import TCP
from scapy.packet import Packet
from scapy.utils import PcapReader

from fakemaster.scapy.connections import HOLE_LIMIT, Connection
from fakemaster.scapy.records import PacketRecord, StreamProblem

__all__ = [
    "Dissection",
    "PacketRecord",
    "StreamProblem",
    "dissect_pcap",
    "server_port",
    "truncated_frames",
]

_Key = tuple[str, int, str, int]  # client host, client port, server host, server port


class Dissection(list[PacketRecord]):
    """The records of a capture (a list), with what could not be dissected."""

    def __init__(
        self,
        records: list[PacketRecord],
        problems: list[StreamProblem],
        connections: int,
        truncated: int,
    ) -> None:
        super().__init__(records)
        self.problems = problems  # empty: every byte of every connection was dissected
        self.connections = connections  # TCP connections to the server port
        self.truncated = truncated  # frames captured shorter than sent (see truncated_frames)


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
    cannot be reassembled, and what follows the cut is reported missing."""
    count = 0
    with PcapReader(str(path)) as reader:
        for pkt in reader:
            if _truncated(pkt):
                count += 1
    return count


def _truncated(pkt: Packet) -> bool:
    wirelen = getattr(pkt, "wirelen", None)
    return wirelen is not None and wirelen > len(pkt)


def _tcp_data(tcp: Packet) -> bytes:
    """The segment's payload as captured (the IP length already applied by scapy)."""
    original = bytes(getattr(tcp, "original", b"") or b"")
    if original:
        return original[int(tcp.dataofs or 5) * 4 :]
    return bytes(tcp.payload)


class _Capture:
    """The connections of one capture to ``port`` and what they dissected to."""

    def __init__(self, port: int, hole_limit: int) -> None:
        self.port = port
        self.hole_limit = hole_limit
        self.open: dict[_Key, Connection] = {}
        self.closed: list[Connection] = []
        self.records: list[PacketRecord] = []
        self.count = 0

    def frame(self, pkt: Packet) -> None:
        tcp = pkt[TCP]
        ip = tcp.underlayer
        if ip is None or self.port not in (tcp.sport, tcp.dport):
            return
        from_server = tcp.sport == self.port and tcp.dport != self.port
        if from_server:
            key = (str(ip.dst), int(tcp.dport), str(ip.src), int(tcp.sport))
        else:
            key = (str(ip.src), int(tcp.sport), str(ip.dst), int(tcp.dport))
        flags = str(tcp.flags)
        connection = self.open.get(key)
        opening = "S" in flags and "A" not in flags
        if connection is not None and opening and connection.started:
            self._close(key)  # the 4-tuple used again: a new connection
            connection = None
        if connection is None:
            self.count += 1
            client = f"{key[0]}:{key[1]}"
            connection = self.open[key] = Connection(self.count, client, self.hole_limit)
        if "S" in flags:
            connection.syn(from_server, int(tcp.seq))
            return
        data = _tcp_data(tcp)
        self.records += connection.segment(from_server, int(tcp.seq), data, flags, float(pkt.time))

    def _close(self, key: _Key) -> None:
        connection = self.open.pop(key)
        connection.close()
        self.closed.append(connection)

    def finish(self) -> list[StreamProblem]:
        for key in list(self.open):
            self._close(key)
        self.closed.sort(key=lambda connection: connection.number)
        return [problem for connection in self.closed for problem in connection.problems]


def dissect_pcap(
    path: str | Path, port: int | None = None, *, hole_limit: int = HOLE_LIMIT
) -> Dissection:
    """Every MySQL packet of the capture's connections to ``port`` (found when None). A hole
    in a direction's sequence numbers with more than ``hole_limit`` bytes waiting behind it is
    given up for lost (reported missing) at once."""
    if port is None:
        port = server_port(path)
        if port is None:  # no connection starts in the capture: which side serves is unknown
            return Dissection([], [], 0, truncated_frames(path))
    capture = _Capture(port, hole_limit)
    truncated = 0
    with PcapReader(str(path)) as reader:
        for pkt in reader:
            truncated += _truncated(pkt)
            if TCP in pkt:
                capture.frame(pkt)
    problems = capture.finish()
    return Dissection(capture.records, problems, capture.count, truncated)
