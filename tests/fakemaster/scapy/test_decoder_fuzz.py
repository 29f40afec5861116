"""scapy's fuzz() on event layers, fed to the decoder: every mutated event is decoded or refused
with the project's typed DecodeError, never anything else (the decoder's robustness against
traffic crafted field by field, next to tests/decoder's byte-level hostile inputs)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.core import decode_event
from encoder import encode_event
from fakemaster.vocabulary.constants import HEADER_LEN
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event
from scenarios.strategies.streams import event_streams
from tests.budget import examples
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from scapy.packet import fuzz  # noqa: E402

from fakemaster.scapy import BinlogEvent  # noqa: E402


@settings(max_examples=examples(0.5), deadline=None)
@given(events=event_streams(max_groups=4), seed=st.integers(0, 2**32 - 1))
def test_fuzzed_event_layers_are_decoded_or_refused_with_typed_errors(
    events: list[Event], seed: int
) -> None:
    random.seed(seed)  # scapy's fuzz() draws from the random module: replayable
    encoding = BinlogContext()
    decoding = BinlogContext()
    outcomes = {"decoded": 0, "refused": 0}
    mutations = 0
    for event in events:
        encoded = encode_event(event, encoding)
        # fuzz() draws the fields left at their defaults: the header's (the length is computed
        # from the body unless drawn), with the event's own type half of the time, so that
        # its body is read as that event's; the body kept: a field-aware mutation of traffic.
        fields = {"type_code": event.type_code} if random.random() < 0.5 else {}
        mutated = bytes(fuzz(BinlogEvent(data=encoded[HEADER_LEN:], **fields)))
        mutations += mutated != encoded
        try:
            decoded = decode_event(mutated, decoding, verify_checksum=False)
        except DecodeError:
            outcomes["refused"] += 1
            continue
        assert isinstance(decoded, Event)
        outcomes["decoded"] += 1
        decoding.observe(decoded)
    assert sum(outcomes.values()) == len(events)
    assert mutations or not events  # the events were changed (the header drawn at random)
