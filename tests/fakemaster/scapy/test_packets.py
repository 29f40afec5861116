"""Framing (split packets of 16 MiB and more), what each direction's payloads dissect as,
and the server's OK/ERR/EOF against the encoder's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from decoder.packets import parse_eof, parse_err, parse_ok
from encoder import encode_event, frame
from encoder.packets import encode_binlog_packet, encode_eof, encode_err, encode_ok
from fakemaster.vocabulary.constants import MAX_PACKET_PAYLOAD
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import RotateEvent
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket
from scenarios.strategies.framing import eof_packets, err_packets, ok_packets
from tests.budget import examples
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from scapy.contrib.mysql import (  # noqa: E402
    MySQLComQuery,
    MySQLEOFPacket,
    MySQLErrPacket,
    MySQLOKPacket,
)
from scapy.packet import Padding, Raw  # noqa: E402

from fakemaster.scapy import (  # noqa: E402
    BinlogEventPacket,
    ComBinlogDump,
    ConnectionState,
    ReplicationClient,
    ReplicationClientPacket,
    ReplicationServer,
    ReplicationServerPacket,
    SemiSyncAckPacket,
    SemiSyncBinlogEventPacket,
    dissect_stream,
)
from fakemaster.scapy.packets import complete_prefix  # noqa: E402

# Sizes around the 16 MiB split points: one short of a full packet, exactly one (then an empty
# packet ends it), one more, and exactly two.
SPLIT_SIZES = [
    MAX_PACKET_PAYLOAD - 1,
    MAX_PACKET_PAYLOAD,
    MAX_PACKET_PAYLOAD + 1,
    2 * MAX_PACKET_PAYLOAD,
]


@pytest.mark.parametrize("size", SPLIT_SIZES)
def test_split_packets_are_framed_like_the_encoder_and_joined_on_dissection(size: int) -> None:
    # 0x42 starts no server packet scapy knows: the payload stays Raw.
    payload = (b"\x42" + bytes(range(256)) * (size // 256 + 1))[:size]
    wire, _ = frame(payload, 250)  # the sequence numbers wrap past 255 too
    built = ReplicationServerPacket(sequence_id=250) / Raw(payload)
    assert bytes(built) == wire
    after = frame(b"\xfe\0\0\2\0", (250 + size // MAX_PACKET_PAYLOAD + 1) & 0xFF)[0]
    assert complete_prefix(wire + after[:3], 100) == len(wire)
    assert complete_prefix(wire[:-1], 100) == 0
    dissected = ReplicationServerPacket(wire + after)
    assert dissected.chunks == size // MAX_PACKET_PAYLOAD + 1
    assert dissected[Raw].load == payload
    assert dissected[Padding].load == after  # the next packet is left over, not payload
    assert bytes(ReplicationServerPacket(wire)) == wire


def test_a_stream_waits_for_the_rest_of_a_split_packet() -> None:
    payload = b"\0" + bytes(MAX_PACKET_PAYLOAD + 10)
    wire, _ = frame(payload, 1)
    assert ReplicationServer.tcp_reassemble(wire[: MAX_PACKET_PAYLOAD + 4], {}, {}) is None
    whole = ReplicationServer.tcp_reassemble(wire + b"\x05\0", {}, {})
    assert whole is not None
    assert [item.chunks for item in whole.contents] == [2]
    assert whole[Padding].load == b"\x05\0"  # kept for the next call


@settings(max_examples=examples(0.5))
@given(ok=ok_packets(), err=err_packets(), eof=eof_packets())
def test_responses_dissect_with_the_decoders_values(
    ok: OkPacket, err: ErrPacket, eof: EofPacket
) -> None:
    ok_bytes, err_bytes, eof_bytes = encode_ok(ok), encode_err(err), encode_eof(eof)
    wire = frame(ok_bytes, 1)[0] + frame(err_bytes, 1)[0] + frame(eof_bytes, 1)[0]
    state = ConnectionState()
    state.start_dump()  # a 0x00 payload is an event only when it holds one; 0xfe is EOF
    items = dissect_stream(ReplicationServer, wire, state).contents
    assert bytes(items[0].payload) == ok_bytes
    if ok.header == 0 and len(ok_bytes) < 20:
        got = items[0][MySQLOKPacket]
        assert (got.affected_rows, got.last_insert_id, got.warnings, got.info) == (
            ok.affected_rows,
            ok.last_insert_id,
            ok.warnings,
            ok.info,
        )
    got_err = items[1][MySQLErrPacket]
    assert got_err.error_code == err.errno == parse_err(err_bytes).errno
    eof_layer = items[2][MySQLEOFPacket]
    assert (eof_layer.warnings, int(eof_layer.status_flags)) == (eof.warnings, eof.status_flags)
    assert parse_eof(eof_bytes) == eof
    assert parse_ok(ok_bytes) == ok


def test_server_payloads_are_events_after_a_dump_request_and_by_their_length_before() -> None:
    event = encode_event(RotateEvent(position=4, next_file="mysql-bin.000001"), BinlogContext())
    plain = frame(encode_binlog_packet(event), 1)[0]
    semi = frame(encode_binlog_packet(event, semi_sync=True, ack_requested=True), 1)[0]
    ok = frame(encode_ok(OkPacket()), 1)[0]
    # Without knowing of a dump (a capture that starts mid-stream): by the event length.
    unknown = ConnectionState()
    items = dissect_stream(ReplicationServer, plain + semi + ok, unknown).contents
    assert [type(item.payload) for item in items] == [
        BinlogEventPacket,
        SemiSyncBinlogEventPacket,
        MySQLOKPacket,
    ]
    assert items[1][SemiSyncBinlogEventPacket].ack_requested
    # After the client's COM_BINLOG_DUMP (in the client direction of the same connection).
    state = ConnectionState()
    client = frame(b"\x03SET @master_binlog_checksum='CRC32'", 0)[0]
    client += frame(bytes(ComBinlogDump(file_name=b"mysql-bin.000001")), 0)[0]
    assert type(dissect_stream(ReplicationClient, client, state).contents[1].payload) is (
        ComBinlogDump
    )
    assert state.dump_requested
    items = dissect_stream(ReplicationServer, plain, state).contents
    assert type(items[0].payload) is BinlogEventPacket
    assert items[0][BinlogEventPacket].payload.event == RotateEvent(
        position=4, next_file="mysql-bin.000001"
    )


def test_client_queries_set_what_the_server_direction_expects() -> None:
    state = ConnectionState()
    queries = [
        b"SET @master_binlog_checksum='NONE'",
        b"SET @rpl_semi_sync_slave=1",
        b"SET @slave_connect_state='0-1-5'",
    ]
    wire = b"".join(frame(b"\x03" + query, 0)[0] for query in queries)
    wire += frame(bytes(ComBinlogDump()), 0)[0]
    wire += frame(bytes(SemiSyncAckPacket(position=100, file_name=b"f")), 0)[0]
    items = dissect_stream(ReplicationClient, wire, state).contents
    assert [type(item.payload) for item in items] == [
        MySQLComQuery,
        MySQLComQuery,
        MySQLComQuery,
        ComBinlogDump,
        SemiSyncAckPacket,
    ]
    assert (state.semi_sync, state.connect_state, state.ctx.checksum) == (True, "0-1-5", False)
    assert isinstance(items[0], ReplicationClientPacket)
