"""Packet framing and OK/ERR/EOF/binlog/semi-sync payloads: golden bytes and round trips."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.packets import (
    PacketReader,
    parse_binlog_packet,
    parse_eof,
    parse_err,
    parse_ok,
    parse_response,
    parse_semi_sync_ack,
)
from encoder.packets import (
    binlog_packet_parts,
    encode_binlog_packet,
    encode_eof,
    encode_err,
    encode_ok,
    encode_semi_sync_ack,
    frame,
    frame_parts,
)
from fakemaster.vocabulary.constants import MAX_PACKET_PAYLOAD
from fakemaster.vocabulary.errors import DecodeError, EncodeError
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket, SemiSyncAck
from scenarios.strategies.framing import (
    BOUNDARY_PAYLOAD_SIZES,
    cut_points,
    eof_packets,
    err_packets,
    ok_packets,
    semi_sync_acks,
    sequence_numbers,
    split_at,
)


def packet_headers(wire: bytes) -> list[tuple[int, int]]:
    """(length, seq) of each physical packet of ``wire``, walking the headers."""
    headers = []
    pos = 0
    while pos < len(wire):
        length = int.from_bytes(wire[pos : pos + 3], "little")
        headers.append((length, wire[pos + 3]))
        pos += 4 + length
    assert pos == len(wire)
    return headers


def reassemble(wire: bytes, chunk_sizes: list[int], expected_seq: int | None) -> list[bytes]:
    reader = PacketReader(expected_seq=expected_seq)
    payloads: list[bytes] = []
    pos = 0
    sizes = iter(chunk_sizes)
    while pos < len(wire):
        step = next(sizes, len(wire) - pos)
        reader.feed(wire[pos : pos + step])
        pos += step
        payloads.extend(reader)
    reader.finish()
    return payloads


# --- framing ------------------------------------------------------------------------------


def test_frame_golden_small_packet() -> None:
    assert frame(b"\x01\x02\x03", 5) == (bytes.fromhex("03000005 010203"), 6)


def test_frame_empty_payload_wraps_the_sequence() -> None:
    assert frame(b"", 255) == (bytes.fromhex("000000ff"), 0)


@pytest.mark.parametrize("seq", [-1, 256])
def test_frame_rejects_sequence_out_of_range(seq: int) -> None:
    with pytest.raises(EncodeError):
        frame(b"x", seq)
    with pytest.raises(EncodeError):
        frame_parts([b"x"], seq)


@given(st.binary(max_size=3000), sequence_numbers, st.data())
def test_small_payload_round_trip_in_random_chunks(
    payload: bytes, seq: int, data: st.DataObject
) -> None:
    wire, next_seq = frame(payload, seq)
    assert packet_headers(wire) == [(len(payload), seq)]
    assert next_seq == (seq + 1) % 256
    cuts = data.draw(cut_points(len(wire)))
    chunk_sizes = [len(chunk) for chunk in split_at(wire, cuts)]
    assert reassemble(wire, chunk_sizes, seq) == [payload]


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=8), sequence_numbers, st.data())
def test_consecutive_payloads_continue_the_sequence(
    payloads: list[bytes], seq: int, data: st.DataObject
) -> None:
    wire = bytearray()
    next_seq = seq
    for payload in payloads:
        framed, next_seq = frame(payload, next_seq)
        wire += framed
    assert next_seq == (seq + len(payloads)) % 256
    cuts = data.draw(cut_points(len(wire)))
    assert reassemble(bytes(wire), [len(c) for c in split_at(bytes(wire), cuts)], seq) == payloads


@given(st.lists(st.binary(max_size=50), max_size=5), sequence_numbers)
def test_frame_parts_equals_frame_of_the_concatenation(parts: list[bytes], seq: int) -> None:
    buffers, next_seq = frame_parts(parts, seq)
    assert (b"".join(buffers), next_seq) == frame(b"".join(parts), seq)


@pytest.mark.parametrize("size", BOUNDARY_PAYLOAD_SIZES)
def test_huge_payload_split_and_reassembled(size: int) -> None:
    payload = random.Random(size).randbytes(size)
    seq = 254  # the chunks' sequence numbers wrap through 255 -> 0
    wire, next_seq = frame(payload, seq)
    full_chunks, tail = divmod(size, MAX_PACKET_PAYLOAD)
    expected = [(MAX_PACKET_PAYLOAD, (seq + i) % 256) for i in range(full_chunks)]
    expected.append((tail, (seq + full_chunks) % 256))  # empty when size is a multiple
    assert packet_headers(wire) == expected
    assert next_seq == (seq + full_chunks + 1) % 256
    # frame_parts over a prefix and a body (how an event packet is sent) gives the same bytes.
    buffers, parts_next_seq = frame_parts([payload[:3], memoryview(payload)[3:]], seq)
    assert parts_next_seq == next_seq
    assert b"".join(buffers) == wire
    del buffers
    # Uneven feeds, so that headers and chunk ends fall inside feeds.
    chunk_sizes = [1, 3, 2, 1 << 20, 7] + [(1 << 22) + 13] * (len(wire) >> 22)
    assert reassemble(wire, chunk_sizes, seq) == [payload]


def test_buffer_compacted_while_a_split_payload_is_half_read() -> None:
    first = random.Random(1).randbytes(MAX_PACKET_PAYLOAD + 100)
    second = random.Random(2).randbytes(MAX_PACKET_PAYLOAD + 200)
    wire_first, seq = frame(first, 0)
    wire_second, _ = frame(second, seq)
    reader = PacketReader(expected_seq=0)
    # The first payload and the whole first chunk of the second arrive together...
    split = len(wire_first) + 4 + MAX_PACKET_PAYLOAD + 50
    reader.feed(wire_first + wire_second[: split - len(wire_first)])
    assert reader.next_payload() == first
    assert reader.next_payload() is None
    assert reader.offset == len(wire_first)
    # ...so the next feed drops the consumed first payload from the front of the buffer.
    reader.feed(wire_second[split - len(wire_first) :])
    assert reader.next_payload() == second
    assert reader.buffered == 0
    assert reader.offset == len(wire_first) + len(wire_second)


def test_reader_without_expected_sequence_takes_the_first_one() -> None:
    wire = frame(b"a", 17)[0] + frame(b"b", 18)[0]
    assert reassemble(wire, [len(wire)], None) == [b"a", b"b"]


def test_sequence_gap_raises_at_the_sequence_byte() -> None:
    first = frame(b"first", 1)[0]
    wire = first + frame(b"second", 3)[0]
    reader = PacketReader(expected_seq=1)
    reader.feed(wire)
    assert reader.next_payload() == b"first"
    with pytest.raises(DecodeError) as info:
        reader.next_payload()
    assert info.value.offset == len(first) + 3


def test_sequence_gap_inside_a_split_payload() -> None:
    payload = bytes(MAX_PACKET_PAYLOAD + 10)
    wire = bytearray(frame(payload, 0)[0])
    second_header = 4 + MAX_PACKET_PAYLOAD
    wire[second_header + 3] = 5  # should be 1
    reader = PacketReader(expected_seq=0)
    reader.feed(wire)
    with pytest.raises(DecodeError) as info:
        reader.next_payload()
    assert info.value.offset == second_header + 3


def test_first_packet_with_wrong_sequence() -> None:
    reader = PacketReader(expected_seq=1)
    reader.feed(frame(b"x", 0)[0])
    with pytest.raises(DecodeError) as info:
        reader.next_payload()
    assert info.value.offset == 3


def test_sequence_check_can_be_disabled_and_reset() -> None:
    wire = frame(b"a", 1)[0] + frame(b"b", 9)[0]
    reader = PacketReader(expected_seq=1, check_sequence=False)
    reader.feed(wire)
    assert list(reader) == [b"a", b"b"]
    reader = PacketReader(expected_seq=1)
    reader.feed(wire)
    assert reader.next_payload() == b"a"
    reader.expect_sequence(9)
    assert reader.next_payload() == b"b"
    assert reader.next_sequence == 10


@given(st.binary(min_size=1, max_size=200), st.data())
def test_truncated_stream_is_reported_at_the_packet_start(
    payload: bytes, data: st.DataObject
) -> None:
    first = frame(b"complete", 0)[0]
    second = frame(payload, 1)[0]
    cut = data.draw(st.integers(1, len(second) - 1))
    reader = PacketReader(expected_seq=0)
    reader.feed(first + second[:cut])
    assert list(reader) == [b"complete"]
    assert reader.buffered == cut
    with pytest.raises(DecodeError) as info:
        reader.finish()
    assert info.value.offset == len(first)


def test_max_payload_guard() -> None:
    reader = PacketReader(max_payload=10)
    reader.feed(frame(bytes(10), 0)[0])
    assert reader.next_payload() == bytes(10)
    reader.feed(frame(bytes(11), 1)[0][:4])  # the header alone is enough to refuse it
    with pytest.raises(DecodeError):
        reader.next_payload()


@given(st.binary(max_size=300), st.integers(0, 4))
def test_reader_on_garbage_raises_only_decode_error(garbage: bytes, expected: int) -> None:
    reader = PacketReader(expected_seq=expected, max_payload=1 << 20)
    try:
        reader.feed(garbage)
        list(reader)
        reader.finish()
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(garbage)


# --- OK / ERR / EOF -----------------------------------------------------------------------

# ERR 1236 as the dump thread sends it (binlog-codec-facts.md §5.3).
ERR_1236 = (
    bytes.fromhex("ff d404 23 4859303030")
    + b"Could not find first log file name in binary log index file"
)


def test_err_golden() -> None:
    packet = parse_err(ERR_1236)
    assert packet == ErrPacket(
        errno=1236,
        sqlstate="HY000",
        message="Could not find first log file name in binary log index file",
    )
    assert encode_err(packet) == ERR_1236


def test_eof_golden() -> None:
    # NON_BLOCK dump end: no warnings, SERVER_STATUS_AUTOCOMMIT (§5.3).
    assert parse_eof(bytes.fromhex("fe 0000 0200")) == EofPacket(warnings=0, status_flags=2)
    assert encode_eof(EofPacket()) == bytes.fromhex("fe 0000 0200")


def test_ok_golden() -> None:
    wire = bytes.fromhex("00 fc0001 05 0200 0100") + b"info"
    packet = OkPacket(affected_rows=256, last_insert_id=5, status_flags=2, warnings=1, info=b"info")
    assert parse_ok(wire) == packet
    assert encode_ok(packet) == wire
    assert encode_ok(OkPacket()) == bytes.fromhex("00 00 00 0200 0000")


@given(ok_packets())
def test_ok_round_trip(packet: OkPacket) -> None:
    payload = encode_ok(packet)
    assert parse_ok(payload) == packet
    assert parse_response(payload) == packet


@given(err_packets())
def test_err_round_trip(packet: ErrPacket) -> None:
    payload = encode_err(packet)
    assert payload[0] == 0xFF
    assert parse_err(payload) == packet
    assert parse_response(payload) == packet


@given(eof_packets())
def test_eof_round_trip(packet: EofPacket) -> None:
    payload = encode_eof(packet)
    assert len(payload) == 5
    assert parse_eof(payload) == packet
    assert parse_response(payload) == packet


def test_err_without_sqlstate() -> None:
    packet = ErrPacket(errno=1045, sqlstate=None, message="Access denied")
    assert encode_err(packet) == bytes.fromhex("ff 1504") + b"Access denied"
    assert parse_err(encode_err(packet)) == packet


@pytest.mark.parametrize(
    "packet",
    [
        ErrPacket(errno=1, sqlstate="HY00"),
        ErrPacket(errno=1, sqlstate="HY0000"),
        ErrPacket(errno=1, sqlstate="HY00\u20ac"),
        ErrPacket(errno=1, sqlstate=None, message="#looks like a state"),
        ErrPacket(errno=0x10000),
    ],
)
def test_unrepresentable_err_packets(packet: ErrPacket) -> None:
    with pytest.raises(EncodeError):
        encode_err(packet)


@pytest.mark.parametrize(
    "packet",
    [
        OkPacket(affected_rows=-1),
        OkPacket(warnings=0x10000),
        OkPacket(header=0x01),
        EofPacket(warnings=-1),
    ],
)
def test_unrepresentable_ok_and_eof(packet: OkPacket | EofPacket) -> None:
    with pytest.raises(EncodeError):
        encode_ok(packet) if isinstance(packet, OkPacket) else encode_eof(packet)


@pytest.mark.parametrize(
    ("payload", "offset"),
    [
        (b"", 0),
        (b"\x00", 1),  # OK without affected rows
        (b"\x00\x00\x00\x02", 3),  # OK with half of the status
        (b"\xfb\x00\x00\x00\x00\x00\x00", 0),  # not a response header
        (b"\xff\x01", 0),  # ERR without a whole errno
        (b"\xff\x01\x00#HY0", 4),  # ERR with a cut SQLSTATE
    ],
)
def test_malformed_responses(payload: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        parse_response(payload)
    assert info.value.offset == offset


def test_eof_must_be_five_bytes() -> None:
    with pytest.raises(DecodeError):
        parse_eof(b"\xfe\x00\x00\x02\x00\x00")
    with pytest.raises(DecodeError):
        parse_eof(b"\x00\x00\x00\x02\x00")


@given(st.binary(max_size=40))
def test_response_parsers_raise_only_decode_error(payload: bytes) -> None:
    for parse in (parse_ok, parse_err, parse_eof, parse_response, parse_semi_sync_ack):
        try:
            parse(payload)
        except DecodeError as exc:
            assert 0 <= exc.offset <= len(payload)


# --- binlog event packets and semi-sync ---------------------------------------------------


def test_binlog_packet_golden() -> None:
    event = b"EVENT"
    assert encode_binlog_packet(event) == b"\x00EVENT"
    assert encode_binlog_packet(event, semi_sync=True) == b"\x00\xef\x00EVENT"
    assert encode_binlog_packet(event, semi_sync=True, ack_requested=True) == b"\x00\xef\x01EVENT"
    view, ack = parse_binlog_packet(b"\x00\xef\x01EVENT", semi_sync=True)
    assert (bytes(view), ack) == (event, True)


@given(st.binary(max_size=200), st.booleans(), st.booleans())
def test_binlog_packet_round_trip(event: bytes, semi_sync: bool, ack: bool) -> None:
    ack = ack and semi_sync
    payload = encode_binlog_packet(event, semi_sync=semi_sync, ack_requested=ack)
    view, ack_requested = parse_binlog_packet(payload, semi_sync)
    assert (bytes(view), ack_requested) == (event, ack)
    prefix, body = binlog_packet_parts(event, semi_sync=semi_sync, ack_requested=ack)
    assert prefix + body == payload


def test_ack_request_needs_semi_sync() -> None:
    with pytest.raises(EncodeError):
        encode_binlog_packet(b"x", ack_requested=True)


def test_semi_sync_flag_is_tested_by_its_low_bit() -> None:
    assert parse_binlog_packet(b"\x00\xef\x03E", semi_sync=True)[1] is True
    assert parse_binlog_packet(b"\x00\xef\x02E", semi_sync=True)[1] is False


@pytest.mark.parametrize(
    ("payload", "semi_sync", "offset"),
    [
        (b"", False, 0),
        (b"\xff\x01\x00", False, 0),
        (b"\x00\xef", True, 1),
        (b"\x00\xee\x00event", True, 1),
    ],
)
def test_malformed_binlog_packets(payload: bytes, semi_sync: bool, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        parse_binlog_packet(payload, semi_sync)
    assert info.value.offset == offset


def test_semi_sync_ack_golden() -> None:
    wire = bytes.fromhex("ef 2c06000000000000") + b"mysql-bin.000034"
    ack = SemiSyncAck(position=1580, file_name="mysql-bin.000034")
    assert encode_semi_sync_ack(ack) == wire
    assert parse_semi_sync_ack(wire) == ack
    # The replica sends it as a new command: sequence number 0.
    assert frame(wire, 0)[0][:4] == bytes((len(wire), 0, 0, 0))


@given(semi_sync_acks())
def test_semi_sync_ack_round_trip(ack: SemiSyncAck) -> None:
    assert parse_semi_sync_ack(encode_semi_sync_ack(ack)) == ack


def test_malformed_semi_sync_ack() -> None:
    with pytest.raises(DecodeError):
        parse_semi_sync_ack(b"\xef\x00\x00")
    with pytest.raises(DecodeError):
        parse_semi_sync_ack(b"\x00" * 12)
    with pytest.raises(EncodeError):
        encode_semi_sync_ack(SemiSyncAck(position=1 << 64, file_name="x"))
