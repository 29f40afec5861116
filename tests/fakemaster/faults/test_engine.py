"""The fault engine over generated dump streams and generated faults, without sockets or sleep.

Expected outputs are framed by the tests' own framer (tests/support/fault_streams.py) from
the event list with the planned change made to it (an event repeated, changed, removed, an ERR
in its place), or cut from the unfaulted stream at an offset computed from the event list, so
they never come from the engine's renumbering. The decoder's PacketReader (sequence numbers
checked) reads what the engine delivers and finds the expected events.
"""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import PacketReader, parse_binlog_packet, parse_err
from encoder.packets import encode_err
from fakemaster.faults.engine import FaultEngine, Output
from fakemaster.faults.plan import (
    ERROR_PRESETS,
    CloseMode,
    Fault,
    FaultKind,
    FaultPlan,
    Point,
    PointKind,
    Where,
)
from fakemaster.faults.strategies import fault_plans
from fakemaster.vocabulary.constants import MAX_PACKET_PAYLOAD, EventType
from fakemaster.vocabulary.packets import ErrPacket
from tests.budget import examples
from tests.support.fault_streams import (
    DumpEvent,
    Stream,
    dump_command,
    event_bytes,
    frame_payloads,
    streams,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(
    plan: FaultPlan | list[Fault],
    wire: bytes,
    cuts: list[int] | None = None,
    clock: Clock | None = None,
) -> tuple[list[Output], FaultEngine]:
    """Feed a connection's bytes: the dump command, then ``wire`` in pieces cut at ``cuts``."""
    engine = FaultEngine(plan, clock=clock or Clock())
    engine.from_client(dump_command())
    assert engine.in_dump
    outputs: list[Output] = []
    at = 0
    for cut in sorted(set(cuts or [])) + [len(wire)]:
        if cut > at:
            outputs += engine.from_server(wire[at:cut])
            at = cut
    return outputs, engine


def delivered(outputs: list[Output]) -> bytes:
    return b"".join(output.data for output in outputs)


def closes(outputs: list[Output]) -> list[CloseMode]:
    return [output.close for output in outputs if output.close is not None]


def check_order(outputs: list[Output]) -> None:
    times = [output.at for output in outputs]
    assert times == sorted(times)
    assert all(output.close is None for output in outputs[:-1])


def decoded(data: bytes, semi_sync: bool, check_sequence: bool = True) -> list[bytes]:
    """The payloads the decoder reads from ``data`` (sequence numbers checked), as events or
    ERR payloads."""
    reader = PacketReader(expected_seq=1 if check_sequence else None, check_sequence=False)
    reader.feed(data)
    out = []
    for payload in reader:
        if payload[:1] == b"\x00":
            event, _ = parse_binlog_packet(payload, semi_sync)
            out.append(bytes(event))
        else:
            out.append(bytes(payload))
    return out


def sequences(data: bytes) -> list[int]:
    seqs = []
    at = 0
    while at + 4 <= len(data):
        length = int.from_bytes(data[at : at + 3], "little")
        seqs.append(data[at + 3])
        at += 4 + length
    return seqs


def expected_sequences(stream: Stream, payloads: list[tuple[bytes, bool]]) -> list[int]:
    return sequences(frame_payloads(payloads))


slicings = st.lists(st.integers(0, 1 << 12), max_size=12)


# --- no fault: the same bytes -----------------------------------------------------------------


@settings(max_examples=examples(1))
@given(streams(), slicings, st.integers(1, 3))
def test_without_a_fault_for_the_session_the_bytes_pass_unchanged(
    stream: Stream, cuts: list[int], session: int
) -> None:
    wire = stream.wire()
    # A fault for another dump session does not touch this one.
    plan = [Fault(FaultKind.CUT, Point(PointKind.BYTE, 0), session=session)]
    outputs, engine = run(plan, wire, cuts)
    assert delivered(outputs) == wire
    assert closes(outputs) == [] and engine.applied == []


@settings(max_examples=examples(1))
@given(streams(), slicings, st.integers(1, 8), st.integers(0, 30))
def test_reslicing_delivers_the_same_bytes_in_pieces(
    stream: Stream, cuts: list[int], size: int, start: int
) -> None:
    wire = stream.wire()
    plan = [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, start), params={"size": size})]
    outputs, _ = run(plan, wire, cuts)
    assert delivered(outputs) == wire
    check_order(outputs)
    after = 0
    for output in outputs:
        if after >= start:
            assert 1 <= len(output.data) <= size
        after += len(output.data)
    if start < len(wire):
        assert max(len(o.data) for o in outputs if o.data) <= max(size, start)


def test_trickle_at_every_offset_of_a_stream_with_a_split_packet() -> None:
    """A 16 MiB event (two packets: 0xFFFFFF bytes and the rest) and the events around it, fed
    in one piece, delivered one byte per output, and identical."""
    big = DumpEvent(event_bytes(EventType.WRITE_ROWS_V1, bytes(MAX_PACKET_PAYLOAD + 10)))
    small = DumpEvent(event_bytes(EventType.XID, bytes(8)))
    stream = Stream((small, big, small))
    wire = stream.wire()
    assert len(sequences(wire)) == 4
    plan = [Fault(FaultKind.CUT, Point(PointKind.EVENT, 2, Where.INSIDE, 5))]
    outputs, engine = run(plan, wire)
    end = stream.packet_bounds()[2][0] + 5
    assert delivered(outputs) == wire[:end]
    assert closes(outputs) == [CloseMode.FIN]


@pytest.mark.parametrize(
    "size", [MAX_PACKET_PAYLOAD - 2 - 1, MAX_PACKET_PAYLOAD - 1, MAX_PACKET_PAYLOAD + 7]
)
def test_a_split_event_is_duplicated_and_truncated_as_a_whole(size: int) -> None:
    """Events whose packet payload (0x00 + event) is 0xFFFFFF - 2, exactly 0xFFFFFF (then an
    empty packet ends it) and more: copies and truncations are framed like any event."""
    big = DumpEvent(event_bytes(EventType.WRITE_ROWS_V1, bytes(size - 19 - 4)))
    small = DumpEvent(event_bytes(EventType.XID, bytes(8)))
    stream = Stream((small, big, small))
    # The big event's packets: one (below 0xFFFFFF), or a full one and the rest (maybe empty).
    assert len(sequences(stream.wire())) == (3 if size + 1 < MAX_PACKET_PAYLOAD else 4)
    plan = [Fault(FaultKind.DUPLICATE, Point(PointKind.EVENT, 1))]
    outputs, _ = run(plan, stream.wire(), [5, MAX_PACKET_PAYLOAD + 3])
    assert delivered(outputs) == frame_payloads(stream.payloads([small, big, big, small]))
    keep = MAX_PACKET_PAYLOAD - 10
    plan = [Fault(FaultKind.TRUNCATE, Point(PointKind.EVENT, 1), params={"keep": keep})]
    outputs, _ = run(plan, stream.wire())
    cut = DumpEvent(big.event[:keep])
    assert delivered(outputs) == frame_payloads(stream.payloads([small, cut, small]))
    got = decoded(delivered(outputs), False)
    assert got == [small.event, cut.event, small.event]


# --- cuts ---------------------------------------------------------------------------------------


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_a_cut_at_an_event_point_delivers_the_stream_up_to_it(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    where = data.draw(st.sampled_from(list(Where)))
    offset = data.draw(st.integers(1, 200)) if where is Where.INSIDE else 0
    close = data.draw(st.sampled_from(["fin", "rst"]))
    plan = [
        Fault(FaultKind.CUT, Point(PointKind.EVENT, number, where, offset), params={"close": close})
    ]
    outputs, engine = run(plan, stream.wire(), cuts)
    start, end = stream.packet_bounds()[counted[number]]
    cut = {Where.BEFORE: start, Where.AFTER: end, Where.INSIDE: min(start + offset, end - 1)}
    assert delivered(outputs) == stream.wire()[: cut[where]]
    assert closes(outputs) == [CloseMode(close)]
    check_order(outputs)
    assert engine.closed and engine.pending == []


@settings(max_examples=examples(1))
@given(streams(min_groups=1, max_groups=5), slicings, st.data())
def test_a_cut_at_a_transaction_point_falls_where_the_group_says(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    groups = sorted({e.group for e in stream.events if e.group >= 0})
    group = data.draw(st.sampled_from(groups))
    members = [i for i, e in enumerate(stream.events) if e.group == group]
    where = data.draw(st.sampled_from(list(Where)))
    offset = data.draw(st.integers(1, 6)) if where is Where.INSIDE else 0
    into = 0 if where is Where.AFTER else data.draw(st.integers(0, 80))
    by_gtid = data.draw(st.booleans())
    point = (
        Point(PointKind.GTID, stream.events[members[0]].gtid or "", where, offset, into)
        if by_gtid
        else Point(PointKind.TRANSACTION, group, where, offset, into)
    )
    outputs, _ = run([Fault(FaultKind.CUT, point)], stream.wire(), cuts)
    bounds = stream.packet_bounds()
    if where is Where.AFTER:
        cut = bounds[members[-1]][1]
    else:
        # Event ``offset`` of the group (a shorter group: its last event), ``into`` bytes in.
        start, end = bounds[members[min(offset, len(members) - 1)]]
        cut = min(start + into, end - 1)
    assert delivered(outputs) == stream.wire()[:cut]
    assert closes(outputs) == [CloseMode.FIN]


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_a_cut_after_exactly_n_bytes(stream: Stream, cuts: list[int], data: st.DataObject) -> None:
    wire = stream.wire()
    n = data.draw(st.integers(0, len(wire) - 1))
    outputs, _ = run([Fault(FaultKind.CUT, Point(PointKind.BYTE, n))], wire, cuts)
    assert delivered(outputs) == wire[:n]
    assert closes(outputs) == [CloseMode.FIN]


def test_a_time_point_fires_from_poll_without_bytes() -> None:
    clock = Clock()
    stream = Stream((DumpEvent(event_bytes(EventType.XID, bytes(8))),))
    engine = FaultEngine(
        [Fault(FaultKind.CUT, Point(PointKind.TIME, 2.5), params={"close": "rst"})], clock=clock
    )
    engine.from_client(dump_command())
    assert delivered(engine.from_server(stream.wire())) == stream.wire()
    assert engine.next_deadline() == 102.5
    clock.now = 102.0
    assert engine.poll() == []
    clock.now = 102.5
    assert engine.poll() == [Output(b"", 102.5, CloseMode.RST)]
    assert engine.from_server(stream.wire()) == [] and engine.next_deadline() is None


# --- event changes ------------------------------------------------------------------------------


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_a_duplicate_resend_is_the_event_again_with_an_unbroken_sequence(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    count = data.draw(st.integers(1, 3))
    plan = [Fault(FaultKind.DUPLICATE, Point(PointKind.EVENT, number), params={"count": count})]
    outputs, engine = run(plan, stream.wire(), cuts)
    index = counted[number]
    events = list(stream.events)
    # The copies ask for no ACK (the original did, if it was to).
    copy = DumpEvent(events[index].event)
    expected = events[: index + 1] + [copy] * count + events[index + 1 :]
    payloads = stream.payloads(expected)
    assert delivered(outputs) == frame_payloads(payloads)
    assert len(engine.applied) == 1
    if not stream.semi_sync:
        got = decoded(delivered(outputs), False)
        assert got == [e.event for e in expected]


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_a_corrupted_or_truncated_event_is_that_event_changed(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    index = counted[number]
    original = stream.events[index].event
    kind = data.draw(st.sampled_from([FaultKind.CORRUPT_CRC, FaultKind.TRUNCATE]))
    changed = bytearray(original)
    if kind is FaultKind.TRUNCATE:
        keep = data.draw(st.integers(1, len(original) + 5))
        params: dict[str, object] = {"keep": keep}
        changed = changed[: max(1, min(keep, len(original) - 1))]
    else:
        target = data.draw(st.sampled_from(["crc", "body"]))
        offset = data.draw(st.integers(0, 3 if target == "crc" else len(original) + 5))
        mask = data.draw(st.integers(1, 255))
        params = {"target": target, "offset": offset, "mask": mask}
        if target == "crc":
            if stream.crc:
                changed[len(original) - 4 + offset] ^= mask
        else:
            end = len(original) - (4 if stream.crc else 0)
            changed[min(offset, end - 1)] ^= mask
    plan = [Fault(kind, Point(PointKind.EVENT, number), params=params)]
    outputs, engine = run(plan, stream.wire(), cuts)
    events = list(stream.events)
    events[index] = DumpEvent(bytes(changed), events[index].ack)
    assert delivered(outputs) == frame_payloads(stream.payloads(events))
    if kind is FaultKind.CORRUPT_CRC and stream.crc:
        event = bytes(changed)
        assert zlib.crc32(event[:-4]) != int.from_bytes(event[-4:], "little")


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_withheld_heartbeats_are_left_out_and_the_sequence_still_runs(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    plan = [Fault(FaultKind.WITHHOLD_HEARTBEAT, Point(PointKind.EVENT, number))]
    outputs, _ = run(plan, stream.wire(), cuts)
    start = counted[number]
    events = [e for i, e in enumerate(stream.events) if i < start or not e.heartbeat]
    assert delivered(outputs) == frame_payloads(stream.payloads(events))
    if not stream.semi_sync:
        assert decoded(delivered(outputs), False) == [e.event for e in events]


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_wrong_heartbeats_carry_the_planned_position_and_file(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    position = data.draw(st.none() | st.integers(0, (1 << 32) - 1))
    file_name = data.draw(st.none() | st.sampled_from(["mysql-bin.000009", "x", "other.1"]))
    if position is None and file_name is None:
        position = 4
    params = {"position": position, "file": file_name}
    plan = [Fault(FaultKind.WRONG_HEARTBEAT, Point(PointKind.EVENT, number), params=params)]
    outputs, _ = run(plan, stream.wire(), cuts)
    start = counted[number]
    events = list(stream.events)
    for index in range(start, len(events)):
        event = events[index].event
        if events[index].heartbeat:
            timestamp, _, server_id, _, log_pos, flags = struct.unpack_from("<IBIIIH", event)
            body = event[19 : len(event) - (4 if stream.crc else 0)]
            body = body if file_name is None else file_name.encode()
            log_pos = log_pos if position is None else position
            rebuilt = struct.pack(
                "<IBIIIH",
                timestamp,
                EventType.HEARTBEAT,
                server_id,
                19 + len(body) + (4 if stream.crc else 0),
                log_pos,
                flags,
            )
            rebuilt += body
            if stream.crc:
                rebuilt += struct.pack("<I", zlib.crc32(rebuilt))
            events[index] = DumpEvent(rebuilt)
    assert delivered(outputs) == frame_payloads(stream.payloads(events))


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_an_err_mid_stream_follows_the_events_before_it(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    counted = stream.counted()
    number = data.draw(st.integers(0, len(counted) - 1))
    preset = data.draw(st.sampled_from(sorted(ERROR_PRESETS)))
    plan = [Fault(FaultKind.ERROR, Point(PointKind.EVENT, number), params={"preset": preset})]
    outputs, engine = run(plan, stream.wire(), cuts)
    index = counted[number]
    err = ERROR_PRESETS[preset]
    payload = encode_err(ErrPacket(err.errno, err.sqlstate, err.message))
    payloads = stream.payloads(list(stream.events[:index])) + [(payload, False)]
    assert delivered(outputs) == frame_payloads(payloads)
    assert closes(outputs) == [CloseMode.FIN]
    last = decoded(delivered(outputs), stream.semi_sync)[-1]
    assert parse_err(last) == ErrPacket(err.errno, err.sqlstate, err.message)


# --- timing regimes -----------------------------------------------------------------------------


@settings(max_examples=examples(1))
@given(streams(), st.data())
def test_stall_latency_and_bandwidth_delay_but_never_change_the_bytes(
    stream: Stream, data: st.DataObject
) -> None:
    wire = stream.wire()
    n = data.draw(st.integers(0, len(wire) - 1))
    kind = data.draw(st.sampled_from([FaultKind.STALL, FaultKind.LATENCY, FaultKind.BANDWIDTH]))
    params: dict[str, float] = {
        FaultKind.STALL: {"duration": 3.0},
        FaultKind.LATENCY: {"delay": 0.25},
        FaultKind.BANDWIDTH: {"rate": 1000},
    }[kind]
    clock = Clock()
    engine = FaultEngine([Fault(kind, Point(PointKind.BYTE, n), params=params)], clock=clock)
    engine.from_client(dump_command())
    # The stream arrives in two halves, one second apart.
    half = len(wire) // 2
    first = engine.from_server(wire[:half])
    clock.now += 1.0
    second = engine.from_server(wire[half:])
    outputs = first + second
    assert delivered(outputs) == wire
    check_order(outputs)
    # The engine sees whole packets: the fault starts when the packet holding byte n is whole
    # (at 100.0 if it ends in the first half, else at 101.0).
    started = 100.0 if packet_end(wire, n) <= half else 101.0
    sent = 0
    for output in outputs:
        if sent >= n and output.data:
            arrived = 100.0 if packet_end(wire, sent) <= half else 101.0
            if kind is FaultKind.STALL:
                assert output.at >= started + 3.0
            elif kind is FaultKind.LATENCY:
                assert output.at >= arrived + 0.25
            else:
                # Never more than ``rate`` bytes a second from the first limited byte on.
                assert output.at >= started + (sent - n) / 1000 - 1e-9
                assert len(output.data) <= 1000 // 50
        elif output.data:
            assert output.at == (100.0 if packet_end(wire, sent) <= half else 101.0)
        sent += len(output.data)


@settings(max_examples=examples(1))
@given(streams(), slicings, st.data())
def test_a_hold_keeps_everything_from_its_point_until_released_whatever_the_time(
    stream: Stream, cuts: list[int], data: st.DataObject
) -> None:
    """A stall without a duration: nothing from its byte on goes out, however late, and
    whatever else arrives (a cut planned after it too) until release(); then all of it, in
    order, not before the release."""
    wire = stream.wire()
    n = data.draw(st.integers(0, len(wire) - 1))
    cut_at = data.draw(st.one_of(st.none(), st.integers(n + 1, len(wire))))
    plan = [Fault(FaultKind.STALL, Point(PointKind.BYTE, n))]
    if cut_at is not None and cut_at < len(wire):
        plan.append(Fault(FaultKind.CUT, Point(PointKind.BYTE, cut_at), params={"close": "rst"}))
    clock = Clock()
    engine = FaultEngine(plan, clock=clock)
    engine.from_client(dump_command())
    before: list[Output] = []
    at = 0
    for piece in sorted(set(cuts)) + [len(wire)]:
        if piece > at:
            before += engine.from_server(wire[at:piece])
            at = piece
        clock.now += 1000.0  # time does not end a hold
        before += engine.poll()
    # Up to the packet that holds byte n (the engine decides on whole packets), then nothing.
    assert delivered(before) == wire[:n]
    assert engine.holding and closes(before) == []
    released_at = clock.now
    after = engine.release()
    assert not engine.holding and engine.release() == []
    check_order(before + after)
    assert all(output.at >= released_at for output in after)
    end = len(wire) if cut_at is None or cut_at >= len(wire) else cut_at
    assert delivered(before + after) == wire[:end]
    assert closes(after) == ([] if end == len(wire) else [CloseMode.RST])


def test_a_hold_ends_only_by_release_and_a_timed_stall_on_its_own() -> None:
    stream = Stream(tuple(DumpEvent(event_bytes(EventType.XID, bytes([i]) * 8)) for i in range(3)))
    wire = stream.wire()
    second = stream.packet_bounds()[1][0]
    for params, held in (({}, True), ({"duration": 2.0}, False)):
        clock = Clock()
        engine = FaultEngine(
            [Fault(FaultKind.STALL, Point(PointKind.EVENT, 1), params=params)], clock=clock
        )
        engine.from_client(dump_command())
        outputs = engine.from_server(wire)
        assert engine.holding is held
        if held:
            assert delivered(outputs) == wire[:second]
            clock.now += 3600.0
            assert engine.poll() == [] and engine.from_server(b"") == []
            clock.now += 1.0
            outputs += engine.release()
            assert [o.at for o in outputs if o.data][-1] == clock.now
        else:
            assert sorted({o.at for o in outputs}) == [100.0, 102.0]
        assert delivered(outputs) == wire


def packet_end(wire: bytes, offset: int) -> int:
    """The end of the packet holding byte ``offset`` of ``wire``."""
    at = 0
    while True:
        end = at + 4 + int.from_bytes(wire[at : at + 3], "little")
        if offset < end:
            return end
        at = end


def test_a_blackhole_keeps_the_connection_open_and_forwards_nothing() -> None:
    stream = Stream(tuple(DumpEvent(event_bytes(EventType.XID, bytes([i]) * 8)) for i in range(5)))
    wire = stream.wire()
    n = stream.packet_bounds()[2][0] + 3
    outputs, engine = run([Fault(FaultKind.BLACKHOLE, Point(PointKind.BYTE, n))], wire, [7, n + 1])
    assert delivered(outputs) == wire[:n]
    assert closes(outputs) == [] and not engine.closed


# --- connections the engine cannot read -------------------------------------------------------


def test_tls_and_compressed_connections_pass_through() -> None:
    for capability in (0x800, 0x20):
        engine = FaultEngine([Fault(FaultKind.CUT, Point(PointKind.BYTE, 0))], clock=Clock())
        response = (0x000FA685 | capability).to_bytes(4, "little") + bytes(28)
        engine.from_client(len(response).to_bytes(3, "little") + b"\x01" + response)
        assert engine.opaque
        engine.from_client(dump_command()[-(4 + 27) :])
        assert not engine.in_dump
        assert delivered(engine.from_server(b"anything")) == b"anything"


def test_the_semi_sync_header_is_recognised_and_acks_restart_the_count() -> None:
    events = [
        DumpEvent(event_bytes(EventType.XID, bytes([i]) * 8), ack=i % 2 == 1) for i in range(4)
    ]
    stream = Stream(tuple(events), semi_sync=True)
    assert sequences(stream.wire()) == [1, 2, 1, 2]
    plan = [Fault(FaultKind.DUPLICATE, Point(PointKind.EVENT, 1))]
    outputs, _ = run(plan, stream.wire())
    # The copy of the ACK-requesting event comes as seq 1 without the flag; the rest follow.
    assert sequences(delivered(outputs)) == [1, 2, 1, 2, 3]
    got = decoded(delivered(outputs), True, check_sequence=False)
    assert got == [
        events[0].event,
        events[1].event,
        events[1].event,
        events[2].event,
        events[3].event,
    ]
    body = delivered(outputs)
    second = 4 + 3 + len(events[0].event)  # where the second packet starts
    assert body[second + 4 + 2] == 1  # the original still asks for its ACK
    copy = second + 4 + 3 + len(events[1].event)
    assert body[copy + 4 : copy + 4 + 3] == b"\x00\xef\x00"


@settings(max_examples=examples(1))
@given(streams(), slicings, st.integers(1, 5))
def test_the_engine_counts_the_events_and_groups_the_decoder_finds(
    stream: Stream, cuts: list[int], size: int
) -> None:
    """The engine follows the stream (a fault it must follow every packet for: trickle from
    byte 0): its event and group counts are the decoder's, and a cut at the event after the
    last delivers everything and never fires."""
    wire = stream.wire()
    plan = [
        Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), params={"size": size}),
        Fault(FaultKind.CUT, Point(PointKind.EVENT, len(stream.counted()))),
    ]
    outputs, engine = run(plan, wire, cuts)
    assert delivered(outputs) == wire
    events = decoded(wire, stream.semi_sync, check_sequence=False)
    not_heartbeats = [e for e in events if e[4] != EventType.HEARTBEAT]
    assert engine.events == len(not_heartbeats)
    assert engine.transactions == sum(1 for e in not_heartbeats if e[4] == EventType.GTID)
    assert [fault.kind for fault in engine.pending] == [FaultKind.CUT]


# --- any plan -------------------------------------------------------------------------------

TRANSPARENT = {
    FaultKind.STALL,
    FaultKind.TRICKLE,
    FaultKind.BANDWIDTH,
    FaultKind.LATENCY,
    FaultKind.DROP_ACKS,  # client->server only
}
ENDING = {FaultKind.CUT, FaultKind.BLACKHOLE, FaultKind.ERROR, FaultKind.EOF}


@settings(max_examples=examples(2))
@given(streams(), fault_plans(max_faults=4, max_event=30, max_byte=1500), slicings, slicings)
def test_any_plan_on_any_stream_is_deterministic_and_well_formed(
    stream: Stream, plan: FaultPlan, cuts: list[int], other_cuts: list[int]
) -> None:
    """Whatever the plan: the engine does not fail, the output does not depend on how the
    server's bytes were read, times never go back, a close comes last; transparent faults
    change no byte; without a fault that ends the stream the client reads whole packets in
    an unbroken sequence."""
    wire = stream.wire()
    outputs, engine = run(plan, wire, cuts)
    again, _ = run(plan, wire, other_cuts)
    assert delivered(again) == delivered(outputs) and closes(again) == closes(outputs)
    check_order(outputs)
    kinds = {fault.kind for fault in plan.faults}
    if kinds <= TRANSPARENT:
        assert delivered(outputs) == wire
    if not kinds & ENDING and FaultKind.TRUNCATE not in kinds and not stream.semi_sync:
        reader = PacketReader(expected_seq=1)
        reader.feed(delivered(outputs))
        payloads = list(reader)
        assert sum(4 + len(p) for p in payloads) == len(delivered(outputs))
    assert engine.events <= len(stream.counted())


def test_dropped_acks_never_reach_the_server_and_other_packets_do() -> None:
    events = [DumpEvent(event_bytes(EventType.XID, bytes([i]) * 8), ack=True) for i in range(4)]
    stream = Stream(tuple(events), semi_sync=True)
    wire = stream.wire()
    plan = [Fault(FaultKind.DROP_ACKS, Point(PointKind.EVENT, 2))]
    engine = FaultEngine(plan, clock=Clock())
    assert engine.from_client(dump_command()) == dump_command()
    bounds = stream.packet_bounds()

    def ack(position: int) -> bytes:
        payload = b"\xef" + position.to_bytes(8, "little") + b"mysql-bin.000001"
        return len(payload).to_bytes(3, "little") + b"\x00" + payload

    quit_packet = b"\x01\x00\x00\x00\x01"
    # Events 0 and 1 are delivered before the fault's point: their ACKs pass.
    assert delivered(engine.from_server(wire[: bounds[1][1]])) == wire[: bounds[1][1]]
    assert engine.from_client(ack(100) + ack(200)[:5]) == ack(100)
    assert engine.from_client(ack(200)[5:]) == ack(200)
    # From event 2 on, ACKs are dropped (split anywhere); other packets still pass.
    assert delivered(engine.from_server(wire[bounds[1][1] :])) == wire[bounds[1][1] :]
    both = ack(300) + ack(400)
    assert engine.from_client(both[:7]) == b""
    assert engine.from_client(both[7:] + quit_packet) == quit_packet
    assert engine.dropped_acks == 2
