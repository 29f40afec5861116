"""The compressed protocol's packet layer: ``compress_frame`` / ``CompressedWriter``,
``CompressedPacketReader`` and the client's ``CompressedInflater``.

Golden bytes are what a real MariaDB 10.11 sent to compressed clients
(``tests/golden/compressed_protocol``, made by ``scripts/capture-compressed-protocol.py``); the
property tests check that writing then reading gives back the packets for any packets, any
flush points and any chunking, and that malformed input raises only DecodeError.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.packets import CompressedInflater, CompressedPacketReader, PacketReader
from encoder.packets import CompressedWriter, compress_frame, frame
from fakemaster.vocabulary.constants import (
    COMPRESSED_HEADER_LEN,
    MAX_PACKET_PAYLOAD,
    MIN_COMPRESS_LENGTH,
    NET_BUFFER_LENGTH,
)
from fakemaster.vocabulary.errors import DecodeError, EncodeError
from scenarios.strategies.framing import cut_points, split_at
from tests.support.compressed_wire import (
    compressed_packet,
    inner_stream,
    load_capture,
    result_ends,
    split_compressed,
)

CAPTURE = load_capture()


def answers() -> list[tuple[str, int, bytes]]:
    """(name, client capabilities, bytes) of every answer the real server sent."""
    out = []
    for session in CAPTURE["sessions"]:
        for index, step in enumerate(session["steps"]):
            name = f"{session['name']}[{index}] {step['what'][:40]}"
            out.append((name, session["capabilities"], bytes.fromhex(step["received"])))
    for name, dump in CAPTURE["dumps"].items():
        out.append((f"dump {name}", 0, bytes.fromhex(dump["received"])))
    return out


ANSWERS = answers()
ANSWER_IDS = [name for name, _, _ in ANSWERS]


def step(session: str, index: int) -> bytes:
    found = [s for s in CAPTURE["sessions"] if s["name"] == session][0]
    return bytes.fromhex(found["steps"][index]["received"])


def read_all(wire: bytes, chunks: list[int] | None = None, **options: Any) -> list[bytes]:
    reader = CompressedPacketReader(**options)
    payloads: list[bytes] = []
    for piece in split_at(wire, chunks or []):
        reader.feed(piece)
        payloads.extend(reader)
    reader.finish()
    return payloads


def plain_payloads(packets: bytes) -> list[bytes]:
    reader = PacketReader(check_sequence=False)
    reader.feed(packets)
    out = list(reader)
    reader.finish()
    return out


# --- golden: what a real MariaDB 10.11 sent --------------------------------------------------


@pytest.mark.parametrize(("name", "capabilities", "wire"), ANSWERS, ids=ANSWER_IDS)
def test_each_real_compressed_packet_is_compress_frame_of_its_body(
    name: str, capabilities: int, wire: bytes
) -> None:
    """zlib level 6 (compress()'s default), bodies under 50 bytes or that zlib does not make
    shorter sent as they are, ERR packets never compressed: compress_frame makes exactly the
    packets the server made."""
    for seq, stated, body, plain in split_compressed(wire):
        carries_error = any(payload[:1] == b"\xff" for payload in _first_payloads(plain))
        if stated:
            assert len(plain) == stated >= MIN_COMPRESS_LENGTH
            assert compress_frame(plain, seq) == _packet(seq, body, stated)
        else:
            assert compress_frame(body, seq, compress=False) == _packet(seq, body, 0)
            shrinks = len(zlib.compress(body, 6)) < len(body)
            assert len(body) < MIN_COMPRESS_LENGTH or not shrinks or carries_error
            if not carries_error:
                assert compress_frame(body, seq) == _packet(seq, body, 0)


def _packet(seq: int, body: bytes, stated: int) -> bytes:
    return (len(body) | seq << 24).to_bytes(4, "little") + stated.to_bytes(3, "little") + body


def _first_payloads(plain: bytes) -> list[bytes]:
    """The first bytes of each packet that starts in ``plain`` (it may end elsewhere)."""
    out = []
    pos = 0
    while pos + 4 <= len(plain):
        size = int.from_bytes(plain[pos : pos + 3], "little")
        out.append(plain[pos + 4 : pos + 5])
        pos += 4 + size
    return out


@pytest.mark.parametrize(("name", "capabilities", "wire"), ANSWERS, ids=ANSWER_IDS)
def test_the_reader_takes_the_real_bytes_in_any_chunks(
    name: str, capabilities: int, wire: bytes
) -> None:
    expected = plain_payloads(inner_stream(wire))
    # A semi-sync dump numbers its compressed packets from 1 again after each ACK request.
    check = not name.endswith("semi_sync")
    assert read_all(wire, check_sequence=check) == expected
    one_at_a_time = list(range(1, min(len(wire), 4000)))
    assert read_all(wire, one_at_a_time, check_sequence=check) == expected


def _query_answers() -> list[tuple[str, int, bytes]]:
    """The answers to commands (not the dumps, not the empty ones before a close; not the ERR
    to a command's first packet out of order, whose inner number is the 0 of a new command
    where the compressed one goes on)."""
    return [
        (name, capabilities, wire)
        for name, capabilities, wire in ANSWERS
        if wire and not name.startswith(("dump", "out_of_order["))
    ]


@pytest.mark.parametrize(
    ("name", "capabilities", "wire"),
    _query_answers(),
    ids=[name for name, _, _ in _query_answers()],
)
def test_the_writer_cuts_a_response_as_the_server_does(
    name: str, capabilities: int, wire: bytes
) -> None:
    """The server's inner packets, written with a flush after each result (what MariaDB does),
    make the same compressed packets with the same sequence numbers, inner ones included."""
    packets = split_compressed(wire)
    # A first packet larger than net_buffer_length is a full buffer that had grown (after the
    # long query of the session): the server's buffer size at the time.
    buffer_size = max(NET_BUFFER_LENGTH, len(packets[0][3]))
    writer = CompressedWriter(sequence=packets[0][0], buffer_size=buffer_size)
    stream = inner_stream(wire)
    start = 0
    for end in result_ends(stream, capabilities):
        writer.write_packets(stream[start:end])
        writer.flush()
        start = end
    assert start == len(stream)
    assert writer.take() == wire


def test_threshold_facts_of_the_real_server() -> None:
    """49 bytes that zlib would shrink go as they are, 50 are compressed, 51 that zlib does
    not shrink go as they are (DEPRECATE_EOF answers to SELECT 0, SELECT 00, SELECT "aa")."""
    sizes = []
    for index in range(3):
        ((_, stated, body, plain),) = split_compressed(step("threshold", index))
        sizes.append((len(plain), stated, len(zlib.compress(plain))))
    assert sizes[0][:2] == (49, 0) and sizes[0][2] < 49
    assert sizes[1][:2] == (50, 50)
    assert sizes[2][:2] == (51, 0) and sizes[2][2] == 51


def test_errors_go_uncompressed_even_when_zlib_shrinks_them() -> None:
    ((_, stated, body, _),) = split_compressed(step("basic", 3))
    assert body[4:5] == b"\xff" and stated == 0
    assert len(zlib.compress(body)) < len(body) - 40


def test_a_payload_over_16_mib_crosses_compressed_packets_like_the_server_does() -> None:
    """SELECT REPEAT('x', 17000000): buffer-sized packets, a 0xFFFFFF-byte inner packet sent
    straight away in the rest of its own, then the remainder."""
    wire = step("large_results", 2)
    sizes = [(seq, len(plain)) for seq, _, _, plain in split_compressed(wire)]
    assert [seq for seq, _ in sizes] == [1, 2, 3, 4, 5]
    assert sizes[0][1] == sizes[2][1] == NET_BUFFER_LENGTH
    assert all(size < MAX_PACKET_PAYLOAD for _, size in sizes)
    payloads = read_all(wire)
    assert len(payloads[3]) == 9 + 17_000_000  # the row: 9-byte length + value


# --- compress_frame -------------------------------------------------------------------------


def test_compress_frame_layout() -> None:
    body = b"a" * 100
    packed = zlib.compress(body, 6)
    assert compress_frame(body, 7) == (
        len(packed).to_bytes(3, "little") + b"\x07" + (100).to_bytes(3, "little") + packed
    )
    assert compress_frame(b"abc", 255) == bytes.fromhex("030000ff000000") + b"abc"
    assert compress_frame(b"", 0) == bytes(COMPRESSED_HEADER_LEN)


@pytest.mark.parametrize("seq", [-1, 256])
def test_compress_frame_refuses_bad_sequence_numbers(seq: int) -> None:
    with pytest.raises(EncodeError):
        compress_frame(b"x", seq)


def test_compress_frame_refuses_bodies_over_16_mib() -> None:
    with pytest.raises(EncodeError):
        compress_frame(bytes(MAX_PACKET_PAYLOAD + 1), 0)


# --- the writer -----------------------------------------------------------------------------


def test_writer_numbers_packets_and_syncs_on_flush() -> None:
    writer = CompressedWriter(sequence=5)
    writer.write_payload(b"one")
    writer.write_packets(frame(b"two", 200)[0])
    writer.flush()
    assert writer.sequence == 6 and writer.packet_number == 6
    ((seq, stated, body, _),) = split_compressed(writer.take())
    assert (seq, stated) == (5, 0)
    assert body == frame(b"one", 5)[0] + frame(b"two", 6)[0]
    writer.flush()  # nothing buffered: nothing sent, numbers stay
    assert writer.take() == b"" and writer.sequence == 6


def test_writer_fills_the_buffer_then_sends_the_rest_of_a_large_write_at_once() -> None:
    writer = CompressedWriter(buffer_size=100)
    writer.write_payload(b"x" * 10)
    writer.write_payload(bytes(1000))
    # 14 + 4 bytes buffered, 82 more fill it, the other 918 go at once.
    assert [len(plain) for *_, plain in split_compressed(writer.take())] == [100, 918]
    assert writer.buffered == 0


def test_writer_sends_an_err_at_once_uncompressed_with_what_it_held() -> None:
    writer = CompressedWriter(sequence=1)
    writer.write_payload(b"y" * 60)
    error = b"\xff\x15\x04#42000" + b"x" * 100
    writer.write_payload(error)
    ((seq, stated, body, _),) = split_compressed(writer.take())
    assert (seq, stated) == (1, 0)
    assert body == frame(b"y" * 60, 1)[0] + frame(error, 2)[0]
    assert writer.sequence == writer.packet_number == 2


def test_writer_takes_framed_packets_in_any_pieces() -> None:
    payloads = [b"", b"a" * 70, bytes(5000), b"\x00" * 3]
    framed = b"".join(frame(payload, 9)[0] for payload in payloads)
    whole = CompressedWriter()
    whole.write_packets(framed)
    whole.flush()
    pieces = CompressedWriter()
    for index in range(len(framed)):
        pieces.write_packets(framed[index : index + 1])
    assert pieces.between_packets
    pieces.flush()
    assert pieces.take() == whole.take()


# --- properties ------------------------------------------------------------------------------

# Payload sizes where the framing changes: empty, tiny, around the compression threshold, the
# write buffer, and 16 MiB.
_SIZES = st.one_of(
    st.integers(0, 8),
    st.integers(MIN_COMPRESS_LENGTH - 8, MIN_COMPRESS_LENGTH + 8),
    st.integers(0, 3 * NET_BUFFER_LENGTH),
    st.sampled_from([NET_BUFFER_LENGTH - 4, NET_BUFFER_LENGTH, NET_BUFFER_LENGTH + 1]),
)


@st.composite
def payload_lists(draw: st.DrawFn) -> list[bytes]:
    """Payloads, each of random bytes, one repeated byte (compressible) or a mix; rarely one
    over 16 MiB (compressible, so that the wire stays small)."""
    payloads = []
    for _ in range(draw(st.integers(0, 8))):
        size = draw(_SIZES)
        seed = draw(st.integers(0, 1 << 32))
        kind = draw(st.sampled_from(["random", "repeated", "mixed"]))
        rng = random.Random(seed)
        if kind == "random":
            payloads.append(rng.randbytes(size))
        elif kind == "repeated":
            payloads.append(bytes([seed & 0xFF]) * size)
        else:
            payloads.append(bytes(rng.choice(b"ab\x00\xff") for _ in range(size)))
    if draw(st.integers(0, 19)) == 0:
        size = draw(
            st.sampled_from([MAX_PACKET_PAYLOAD - 1, MAX_PACKET_PAYLOAD, MAX_PACKET_PAYLOAD + 7])
        )
        payloads.insert(draw(st.integers(0, len(payloads))), b"\x07" * size)
    return payloads


@given(
    payloads=payload_lists(),
    data=st.data(),
    sequence=st.integers(0, 255),
    buffer_size=st.sampled_from([1, 50, 1000, NET_BUFFER_LENGTH]),
)
def test_write_then_read_gives_the_packets_back(
    payloads: list[bytes], data: st.DataObject, sequence: int, buffer_size: int
) -> None:
    writer = CompressedWriter(sequence=sequence, buffer_size=buffer_size)
    for payload in payloads:
        if data.draw(st.booleans()):
            writer.write_payload(payload)
        else:
            writer.write_packets(frame(payload, 0)[0])
        if data.draw(st.booleans()):
            writer.flush()
    writer.flush()
    wire = writer.take()
    total = len(wire)
    if total <= 20_000 and data.draw(st.integers(0, 4)) == 0:
        cuts = list(range(1, total))  # one byte at a time
    else:
        cuts = data.draw(cut_points(total))
    assert read_all(wire, cuts, expected_seq=sequence) == payloads


@given(payloads=st.lists(st.binary(max_size=200), max_size=6), data=st.data())
def test_any_cut_into_compressed_packets_reads_back(
    payloads: list[bytes], data: st.DataObject
) -> None:
    """Packets cut anywhere into compressed packets (empty ones too), compressed or not, read
    back the same."""
    stream = b"".join(frame(payload, 0)[0] for payload in payloads)
    pieces = split_at(stream, data.draw(cut_points(len(stream))))
    for _ in range(data.draw(st.integers(0, 3))):
        pieces.insert(data.draw(st.integers(0, len(pieces))), b"")
    wire = b"".join(
        compress_frame(piece, seq & 0xFF, compress=data.draw(st.booleans()))
        for seq, piece in enumerate(pieces)
    )
    assert read_all(wire, data.draw(cut_points(len(wire))), expected_seq=0) == payloads


@given(garbage=st.binary(max_size=400), data=st.data())
def test_any_bytes_raise_only_decode_error(garbage: bytes, data: st.DataObject) -> None:
    reader = CompressedPacketReader(
        expected_seq=data.draw(st.one_of(st.none(), st.integers(0, 255))),
        max_payload=data.draw(st.one_of(st.none(), st.integers(1, 1 << 20))),
        exact_length=data.draw(st.booleans()),
    )
    try:
        for piece in split_at(garbage, data.draw(cut_points(len(garbage)))):
            reader.feed(piece)
            list(reader)
        reader.finish()
    except DecodeError as error:
        assert 0 <= error.offset <= len(garbage)


@given(data=st.data())
def test_damaged_streams_raise_only_decode_error(data: st.DataObject) -> None:
    payloads = data.draw(st.lists(st.binary(max_size=150), min_size=1, max_size=5))
    writer = CompressedWriter(buffer_size=data.draw(st.sampled_from([60, 200, 16384])))
    for payload in payloads:
        writer.write_payload(payload * 3)
    writer.flush()
    wire = bytearray(writer.take())
    for _ in range(data.draw(st.integers(1, 4))):
        wire[data.draw(st.integers(0, len(wire) - 1))] ^= data.draw(st.integers(1, 255))
    end = data.draw(st.integers(0, len(wire)))
    try:
        read_all(bytes(wire[:end]), expected_seq=0)
    except DecodeError as error:
        assert 0 <= error.offset <= end


# --- malformed input ------------------------------------------------------------------------

_SELECT_1 = frame(b"\x03SELECT 1", 0)[0]


def test_bad_zlib_names_the_packet() -> None:
    # After the zlib header, a block of type 3, which does not exist.
    wire = compressed_packet(_SELECT_1, 0) + b"\x08\x00\x00\x01\x20\x00\x00\x78\x9c\xffjunk\0"
    with pytest.raises(DecodeError, match="does not inflate") as caught:
        read_all(wire)
    assert caught.value.offset == len(_SELECT_1) + COMPRESSED_HEADER_LEN


def _deflated(body: bytes, seq: int, stated: int) -> bytes:
    packed = zlib.compress(body)
    return (len(packed) | seq << 24).to_bytes(4, "little") + stated.to_bytes(3, "little") + packed


@pytest.mark.parametrize("delta", [-1, -12, 1, 100])
def test_a_wrong_inflated_length_is_an_error(delta: int) -> None:
    wire = _deflated(_SELECT_1, 0, len(_SELECT_1) + delta)
    with pytest.raises(DecodeError, match="inflates to") as caught:
        read_all(wire)
    assert caught.value.offset == 0


def test_lenient_reading_accepts_what_mariadb_accepts() -> None:
    """my_uncompress takes a body that inflates to fewer bytes than stated, and bytes after the
    zlib stream; fewer stated bytes than the body inflates to stay an error."""
    longer = _deflated(_SELECT_1, 0, len(_SELECT_1) + 10)
    assert read_all(longer, exact_length=False) == [b"\x03SELECT 1"]
    trailing = bytearray(_deflated(_SELECT_1, 0, len(_SELECT_1)) + b"!!")
    trailing[0] += 2
    assert read_all(bytes(trailing), exact_length=False) == [b"\x03SELECT 1"]
    with pytest.raises(DecodeError, match="after the zlib stream"):
        read_all(bytes(trailing))
    with pytest.raises(DecodeError, match="more than its stated"):
        read_all(_deflated(_SELECT_1, 0, len(_SELECT_1) - 1), exact_length=False)


def test_a_truncated_zlib_stream_is_an_error() -> None:
    packed = zlib.compress(_SELECT_1 * 10)[:-3]
    wire = (len(packed)).to_bytes(3, "little") + b"\x00" + (130).to_bytes(3, "little") + packed
    with pytest.raises(DecodeError, match="inside its zlib stream"):
        read_all(wire)


def test_a_wrong_compressed_sequence_number_names_its_byte() -> None:
    wire = compressed_packet(_SELECT_1[:5], 0) + compressed_packet(_SELECT_1[5:], 2)
    with pytest.raises(DecodeError, match="packet sequence number 2, expected 1") as caught:
        read_all(wire, expected_seq=0)
    assert caught.value.offset == COMPRESSED_HEADER_LEN + 5 + 3
    assert read_all(wire, expected_seq=0, check_sequence=False) == [b"\x03SELECT 1"]


@pytest.mark.parametrize("keep", range(1, COMPRESSED_HEADER_LEN))
def test_a_truncated_header_is_an_error_at_the_end(keep: int) -> None:
    wire = compressed_packet(_SELECT_1, 0) + compressed_packet(_SELECT_1, 1)[:keep]
    reader = CompressedPacketReader()
    reader.feed(wire)
    assert list(reader) == [b"\x03SELECT 1"]
    with pytest.raises(DecodeError, match="truncated compressed packet header") as caught:
        reader.finish()
    assert caught.value.offset == len(_SELECT_1) + COMPRESSED_HEADER_LEN


def test_a_packet_cut_inside_the_compressed_packets_is_an_error_at_the_end() -> None:
    wire = compressed_packet(_SELECT_1[:6], 0)
    with pytest.raises(DecodeError, match="incomplete packet in the compressed") as caught:
        read_all(wire)
    assert caught.value.offset == 0


def test_a_compressed_packet_over_max_payload_is_refused_at_its_header() -> None:
    """Like MariaDB's packet buffer: the larger of the two lengths plus the bytes still waiting
    for the rest of their packet may not reach max_allowed_packet."""
    reader = CompressedPacketReader(expected_seq=0, max_payload=1000)
    big = frame(b"\x03" + b"x" * 1200, 0)[0]
    reader.feed(compressed_packet(big[:600], 0))
    assert reader.next_payload() is None
    reader.feed(compressed_packet(big[600:], 1)[:COMPRESSED_HEADER_LEN])
    with pytest.raises(DecodeError, match="exceeds 1000 bytes") as caught:
        reader.next_payload()
    assert caught.value.offset == 600 + COMPRESSED_HEADER_LEN
    assert reader.last_sequence == 1  # counted before it was refused, as MariaDB does


@pytest.mark.parametrize("bad", ["text", 7, None, [b"x"]])
def test_the_compressed_framing_refuses_what_is_not_bytes(bad: object) -> None:
    """Framing takes bytes only: anything else is an EncodeError at the call, naming the
    argument, never a TypeError from deep inside zlib or memoryview."""
    writer = CompressedWriter()
    for call in (
        lambda: compress_frame(bad, 0),  # type: ignore[arg-type]
        lambda: writer.write_payload(bad),  # type: ignore[arg-type]
        lambda: writer.write_packets(bad),  # type: ignore[arg-type]
    ):
        with pytest.raises(EncodeError, match="must be bytes"):
            call()
    with pytest.raises(EncodeError, match="sequence number"):
        compress_frame(b"x", "0")  # type: ignore[arg-type]


# --- the client's inflater ------------------------------------------------------------------


def inflate_all(wire: bytes, chunks: list[int] | None = None, **options: Any) -> bytes:
    inflater = CompressedInflater(**options)
    inner = b"".join(inflater.feed(piece) for piece in split_at(wire, chunks or []))
    inflater.finish()
    return inner


@pytest.mark.parametrize(("name", "capabilities", "wire"), ANSWERS, ids=ANSWER_IDS)
def test_the_inflater_gives_the_real_inner_bytes_in_any_chunks(
    name: str, capabilities: int, wire: bytes
) -> None:
    expected = inner_stream(wire)
    # Numbered on from the first packet's, except in a semi-sync dump (restarts at 1).
    first = split_compressed(wire)[0][0] if wire and not name.endswith("semi_sync") else None
    assert inflate_all(wire, expected_seq=first) == expected
    one_at_a_time = list(range(1, min(len(wire), 2000)))
    assert inflate_all(wire, one_at_a_time, expected_seq=first) == expected


@given(garbage=st.binary(max_size=400), data=st.data())
def test_the_inflater_raises_only_decode_error_and_holds_one_packet(
    garbage: bytes, data: st.DataObject
) -> None:
    inflater = CompressedInflater(
        expected_seq=data.draw(st.one_of(st.none(), st.integers(0, 255))),
        exact_length=data.draw(st.booleans()),
    )
    try:
        for piece in split_at(garbage, data.draw(cut_points(len(garbage)))):
            inflater.feed(piece)
            assert inflater.buffered <= len(garbage)
        inflater.finish()
    except DecodeError as error:
        assert 0 <= error.offset <= len(garbage)


def test_the_inflater_names_the_packet_of_a_lie() -> None:
    good = compressed_packet(_SELECT_1, 0, deflate=False)
    cases = [
        # a bad zlib stream (a block of type 3)
        (b"\x08\x00\x00\x01\x20\x00\x00\x78\x9c\xffjunk\0", "does not inflate", 0),
        # an inflated length that lies (smaller than what the body inflates to)
        (_deflated(b"x" * 500, 1, 100), "more than its stated 100", 0),
        # a compressed length that lies (the body ends inside its zlib stream)
        (_cut(_deflated(b"y" * 500, 1, 500), 3), "ends inside its zlib stream", 0),
        # a sequence number out of order: at its byte
        (_deflated(b"z" * 100, 7, 100), "expected 1", 3),
    ]
    for bad, message, at in cases:
        with pytest.raises(DecodeError, match=message) as caught:
            inflate_all(good + bad, expected_seq=0)
        assert caught.value.offset == len(good) + at


def _cut(packet: bytes, drop: int) -> bytes:
    """``packet`` with its body ``drop`` bytes shorter and its stated length saying so."""
    size = int.from_bytes(packet[:3], "little") - drop
    return size.to_bytes(3, "little") + packet[3 : len(packet) - drop]


def test_a_stated_length_that_is_never_sent_holds_what_came_and_no_more() -> None:
    inflater = CompressedInflater()
    header = (0xFFFFFF).to_bytes(3, "little") + b"\0" + (0xFFFFFF).to_bytes(3, "little")
    assert inflater.feed(header + b"\x78\x9c") == b""
    assert inflater.buffered == COMPRESSED_HEADER_LEN + 2
    with pytest.raises(DecodeError, match="truncated compressed packet body") as caught:
        inflater.finish()
    assert caught.value.offset == 0
