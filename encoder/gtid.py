"""Bodies of the GTID events: GTID (162), GTID_LIST (163), BINLOG_CHECKPOINT (161).

Mirror of decoder/gtid.py, which documents the layouts and the ``trailing`` rule.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from encoder.primitives import U32, U64, name_bytes
from fakemaster.vocabulary.constants import GTID_LIST_COUNT_MASK, GtidExtraFlag, GtidFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import BinlogCheckpointEvent, Event, GtidEvent, GtidListEvent
from fakemaster.vocabulary.layouts import (
    GTID_BODY_MIN,
    GTID_FIXED,
    GTID_LIST_COUNT,
    GTID_LIST_ENTRY,
    GTID_XA_HEAD,
)

__all__ = ["ENCODERS", "encode_binlog_checkpoint", "encode_gtid", "encode_gtid_list"]

# Plain ints: tested once per GTID event (flag arithmetic on enums is slow).
_GROUP_COMMIT_ID = int(GtidFlag.GROUP_COMMIT_ID)
_XA_FLAGS = int(GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA)
_MULTI_ENGINE = int(GtidExtraFlag.MULTI_ENGINE)
_ALTER_FLAGS = int(GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER)


def _check_presence(name: str, value: object, flagged: bool, flags: str) -> None:
    if flagged and value is None:
        raise EncodeError(f"GTID {name} is None but its flag is set (in {flags})", field=name)
    if not flagged and value is not None:
        raise EncodeError(
            f"GTID {name} is set but its flag is clear (in {flags})", field=name, value=value
        )


def encode_gtid(event: GtidEvent, ctx: BinlogContext) -> bytes:
    flags2 = int(event.flags2)
    extra = int(event.flags_extra)
    _check_presence("commit_id", event.commit_id, bool(flags2 & _GROUP_COMMIT_ID), "flags2")
    _check_presence("xid", event.xid, bool(flags2 & _XA_FLAGS), "flags2")
    multi_engine = bool(extra & _MULTI_ENGINE)
    _check_presence("extra_engines", event.extra_engines, multi_engine, "flags_extra")
    _check_presence("sa_seq_no", event.sa_seq_no, bool(extra & _ALTER_FLAGS), "flags_extra")
    try:
        parts = [GTID_FIXED.pack(event.seq_no, event.domain_id, flags2)]
        if event.commit_id is not None:
            parts.append(U64.pack(event.commit_id))
        if event.xid is not None:
            xid = event.xid
            parts.append(GTID_XA_HEAD.pack(xid.format_id, len(xid.gtrid), len(xid.bqual)))
            parts.append(xid.gtrid)
            parts.append(xid.bqual)
        if extra:
            parts.append(bytes((extra,)))
            if event.extra_engines is not None:
                parts.append(bytes((event.extra_engines,)))
            if event.sa_seq_no is not None:
                parts.append(U64.pack(event.sa_seq_no))
    except (struct.error, ValueError) as exc:  # fields are checked first (encoder/fields.py)
        raise EncodeError(f"a field is out of range: {exc}") from exc
    body = b"".join(parts)
    trailing = event.trailing
    if not trailing:
        return body.ljust(GTID_BODY_MIN, b"\x00")
    # With trailing bytes the event is written exactly as fields + trailing; these checks keep
    # the decoder from reading it back differently.
    if len(body) + len(trailing) < GTID_BODY_MIN:
        raise EncodeError(
            f"trailing bytes must take the body to at least {GTID_BODY_MIN} bytes", field="trailing"
        )
    if not extra and trailing[0]:
        raise EncodeError("trailing byte would be read as flags_extra", field="trailing")
    if len(body) + len(trailing) == GTID_BODY_MIN and not any(trailing):
        raise EncodeError(
            "trailing bytes equal the zero padding; use trailing=b''", field="trailing"
        )
    return body + trailing


def encode_gtid_list(event: GtidListEvent, ctx: BinlogContext) -> bytes:
    count = len(event.gtids)
    if count > GTID_LIST_COUNT_MASK:
        raise EncodeError(f"gtids: {count} entries, the count holds 28 bits", field="gtids")
    if event.list_flags & GTID_LIST_COUNT_MASK or not 0 <= event.list_flags <= 0xFFFF_FFFF:
        raise EncodeError(
            f"list_flags {event.list_flags:#x} must only use the top 4 bits of the count",
            field="list_flags",
        )
    entries = bytearray(GTID_LIST_COUNT.pack(count | event.list_flags))
    pack_entry = GTID_LIST_ENTRY.pack
    try:
        for gtid in event.gtids:
            entries += pack_entry(gtid.domain_id, gtid.server_id, gtid.seq_no)
    except struct.error as exc:  # fields are checked first (encoder/fields.py)
        raise EncodeError(f"gtids: an entry is out of range: {exc}", field="gtids") from exc
    return bytes(entries) + event.padding


def encode_binlog_checkpoint(event: BinlogCheckpointEvent, ctx: BinlogContext) -> bytes:
    name = name_bytes(event.file_name)
    return U32.pack(len(name)) + name


ENCODERS: dict[type[Event], Callable[..., bytes]] = {
    GtidEvent: encode_gtid,
    GtidListEvent: encode_gtid_list,
    BinlogCheckpointEvent: encode_binlog_checkpoint,
}
