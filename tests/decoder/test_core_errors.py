"""The event core rejects bad framing with typed errors naming offset and event type."""

from __future__ import annotations

import pytest

from decoder import decode_event
from encoder import encode_event
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import IncidentEvent, RotateEvent, UnknownEvent

ROTATE = encode_event(RotateEvent(next_file="mysql-bin.000002"), BinlogContext(checksum=True))


def test_truncated_header_names_offset() -> None:
    with pytest.raises(DecodeError) as err:
        decode_event(ROTATE[:10], BinlogContext(), offset=1000)
    assert err.value.offset == 1000


def test_length_field_mismatch() -> None:
    with pytest.raises(DecodeError) as err:
        decode_event(ROTATE[:-1], BinlogContext(), offset=500)
    assert err.value.event_type == "ROTATE"
    assert err.value.offset == 509


def test_crc_mismatch_is_a_checksum_error() -> None:
    corrupted = bytearray(ROTATE)
    corrupted[25] ^= 0x40
    with pytest.raises(ChecksumError) as err:
        decode_event(bytes(corrupted), BinlogContext(checksum=True), offset=4)
    assert err.value.event_type == "ROTATE"
    assert err.value.offset == 4 + len(ROTATE) - 4
    # Without verification the same bytes decode (with the corrupted name).
    event = decode_event(bytes(corrupted), BinlogContext(checksum=True), verify_checksum=False)
    assert isinstance(event, RotateEvent)


def test_body_error_offset_is_relative_to_the_stream() -> None:
    data = encode_event(IncidentEvent(message=b"lost"), BinlogContext(checksum=False))
    broken = bytearray(data)
    broken[19 + 2] = 200  # message length beyond the body
    with pytest.raises(DecodeError) as err:
        decode_event(bytes(broken), BinlogContext(checksum=False), offset=100)
    assert err.value.event_type == "INCIDENT"
    assert err.value.offset >= 100 + 19


def test_unknown_type_needs_the_ignorable_flag() -> None:
    ctx = BinlogContext(checksum=False)
    plain = encode_event(UnknownEvent(code=222, body=b"x"), BinlogContext(checksum=False))
    with pytest.raises(DecodeError) as err:
        decode_event(plain, ctx)
    assert "222" in str(err.value)
    ignorable = encode_event(
        UnknownEvent(code=222, body=b"x", flags=0x80), BinlogContext(checksum=False)
    )
    assert decode_event(ignorable, ctx) == UnknownEvent(code=222, body=b"x", flags=0x80)
    assert decode_event(plain, ctx, allow_unknown=True) == UnknownEvent(code=222, body=b"x")


@pytest.mark.parametrize("checksum", [True, False])
def test_an_fde_crc_counts_only_when_its_own_algorithm_is_crc32(checksum: bool) -> None:
    """A FORMAT_DESCRIPTION always carries a CRC field; with its algorithm byte OFF a primary
    does not keep it current (a resumed dump's FDE has log_pos 0 and the CRC as written), and
    a replica does not check it, whatever checksum the stream negotiated."""
    from fakemaster.vocabulary.events import FormatDescriptionEvent

    algorithm = 1 if checksum else 0
    fde = encode_event(
        FormatDescriptionEvent(checksum_alg=algorithm), BinlogContext(checksum=checksum)
    )
    assert fde[-5] == algorithm
    stale = bytearray(fde)
    stale[13:17] = (4 + len(fde)).to_bytes(4, "little")  # log_pos changed, the CRC not
    for ctx_checksum in (True, False):
        if checksum:
            with pytest.raises(ChecksumError) as err:
                decode_event(bytes(stale), BinlogContext(checksum=ctx_checksum))
            assert err.value.event_type == "FORMAT_DESCRIPTION"
        else:
            event = decode_event(bytes(stale), BinlogContext(checksum=ctx_checksum))
            assert isinstance(event, FormatDescriptionEvent)
            assert event.checksum_alg == 0
