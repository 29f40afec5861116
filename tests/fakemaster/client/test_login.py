"""The login helper against a scripted server (no socket): the compressed protocol switched
on by the OK of the login, the packets both ways laid out by hand here (7-byte header, zlib),
and what a hostile server can send once it is on: typed errors naming the offset, bounded
memory."""

from __future__ import annotations

import struct
import tracemalloc
import zlib

import pytest

from encoder.packets import encode_ok, frame
from fakemaster.client.errors import ProtocolError
from fakemaster.client.login import Login
from fakemaster.protocol.handshake import SERVER_CAPABILITIES, Capability, HandshakeV10
from fakemaster.vocabulary.packets import OkPacket

SCRAMBLE = b"abcdefghij0123456789"
OK = encode_ok(OkPacket())


def compressed(body: bytes, seq: int, *, stated: int | None = None) -> bytes:
    """One compressed packet of ``body`` deflated (its header's inflated length ``stated``)."""
    packed = zlib.compress(body)
    size = len(body) if stated is None else stated
    return struct.pack("<I", len(packed) | seq << 24) + size.to_bytes(3, "little") + packed


def logged_in(*, offered: bool = True) -> Login:
    login = Login("repl", "pw", compress=True)
    caps = SERVER_CAPABILITIES if offered else SERVER_CAPABILITIES & ~Capability.COMPRESS
    login.feed(
        frame(HandshakeV10("10.11.19-MariaDB", 9, SCRAMBLE, capabilities=caps).encode(), 0)[0]
    )
    assert login.next_payload() is None
    response = login.data_to_send()
    asked = struct.unpack_from("<I", response, 4)[0]  # the response's capability flags
    assert bool(asked & Capability.COMPRESS) is offered
    login.feed(frame(OK, 2)[0])
    assert login.next_payload() is None and login.done
    assert login.compressed is offered
    return login


def test_commands_and_answers_travel_in_compressed_packets() -> None:
    login = logged_in()
    query = b"\x03SELECT '" + b"a" * 200 + b"'"  # long enough to be worth deflating
    login.send(query, new_command=True)
    sent = login.data_to_send()
    size, seq, stated = sent[0] | sent[1] << 8 | sent[2] << 16, sent[3], sent[4:7]
    assert (seq, len(sent)) == (0, 7 + size)
    inner = zlib.decompress(sent[7:])
    assert int.from_bytes(stated, "little") == len(inner)
    assert inner == len(query).to_bytes(3, "little") + b"\0" + query
    # The answer: compressed packet 1, its inner packet numbered 1, in two chunks.
    answer = compressed(frame(OK, 1)[0], 1)
    login.feed(answer[:5])
    assert login.next_payload() is None
    login.feed(answer[5:])
    assert login.next_payload() == OK


def test_a_server_that_does_not_offer_compression_gets_a_plain_connection() -> None:
    login = logged_in(offered=False)
    login.send(b"\x03SELECT 1", new_command=True)
    assert login.data_to_send() == frame(b"\x03SELECT 1", 0)[0]


def _bad_zlib() -> bytes:
    # After the zlib header, a block of type 3, which does not exist.
    return b"\x0a\x00\x00\x01\x20\x00\x00\x78\x9c\xffjunk\0\0\0"


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (_bad_zlib(), "does not inflate"),
        (compressed(frame(b"x" * 400, 1)[0], 1, stated=100), "more than its stated 100"),
        (compressed(frame(OK, 1)[0], 9), "sequence number 9, expected 1"),
    ],
    ids=["bad zlib stream", "inflated length lies", "sequence"],
)
def test_a_hostile_answer_is_a_typed_error_naming_its_offset(answer: bytes, message: str) -> None:
    login = logged_in()
    login.send(b"\x03SELECT 1", new_command=True)
    login.data_to_send()
    first = compressed(frame(OK, 1)[0], 1)
    login.feed(first)
    assert login.next_payload() == OK
    login.send(b"\x03SELECT 2", new_command=True)
    with pytest.raises(ProtocolError, match=message) as caught:
        login.feed(answer)
    assert caught.value.cause is not None
    assert str(caught.value).endswith(f"at offset {caught.value.cause.offset}")
    assert caught.value.cause.offset in (len(first), len(first) + 3)


def test_a_compressed_length_that_lies_holds_no_more_than_came() -> None:
    login = logged_in()
    login.send(b"\x03SELECT 1", new_command=True)
    # A body of 16 MiB announced, 10 bytes sent: nothing to read yet, nothing allocated for it.
    login.feed((0xFFFFFF).to_bytes(3, "little") + b"\x01" + (0xFFFFFF).to_bytes(3, "little"))
    login.feed(b"\x78\x9c" + bytes(8))
    assert login.next_payload() is None


def test_a_zip_bomb_is_refused_without_inflating_it() -> None:
    """A 10 MB body of zeros deflated (about 10 KB), stated to inflate to 1000 bytes: refused
    at its packet, and the memory taken stays far below what it would inflate to."""
    login = logged_in()
    login.send(b"\x03SELECT 1", new_command=True)
    bomb = compressed(bytes(10_000_000), 1, stated=1000)
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError, match="more than its stated 1000 bytes at offset 0"):
            login.feed(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
