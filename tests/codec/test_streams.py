"""Mixed streams of every event family: chunking never changes what is decoded, and damaged
bytes only ever raise the project's typed DecodeError."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder import StreamDecoder, read_binlog
from encoder import BinlogWriter, StreamEncoder
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event
from scenarios.strategies.streams import event_streams

stream_settings = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def file_bytes(events: list[Event]) -> bytes:
    out = io.BytesIO()
    writer = BinlogWriter(out)
    for event in events:
        writer.write(event)
    return out.getvalue()


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def decode_chunks(chunks: list[bytes], **options: object) -> list[Event]:
    decoder = StreamDecoder(**options)  # type: ignore[arg-type]
    events: list[Event] = []
    for chunk in chunks:
        decoder.feed(chunk)
        events.extend(decoder.events())
    decoder.finish()
    return events


@stream_settings
@given(event_streams(), st.lists(st.integers(0, 1 << 16), max_size=20))
def test_file_stream_gives_the_same_events_however_chunked(
    events: list[Event], cuts: list[int]
) -> None:
    data = file_bytes(events)
    assert [event for _, event in read_binlog(io.BytesIO(data))] == events
    assert decode_chunks(chunked(data, cuts)) == events


@stream_settings
@given(event_streams(max_groups=3))
def test_file_stream_one_byte_at_a_time(events: list[Event]) -> None:
    data = file_bytes(events)
    assert decode_chunks([data[i : i + 1] for i in range(len(data))]) == events


@stream_settings
@given(event_streams(), st.lists(st.integers(0, 1 << 16), max_size=20), st.booleans())
def test_network_stream_gives_the_same_events_however_chunked(
    events: list[Event], cuts: list[int], semi_sync: bool
) -> None:
    encoder = StreamEncoder(network=True, semi_sync=semi_sync)
    data = b"".join(encoder.event(event) for event in events) + encoder.end()
    decoded = decode_chunks(chunked(data, cuts), network=True, semi_sync=semi_sync)
    assert decoded == events


@stream_settings
@given(
    event_streams(max_groups=5),
    st.lists(
        st.tuples(
            st.sampled_from(["flip", "cut", "insert", "drop"]),
            st.integers(0, 1 << 20),
            st.integers(1, 255),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_damaged_files_raise_only_decode_errors(
    events: list[Event], damage: list[tuple[str, int, int]]
) -> None:
    data = bytearray(file_bytes(events))
    for kind, where, value in damage:
        at = where % (len(data) + 1)
        if kind == "flip" and at < len(data):
            data[at] ^= value
        elif kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = bytes([value])
        elif kind == "drop" and at < len(data):
            del data[at]
    try:
        for _ in read_binlog(io.BytesIO(bytes(data)), allow_unknown=True):
            pass
    except DecodeError as err:
        assert 0 <= err.offset <= len(data)
