"""A TCP proxy that records both directions of every connection to a pcap file.

``CaptureProxy(target_host, target_port, path)`` listens on 127.0.0.1 (port 0: any free
port); each accepted connection is relayed to the target, and the bytes of each direction are
written, in the order they were relayed, as IPv4/TCP segments of one synthetic connection per
client (SYN, SYN-ACK, ACK, data segments of at most 65,000 bytes with consistent sequence
numbers, FIN from each side) to a classic pcap file that scapy, tcpdump and Wireshark read. The
server side of each recorded connection is the proxy's own port.

Unlike a capture of ``lo``, nothing is dropped or cut short (a kernel capture of loopback
truncates its 64 KiB segments to 65,535 bytes), and no privileges are needed; segment
boundaries are the proxy's reads, not the kernel's. Standard library only (no scapy).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path
from types import TracebackType

__all__ = ["CaptureProxy", "PcapWriter", "RecordedConnection"]

_PCAP_HEADER = struct.Struct("<IHHiIII")
_RECORD = struct.Struct("<IIII")
_ETHERNET = b"\x00" * 12 + b"\x08\x00"  # zero MACs, IPv4
_IPV4 = struct.Struct("!BBHHHBBH4s4s")
_TCP = struct.Struct("!HHIIBBHHH")
_MAX_SEGMENT = 65_000
_SYN, _FIN, _PSH, _ACK = 0x02, 0x01, 0x08, 0x10
_LOOPBACK = socket.inet_aton("127.0.0.1")


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class PcapWriter:
    """Classic pcap (Ethernet) of TCP segments between two loopback ports."""

    def __init__(self, path: Path | str) -> None:
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._file.write(_PCAP_HEADER.pack(0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        self._lock = threading.Lock()

    def segment(
        self, src: int, dst: int, seq: int, ack: int, flags: int, data: bytes = b""
    ) -> None:
        tcp = _TCP.pack(src, dst, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
        pseudo = _LOOPBACK + _LOOPBACK + struct.pack("!BBH", 0, 6, len(tcp) + len(data))
        checksum = _checksum(pseudo + tcp + data)
        tcp = tcp[:16] + struct.pack("!H", checksum) + tcp[18:]
        length = _IPV4.size + len(tcp) + len(data)
        ip = _IPV4.pack(0x45, 0, length, 0, 0x4000, 64, 6, 0, _LOOPBACK, _LOOPBACK)
        ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
        frame = _ETHERNET + ip + tcp + data
        now = time.time()
        with self._lock:
            if self._file.closed:
                return  # a relay that outlived close(): its last bytes are not recorded
            seconds = int(now)
            micros = int((now - seconds) * 1_000_000)
            self._file.write(_RECORD.pack(seconds, micros, len(frame), len(frame)) + frame)

    def flush(self) -> None:
        with self._lock:
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed


class RecordedConnection:
    """One relayed connection as the pcap sees it: sequence numbers of both sides."""

    def __init__(self, writer: PcapWriter, client_port: int, server_port: int) -> None:
        self.writer = writer
        self.ports = (client_port, server_port)
        self.next_seq = [1000, 5000]  # client, server
        self.lock = threading.Lock()
        self.finished = [False, False]
        c, s = self.ports
        writer.segment(c, s, 999, 0, _SYN)
        writer.segment(s, c, 4999, 1000, _SYN | _ACK)
        writer.segment(c, s, 1000, 5000, _ACK)

    def data(self, from_server: bool, data: bytes) -> None:
        with self.lock:
            side = int(from_server)
            src, dst = (self.ports[1], self.ports[0]) if from_server else self.ports
            for start in range(0, len(data), _MAX_SEGMENT):
                chunk = data[start : start + _MAX_SEGMENT]
                seq = self.next_seq[side]
                self.writer.segment(src, dst, seq, self.next_seq[1 - side], _PSH | _ACK, chunk)
                self.next_seq[side] = seq + len(chunk)

    def fin(self, from_server: bool) -> None:
        with self.lock:
            side = int(from_server)
            if self.finished[side]:
                return
            self.finished[side] = True
            src, dst = (self.ports[1], self.ports[0]) if from_server else self.ports
            seq = self.next_seq[side]
            self.writer.segment(src, dst, seq, self.next_seq[1 - side], _FIN | _ACK)
            self.next_seq[side] = seq + 1


class CaptureProxy:
    """Relay ``host``:``port`` (by default 127.0.0.1 and a free port) to the target and record
    the traffic in ``path``."""

    def __init__(
        self,
        target_host: str,
        target_port: int,
        path: Path | str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.target = (target_host, target_port)
        self.path = Path(path)
        self._writer = PcapWriter(self.path)
        self._listener = socket.create_server((host, port))
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._closing = False
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        while True:
            try:
                client, address = self._listener.accept()
            except OSError:
                return
            if self._closing:
                client.close()
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            self._sockets += [client, server]
            recorded = RecordedConnection(self._writer, address[1], self.port)
            for source, sink, from_server in ((client, server, False), (server, client, True)):
                thread = threading.Thread(
                    target=self._relay, args=(source, sink, recorded, from_server), daemon=True
                )
                self._threads.append(thread)
                thread.start()

    @staticmethod
    def _relay(
        source: socket.socket,
        sink: socket.socket,
        recorded: RecordedConnection,
        from_server: bool,
    ) -> None:
        try:
            while data := source.recv(1 << 16):
                recorded.data(from_server, data)  # before relaying: causal order in the file
                sink.sendall(data)
        except OSError:
            pass
        recorded.fin(from_server)
        # MySQL peers never half-close: one side gone ends the connection (a primary blocked
        # in a dump would otherwise never read the replica's FIN).
        for sock in (sink, source):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self, timeout: float = 30.0) -> None:
        """Stop accepting, wait for the relayed connections to end, and close the file."""
        self._closing = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self._listener.close()
        self._acceptor.join(timeout)
        for thread in self._threads:
            thread.join(timeout)
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout)
        for sock in self._sockets:
            sock.close()
        self._writer.close()

    def __enter__(self) -> CaptureProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
