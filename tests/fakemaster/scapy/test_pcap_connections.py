"""Connections of one capture dissected apart, and bytes a capture lacks reported.

The captures are written segment by segment (``PcapWriter``): dumps whose server bytes travel
in small segments, two connections' segments interleaved, one connection's segments out of
order and retransmitted, sequence numbers wrapping at 2**32, a client port used again by a later
connection, and a segment left out. The expected events are the ones encoded into each
connection; the expected gap is the segment left out, by its offset in the stream.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from encoder import encode_event, frame
from encoder.packets import encode_binlog_packet, encode_eof, encode_ok
from fakemaster.vocabulary.constants import EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event, FormatDescriptionEvent, QueryEvent, RotateEvent
from fakemaster.vocabulary.packets import EofPacket, OkPacket
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.cli.pcap import add_parser, run  # noqa: E402
from fakemaster.scapy import ComBinlogDump, PacketRecord, dissect_pcap  # noqa: E402
from fakemaster.scapy.capture import PcapWriter  # noqa: E402
from fakemaster.scapy.records import INCOMPLETE, MISSING, NOT_DISSECTED, UNDECODED  # noqa: E402

SERVER = 3307
SYN, FIN, PSH, ACK = 0x02, 0x01, 0x08, 0x10
Segment = tuple[int, int, bytes]  # (from_server, seq, data)


def events(count: int, tag: str) -> list[Event]:
    return [
        RotateEvent(position=4, next_file="mysql-bin.000001", flags=EventFlag.ARTIFICIAL),
        FormatDescriptionEvent(log_pos=256),
        *[
            QueryEvent(database="db", query=f"DO '{tag}{n}'".encode(), log_pos=300 + n)
            for n in range(count)
        ],
    ]


def dump(served: list[Event]) -> tuple[bytes, bytes, bytes, list[int]]:
    """The client's query, its dump request, the server's bytes, and where each event packet
    ends in the server's stream."""
    query = frame(b"\x03SET @master_binlog_checksum='CRC32'", 0)[0]
    request = frame(
        bytes(ComBinlogDump(position=4, server_id=2, file_name=b"mysql-bin.000001")), 0
    )[0]
    server = frame(encode_ok(OkPacket()), 1)[0]
    ends = []
    ctx, seq = BinlogContext(), 1
    for event in served:
        packet, seq = frame(encode_binlog_packet(encode_event(event, ctx)), seq)
        server += packet
        ends.append(len(server))
    return query, request, server + frame(encode_eof(EofPacket()), seq)[0], ends


class Wire:
    """One connection's segments, written as a test orders them."""

    def __init__(self, writer: PcapWriter, port: int, isn: tuple[int, int]) -> None:
        self.writer, self.port = writer, port
        self.next = [(isn[0] + 1) % (1 << 32), (isn[1] + 1) % (1 << 32)]
        writer.segment(port, SERVER, isn[0], 0, SYN)
        writer.segment(SERVER, port, isn[1], self.next[0], SYN | ACK)

    def cut(self, from_server: int, data: bytes, size: int) -> list[Segment]:
        out = []
        for start in range(0, len(data), size):
            out.append((from_server, self.next[from_server], data[start : start + size]))
            self.next[from_server] = (self.next[from_server] + len(out[-1][2])) % (1 << 32)
        return out

    def write(self, segments: list[Segment]) -> None:
        for from_server, seq, data in segments:
            ports = (SERVER, self.port) if from_server else (self.port, SERVER)
            self.writer.segment(*ports, seq, self.next[1 - from_server], PSH | ACK, data)

    def send(self, from_server: int, data: bytes) -> None:
        self.write(self.cut(from_server, data, 1 << 16))

    def fin(self) -> None:
        for from_server in (0, 1):
            ports = (SERVER, self.port) if from_server else (self.port, SERVER)
            self.writer.segment(*ports, self.next[from_server], 0, FIN | ACK)


def start(wire: Wire, query: bytes, request: bytes) -> None:
    wire.send(0, query)
    wire.send(1, frame(encode_ok(OkPacket()), 1)[0])
    wire.send(0, request)


def events_of(records: list[PacketRecord], connection: int) -> list[Event]:
    return [r.event for r in records if r.connection == connection and r.event is not None]


def test_interleaved_connections_dissect_apart(tmp_path: Path) -> None:
    path = tmp_path / "many.pcap"
    first, second, third = events(150, "a"), events(120, "b"), events(30, "c")
    writer = PcapWriter(path)
    a = Wire(writer, 40000, ((1 << 32) - 700, 7))  # the client's numbers wrap mid-stream
    b = Wire(writer, 40001, (5, (1 << 32) - 2000))  # the server's numbers wrap mid-stream
    query, request, server_a, _ = dump(first)
    start(a, query, request)
    query, request, server_b, _ = dump(second)
    start(b, query, request)
    segments_a = a.cut(1, server_a[11:], 300)  # the OK went already
    segments_b = b.cut(1, server_b[11:], 170)
    # b's segments in pairs swapped, and each third one sent again.
    shuffled: list[Segment] = []
    for index in range(0, len(segments_b), 2):
        shuffled += segments_b[index : index + 2][::-1]
        if index % 3 == 0:
            shuffled.append(segments_b[index])
    for index in range(max(len(segments_a), len(shuffled))):
        a.write(segments_a[index : index + 1])
        b.write(shuffled[index : index + 1])
    a.fin()
    b.fin()
    c = Wire(writer, 40000, (90, 1000))  # a's client port again, in a new connection
    query, request, server_c, _ = dump(third)
    start(c, query, request)
    c.send(1, server_c[11:])
    c.fin()
    writer.close()

    records = dissect_pcap(path)
    assert records.problems == []
    assert records.connections == 3
    assert events_of(records, 1) == first
    assert events_of(records, 2) == second
    assert events_of(records, 3) == third
    assert {r.client for r in records if r.connection in (1, 3)} == {"127.0.0.1:40000"}


def lost_segment_capture(path: Path) -> tuple[list[Event], int, int, int, int]:
    """A dump whose server segment 10 (of 100 bytes) is not in the capture: the events that
    end before it, the lost bytes' offset and length in the server's stream, where the packet
    they cut starts, and where the server's stream ends."""
    served = events(60, "x")
    query, request, server, ends = dump(served)
    writer = PcapWriter(path)
    wire = Wire(writer, 40000, (1, 2))
    start(wire, query, request)
    segments = wire.cut(1, server[11:], 100)
    wire.write(segments[:10] + segments[11:])
    wire.fin()
    writer.close()
    offset = 11 + 10 * 100
    cut = max(end for end in [11, *ends] if end <= offset)
    before = [event for event, end in zip(served, ends, strict=True) if end <= offset]
    return before, offset, 100, cut, len(server)


# The hole given up at the end of the capture, or as soon as more than 250 bytes wait.
@pytest.mark.parametrize("hole_limit", [None, 250])
def test_a_lost_segment_is_reported_missing(tmp_path: Path, hole_limit: int | None) -> None:
    path = tmp_path / "lost.pcap"
    before, offset, length, cut, end = lost_segment_capture(path)
    if hole_limit is None:
        records = dissect_pcap(path)
    else:
        records = dissect_pcap(path, hole_limit=hole_limit)
    assert events_of(records, 1) == before  # nothing after the hole is taken for a packet
    assert [(p.kind, p.from_server, p.offset, p.length) for p in records.problems] == [
        (MISSING, True, offset, length),
        (NOT_DISSECTED, True, cut, end - cut - length),
    ]


def test_the_command_says_bytes_are_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lost.pcap"
    _, offset, length, _, _ = lost_segment_capture(path)
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    assert run(parser.parse_args(["pcap", str(path)]), io.StringIO()) == 1
    err = capsys.readouterr().err.splitlines()
    assert f"server>client: missing: {length} bytes at stream offset {offset}" in err[0]
    assert err[-1].startswith("error: ") and "missing or not dissected" in err[-1]


def one_dump_capture(path: Path, server_bytes: bytes, *, syn: bool = True) -> None:
    """A capture of one dump connection whose server stream after the OK is ``server_bytes``."""
    query, request, _, _ = dump([])
    writer = PcapWriter(path)
    if syn:
        wire = Wire(writer, 40000, (1, 2))
    else:  # a capture started after the handshake
        wire = Wire.__new__(Wire)
        wire.writer, wire.port, wire.next = writer, 40000, [2, 3]
    start(wire, query, request)
    wire.send(1, server_bytes)
    wire.fin()
    writer.close()


def test_a_direction_ending_inside_a_packet_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cut.pcap"
    served = events(3, "x")
    _, _, server, ends = dump(served)
    one_dump_capture(path, server[11 : ends[1] - 5])  # the FDE's packet without its last bytes
    records = dissect_pcap(path)
    assert events_of(records, 1) == served[:1]
    problem = records.problems
    assert [(p.kind, p.from_server, p.offset, p.length) for p in problem] == [
        (INCOMPLETE, True, ends[0], ends[1] - 5 - ends[0])
    ]


def test_an_event_the_decoder_refuses_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "crc.pcap"
    served = events(3, "x")
    _, _, server, ends = dump(served)
    broken = bytearray(server)
    broken[ends[2] - 6] ^= 0xFF  # a byte of the first QUERY's text: its CRC32 no longer holds
    one_dump_capture(path, bytes(broken[11:]))
    records = dissect_pcap(path)
    assert events_of(records, 1) == served[:2] + served[3:]
    [problem] = records.problems
    # The refused event's packet, where it is in the server's stream.
    assert (problem.kind, problem.from_server) == (UNDECODED, True)
    assert (problem.offset, problem.length) == (ends[1], ends[2] - ends[1])
    refused = [r for r in records if r.decode_error is not None]
    assert len(refused) == 1 and refused[0].decode_error in problem.detail


def test_a_packet_no_layer_knows_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "raw.pcap"
    _, _, server, ends = dump(events(1, "x"))
    # After the events, a packet of the dump that is no event, EOF or ERR (0x05...).
    strange = frame(b"\x05strange", 4)[0]
    one_dump_capture(path, server[11 : ends[-1]] + strange)
    records = dissect_pcap(path)
    [problem] = records.problems
    assert (problem.kind, problem.from_server) == (UNDECODED, True)
    assert (problem.offset, problem.length) == (ends[-1], len(strange))
    assert "no layer knows it" in problem.detail


def test_a_capture_without_syn_needs_the_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nosyn.pcap"
    served = events(3, "x")
    _, _, server, _ = dump(served)
    one_dump_capture(path, server[11:], syn=False)
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    assert run(parser.parse_args(["pcap", str(path)]), io.StringIO()) == 0
    assert "no TCP connection to a port (no SYN: give --port)" in capsys.readouterr().err
    records = dissect_pcap(path, SERVER)  # the first segment of each direction starts it
    assert (events_of(records, 1), records.problems) == (served, [])


def test_a_compressed_direction_ending_inside_an_inner_packet_is_reported() -> None:
    from encoder.packets import compress_frame
    from fakemaster.scapy.connections import Connection
    from fakemaster.scapy.state import state_of

    connection = Connection(1, "127.0.0.1:40000")
    connection.syn(True, 0)
    state_of(connection.session).compressed = True  # the login ended in an OK: compressed on
    whole = frame(encode_ok(OkPacket()), 1)[0]
    cut = frame(b"\x00" + b"e" * 40, 2)[0][:20]  # an inner packet without its end
    sent = compress_frame(whole + cut, 0)
    records = connection.segment(True, 1, sent, "PA", 0.0)
    assert [r.layer for r in records] == ["MySQL OK_Packet"]
    connection.close()
    [problem] = connection.problems
    assert (problem.kind, problem.from_server, problem.offset) == (INCOMPLETE, True, len(sent))
    assert "compressed direction ends inside a packet (20 bytes in)" in problem.detail
