"""decoder.packets.inflate_packets: the inner bytes of whole compressed packets, against the
bodies the encoder's compress_frame was given."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import inflate_packets
from encoder.packets import compress_frame
from fakemaster.vocabulary.errors import DecodeError
from tests.budget import examples

bodies = st.lists(
    st.one_of(st.binary(max_size=200), st.binary(max_size=3).map(lambda b: b * 4000)),
    max_size=8,
)


@settings(max_examples=examples(1))
@given(bodies=bodies, cut=st.integers(0, 10), compress=st.booleans())
def test_whole_compressed_packets_give_their_bodies(
    bodies: list[bytes], cut: int, compress: bool
) -> None:
    frames = [
        compress_frame(body, seq & 0xFF, compress=compress) for seq, body in enumerate(bodies)
    ]
    stream = b"".join(frames)
    assert inflate_packets(stream) == (b"".join(bodies), len(stream))
    # A stream cut inside its last packet: the whole ones before it, and where they end.
    if frames and 0 < cut < len(frames[-1]):
        whole = len(stream) - len(frames[-1])
        assert inflate_packets(stream[: whole + cut]) == (b"".join(bodies[:-1]), whole)


def test_a_body_that_does_not_inflate_is_a_decode_error() -> None:
    frame = bytearray(compress_frame(b"y" * 500, 0))
    frame[10] ^= 0xFF  # inside the zlib stream
    with pytest.raises(DecodeError):
        inflate_packets(bytes(frame))
