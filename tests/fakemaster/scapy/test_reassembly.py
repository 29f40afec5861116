"""``TcpDirection``: a direction's bytes back in order from segments as a capture holds them.

The expected stream is the one the segments were cut from: any order, retransmissions and
overlaps give it back whole; a segment never seen leaves exactly its bytes reported missing,
and the bytes after it are handed over only by ``close`` (never joined to what came before).
"""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.scapy.reassembly import Gap, TcpDirection
from tests.budget import examples

SPACE = 1 << 32


@st.composite
def cut_stream(draw: st.DrawFn) -> tuple[bytes, int, list[tuple[int, int]]]:
    """A stream, the sequence number of its SYN (near the wrap at 2**32, often), and its
    segments as (start, end) offsets covering it in order."""
    data = draw(st.binary(min_size=1, max_size=400))
    syn = draw(st.one_of(st.integers(0, SPACE - 1), st.integers(SPACE - 300, SPACE - 1)))
    cuts = (
        sorted(set(draw(st.lists(st.integers(1, len(data) - 1), max_size=12))))
        if len(data) > 1
        else []
    )
    bounds = [0, *cuts, len(data)]
    return data, syn, list(pairwise(bounds))


def feed(direction: TcpDirection, syn: int, data: bytes, spans: list[tuple[int, int]]) -> bytes:
    out = b""
    for start, end in spans:
        out += direction.segment((syn + 1 + start) % SPACE, data[start:end])
    return out


@settings(max_examples=examples(1))
@given(cut_stream(), st.data())
def test_any_order_with_retransmissions_gives_the_stream_back(
    case: tuple[bytes, int, list[tuple[int, int]]], draw: st.DataObject
) -> None:
    data, syn, spans = case
    # Retransmissions (whole, or overlapping the next segment), then a shuffle.
    extra = draw.draw(st.lists(st.sampled_from(spans), max_size=4))
    overlapping = [(start, min(len(data), end + 3)) for start, end in extra]
    order = draw.draw(st.permutations([*spans, *extra, *overlapping]))
    direction = TcpDirection()
    direction.syn(syn)
    assert feed(direction, syn, data, order) == data
    assert direction.close() == ([], b"")


@settings(max_examples=examples(1))
@given(cut_stream(), st.data())
def test_a_segment_never_seen_is_reported_missing(
    case: tuple[bytes, int, list[tuple[int, int]]], draw: st.DataObject
) -> None:
    data, syn, spans = case
    lost = draw.draw(st.integers(0, len(spans) - 1))
    start, end = spans[lost]
    order = draw.draw(st.permutations([span for index, span in enumerate(spans) if index != lost]))
    direction = TcpDirection()
    direction.syn(syn)
    assert feed(direction, syn, data, order) == data[:start]
    gaps, after = direction.close()
    if end == len(data):  # the last segment lost, and no FIN to tell the stream went on
        assert (gaps, after) == ([], b"")
    else:
        assert gaps == [Gap(start, end - start)]
        assert after == data[end:]


def test_a_fin_past_the_bytes_seen_reports_the_tail_missing() -> None:
    direction = TcpDirection()
    direction.syn(100)
    assert direction.segment(101, b"abc") == b"abc"
    direction.fin(109, 0)  # the FIN comes after 8 bytes: 5 never captured
    assert direction.close() == ([Gap(3, 5)], b"")


def test_without_a_syn_the_first_segment_starts_the_stream() -> None:
    direction = TcpDirection()
    assert direction.segment(SPACE - 2, b"ab") == b"ab"
    assert direction.segment(0, b"cd") == b"cd"  # across the wrap
    assert direction.segment(SPACE - 2, b"ab") == b""  # a retransmission
    assert direction.close() == ([], b"")


def test_the_last_syn_before_any_data_counts() -> None:
    direction = TcpDirection()
    direction.syn(100)
    direction.syn(5000)  # the first attempt's SYN went unanswered: a new one, a new number
    assert direction.segment(5001, b"ab") == b"ab"
    direction.syn(100)  # an old SYN seen late: the stream has started, it changes nothing
    assert direction.segment(5003, b"cd") == b"cd"
    assert direction.close() == ([], b"")
