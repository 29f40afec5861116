"""Binlog files: BinlogWriter and read_binlog/iter_raw_events round trips, truncation,
corruption, a real file's first events, and reading a large file in bounded memory."""

from __future__ import annotations

import io
import random
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decoder.binlog_file import iter_raw_events, read_binlog
from decoder.stream import StreamDecoder
from encoder.binlog_file import BinlogWriter, with_log_pos
from encoder.core import encode_event
from fakemaster.vocabulary.constants import BINLOG_MAGIC, EventFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    RotateEvent,
    StopEvent,
    UnknownEvent,
)
from fakemaster.vocabulary.header import CRC, event_crc
from scenarios.strategies.framing import event_streams
from tests.decoder.test_stream import (
    REAL_BINLOG_OFFSETS,
    REAL_BINLOG_PREFIX,
    REAL_BINLOG_TYPES,
)


@pytest.fixture(scope="module")
def scratch_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="binlog-file-test-") as name:
        yield Path(name)


def encoded(events: list[Event]) -> list[bytes]:
    ctx = BinlogContext()
    return [encode_event(event, ctx) for event in events]


def sample_events() -> list[Event]:
    return [
        FormatDescriptionEvent(timestamp=1700000000, flags=EventFlag.BINLOG_IN_USE),
        HeartbeatEvent(file_name="mysql-bin.000001"),
        UnknownEvent(code=200, flags=EventFlag.IGNORABLE, body=bytes(range(256)) * 3),
        StopEvent(timestamp=1700000001),
        RotateEvent(timestamp=1700000002, position=4, next_file="mysql-bin.000002"),
    ]


def sample_file() -> tuple[bytes, list[int]]:
    chunks = encoded(sample_events())
    offsets = [4]
    for chunk in chunks[:-1]:
        offsets.append(offsets[-1] + len(chunk))
    return BINLOG_MAGIC + b"".join(chunks), offsets


class ShortReads:
    """A file that returns at most 7 bytes per read, as a pipe or socket can."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def read(self, size: int = -1, /) -> bytes:
        return self._data.read(7 if size < 0 else min(size, 7))


# --- round trips --------------------------------------------------------------------------


@given(event_streams())
def test_writer_reader_round_trip_through_a_file(scratch_dir: Path, events: list[Event]) -> None:
    path = scratch_dir / "round-trip.000001"
    with BinlogWriter(path) as writer:
        ends = [writer.write(event) for event in events]
    assert ends[-1] == path.stat().st_size == writer.offset
    read = list(read_binlog(path))
    assert [event for _, event in read] == events
    assert [offset for offset, _ in read] == [4, *ends[:-1]]
    raw = list(iter_raw_events(str(path)))
    assert [data for _, data in raw] == encoded(events)
    assert BINLOG_MAGIC + b"".join(data for _, data in raw) == path.read_bytes()


@given(event_streams())
def test_fix_positions_sets_end_offsets_and_keeps_crcs_valid(events: list[Event]) -> None:
    # A heartbeat's 8-byte position form needs log_pos 0; a file never holds heartbeats.
    events = [e for e in events if not (isinstance(e, HeartbeatEvent) and e.position is not None)]
    given_positions = [event.log_pos for event in events]
    out = io.BytesIO()
    writer = BinlogWriter(out, fix_positions=True)
    for event in events:
        writer.write(event)
    assert writer.offset == len(out.getvalue())
    assert [event.log_pos for event in events] == given_positions  # events are not mutated
    out.seek(0)
    ends = [offset + len(data) for offset, data in iter_raw_events(out)]
    out.seek(0)
    read = [event for _, event in read_binlog(out)]  # verifies every recomputed CRC
    assert [event.log_pos for event in read] == ends
    for got, want in zip(read, events, strict=True):
        got.log_pos = want.log_pos
    assert read == events


def test_fix_positions_leaves_a_wrong_crc_wrong() -> None:
    event = encode_event(StopEvent(), BinlogContext())
    broken = event[:-4] + bytes(4)
    out = io.BytesIO()
    writer = BinlogWriter(out, fix_positions=True)
    writer.write_raw(broken)
    writer.write(StopEvent())
    out.seek(0)
    with pytest.raises(ChecksumError) as info:
        list(read_binlog(out))
    assert info.value.offset == 4 + len(broken) - 4


def test_writer_default_keeps_positions_as_given() -> None:
    events = sample_events()
    out = io.BytesIO()
    with BinlogWriter(out) as writer:
        for event in events:
            writer.write(event)
    assert not out.closed  # a caller's file object is left open
    out.seek(0)
    assert [event for _, event in read_binlog(out)] == events


def test_write_raw_and_offsets() -> None:
    data, offsets = sample_file()
    out = io.BytesIO()
    writer = BinlogWriter(out)
    assert writer.offset == 4
    for _, raw in iter_raw_events(io.BytesIO(data)):
        writer.write_raw(raw)
    assert out.getvalue() == data
    appended = io.BytesIO()
    tail = BinlogWriter(appended, write_magic=False, offset=offsets[2])
    assert tail.write(StopEvent()) == offsets[2] + 19 + 4
    assert appended.getvalue() == encode_event(StopEvent(), BinlogContext())


def test_short_reads_are_completed() -> None:
    data, offsets = sample_file()
    assert [o for o, _ in iter_raw_events(ShortReads(data))] == offsets
    assert [e for _, e in read_binlog(ShortReads(data))] == sample_events()


def test_real_binlog_prefix() -> None:
    read = list(read_binlog(io.BytesIO(REAL_BINLOG_PREFIX)))
    assert [offset for offset, _ in read] == REAL_BINLOG_OFFSETS
    assert [event.type_code for _, event in read] == REAL_BINLOG_TYPES
    raw = [data for _, data in iter_raw_events(io.BytesIO(REAL_BINLOG_PREFIX))]
    assert BINLOG_MAGIC + b"".join(raw) == REAL_BINLOG_PREFIX


def test_real_binlog_prefix_reencoded_byte_exact() -> None:
    out = io.BytesIO()
    writer = BinlogWriter(out)
    for _, event in read_binlog(io.BytesIO(REAL_BINLOG_PREFIX)):
        writer.write(event)
    assert out.getvalue() == REAL_BINLOG_PREFIX


# --- truncation and corruption ------------------------------------------------------------


@pytest.mark.parametrize("cut", range(0, 200))
def test_truncated_file_names_the_event_offset(cut: int) -> None:
    data, offsets = sample_file()
    cut = cut * len(data) // 200
    events = sample_events()
    if cut in offsets:  # an event boundary: a complete, shorter file
        assert [event for _, event in read_binlog(io.BytesIO(data[:cut]))] == events[
            : offsets.index(cut)
        ]
        return
    with pytest.raises(DecodeError) as info:
        list(read_binlog(io.BytesIO(data[:cut])))
    assert info.value.offset == max([0, *(offset for offset in offsets if offset <= cut)])
    kept = list(read_binlog(io.BytesIO(data[:cut]), allow_truncated_tail=True))
    ends = [*offsets[1:], len(data)]
    assert [offset for offset, _ in kept] == [
        offset for offset, end in zip(offsets, ends, strict=True) if end <= cut
    ]
    assert [event for _, event in kept] == events[: len(kept)]


def test_truncated_tail_keeps_every_complete_event() -> None:
    data, offsets = sample_file()
    cut = offsets[3] + 10  # inside the header of the fourth event
    kept = list(read_binlog(io.BytesIO(data[:cut]), allow_truncated_tail=True))
    assert [offset for offset, _ in kept] == offsets[:3]
    cut = offsets[3] + 20  # inside its body
    kept = list(read_binlog(io.BytesIO(data[:cut]), allow_truncated_tail=True))
    assert [offset for offset, _ in kept] == offsets[:3]


def test_empty_and_foreign_files() -> None:
    with pytest.raises(DecodeError) as info:
        list(read_binlog(io.BytesIO(b"")))
    assert info.value.offset == 0
    assert list(read_binlog(io.BytesIO(b"\xfeb"), allow_truncated_tail=True)) == []
    with pytest.raises(DecodeError) as info:
        list(read_binlog(io.BytesIO(b"\x7fELF\x02\x01\x01")))
    assert info.value.offset == 0


def test_event_length_below_header_size() -> None:
    data, offsets = sample_file()
    broken = bytearray(data)
    broken[offsets[2] + 9 : offsets[2] + 13] = (5).to_bytes(4, "little")
    with pytest.raises(DecodeError) as info:
        list(iter_raw_events(io.BytesIO(bytes(broken))))
    assert info.value.offset == offsets[2] + 9


def test_event_length_past_the_end() -> None:
    data, offsets = sample_file()
    broken = bytearray(data)
    broken[offsets[1] + 9 : offsets[1] + 13] = (1 << 30).to_bytes(4, "little")
    with pytest.raises(DecodeError) as info:
        list(read_binlog(io.BytesIO(bytes(broken))))
    assert info.value.offset == offsets[1]


@given(st.data())
def test_corrupted_bytes_raise_only_decode_error(data: st.DataObject) -> None:
    content, _ = sample_file()
    broken = bytearray(content)
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(broken) - 1))
        broken[position] ^= data.draw(st.integers(1, 255))
    try:
        list(read_binlog(io.BytesIO(bytes(broken))))
    except DecodeError as exc:
        assert 0 <= exc.offset <= len(broken)


def test_checksum_error_offset_in_file() -> None:
    data, offsets = sample_file()
    broken = bytearray(data)
    broken[offsets[2] + 30] ^= 0x01  # a body byte of the third event
    with pytest.raises(ChecksumError) as info:
        list(read_binlog(io.BytesIO(bytes(broken))))
    assert info.value.offset == offsets[3] - 4
    # Without verification the event decodes (with the changed byte).
    events = [event for _, event in read_binlog(io.BytesIO(bytes(broken)), verify_checksum=False)]
    assert len(events) == len(offsets)


# --- a large file, read in bounded memory -------------------------------------------------

LARGE_FILE_SIZE = 200 * 1024 * 1024


def large_file_events(body: bytes, big_body: bytes) -> Iterator[Event]:
    """About LARGE_FILE_SIZE bytes of events, generated one at a time."""
    yield FormatDescriptionEvent(timestamp=1700000000)
    written = 0
    index = 0
    while written < LARGE_FILE_SIZE:
        index += 1
        payload = big_body if index % 100 == 0 else body
        yield UnknownEvent(
            timestamp=index, server_id=index, code=200, flags=EventFlag.IGNORABLE, body=payload
        )
        written += len(payload) + 23


def check_large_file_events(
    items: Iterator[tuple[int, Event]], body: bytes, big_body: bytes
) -> int:
    """Checks each event against what large_file_events wrote; returns the end offset."""
    seen = 0
    next_offset = 4
    for offset, event in items:
        assert offset == next_offset
        assert event.log_pos > offset
        next_offset = event.log_pos
        if isinstance(event, UnknownEvent):
            assert event.timestamp == seen
            assert event.body == (big_body if seen % 100 == 0 else body)
        seen += 1
    return next_offset


def stream_decode_file(path: Path) -> Iterator[tuple[int, Event]]:
    decoder = StreamDecoder()
    with open(path, "rb") as fileobj:
        while chunk := fileobj.read(1 << 20):
            decoder.feed(chunk)
            for item in decoder.decoded():
                yield item.offset, item.event
    decoder.finish()


def test_large_file_is_read_in_bounded_memory(scratch_dir: Path) -> None:
    rng = random.Random(312)  # incompressible bytes, the same on every run
    body = rng.randbytes(64 * 1024)
    big_body = rng.randbytes(3 * 1024 * 1024)
    path = scratch_dir / "large.000001"
    with BinlogWriter(path, fix_positions=True) as writer:
        for event in large_file_events(body, big_body):
            writer.write(event)
    size = path.stat().st_size
    assert size > LARGE_FILE_SIZE
    peaks = []
    try:
        for reader in (read_binlog, stream_decode_file):
            tracemalloc.start()
            try:
                assert check_large_file_events(reader(path), body, big_body) == size
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    finally:
        path.unlink()
    # A few events' worth (the 3 MiB ones, copied a couple of times), not the 200 MB file.
    assert max(peaks) < 24 * 1024 * 1024


def test_with_log_pos_patch_matches_a_fresh_encoding() -> None:
    event = HeartbeatEvent(file_name="mysql-bin.000003", log_pos=0)
    data = encode_event(event, BinlogContext())
    fresh = encode_event(
        HeartbeatEvent(file_name="mysql-bin.000003", log_pos=1234), BinlogContext()
    )
    assert with_log_pos(data, 1234, has_crc=True) == fresh
    fde = encode_event(FormatDescriptionEvent(flags=EventFlag.BINLOG_IN_USE), BinlogContext())
    patched = with_log_pos(fde, 256, has_crc=True)
    assert CRC.unpack_from(patched, len(patched) - 4)[0] == event_crc(patched[:-4], 15)
