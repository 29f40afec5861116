"""Control events: golden bytes from the facts digest and round trips."""

from __future__ import annotations

import zlib
from pathlib import Path

from hypothesis import given

from decoder import decode_event
from encoder import encode_event
from fakemaster.vocabulary.constants import MARIADB_POST_HEADER_LENGTHS, EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import FormatDescriptionEvent, RotateEvent, StopEvent
from scenarios.strategies.control import control_events, format_description_events

# Fake ROTATE sent by a 10.2.10 primary (binlog-codec-facts.md §2.1).
FAKE_ROTATE = (
    bytes.fromhex("00000000 04 d9270000 2f000000 00000000 2000 0400000000000000".replace(" ", ""))
    + b"mysql-bin.000034"
    + bytes.fromhex("d53fead7")
)

# 10.2.10 announced 0 for MySQL's types 39-41, where 10.11 announces 10.
POST_HEADER_LENGTHS_10_2 = (
    MARIADB_POST_HEADER_LENGTHS[:38] + bytes(3) + MARIADB_POST_HEADER_LENGTHS[41:]
)

# FDE of the same capture (§1.3): 10.2.10-MariaDB-log, created 0, log_pos 256, alg CRC32.
FDE = (
    bytes.fromhex("fbcc375a 0f d9270000 fc000000 00010000 0000".replace(" ", ""))
    + bytes.fromhex("0400")
    + b"10.2.10-MariaDB-log".ljust(50, b"\x00")
    + bytes(4)
    + b"\x13"
    + POST_HEADER_LENGTHS_10_2
    + b"\x01"
    + bytes.fromhex("170b1263")
)


def test_fake_rotate_golden_bytes() -> None:
    event = decode_event(FAKE_ROTATE, BinlogContext(checksum=True))
    assert event == RotateEvent(
        timestamp=0,
        server_id=0x27D9,
        log_pos=0,
        flags=EventFlag.ARTIFICIAL,
        position=4,
        next_file="mysql-bin.000034",
    )
    assert event.is_artificial
    assert encode_event(event, BinlogContext(checksum=True)) == FAKE_ROTATE


def test_fde_capture_layout() -> None:
    assert len(FDE) == 252
    event = decode_event(FDE, BinlogContext())
    assert isinstance(event, FormatDescriptionEvent)
    assert event.server_version == "10.2.10-MariaDB-log"
    assert event.post_header_lengths == POST_HEADER_LENGTHS_10_2
    assert event.checksum_alg == 1
    assert (event.log_pos, event.create_timestamp, event.server_id) == (256, 0, 0x27D9)
    assert encode_event(event, BinlogContext()) == FDE


def test_post_header_lengths_are_those_of_a_real_10_11() -> None:
    # The FDE of a binlog written by a real MariaDB 10.11.19 (tests/golden/binlogs).
    golden = Path(__file__).resolve().parents[1] / "golden" / "binlogs" / "default"
    data = (golden / "mysql-bin.000001").read_bytes()
    fde = decode_event(data[4 : 4 + int.from_bytes(data[13:17], "little")], BinlogContext())
    assert isinstance(fde, FormatDescriptionEvent)
    assert fde.post_header_lengths == MARIADB_POST_HEADER_LENGTHS


def test_fde_in_use_flag_does_not_enter_crc() -> None:
    event = FormatDescriptionEvent(flags=EventFlag.BINLOG_IN_USE, log_pos=256)
    data = encode_event(event, BinlogContext())
    cleared = bytearray(data[:-4])
    cleared[17] &= 0xFE
    assert int.from_bytes(data[-4:], "little") == zlib.crc32(cleared)


def test_fde_decides_checksum_of_following_events() -> None:
    ctx = BinlogContext()
    encode_event(FormatDescriptionEvent(checksum_alg=0), ctx)
    assert len(encode_event(StopEvent(), ctx)) == 19
    encode_event(FormatDescriptionEvent(checksum_alg=1), ctx)
    assert len(encode_event(StopEvent(), ctx)) == 23


@given(format_description_events())
def test_fde_round_trip(event: FormatDescriptionEvent) -> None:
    data = encode_event(event, BinlogContext())
    assert decode_event(data, BinlogContext()) == event


@given(control_events())
def test_control_round_trip_with_and_without_crc(event: object) -> None:
    for checksum in (True, False):
        data = encode_event(event, BinlogContext(checksum=checksum))  # type: ignore[arg-type]
        assert decode_event(data, BinlogContext(checksum=checksum)) == event
        assert (
            encode_event(
                decode_event(data, BinlogContext(checksum=checksum)),
                BinlogContext(checksum=checksum),
            )
            == data
        )
