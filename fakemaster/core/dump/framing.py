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
    "frame_block",
    "frame_block_in_python",
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

_frame_small: (
    Callable[
        [bytes | bytearray | memoryview, int, int, int, int, int, tuple[int, int, int]],
        tuple[bytes, int, int, int, int],
    ]
    | None
)
try:
    from fakemaster.core.dump._framing_accel import frame_small as _frame_small
except ImportError:  # built without its extension (no compiler where it was installed)
    _frame_small = None

# Whether the runs of small events are framed in C (the package's extension was built).
ACCELERATED = _frame_small is not None


def frame_block_in_python(
    block: bytes | bytearray | memoryview, seq: int, *, send_annotate: bool
) -> FramedBlock:
    """:func:`frame_block` without the C extension: the dump packets of the whole events at the start of ``block``, the first one numbered
    ``seq``. The walk stops before an event that does not end in ``block`` (or bytes that
    cannot be an event header): ``walked`` says where; a block the store read as whole events
    is walked to its end."""
    view = memoryview(block)
    # Indexing and slicing bytes is cheaper than a memoryview's (small events are copied once
    # more into the joined part; large ones are views, never copied).
    data = block if isinstance(block, bytes) else view
    unpack_type_and_length = _TYPE_AND_LENGTH.unpack_from
    pack_head = _EVENT_PACKET_HEAD.pack
    # The two event types never sent (the same one twice when ANNOTATE_ROWS are sent).
    skip = _START_ENCRYPTION
    skip_annotate = _START_ENCRYPTION if send_annotate else _ANNOTATE_ROWS
    parts: list[bytes | bytearray | memoryview] = []
    # The packets of the small events since the last large one, joined into one part.
    small: list[bytes | memoryview] = []
    add_small = small.append
    size = 0
    events = 0
    last_event = -1
    index = 0
    end = len(view)
    type_offset = TYPE_CODE_OFFSET
    large = LARGE_EVENT
    header_len = HEADER_LEN
    while index + header_len <= end:
        type_code, length = unpack_type_and_length(data, index + type_offset)
        following = index + length
        if length < header_len or following > end:
            break
        last_event = index
        if type_code == skip_annotate or type_code == skip:
            index = following
            continue
        if length < large:
            add_small(pack_head((length + 1) | seq << 24, 0))
            add_small(data[index:following])
            seq = (seq + 1) & 0xFF
        else:
            if small:
                joined = b"".join(small)
                parts.append(joined)
                size += len(joined)
                events += len(small) >> 1  # a header and an event each
                small.clear()
            events += 1
            event = view[index:following]
            if length + 1 < MAX_PACKET_PAYLOAD:
                parts.append(pack_head((length + 1) | seq << 24, 0))
                parts.append(event)
                seq = (seq + 1) & 0xFF
                size += length + 5
            else:
                packets, seq = frame_parts((_OK, event), seq)
                parts.extend(packets)
                size += sum(len(packet) for packet in packets)
        index = following
    if small:
        joined = b"".join(small)
        parts.append(joined)
        size += len(joined)
        events += len(small) >> 1
    return FramedBlock(parts, seq, events, last_event, size, index)


def frame_block(
    block: bytes | bytearray | memoryview, seq: int, *, send_annotate: bool
) -> FramedBlock:
    """The dump packets of the whole events at the start of ``block``, the first one numbered
    ``seq``. The walk stops before an event that does not end in ``block`` (or bytes that
    cannot be an event header): ``walked`` says where; a block the store read as whole events
    is walked to its end. The runs of small events are framed in C (when :data:`ACCELERATED`),
    large events (never copied) and packets of 16 MiB or more as in
    :func:`frame_block_in_python`."""
    if _frame_small is None:
        return frame_block_in_python(block, seq, send_annotate=send_annotate)
    view = memoryview(block)
    unpack_type_and_length = _TYPE_AND_LENGTH.unpack_from
    skip_annotate = _START_ENCRYPTION if send_annotate else _ANNOTATE_ROWS
    parts: list[bytes | bytearray | memoryview] = []
    size = 0
    events = 0
    last_event = -1
    index = 0
    end = len(view)
    while True:
        # Stops at the end, before bytes that are no whole event, or before a large event
        # (skipped types are walked past whatever their size).
        joined, index, seq, framed, walked_last = _frame_small(
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
        type_code, length = unpack_type_and_length(view, index + TYPE_CODE_OFFSET)
        following = index + length
        if length < HEADER_LEN or following > end:
            break
        last_event = index
        events += 1
        event = view[index:following]
        if length + 1 < MAX_PACKET_PAYLOAD:
            parts.append(_EVENT_PACKET_HEAD.pack((length + 1) | seq << 24, 0))
            parts.append(event)
            seq = (seq + 1) & 0xFF
            size += length + 5
        else:
            packets, seq = frame_parts((_OK, event), seq)
            parts.extend(packets)
            size += sum(len(packet) for packet in packets)
        index = following
    return FramedBlock(parts, seq, events, last_event, size, index)


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
