"""Binlog event layers against the codec, for generated streams of every event family.

For each event of a generated stream (``scenarios.strategies.streams``): a ``BinlogEvent``
built from the header fields (the event's own attributes) and the encoder's body gives the
encoder's bytes; the packet built around it gives what ``encoder.frame`` and
``encode_binlog_packet`` send (semi-sync header included); dissecting the stream's bytes gives
the same header fields and, through the connection's context, the same events.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from encoder import encode_event, frame
from encoder.packets import encode_binlog_packet
from fakemaster.vocabulary.constants import HEADER_LEN
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event, RotateEvent
from scenarios.strategies.streams import event_streams
from tests.budget import examples
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.scapy import (  # noqa: E402
    BinlogEvent,
    BinlogEventPacket,
    ConnectionState,
    ReplicationServer,
    ReplicationServerPacket,
    SemiSyncBinlogEventPacket,
    decoding_with,
    dissect_stream,
    event_layer,
)


def header_fields(event: Event, encoded: bytes) -> dict[str, Any]:
    return {
        "timestamp": event.timestamp,
        "type_code": event.type_code,
        "server_id": event.server_id,
        "event_length": len(encoded),
        "log_pos": event.log_pos,
        "flags": event.flags,
    }


@settings(max_examples=examples(0.5), deadline=None)
@given(events=event_streams(max_groups=5), semi_sync=st.booleans(), data=st.data())
def test_layers_give_the_codecs_bytes_and_dissect_to_the_same_fields(
    events: list[Event], semi_sync: bool, data: st.DataObject
) -> None:
    ctx = BinlogContext()
    wire = b""
    seq = 1
    encoded_events = []
    for event in events:
        encoded = encode_event(event, ctx)
        encoded_events.append(encoded)
        fields = header_fields(event, encoded)
        # Built from fields: the event_length is computed when left out.
        crafted = BinlogEvent(**{k: v for k, v in fields.items() if k != "event_length"})
        crafted.data = encoded[HEADER_LEN:]
        assert bytes(crafted) == encoded
        ack = semi_sync and data.draw(st.booleans())
        prefix = (
            SemiSyncBinlogEventPacket(semi_sync_flags=int(ack))
            if semi_sync
            else BinlogEventPacket()
        )
        packet = ReplicationServerPacket(sequence_id=seq) / prefix / crafted
        expected, seq = frame(
            encode_binlog_packet(encoded, semi_sync=semi_sync, ack_requested=ack), seq
        )
        assert bytes(packet) == expected
        wire += expected

    state = ConnectionState(semi_sync=semi_sync, master_binlog_checksum="CRC32")
    state.start_dump()
    stream = dissect_stream(ReplicationServer, wire, state)
    assert bytes(stream) == wire
    layers = [item[BinlogEvent] for item in stream.contents]
    assert [layer.decode_error for layer in layers] == [None] * len(events)
    assert [layer.event for layer in layers] == events
    for layer, event, encoded in zip(layers, events, encoded_events, strict=True):
        got = {name: int(getattr(layer, name)) for name in header_fields(event, encoded)}
        assert got == header_fields(event, encoded)
        assert layer.event_bytes() == encoded


def test_event_layer_is_the_encoders_bytes_and_decodes_back() -> None:
    event = RotateEvent(timestamp=7, server_id=3, log_pos=0, position=4, next_file="b.000002")
    layer = event_layer(event)
    assert bytes(layer) == encode_event(event, BinlogContext())
    assert layer.decode() == event
    with decoding_with(BinlogContext()):
        assert BinlogEvent(bytes(layer)).event == event
    # Outside a stream nothing is decoded on dissection.
    assert BinlogEvent(bytes(layer)).event is None
