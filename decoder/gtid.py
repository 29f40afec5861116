"""Bodies of the GTID events (mirror of encoder/gtid.py).

GTID (162)::

    seq_no u64 | domain_id u32 | flags2 u8
    [commit_id u64]                       iff flags2 & GROUP_COMMIT_ID
    [format_id u32 | gtrid_len u8 | bqual_len u8 | gtrid | bqual]
                                          iff flags2 & (PREPARED_XA | COMPLETED_XA)
    [flags_extra u8                       iff non-zero
       [extra_engines u8]                 iff flags_extra & MULTI_ENGINE
       [sa_seq_no u64]]                   iff flags_extra & (COMMIT_ALTER | ROLLBACK_ALTER)
    zero padding up to 19 bytes

The server reads the optional parts by flags, not by length: after the XA part, the next byte
(if any) is flags_extra, a zero there being the padding. A body shorter than 19 bytes, or one
whose flags promise fields it lacks (MDEV-33672), is rejected. ``trailing`` holds every byte
after the known fields unless those bytes are exactly the zero padding to 19 bytes: this keeps
newer servers' additions (flags_extra bits this codec does not know, with their fields) and any
odd padding byte for byte.

GTID_LIST (163)::

    count u32 (low 28 bits = number of entries, top 4 bits = list_flags kept in place)
    count * (domain_id u32 | server_id u32 | seq_no u64)
    padding (a real server writes 2 zero bytes after an empty list; kept as it is)

BINLOG_CHECKPOINT (161)::

    name_len u32 | file name (no NUL)
"""

from __future__ import annotations

from decoder.builders import event_builder
from decoder.control import header_fields
from decoder.primitives import U32, U64, Buffer, name_text, need
from fakemaster.vocabulary.constants import GTID_LIST_COUNT_MASK, EventType, GtidExtraFlag, GtidFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    XaXid,
)
from fakemaster.vocabulary.header import EventHeader
from fakemaster.vocabulary.layouts import (
    GTID_BODY_MIN,
    GTID_FIXED,
    GTID_LIST_COUNT,
    GTID_LIST_ENTRY,
    GTID_XA_HEAD,
)

__all__ = [
    "DECODERS",
    "decode_binlog_checkpoint",
    "decode_gtid",
    "decode_gtid_list",
    "read_gtid_list",
]
# Plain ints: IntFlag arithmetic costs a Python-level call per test, on every GTID event.
_XA_FLAGS = int(GtidFlag.PREPARED_XA | GtidFlag.COMPLETED_XA)
_ALTER_FLAGS = int(GtidExtraFlag.COMMIT_ALTER | GtidExtraFlag.ROLLBACK_ALTER)
_GROUP_COMMIT_ID = int(GtidFlag.GROUP_COMMIT_ID)
_MULTI_ENGINE = int(GtidExtraFlag.MULTI_ENGINE)
_OPTIONAL_FLAGS = _GROUP_COMMIT_ID | _XA_FLAGS
_unpack_fixed = GTID_FIXED.unpack_from
_FIXED_SIZE = GTID_FIXED.size
_PADDING = bytes(GTID_BODY_MIN - _FIXED_SIZE)
_new_gtid = event_builder(
    GtidEvent,
    ("timestamp", "server_id", "log_pos", "flags", "seq_no", "domain_id", "flags2", "commit_id",
     "xid", "flags_extra", "extra_engines", "sa_seq_no", "trailing"),
)  # fmt: skip


def decode_gtid(body: Buffer, header: EventHeader, ctx: BinlogContext) -> GtidEvent:
    size = len(body)
    if size < GTID_BODY_MIN:
        raise DecodeError(
            f"truncated: GTID body is {size} bytes, at least {GTID_BODY_MIN} needed", offset=0
        )
    seq_no, domain_id, flags2 = _unpack_fixed(body, 0)
    if size == GTID_BODY_MIN and not flags2 & _OPTIONAL_FLAGS and body[_FIXED_SIZE:] == _PADDING:
        # The common GTID: no commit id, no XA, no flags_extra, zero padding.
        event: GtidEvent = _new_gtid(
            header[0], header[2], header[4], header[5], seq_no, domain_id, flags2,
            None, None, 0, None, None, b"",
        )  # fmt: skip
        return event
    pos = GTID_FIXED.size
    commit_id = None
    if flags2 & _GROUP_COMMIT_ID:
        need(body, pos, 8, "GTID commit_id")
        commit_id = U64.unpack_from(body, pos)[0]
        pos += 8
    xid = None
    if flags2 & _XA_FLAGS:
        need(body, pos, GTID_XA_HEAD.size, "GTID XA xid header")
        format_id, gtrid_len, bqual_len = GTID_XA_HEAD.unpack_from(body, pos)
        pos += GTID_XA_HEAD.size
        need(body, pos, gtrid_len + bqual_len, "GTID XA xid data")
        gtrid = bytes(body[pos : pos + gtrid_len])
        pos += gtrid_len
        xid = XaXid(format_id, gtrid, bytes(body[pos : pos + bqual_len]))
        pos += bqual_len
    flags_extra = 0
    extra_engines = None
    sa_seq_no = None
    if pos < size and body[pos]:
        flags_extra = body[pos]
        pos += 1
        if flags_extra & _MULTI_ENGINE:
            need(body, pos, 1, "GTID extra_engines promised by flags_extra (MDEV-33672)")
            extra_engines = body[pos]
            pos += 1
        if flags_extra & _ALTER_FLAGS:
            need(body, pos, 8, "GTID sa_seq_no promised by flags_extra (MDEV-33672)")
            sa_seq_no = U64.unpack_from(body, pos)[0]
            pos += 8
    rest = bytes(body[pos:])
    is_padding = size == max(GTID_BODY_MIN, pos) and not any(rest)
    return GtidEvent(
        timestamp=header[0],
        server_id=header[2],
        log_pos=header[4],
        flags=header[5],
        seq_no=seq_no,
        domain_id=domain_id,
        flags2=flags2,
        commit_id=commit_id,
        xid=xid,
        flags_extra=flags_extra,
        extra_engines=extra_engines,
        sa_seq_no=sa_seq_no,
        trailing=b"" if is_padding else rest,
    )


def read_gtid_list(body: Buffer) -> tuple[tuple[Gtid, ...], int, int]:
    """The GTIDs of a GTID_LIST body, its list_flags and the offset after its entries."""
    start = GTID_LIST_COUNT.size
    need(body, 0, start, "GTID_LIST count")
    field = GTID_LIST_COUNT.unpack_from(body, 0)[0]
    count = field & GTID_LIST_COUNT_MASK
    end = start + count * GTID_LIST_ENTRY.size
    if end > len(body):
        raise DecodeError(
            f"truncated: GTID_LIST of {count} entries needs {end - start} bytes, "
            f"{len(body) - start} left",
            offset=start,
        )
    gtids = tuple(
        Gtid(domain, server, seq)
        for domain, server, seq in GTID_LIST_ENTRY.iter_unpack(body[start:end])
    )
    return gtids, field & ~GTID_LIST_COUNT_MASK, end


def decode_gtid_list(body: Buffer, header: EventHeader, ctx: BinlogContext) -> GtidListEvent:
    gtids, list_flags, end = read_gtid_list(body)
    return GtidListEvent(
        **header_fields(header), gtids=gtids, list_flags=list_flags, padding=bytes(body[end:])
    )


def decode_binlog_checkpoint(
    body: Buffer, header: EventHeader, ctx: BinlogContext
) -> BinlogCheckpointEvent:
    need(body, 0, 4, "BINLOG_CHECKPOINT name length")
    length = U32.unpack_from(body, 0)[0]
    need(body, 4, length, "BINLOG_CHECKPOINT file name")
    if 4 + length != len(body):
        raise DecodeError("BINLOG_CHECKPOINT has bytes after its file name", offset=4 + length)
    return BinlogCheckpointEvent(**header_fields(header), file_name=name_text(bytes(body[4:])))


DECODERS = {
    EventType.GTID: decode_gtid,
    EventType.GTID_LIST: decode_gtid_list,
    EventType.BINLOG_CHECKPOINT: decode_binlog_checkpoint,
}
