"""``dissect_pcap`` and the ``pcap`` command on a capture written from the codec's bytes.

The capture holds one connection (``fakemaster.scapy.capture.RecordedConnection``): the client
sets the checksum and asks for a dump, the server answers OK, streams a ROTATE, an FDE and a
QUERY, then an EOF. The command must print one line per packet and, with ``--json``, the events
in the JSON form of ``fakemaster.forms.jsonform``.
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from encoder import encode_event, frame
from encoder.packets import encode_binlog_packet, encode_eof, encode_ok
from fakemaster.forms.jsonform import event_to_json
from fakemaster.vocabulary.constants import EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event, FormatDescriptionEvent, QueryEvent, RotateEvent
from fakemaster.vocabulary.packets import EofPacket, OkPacket
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.cli.pcap import add_parser, run  # noqa: E402
from fakemaster.scapy import ComBinlogDump, dissect_pcap  # noqa: E402
from fakemaster.scapy.capture import PcapWriter, RecordedConnection  # noqa: E402

SERVER_PORT = 3307
EVENTS: list[Event] = [
    RotateEvent(position=4, next_file="mysql-bin.000001", flags=EventFlag.ARTIFICIAL),
    FormatDescriptionEvent(log_pos=256),
    QueryEvent(database="db", query=b"CREATE TABLE t (id INT)", log_pos=330),
]


def write_capture(path: Path) -> None:
    writer = PcapWriter(path)
    connection = RecordedConnection(writer, 40000, SERVER_PORT)
    connection.data(False, frame(b"\x03SET @master_binlog_checksum='CRC32'", 0)[0])
    connection.data(True, frame(encode_ok(OkPacket()), 1)[0])
    dump = ComBinlogDump(position=4, server_id=2, file_name=b"mysql-bin.000001")
    connection.data(False, frame(bytes(dump), 0)[0])
    ctx = BinlogContext()
    server = b""
    seq = 1
    for event in EVENTS:
        packet, seq = frame(encode_binlog_packet(encode_event(event, ctx)), seq)
        server += packet
    server += frame(encode_eof(EofPacket()), seq)[0]
    # The server's bytes in two segments cut inside a packet: reassembly joins them.
    connection.data(True, server[:50])
    connection.data(True, server[50:])
    connection.fin(False)
    connection.fin(True)
    writer.close()


def test_dissect_pcap_follows_the_connection(tmp_path: Path) -> None:
    path = tmp_path / "c.pcap"
    write_capture(path)
    records = dissect_pcap(path)  # the port from the SYN
    assert [(r.from_server, r.layer) for r in records] == [
        (False, "MySQL COM_QUERY"),
        (True, "MySQL OK_Packet"),
        (False, "MySQL COM_BINLOG_DUMP"),
        (True, "Binlog event packet"),
        (True, "Binlog event packet"),
        (True, "Binlog event packet"),
        (True, "MySQL EOF_Packet"),
    ]
    assert [r.event for r in records if r.event is not None] == EVENTS
    assert {r.client for r in records} == {"127.0.0.1:40000"}


def test_pcap_command_prints_a_line_per_packet_and_json(tmp_path: Path) -> None:
    path = tmp_path / "c.pcap"
    write_capture(path)
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    assert run(parser.parse_args(["pcap", str(path)]), out) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 7
    assert "COM_BINLOG_DUMP b'mysql-bin.000001':4 server_id=2" in lines[2]
    assert "RotateEvent" in lines[3] and "QueryEvent" in lines[5]
    assert all(" C>S " in lines[i] for i in (0, 2)) and " S>C " in lines[6]

    out = io.StringIO()
    assert run(parser.parse_args(["pcap", "--json", str(path)]), out) == 0
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [o["event"] for o in objects if "event" in o] == [
        json.loads(json.dumps(event_to_json(event))) for event in EVENTS
    ]
    assert [o["direction"] for o in objects] == ["client", "server", "client"] + ["server"] * 4


def test_pcap_command_reports_an_unreadable_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.pcap"
    path.write_bytes(b"not a capture")
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    assert run(parser.parse_args(["pcap", str(path)]), io.StringIO()) == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_pcap_command_warns_about_frames_cut_short(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.pcap"
    write_capture(path)
    # Cut the last data frame by 10 bytes in the file, as a snap length would (incl_len <
    # orig_len in its record header).
    data = bytearray(path.read_bytes())
    offset, records = 24, []
    while offset < len(data):
        incl = int.from_bytes(data[offset + 8 : offset + 12], "little")
        records.append((offset, incl))
        offset += 16 + incl
    offset, incl = max((r for r in records if r[1] > 60), key=lambda r: r[0])
    data[offset + 8 : offset + 12] = (incl - 10).to_bytes(4, "little")
    del data[offset + 16 + incl - 10 : offset + 16 + incl]
    path.write_bytes(bytes(data))
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    assert run(parser.parse_args(["pcap", str(path)]), io.StringIO()) == 1
    err = capsys.readouterr().err
    assert "1 frames were captured shorter than sent" in err
    # The 10 bytes cut are reported missing, and the packet they cut is not dissected.
    assert "connection 1 (127.0.0.1:40000) server>client: missing: 10 bytes" in err
    assert "not dissected" in err and err.splitlines()[-1].startswith("error: ")
