"""frame_block, the dump's one-pass framing of a block of events, against framing every event
on its own with the codec's packet framing (``encoder.packets.frame_parts``): both framings, the
one with runs of small events framed in C (the package's extension) and the one in Python
(where the extension could not be built), are held to it."""

from __future__ import annotations

import mmap
import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from encoder.packets import frame_parts
from fakemaster.core.dump import framing
from fakemaster.core.dump.framing import (
    ACCELERATED,
    LARGE_EVENT,
    FramedBlock,
    frame_block,
    frame_block_in_python,
)
from fakemaster.vocabulary.constants import HEADER_LEN, MAX_PACKET_PAYLOAD, EventType
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET, TYPE_CODE_OFFSET
from tests.budget import examples
from tests.peers.policy import require_peer

Framer = Callable[..., FramedBlock]


def _needs_the_extension() -> None:
    require_peer(
        "fakemaster.core.dump._framing_accel (the C framing)",
        ACCELERATED,
        "install the package where a C compiler and the Python headers are "
        "(apt-get install gcc python3-dev; scripts/install-deps.sh does), or in a checkout "
        "`python3 setup.py build_ext --inplace`",
    )


@pytest.fixture(scope="module", params=["c", "python"])
def framer(request: pytest.FixtureRequest) -> Framer:
    """The dump's framing as served (C for runs of small events), then in Python alone."""
    if request.param == "c":
        _needs_the_extension()
        return frame_block
    return frame_block_in_python


TYPES = [
    EventType.QUERY,
    EventType.GTID,
    EventType.XID,
    EventType.WRITE_ROWS_V1,
    EventType.ANNOTATE_ROWS,
    EventType.START_ENCRYPTION,
    EventType.TABLE_MAP,
]


def event(type_code: int, length: int, rng: random.Random) -> bytes:
    data = bytearray(rng.randbytes(length))
    data[TYPE_CODE_OFFSET] = type_code
    data[EVENT_LENGTH_OFFSET : EVENT_LENGTH_OFFSET + 4] = length.to_bytes(4, "little")
    return bytes(data)


def one_by_one(events: list[bytes], seq: int, send_annotate: bool) -> tuple[bytes, int, int]:
    """The packets of every event sent, each framed on its own."""
    out = bytearray()
    sent = 0
    for data in events:
        type_code = data[TYPE_CODE_OFFSET]
        if type_code == EventType.START_ENCRYPTION:
            continue
        if type_code == EventType.ANNOTATE_ROWS and not send_annotate:
            continue
        parts, seq = frame_parts((b"\x00", data), seq)
        out += b"".join(parts)
        sent += 1
    return bytes(out), seq, sent


sizes = st.one_of(
    st.integers(HEADER_LEN, 200),
    st.integers(LARGE_EVENT - 2, LARGE_EVENT + 2),
    st.integers(HEADER_LEN, 3 * LARGE_EVENT),
)


@settings(max_examples=examples(1))
@given(
    shapes=st.lists(st.tuples(st.sampled_from(TYPES), sizes), max_size=24),
    seq=st.integers(0, 255),
    send_annotate=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_a_block_is_framed_as_each_event_on_its_own(
    framer: Framer, shapes: list[tuple[int, int]], seq: int, send_annotate: bool, seed: int
) -> None:
    rng = random.Random(seed)
    events = [event(type_code, length, rng) for type_code, length in shapes]
    block = b"".join(events)
    framed = framer(block, seq, send_annotate=send_annotate)
    expected, next_seq, sent = one_by_one(events, seq, send_annotate)
    assert b"".join(framed.parts) == expected
    assert framed.size == len(expected)
    assert framed.seq == next_seq
    assert framed.events == sent
    starts = [sum(len(e) for e in events[:i]) for i in range(len(events))]
    assert framed.last_event == (starts[-1] if events else -1)
    # Large events are not copied: their packets are views of the block.
    left_out = {EventType.START_ENCRYPTION} | (
        set() if send_annotate else {EventType.ANNOTATE_ROWS}
    )
    large = sum(
        1 for data in events if len(data) >= LARGE_EVENT and data[TYPE_CODE_OFFSET] not in left_out
    )
    views = [part for part in framed.parts if isinstance(part, memoryview)]
    assert all(view.obj is block for view in views)
    assert len(views) >= large


def test_an_event_of_16_mib_and_more_is_split_like_any_packet(framer: Framer) -> None:
    rng = random.Random(5)
    # One byte more than a packet holds with the OK byte, then exactly a full packet's worth.
    events = [
        event(EventType.QUERY, 100, rng),
        event(EventType.WRITE_ROWS_V1, MAX_PACKET_PAYLOAD, rng),
        event(EventType.WRITE_ROWS_V1, MAX_PACKET_PAYLOAD - 1, rng),
        event(EventType.XID, 31, rng),
    ]
    framed = framer(b"".join(events), 254, send_annotate=False)
    expected, next_seq, sent = one_by_one(events, 254, False)
    assert b"".join(framed.parts) == expected
    assert (framed.seq, framed.events) == (next_seq, 4)
    # 1 + 2 + 2 + 1 packets from 254: the sequence wrapped.
    assert framed.seq == (254 + 6) & 0xFF


def test_the_framed_block_holds_no_copy_of_a_large_event(framer: Framer) -> None:
    big = event(EventType.WRITE_ROWS_V1, 4 * LARGE_EVENT, random.Random(1))
    block = big
    framed = framer(block, 1, send_annotate=True)
    views = [part for part in framed.parts if isinstance(part, memoryview)]
    assert [bytes(view) for view in views] == [big]
    assert all(len(part) == 5 for part in framed.parts if not isinstance(part, memoryview))


@settings(max_examples=examples(1))
@given(
    shapes=st.lists(st.tuples(st.sampled_from(TYPES), sizes), min_size=1, max_size=24),
    cut=st.integers(0, 1 << 30),
    seq=st.integers(0, 255),
    send_annotate=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_a_block_cut_anywhere_is_framed_up_to_its_last_whole_event(
    framer: Framer,
    shapes: list[tuple[int, int]],
    cut: int,
    seq: int,
    send_annotate: bool,
    seed: int,
) -> None:
    """What a store's read_bytes gives (bytes not cut at an event boundary): the whole events
    at the start are framed, and ``walked`` says where they end."""
    rng = random.Random(seed)
    events = [event(type_code, length, rng) for type_code, length in shapes]
    block = b"".join(events)
    cut %= len(block) + 1
    whole = count = 0
    while count < len(events) and whole + len(events[count]) <= cut:
        whole += len(events[count])
        count += 1
    framed = framer(block[:cut], seq, send_annotate=send_annotate)
    expected, next_seq, sent = one_by_one(events[:count], seq, send_annotate)
    assert framed.walked == whole
    assert b"".join(framed.parts) == expected
    assert (framed.seq, framed.events, framed.size) == (next_seq, sent, len(expected))


def test_bytes_that_are_no_event_header_end_the_walk(framer: Framer) -> None:
    rng = random.Random(3)
    first = event(EventType.QUERY, 40, rng)
    bogus = bytearray(event(EventType.QUERY, 40, rng))
    bogus[EVENT_LENGTH_OFFSET : EVENT_LENGTH_OFFSET + 4] = (HEADER_LEN - 1).to_bytes(4, "little")
    framed = framer(first + bytes(bogus), 7, send_annotate=False)
    assert framed.walked == len(first)
    assert framed.events == 1
    assert b"".join(framed.parts) == one_by_one([first], 7, False)[0]


@pytest.mark.parametrize("seq", range(256))
def test_every_sequence_number_wraps_as_packet_by_packet(framer: Framer, seq: int) -> None:
    """600 small events (the sequence wraps twice from any start) and a few left out."""
    rng = random.Random(seq)
    kinds = [EventType.WRITE_ROWS_V1, EventType.ANNOTATE_ROWS, EventType.XID]
    events = [event(kinds[index % 3], rng.randint(HEADER_LEN, 90), rng) for index in range(900)]
    for send_annotate in (False, True):
        framed = framer(b"".join(events), seq, send_annotate=send_annotate)
        expected, next_seq, sent = one_by_one(events, seq, send_annotate)
        assert b"".join(framed.parts) == expected
        assert (framed.seq, framed.events) == (next_seq, sent)


huge_sizes = st.one_of(
    st.integers(HEADER_LEN, 300),
    st.integers(MAX_PACKET_PAYLOAD - 3, MAX_PACKET_PAYLOAD + 3),
    st.sampled_from(
        [2 * MAX_PACKET_PAYLOAD - 1, 2 * MAX_PACKET_PAYLOAD, 2 * MAX_PACKET_PAYLOAD + 1]
    ),
)


@settings(max_examples=examples(0.1), deadline=None)
@given(
    shapes=st.lists(
        st.tuples(st.sampled_from([EventType.WRITE_ROWS_V1, EventType.ANNOTATE_ROWS]), huge_sizes),
        min_size=1,
        max_size=4,
    ),
    seq=st.integers(0, 255),
    send_annotate=st.booleans(),
)
def test_events_of_16_mib_and_more_drawn_among_small_ones(
    framer: Framer, shapes: list[tuple[int, int]], seq: int, send_annotate: bool
) -> None:
    rng = random.Random(seq)
    events = [
        event(type_code, length, rng) if length < 4096 else big_event(type_code, length)
        for type_code, length in shapes
    ]
    block = b"".join(events)
    framed = framer(block, seq, send_annotate=send_annotate)
    expected, next_seq, sent = one_by_one(events, seq, send_annotate)
    assert b"".join(framed.parts) == expected
    assert (framed.seq, framed.events, framed.walked) == (next_seq, sent, len(block))


def big_event(type_code: int, length: int) -> bytes:
    """A large event of cheap bytes (a pattern: every packet's slice differs)."""
    data = bytearray((bytes(range(251)) * (length // 251 + 1))[:length])
    data[TYPE_CODE_OFFSET] = type_code
    data[EVENT_LENGTH_OFFSET : EVENT_LENGTH_OFFSET + 4] = length.to_bytes(4, "little")
    return bytes(data)


def test_every_kind_of_buffer_a_store_gives_is_framed_alike(framer: Framer) -> None:
    """bytes, bytearray, a memoryview (of part of a larger buffer) and a mapped file."""
    rng = random.Random(11)
    kinds = [EventType.QUERY, EventType.ANNOTATE_ROWS, EventType.WRITE_ROWS_V1]
    events = [event(kinds[i % 3], rng.choice([40, 300, LARGE_EVENT + 7]), rng) for i in range(30)]
    block = b"".join(events)
    expected, next_seq, sent = one_by_one(events, 9, False)
    with mmap.mmap(-1, len(block) + 100) as mapped:
        mapped[: len(block)] = block
        buffers = [
            bytearray(block),
            memoryview(b"\x00" * 3 + block + b"\x01")[3 : 3 + len(block)],
            memoryview(mapped)[: len(block)],
        ]
        for buffer in [block, *buffers]:
            framed = framer(buffer, 9, send_annotate=False)
            assert b"".join(framed.parts) == expected
            assert (framed.seq, framed.events, framed.walked) == (next_seq, sent, len(block))
            del framed
        del buffers, buffer


@pytest.mark.parametrize("walk", ["c", "python"])
def test_a_walk_stopping_at_a_large_event_stops_where_python_does(walk: str) -> None:
    """The walk of small events (C, and its Python mirror) stops before a large event, after a
    left-out one of any size, and at the end: the framing resumes from there, with the
    sequence number and last event it left."""
    if walk == "c":
        _needs_the_extension()
    rng = random.Random(4)
    events = [
        event(EventType.QUERY, 50, rng),
        event(EventType.ANNOTATE_ROWS, LARGE_EVENT * 2, rng),
        event(EventType.XID, 31, rng),
        event(EventType.WRITE_ROWS_V1, LARGE_EVENT, rng),
        event(EventType.XID, 31, rng),
    ]
    block = b"".join(events)
    layout = (HEADER_LEN, TYPE_CODE_OFFSET, EVENT_LENGTH_OFFSET)
    frame_small = framing._frame_small_in_c if walk == "c" else framing._frame_small_in_python
    assert frame_small is not None
    skip, annotate = EventType.START_ENCRYPTION.value, EventType.ANNOTATE_ROWS.value
    packets, index, seq, count, last = frame_small(
        block, 0, 255, skip, annotate, LARGE_EVENT, layout
    )
    large_at = 50 + LARGE_EVENT * 2 + 31
    assert (index, seq, count, last) == (large_at, 1, 2, 50 + LARGE_EVENT * 2)
    assert packets == one_by_one(events[:3], 255, False)[0]
    after = large_at + LARGE_EVENT
    packets, index, seq, count, last = frame_small(
        block, after, 7, skip, annotate, LARGE_EVENT, layout
    )
    assert (packets, index, seq, count, last) == (
        one_by_one(events[4:], 7, False)[0],
        len(block),
        8,
        1,
        after,
    )
    # Nothing walked: the same place, no event.
    assert frame_small(block, len(block), 3, skip, annotate, LARGE_EVENT, layout) == (
        b"",
        len(block),
        3,
        0,
        -1,
    )


@pytest.mark.parametrize(
    ("index", "seq", "layout"),
    [
        (-1, 0, (HEADER_LEN, TYPE_CODE_OFFSET, EVENT_LENGTH_OFFSET)),
        (1000, 0, (HEADER_LEN, TYPE_CODE_OFFSET, EVENT_LENGTH_OFFSET)),
        (0, 256, (HEADER_LEN, TYPE_CODE_OFFSET, EVENT_LENGTH_OFFSET)),
        (0, 0, (HEADER_LEN, HEADER_LEN, EVENT_LENGTH_OFFSET)),
        (0, 0, (HEADER_LEN, TYPE_CODE_OFFSET, HEADER_LEN - 3)),
        (0, 0, (HEADER_LEN, -1, EVENT_LENGTH_OFFSET)),
    ],
)
def test_the_c_framing_refuses_arguments_that_would_read_outside_the_block(
    index: int, seq: int, layout: tuple[int, int, int]
) -> None:
    _needs_the_extension()
    frame_small = framing._frame_small_in_c
    assert frame_small is not None
    block = event(EventType.XID, 31, random.Random(1)) * 3
    with pytest.raises(ValueError, match="frame_small"):
        frame_small(block, index, seq, 0, 0, LARGE_EVENT, layout)
