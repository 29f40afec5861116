"""A block of binlog events framed as dump packets in one pass: the dump's hot path.

A replica that needs no event rewritten (``@mariadb_slave_capability`` GTID, no semi-sync, no
GTID skipping or UNTIL, no decryption, no SKIP_REPLICATION filter) gets every event of a file as
it is, each in one packet: ``[3-byte length][sequence][0x00][event]``, events of 16 MiB or more
split as every packet is. Only two event types are left out: ANNOTATE_ROWS when the replica did
not ask for them (``BINLOG_SEND_ANNOTATE_ROWS_EVENT``), and START_ENCRYPTION (never sent).

:func:`frame_block` does that for a whole block of whole events with everything per-event
hoisted out of the loop. The bytes depend only on the events and the sequence number the block
starts at, which is what lets a server frame a closed file once and send the same bytes to every
replica that reaches it with the same sequence number (:mod:`fakemaster.server.frame_cache`).

The runs of small events are framed in C where the package was built with its one extension
(``_framing_accel``, :data:`ACCELERATED`): in Python a pass per event costs about 0.3 us, three
times what a real primary spends on an event's whole dump. :func:`frame_block_in_python` is the
same framing without it, used where the extension could not be built (and by the tests, which
hold both to framing event by event).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from encoder.packets import frame_parts
from fakemaster.vocabulary.constants import HEADER_LEN, MAX_PACKET_PAYLOAD, EventType
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET, TYPE_CODE_OFFSET

__all__ = [
    "ACCELERATED",
    "LARGE_EVENT",
    "FramedBlock",
    "FramedSpan",
    "SpanEnd",
    "SmallRun",
    "frame_block",
    "frame_block_in_python",
    "frame_small_run",
    "is_left_out",
    "large_event_head",
]

# Events from this size on are not copied into the framed block: their packets are the header
# bytes plus a memoryview of the event (a large event is never copied per replica).
LARGE_EVENT = 64 << 10

# The type code and the length of an event, read together from the type code's offset (the
# server id between them skipped).
_TYPE_AND_LENGTH = struct.Struct("<B4xI")
assert TYPE_CODE_OFFSET + _TYPE_AND_LENGTH.size == EVENT_LENGTH_OFFSET + 4

# The packet header (3-byte length, sequence number) and the OK byte of an event packet.
_EVENT_PACKET_HEAD = struct.Struct("<IB")
_OK = b"\x00"


class FramedBlock(NamedTuple):
    """What :func:`frame_block` made of a block."""

    # The packets, in order: framed small events joined, large ones as header + view.
    parts: list[bytes | bytearray | memoryview]
    # The sequence number of the packet after the last one.
    seq: int
    # Events framed (left-out events not counted).
    events: int
    # The block offset of the last event walked (sent or left out); -1 for an empty block.
    last_event: int
    # Bytes of the parts (what goes on the wire).
    size: int
    # Bytes of the block walked: the whole events at its start (all of a block of whole events).
    walked: int = 0


_START_ENCRYPTION = EventType.START_ENCRYPTION.value
# The event header as the C framing reads it: its length, the type code's and the length's offsets.
_LAYOUT = (HEADER_LEN, TYPE_CODE_OFFSET, EVENT_LENGTH_OFFSET)
_ANNOTATE_ROWS = EventType.ANNOTATE_ROWS.value


# The walk of small events (the C extension's frame_small, or _frame_small_in_python).
_FrameSmall = Callable[
    [bytes | bytearray | memoryview, int, int, int, int, int, tuple[int, int, int]],
    tuple[bytes, int, int, int, int],
]


def _skipped_annotate(send_annotate: bool) -> int:
    """The type code left out besides START_ENCRYPTION: ANNOTATE_ROWS unless the replica asked
    for them (START_ENCRYPTION again when it did)."""
    return _START_ENCRYPTION if send_annotate else _ANNOTATE_ROWS


def _frame_small_in_python(
    block: bytes | bytearray | memoryview,
    index: int,
    seq: int,
    skip: int,
    skip_annotate: int,
    large: int,
    layout: tuple[int, int, int],
) -> tuple[bytes, int, int, int, int]:
    """The C extension's ``frame_small`` in Python (see _framing_accel.c): the packets of the
    small events from ``index`` on, joined; the walk stops at the end, before bytes that are
    no whole event and before a large event (skipped types are walked past whatever their
    size). Returns (packets, index, seq, events, last_event)."""
    if index < 0 or index > len(block) or not 0 <= seq <= 0xFF:
        raise ValueError("frame_small: index outside the block, seq above 255 or a bad layout")
    # Indexing and slicing bytes is cheaper than a memoryview's.
    data = block if isinstance(block, bytes) else memoryview(block)
    header_len, type_offset, _length_offset = layout
    unpack_type_and_length = _TYPE_AND_LENGTH.unpack_from
    pack_head = _EVENT_PACKET_HEAD.pack
    packets: list[bytes | memoryview] = []
    add = packets.append
    last_event = -1
    end = len(data)
    while index + header_len <= end:
        type_code, length = unpack_type_and_length(data, index + type_offset)
        following = index + length
        if length < header_len or following > end:
            break
        if type_code == skip or type_code == skip_annotate:
            last_event = index
            index = following
            continue
        if length >= large:
            break
        last_event = index
        add(pack_head((length + 1) | seq << 24, 0))
        add(data[index:following])
        seq = (seq + 1) & 0xFF
        index = following
    return b"".join(packets), index, seq, len(packets) >> 1, last_event


_frame_small_in_c: _FrameSmall | None
try:
    from fakemaster.core.dump._framing_accel import frame_small as _frame_small_in_c
except ImportError:  # built without its extension (no compiler where it was installed)
    _frame_small_in_c = None

# Whether the runs of small events are framed in C (the package's extension was built).
ACCELERATED = _frame_small_in_c is not None
_frame_small = _frame_small_in_c or _frame_small_in_python


class SmallRun(NamedTuple):
    """What :func:`frame_small_run` framed."""

    # The packets of the small events walked, joined.
    packets: bytes
    # The block offset where the walk stopped.
    stopped_at: int
    # The sequence number of the packet after the last one.
    seq: int
    # Events framed (left-out events not counted).
    events: int
    # The block offset of the last event walked (sent or left out); -1 when none was.
    last_event: int


def frame_small_run(
    block: bytes | bytearray | memoryview, index: int, seq: int, *, send_annotate: bool
) -> SmallRun:
    """The dump packets of the small events of ``block`` from ``index`` on, joined (in C when
    :data:`ACCELERATED`). The walk stops at the end, before bytes that are no whole event and
    before a large event (:data:`LARGE_EVENT` bytes or more, which the caller frames without
    copying it: :func:`large_event_head`); left-out types are walked past whatever their size."""
    skip_annotate = _skipped_annotate(send_annotate)
    return SmallRun(
        *_frame_small(block, index, seq, _START_ENCRYPTION, skip_annotate, LARGE_EVENT, _LAYOUT)
    )


def is_left_out(type_code: int, *, send_annotate: bool) -> bool:
    """Whether an event of ``type_code`` is never sent on this path (see the module docstring)."""
    return type_code in (_START_ENCRYPTION, _skipped_annotate(send_annotate))


def large_event_head(length: int, seq: int) -> bytes:
    """The packet header and OK byte of an event of ``length`` bytes (below
    :data:`MAX_PACKET_PAYLOAD` - 1: one packet) numbered ``seq``; the event follows as it is."""
    return _EVENT_PACKET_HEAD.pack((length + 1) | seq << 24, 0)


def _frame_large(
    event: memoryview, seq: int, parts: list[bytes | bytearray | memoryview]
) -> tuple[int, int]:
    """Append the packets of a large event to ``parts``, the event never copied (a view after
    its header; split every 16 MiB as every packet is); (the next sequence number, bytes)."""
    length = len(event)
    if length + 1 < MAX_PACKET_PAYLOAD:
        parts.append(large_event_head(length, seq))
        parts.append(event)
        return (seq + 1) & 0xFF, length + 5
    packets, seq = frame_parts((_OK, event), seq)
    parts.extend(packets)
    return seq, sum(len(packet) for packet in packets)


def _frame_block_with(
    frame_small: _FrameSmall,
    block: bytes | bytearray | memoryview,
    seq: int,
    send_annotate: bool,
) -> FramedBlock:
    view = memoryview(block)
    unpack_type_and_length = _TYPE_AND_LENGTH.unpack_from
    skip_annotate = _skipped_annotate(send_annotate)
    parts: list[bytes | bytearray | memoryview] = []
    size = 0
    events = 0
    last_event = -1
    index = 0
    end = len(view)
    while True:
        # Stops at the end, before bytes that are no whole event, or before a large event
        # (skipped types are walked past whatever their size).
        joined, index, seq, framed, walked_last = frame_small(
            block, index, seq, _START_ENCRYPTION, skip_annotate, LARGE_EVENT, _LAYOUT
        )
        if framed:
            parts.append(joined)
            size += len(joined)
            events += framed
        if walked_last >= 0:
            last_event = walked_last
        if index + HEADER_LEN > end:
            break
        _type_code, length = unpack_type_and_length(view, index + TYPE_CODE_OFFSET)
        following = index + length
        if length < HEADER_LEN or following > end:
            break
        last_event = index
        events += 1
        seq, sent = _frame_large(view[index:following], seq, parts)
        size += sent
        index = following
    return FramedBlock(parts, seq, events, last_event, size, index)


def frame_block(
    block: bytes | bytearray | memoryview, seq: int, *, send_annotate: bool
) -> FramedBlock:
    """The dump packets of the whole events at the start of ``block``, the first one numbered
    ``seq``. The walk stops before an event that does not end in ``block`` (or bytes that
    cannot be an event header): ``walked`` says where; a block the store read as whole events
    is walked to its end. The runs of small events are framed in C (when :data:`ACCELERATED`),
    large events are never copied: their packets are a header and a view of the block."""
    return _frame_block_with(_frame_small, block, seq, send_annotate)


def frame_block_in_python(
    block: bytes | bytearray | memoryview, seq: int, *, send_annotate: bool
) -> FramedBlock:
    """:func:`frame_block` without the C extension (what runs where it could not be built)."""
    return _frame_block_with(_frame_small_in_python, block, seq, send_annotate)


class SpanEnd(NamedTuple):
    """Where a span sent from the frame cache ended."""

    # The file offset after the last event sent (an event boundary).
    offset: int
    # The sequence number of the next packet.
    seq: int
    # Events sent (left-out ones not counted).
    events: int
    # The file offset of the last event walked.
    last_event: int


@dataclass
class FramedSpan:
    """Asked of the shell by a dump (``DumpStream.next_parts``): send the framed events of
    ``file_name`` from ``offset`` on (the first packet numbered ``seq``), as many as the frame
    cache holds or can frame now, up to ``end`` at most, then set :attr:`reached`. Left None
    (the cache could not frame them: the bytes are not whole events), the dump frames and sends
    them itself, and reports the error a primary gives."""

    file_name: str
    offset: int
    seq: int
    send_annotate: bool
    # The readable end of the file when the dump asked.
    end: int
    reached: SpanEnd | None = None
