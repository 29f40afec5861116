"""Hypothesis strategies for the byte-stream layer: packets, chunkings and event streams."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from fakemaster.vocabulary.constants import MARIADB_POST_HEADER_LENGTHS, MAX_PACKET_PAYLOAD
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket, SemiSyncAck
from scenarios.strategies.control import control_events, file_names, format_description_events

u16 = st.integers(0, 0xFFFF)
u64 = st.integers(0, (1 << 64) - 1)
sequence_numbers = st.integers(0, 0xFF)

# Payload lengths where framing changes: one full chunk and the sizes around it.
BOUNDARY_PAYLOAD_SIZES = (
    MAX_PACKET_PAYLOAD - 1,
    MAX_PACKET_PAYLOAD,
    MAX_PACKET_PAYLOAD + 1,
    2 * MAX_PACKET_PAYLOAD,
)
# Packed integers change width at these values.
_PACKED_EDGES = (0, 250, 251, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000, (1 << 64) - 1)
packed_ints = st.one_of(st.sampled_from(_PACKED_EDGES), u64)
# Message text as a server sends it, plus bytes that are not UTF-8 (kept via surrogateescape).
messages = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=200),
    st.binary(max_size=60).map(lambda raw: raw.decode("utf-8", "surrogateescape")),
)


def ok_packets() -> st.SearchStrategy[OkPacket]:
    return st.builds(
        OkPacket,
        affected_rows=packed_ints,
        last_insert_id=packed_ints,
        status_flags=u16,
        warnings=u16,
        info=st.binary(max_size=100),
        header=st.sampled_from([0x00, 0xFE]),
    )


def err_packets() -> st.SearchStrategy[ErrPacket]:
    with_state = st.builds(
        ErrPacket,
        errno=u16,
        sqlstate=st.text(
            st.characters(min_codepoint=0, max_codepoint=0xFF), min_size=5, max_size=5
        ),
        message=messages,
    )
    # Without the '#' marker a message cannot start with '#' (it would read as one).
    without_state = st.builds(
        ErrPacket, errno=u16, sqlstate=st.none(), message=messages.filter(lambda m: m[:1] != "#")
    )
    return st.one_of(with_state, without_state)


def eof_packets() -> st.SearchStrategy[EofPacket]:
    return st.builds(EofPacket, warnings=u16, status_flags=u16)


def semi_sync_acks() -> st.SearchStrategy[SemiSyncAck]:
    return st.builds(SemiSyncAck, position=u64, file_name=st.one_of(file_names, messages))


@st.composite
def cut_points(draw: st.DrawFn, size: int, max_cuts: int = 50) -> list[int]:
    """Where to split ``size`` bytes into chunks: sorted offsets in 1..size-1; sometimes every
    offset (one byte at a time)."""
    if size < 2:
        return []
    if draw(st.integers(0, 9)) == 0:
        return list(range(1, size))
    cuts = draw(st.sets(st.integers(1, size - 1), max_size=max_cuts))
    return sorted(cuts)


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *cuts, len(data)]
    return [data[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]


def stream_fdes() -> st.SearchStrategy[Event]:
    """FDEs that later events can follow: a 19-byte header and the server's post-header table
    (other FDE shapes are covered by the control codec's own tests)."""
    return format_description_events().map(
        lambda fde: replace(fde, header_length=19, post_header_lengths=MARIADB_POST_HEADER_LENGTHS)
    )


@st.composite
def event_streams(draw: st.DrawFn, max_events: int = 12) -> list[Event]:
    """Events as a stream carries them: some before the first FDE (a dump's fake ROTATE), an
    FDE, events, and maybe a second FDE that changes the checksum setting."""
    events: list[Event] = draw(st.lists(control_events(), max_size=2))
    events.append(draw(stream_fdes()))
    events += draw(st.lists(control_events(), max_size=max_events))
    if draw(st.booleans()):
        events.append(draw(stream_fdes()))
        events += draw(st.lists(control_events(), max_size=max_events // 2))
    return events
