"""StreamDecoder: the same events however the bytes are chunked, for binlog file bytes and for
binlog dump packets; real captures from MariaDB 10.11 as golden input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.packets import PacketReader, parse_binlog_packet
from decoder.stream import StreamDecoder
from encoder.core import encode_event
from encoder.packets import frame
from encoder.stream import StreamEncoder
from fakemaster.vocabulary.constants import MAX_PACKET_PAYLOAD, EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import ChecksumError, DecodeError, EncodeError
from fakemaster.vocabulary.events import Event, HeartbeatEvent, RotateEvent, StopEvent, UnknownEvent
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket, ServerError
from scenarios.strategies.control import control_events
from scenarios.strategies.framing import (
    cut_points,
    eof_packets,
    err_packets,
    event_streams,
    ok_packets,
    split_at,
)

# A semi-sync binlog dump from MariaDB 10.11.19 (dump from the end of mysql-bin.000001, then two
# INSERTs committed while connected, each ACKed by us): fake ROTATE, FDE, then two transactions
# GTID TABLE_MAP WRITE_ROWS XID whose XID packets request an ACK (0xEF 0x01). After each of them
# the sequence number starts again at 1.
REAL_SEMI_SYNC_DUMP = bytes.fromhex(
    "3200000100ef000000000004010000002f00000000000000200021313101000000006d7973716c2d62696e2e"
    "303030303031c154274fff00000200ef00bd74016b0f01000000fc000000000000000000040031302e31312e"
    "31392d4d6172696144422d302b646562313275312d6c6f670000000000000000000000000000000000000000"
    "0000000013380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a"
    "0a0a000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a0a"
    "012340ee6f2d00000300ef002375016ba2010000002a0000004b31310108000500000000000000000000000c"
    "000000000000cb6ec75c2e00000400ef002375016b13010000002b000000ad31310100001200000000000100"
    "0164000174000203fc010402d1a09db22e00000500ef002375016b17010000002b000000d831310100001200"
    "0000000001000203fc0a000000010000007a727e55782200000600ef012375016b10010000001f000000f731"
    "310100001b00000000000000c9c42ab92d00000100ef002475016ba2010000002a0000002132310108000600"
    "000000000000000000000c000000000000a9dcb9062e00000200ef002475016b13010000002b000000833231"
    "01000012000000000001000164000174000203fc01040220629c502e00000300ef002475016b17010000002b"
    "000000ae323101000012000000000001000203fc0b00000001000000779ac53fc82200000400ef012475016b"
    "10010000001f000000cd323101000021000000000000001b3fd9bb"
)
SEMI_SYNC_TYPES = [4, 15, 162, 19, 23, 16, 162, 19, 23, 16]
SEMI_SYNC_ACKS = [False] * 5 + [True] + [False] * 3 + [True]
SEMI_SYNC_SEQUENCES = [1, 2, 3, 4, 5, 6, 1, 2, 3, 4]

# The first 984 bytes of a MariaDB 10.11.19 binlog file still in use (FDE with
# LOG_EVENT_BINLOG_IN_USE_F): magic, FDE, GTID_LIST, BINLOG_CHECKPOINT, CREATE DATABASE,
# CREATE TABLE, an INSERT (GTID ANNOTATE_ROWS TABLE_MAP WRITE_ROWS XID), and the GTID,
# ANNOTATE_ROWS and TABLE_MAP of a second INSERT; the file goes on with a 20 MB WRITE_ROWS.
REAL_BINLOG_PREFIX = bytes.fromhex(
    "fe62696ebd74016b0f01000000fc000000000100000100040031302e31312e31392d4d6172696144422d302b"
    "646562313275312d6c6f670000000000000000000000000000000000000000bd74016b13380d000800120004"
    "040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a0000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000041304000d0808080a0a0a01e0ea8601bd74016ba3010000"
    "001d0000001d01000000000000000000003a64494ebd74016ba1010000002b00000048010000000010000000"
    "6d7973716c2d62696e2e3030303030318a3db301bd74016ba2010000002a0000007201000008000100000000"
    "00000000000000290000000000001b0cd1f3bd74016b020100000051000000c3010000080006000000000000"
    "000100001a0000000000010100002054000000000603737464042d002d002d00640043524541544520444154"
    "4142415345206461c3c5722175016ba2010000002a000000ed01000008000200000000000000000000002900"
    "00000000007098b2332175016b02010000007900000066020000000006000000000000000000002300000000"
    "00010100002054000000000603737464042d002d002d0081060000000000000000435245415445205441424c"
    "4520642e742028696420494e54205052494d415259204b45592c2062204c4f4e47424c4f42290df614722175"
    "016ba2010000002a0000009002000008000300000000000000000000000c000000000000321ce2002175016b"
    "a00100000036000000c60200000000494e5345525420494e544f20642e742056414c5545532028312c202778"
    "2729ba6aba8d2175016b13010000002b000000f1020000000012000000000001000164000174000203fc0104"
    "02efe185782175016b17010000002b0000001c030000000012000000000001000203fc010000000100000078"
    "70ee23d62175016b10010000001f0000003b03000000000700000000000000dea23e8e2175016ba201000000"
    "2a0000006503000008000400000000000000000000000c00000000000053ebf16b2175016ba0010000004800"
    "0000ad0300000000494e5345525420494e544f20642e742056414c5545532028322c20524550454154282779"
    "272c2032303030303030302929a9f1ea312175016b13010000002b000000d803000000001200000000000100"
    "0164000174000203fc0104027b4aefe0"
)
REAL_BINLOG_OFFSETS = [4, 256, 285, 328, 370, 451, 493, 614, 656, 710, 753, 796, 827, 869, 941]
REAL_BINLOG_TYPES = [15, 163, 161, 162, 2, 162, 2, 162, 160, 19, 23, 16, 162, 160, 19]


def feed_in_chunks(decoder: StreamDecoder, chunks: list[bytes]) -> list[tuple[int, Event, bool]]:
    out: list[tuple[int, Event, bool]] = []
    for chunk in chunks:
        decoder.feed(chunk)
        out.extend((item.offset, item.event, item.ack_requested) for item in decoder.decoded())
    return out


def file_bytes(events: list[Event]) -> tuple[bytes, list[int]]:
    """The stream's bytes as a binlog file and each event's offset."""
    encoder = StreamEncoder()
    data = bytearray()
    offsets = []
    for event in events:
        offsets.append(len(data) + (4 if not data else 0))
        data += encoder.event(event)
    return bytes(data), offsets


def packet_offsets(wire: bytes) -> list[int]:
    offsets = []
    pos = 0
    while pos < len(wire):
        offsets.append(pos)
        length = int.from_bytes(wire[pos : pos + 3], "little")
        pos += 4 + length
    return offsets


# --- real captures ------------------------------------------------------------------------


@given(st.data())
def test_real_semi_sync_dump_in_any_chunks(data: st.DataObject) -> None:
    cuts = data.draw(cut_points(len(REAL_SEMI_SYNC_DUMP)))
    decoder = StreamDecoder(network=True, semi_sync=True)
    items = feed_in_chunks(decoder, split_at(REAL_SEMI_SYNC_DUMP, cuts))
    assert [event.type_code for _, event, _ in items] == SEMI_SYNC_TYPES
    assert [ack for _, _, ack in items] == SEMI_SYNC_ACKS
    assert [offset for offset, _, _ in items] == packet_offsets(REAL_SEMI_SYNC_DUMP)
    assert decoder.buffered == 0
    assert not decoder.ended
    decoder.finish()


def test_real_semi_sync_dump_sequence_numbers_and_reencoding() -> None:
    offsets = packet_offsets(REAL_SEMI_SYNC_DUMP)
    assert [REAL_SEMI_SYNC_DUMP[offset + 3] for offset in offsets] == SEMI_SYNC_SEQUENCES
    # The framing layer alone (no event codec) gives back the server's bytes.
    reader = PacketReader(expected_seq=1)
    encoder = StreamEncoder(network=True, semi_sync=True)
    out = bytearray()
    for ack_expected in SEMI_SYNC_ACKS:
        reader.feed(REAL_SEMI_SYNC_DUMP[reader.offset + reader.buffered :])
        payload = reader.next_payload()
        assert payload is not None
        event, ack = parse_binlog_packet(payload, semi_sync=True)
        assert ack == ack_expected
        if ack:
            reader.expect_sequence(1)
        out += encoder.raw_event(event, ack_requested=ack)
    assert bytes(out) == REAL_SEMI_SYNC_DUMP


def test_semi_sync_stream_read_as_plain_fails() -> None:
    decoder = StreamDecoder(network=True, semi_sync=False)
    decoder.feed(REAL_SEMI_SYNC_DUMP)
    with pytest.raises(DecodeError) as info:
        list(decoder)
    assert 4 <= info.value.offset < 4 + 50


def test_semi_sync_stream_without_the_sequence_reset_fails() -> None:
    offsets = packet_offsets(REAL_SEMI_SYNC_DUMP)
    broken = bytearray(REAL_SEMI_SYNC_DUMP)
    broken[offsets[6] + 3] = 7  # continue the count instead of starting again at 1
    decoder = StreamDecoder(network=True, semi_sync=True)
    decoder.feed(broken)
    with pytest.raises(DecodeError) as info:
        list(decoder)
    assert info.value.offset == offsets[6] + 3


@given(st.data())
def test_real_binlog_prefix_in_any_chunks(data: st.DataObject) -> None:
    cuts = data.draw(cut_points(len(REAL_BINLOG_PREFIX)))
    decoder = StreamDecoder()
    items = feed_in_chunks(decoder, split_at(REAL_BINLOG_PREFIX, cuts))
    assert [offset for offset, _, _ in items] == REAL_BINLOG_OFFSETS
    assert [event.type_code for _, event, _ in items] == REAL_BINLOG_TYPES
    # Each event's log_pos is the next one's offset.
    assert [event.log_pos for _, event, _ in items[:-1]] == REAL_BINLOG_OFFSETS[1:]
    assert items[0][1].flags & EventFlag.BINLOG_IN_USE
    decoder.finish()


# --- generated streams, file form ---------------------------------------------------------


@given(event_streams(), st.data())
def test_file_stream_same_events_in_any_chunks(events: list[Event], data: st.DataObject) -> None:
    wire, offsets = file_bytes(events)
    cuts = data.draw(cut_points(len(wire)))
    decoder = StreamDecoder()
    items = feed_in_chunks(decoder, split_at(wire, cuts))
    assert [event for _, event, _ in items] == events
    assert [offset for offset, _, _ in items] == offsets
    assert decoder.buffered == 0
    decoder.finish()


def test_file_stream_one_byte_at_a_time() -> None:
    events: list[Event] = [
        RotateEvent(timestamp=0, flags=EventFlag.ARTIFICIAL, position=4, next_file="b.000002"),
        *file_events_sample(),
    ]
    wire, offsets = file_bytes(events)
    boundaries = [*offsets, len(wire)]
    decoder = StreamDecoder()
    seen: list[Event] = []
    for fed in range(1, len(wire) + 1):
        decoder.feed(wire[fed - 1 : fed])
        seen.extend(decoder)
        # Only the part of the event being received is kept.
        consumed = max((b for b in boundaries if b <= fed), default=0)
        assert decoder.buffered == fed - consumed
    assert seen == events
    decoder.finish()


def file_events_sample() -> list[Event]:
    return [
        StopEvent(timestamp=1, server_id=2, log_pos=3),
        HeartbeatEvent(file_name="mysql-bin.000007"),
        UnknownEvent(code=200, flags=EventFlag.IGNORABLE, body=bytes(range(256)) * 40),
        HeartbeatEvent(log_pos=0, position=1 << 33, file_name="mysql-bin.000007"),
    ]


def test_large_event_fed_one_byte_at_a_time_buffers_only_itself() -> None:
    body = bytes(range(256)) * 800  # 200 KiB
    event = UnknownEvent(code=201, flags=EventFlag.IGNORABLE, body=body)
    wire, _ = file_bytes([event])
    decoder = StreamDecoder()
    for index in range(len(wire) - 1):
        decoder.feed(wire[index : index + 1])
        assert decoder.next_decoded() is None
    assert decoder.buffered == len(wire) - 1 - 4
    decoder.feed(wire[-1:])
    assert list(decoder) == [event]
    assert decoder.buffered == 0


@given(event_streams(), st.data())
def test_truncated_file_stream_names_the_event_offset(
    events: list[Event], data: st.DataObject
) -> None:
    wire, offsets = file_bytes(events)
    cut = data.draw(st.integers(0, len(wire) - 1))
    decoder = StreamDecoder()
    decoder.feed(wire[:cut])
    complete = list(decoder)
    assert complete == events[: len(complete)]
    if cut in offsets:  # an event boundary: nothing is missing
        decoder.finish()
        return
    with pytest.raises(DecodeError) as info:
        decoder.finish()
    assert info.value.offset == max([0, *(offset for offset in offsets if offset <= cut)])


def test_bad_magic_is_seen_from_the_first_byte() -> None:
    decoder = StreamDecoder()
    decoder.feed(b"\xfe")
    assert list(decoder) == []
    decoder.feed(b"x")
    with pytest.raises(DecodeError) as info:
        list(decoder)
    assert info.value.offset == 0


def test_event_length_below_the_header_size() -> None:
    wire, offsets = file_bytes(file_events_sample())
    broken = bytearray(wire)
    broken[offsets[1] + 9 : offsets[1] + 13] = (18).to_bytes(4, "little")
    decoder = StreamDecoder()
    decoder.feed(broken)
    with pytest.raises(DecodeError) as info:
        list(decoder)
    assert info.value.offset == offsets[1] + 9


def test_checksum_error_carries_the_file_offset() -> None:
    wire, offsets = file_bytes(file_events_sample())
    broken = bytearray(wire)
    crc_at = offsets[2] - 4  # last 4 bytes of the event before offsets[2]
    broken[crc_at] ^= 0xFF
    decoder = StreamDecoder()
    decoder.feed(broken)
    with pytest.raises(ChecksumError) as info:
        list(decoder)
    assert info.value.offset == crc_at


def test_decoding_from_inside_a_file() -> None:
    events = file_events_sample()
    wire, offsets = file_bytes(events)
    decoder = StreamDecoder(expect_magic=False, offset=offsets[1])
    decoder.feed(wire[offsets[1] :])
    assert [(item.offset, item.event) for item in decoder.decoded()] == list(
        zip(offsets[1:], events[1:], strict=True)
    )


@given(st.binary(max_size=400))
def test_file_garbage_raises_only_decode_error(garbage: bytes) -> None:
    decoder = StreamDecoder()
    try:
        decoder.feed(b"\xfebin" + garbage)
        list(decoder)
        decoder.finish()
    except DecodeError as exc:
        assert 0 <= exc.offset <= 4 + len(garbage)


# --- generated streams, network form ------------------------------------------------------


@st.composite
def dumps(draw: st.DrawFn) -> tuple[list[Event], list[bool], bool, object]:
    events = draw(event_streams())
    semi_sync = draw(st.booleans())
    acks = [semi_sync and draw(st.booleans()) for _ in events]
    end = draw(st.one_of(st.none(), eof_packets(), ok_packets().map(_as_end_ok), err_packets()))
    return events, acks, semi_sync, end


def _as_end_ok(packet: OkPacket) -> OkPacket:
    # The OK that replaces an EOF has the 0xFE header and is never 5 bytes long (that is an EOF).
    return OkPacket(
        affected_rows=packet.affected_rows,
        last_insert_id=packet.last_insert_id,
        status_flags=packet.status_flags,
        warnings=packet.warnings,
        info=packet.info or b"i",
        header=0xFE,
    )


def network_bytes(events: list[Event], acks: list[bool], semi_sync: bool, end: object) -> bytes:
    encoder = StreamEncoder(network=True, semi_sync=semi_sync)
    wire = b"".join(encoder.event(e, ack_requested=a) for e, a in zip(events, acks, strict=True))
    if isinstance(end, ErrPacket):
        wire += encoder.error(end)
    elif isinstance(end, EofPacket | OkPacket):
        wire += encoder.end(end)
    return wire


@given(dumps(), st.data())
def test_network_stream_same_events_in_any_chunks(
    dump: tuple[list[Event], list[bool], bool, object], data: st.DataObject
) -> None:
    events, acks, semi_sync, end = dump
    wire = network_bytes(events, acks, semi_sync, end)
    cuts = data.draw(cut_points(len(wire)))
    decoder = StreamDecoder(network=True, semi_sync=semi_sync)
    items: list[tuple[int, Event, bool]] = []
    error: ServerError | None = None
    for chunk in split_at(wire, cuts):
        decoder.feed(chunk)
        try:
            items.extend((i.offset, i.event, i.ack_requested) for i in decoder.decoded())
        except ServerError as exc:
            assert error is None
            error = exc
    assert [event for _, event, _ in items] == events
    assert [ack for _, _, ack in items] == acks
    assert [offset for offset, _, _ in items] == packet_offsets(wire)[: len(events)]
    if isinstance(end, ErrPacket):
        assert error is not None and error.packet == end
    else:
        assert error is None
    assert decoder.end_packet == end
    assert decoder.ended == (end is not None)
    decoder.finish()


@pytest.mark.parametrize("semi_sync", [False, True])
@pytest.mark.parametrize(
    "payload_size",
    [MAX_PACKET_PAYLOAD - 1, MAX_PACKET_PAYLOAD, MAX_PACKET_PAYLOAD + 1, 2 * MAX_PACKET_PAYLOAD],
)
def test_network_event_split_over_packets(semi_sync: bool, payload_size: int) -> None:
    prefix = 3 if semi_sync else 1
    body_size = payload_size - prefix - 19 - 4
    big = UnknownEvent(code=202, flags=EventFlag.IGNORABLE, body=bytes(body_size))
    after = HeartbeatEvent(file_name="mysql-bin.000001")
    encoder = StreamEncoder(network=True, semi_sync=semi_sync, first_sequence=250)
    wire = encoder.event(big, ack_requested=semi_sync) + encoder.event(after)
    wire += encoder.end()
    chunks = (MAX_PACKET_PAYLOAD // 2) - 5 + 4 * 1000
    expected_packets = payload_size // MAX_PACKET_PAYLOAD + 1
    assert len(packet_offsets(wire)) == expected_packets + 2
    decoder = StreamDecoder(network=True, semi_sync=semi_sync, first_sequence=250)
    items = feed_in_chunks(decoder, [wire[i : i + chunks] for i in range(0, len(wire), chunks)])
    assert [event for _, event, _ in items] == [big, after]
    assert [ack for _, _, ack in items] == [semi_sync, False]
    assert decoder.end_packet == EofPacket()


def test_network_stream_truncated_mid_packet() -> None:
    encoder = StreamEncoder(network=True)
    first = encoder.event(HeartbeatEvent(file_name="f.000001"))
    second = encoder.event(StopEvent())
    decoder = StreamDecoder(network=True)
    decoder.feed(first + second[:-1])
    assert len(list(decoder)) == 1
    with pytest.raises(DecodeError) as info:
        decoder.finish()
    assert info.value.offset == len(first)


def test_network_stream_bad_event_bytes_offset() -> None:
    encoder = StreamEncoder(network=True)
    first = encoder.event(HeartbeatEvent(file_name="f.000001"))
    second = bytearray(encoder.event(StopEvent()))
    second[-1] ^= 1  # the CRC
    decoder = StreamDecoder(network=True)
    decoder.feed(first + bytes(second))
    with pytest.raises(ChecksumError) as info:
        list(decoder)
    assert info.value.offset == len(first) + len(second) - 4


def test_network_bad_packet_header_byte() -> None:
    decoder = StreamDecoder(network=True)
    decoder.feed(frame(b"\x05abc", 1)[0])
    with pytest.raises(DecodeError) as info:
        list(decoder)
    assert info.value.offset == 4


def test_nothing_after_the_end_is_decoded() -> None:
    encoder = StreamEncoder(network=True)
    wire = encoder.event(StopEvent()) + encoder.end() + encoder.event(StopEvent())
    decoder = StreamDecoder(network=True)
    decoder.feed(wire)
    assert list(decoder) == [StopEvent()]
    assert decoder.ended
    assert list(decoder) == []
    decoder.finish()


def test_stream_encoder_refuses_what_its_form_cannot_carry() -> None:
    with pytest.raises(EncodeError):
        StreamEncoder().raw_event(b"x", ack_requested=True)
    with pytest.raises(EncodeError):
        StreamEncoder().end()
    with pytest.raises(EncodeError):
        StreamEncoder(network=True).event(StopEvent(), ack_requested=True)


@given(st.binary(max_size=400), st.booleans())
def test_network_garbage_raises_only_typed_errors(garbage: bytes, semi_sync: bool) -> None:
    decoder = StreamDecoder(network=True, semi_sync=semi_sync, first_sequence=None)
    try:
        decoder.feed(garbage)
        list(decoder)
        decoder.finish()
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(garbage)
    except ServerError:
        assert decoder.ended


@given(control_events(), st.booleans())
def test_network_event_bytes_are_the_file_bytes(event: Event, semi_sync: bool) -> None:
    file_form = encode_event(event, BinlogContext())
    packet = StreamEncoder(network=True, semi_sync=semi_sync).event(event)
    assert packet[4 + (3 if semi_sync else 1) :] == file_form
