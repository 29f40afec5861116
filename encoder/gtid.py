"""Bodies of the GTID events: GTID (162), GTID_LIST (163), BINLOG_CHECKPOINT (161).

Mirror of decoder/gtid.py, which documents the layouts and the ``trailing`` rule.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from encoder.primitives import U32, name_bytes
from fakemaster.constants import GTID_LIST_COUNT_MASK, GtidExtraFlag, GtidFlag
from fakemaster.context import BinlogContext
from fakemaster.errors import EncodeError
from fakemaster.events import BinlogCheckpointEvent, Event, GtidEvent, GtidListEvent

GTID_BODY_MIN = 19
# A real server pads an empty GTID_LIST so that the event can later be replaced in place
# by a dummy event (MariaDB 10.11.19 writes exactly these two zero bytes).
EMPTY_GTID_LIST_PADDING = b"\x00\x00"

_GTID_FIXED = struct.Struct("<QIB")
_XA_HEAD = struct.Struct("<IBB")
_U64 = struct.Struct("<Q")
_GTID_ENTRY = struct.Struct("<IIQ")
_XA_FLAGS = GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA
_ALTER_FLAGS = GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER


def _check_presence(name: str, value: object, flagged: bool) -> None:
    if flagged and value is None:
        raise EncodeError(f"GTID flags promise {name} but it is None")
    if not flagged and value is not None:
        raise EncodeError(f"GTID {name} is set but its flag is clear")


def encode_gtid(event: GtidEvent, ctx: BinlogContext) -> bytes:
    flags2 = event.flags2
    extra = event.flags_extra
    _check_presence("commit_id", event.commit_id, bool(flags2 & GtidFlag.GROUP_COMMIT_ID))
    _check_presence("xid", event.xid, bool(flags2 & _XA_FLAGS))
    _check_presence("extra_engines", event.extra_engines, bool(extra & GtidExtraFlag.MULTI_ENGINE))
    _check_presence("sa_seq_no", event.sa_seq_no, bool(extra & _ALTER_FLAGS))
    try:
        parts = [_GTID_FIXED.pack(event.seq_no, event.domain_id, flags2)]
        if event.commit_id is not None:
            parts.append(_U64.pack(event.commit_id))
        if event.xid is not None:
            xid = event.xid
            parts.append(_XA_HEAD.pack(xid.format_id, len(xid.gtrid), len(xid.bqual)))
            parts.append(xid.gtrid)
            parts.append(xid.bqual)
        if extra:
            parts.append(bytes((extra,)))
            if event.extra_engines is not None:
                parts.append(bytes((event.extra_engines,)))
            if event.sa_seq_no is not None:
                parts.append(_U64.pack(event.sa_seq_no))
    except (struct.error, ValueError) as exc:
        raise EncodeError(f"GTID field out of range: {exc}") from exc
    body = b"".join(parts)
    trailing = event.trailing
    if not trailing:
        return body.ljust(GTID_BODY_MIN, b"\x00")
    # With trailing bytes the event is written exactly as fields + trailing; these checks keep
    # the decoder from reading it back differently.
    if len(body) + len(trailing) < GTID_BODY_MIN:
        raise EncodeError("GTID trailing bytes must take the body to at least 19 bytes")
    if not extra and trailing[0]:
        raise EncodeError("GTID trailing byte would be read as flags_extra")
    if len(body) + len(trailing) == GTID_BODY_MIN and not any(trailing):
        raise EncodeError("GTID trailing bytes equal the zero padding; use trailing=b''")
    return body + trailing


def encode_gtid_list(event: GtidListEvent, ctx: BinlogContext) -> bytes:
    count = len(event.gtids)
    if count > GTID_LIST_COUNT_MASK:
        raise EncodeError(f"GTID_LIST of {count} entries does not fit 28 bits")
    if event.list_flags & GTID_LIST_COUNT_MASK or not 0 <= event.list_flags <= 0xFFFF_FFFF:
        raise EncodeError("GTID_LIST list_flags must only use the top 4 bits of the count")
    entries = bytearray(U32.pack(count | event.list_flags))
    pack_entry = _GTID_ENTRY.pack
    try:
        for gtid in event.gtids:
            entries += pack_entry(gtid.domain_id, gtid.server_id, gtid.seq_no)
    except struct.error as exc:
        raise EncodeError(f"GTID_LIST entry out of range: {exc}") from exc
    return bytes(entries) + event.padding


def encode_binlog_checkpoint(event: BinlogCheckpointEvent, ctx: BinlogContext) -> bytes:
    name = name_bytes(event.file_name)
    return U32.pack(len(name)) + name


ENCODERS: dict[type[Event], Callable[..., bytes]] = {
    GtidEvent: encode_gtid,
    GtidListEvent: encode_gtid_list,
    BinlogCheckpointEvent: encode_binlog_checkpoint,
}
