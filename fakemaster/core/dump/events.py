"""The events a dump thread makes up or rewrites, as ``mysql_binlog_send`` does.

Made up: the fake ROTATE, HEARTBEAT and GTID_LIST events (:func:`fake_event`,
:func:`gtid_list_body`). Rewritten for replicas whose ``@mariadb_slave_capability`` is too old
for an event: :func:`dummy_event` (``Query_log_event::dummy_event``, a same-size no-op) and
:func:`begin_event` (a GTID event as the BEGIN query it stands for). :func:`fix_crc` recomputes
the CRC32 of an event changed in place.
"""

from __future__ import annotations

from encoder.gtid import encode_gtid_list
from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    EventFlag,
    EventType,
    QueryStatus,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Gtid, GtidListEvent
from fakemaster.vocabulary.header import FLAGS_OFFSET as _FLAGS_OFFSET
from fakemaster.vocabulary.header import HEADER as _EVENT_HEADER
from fakemaster.vocabulary.header import TYPE_CODE_OFFSET, event_crc
from fakemaster.vocabulary.layouts import EMPTY_GTID_LIST_PADDING, QUERY_POST_HEADER
from fakemaster.vocabulary.layouts import GTID_BODY_MIN as _GTID_BODY_LEN
from fakemaster.vocabulary.layouts import U16 as _U16
from fakemaster.vocabulary.layouts import U32 as _U32

__all__ = ["begin_event", "checksummed", "dummy_event", "fake_event", "fix_crc", "gtid_list_body"]

_DUMMY_USER_VAR_MIN = HEADER_LEN + 4 + 1 + 1  # name length, one name byte, the NULL flag
# A dummy QUERY: a zero post-header (no status variables, empty db), the db's NUL, the text.
_DUMMY_QUERY_HEAD = QUERY_POST_HEADER.size + 1
_DUMMY_QUERY_MIN = HEADER_LEN + _DUMMY_QUERY_HEAD + 1  # one byte of text at least
# The fake GTID_LIST is encoded by the codec, which needs no stream state for it.
_NO_CONTEXT = BinlogContext()
_DUMMY_TEXT = "# Dummy event replacing event type {} that slave cannot handle."
_DUMMY_VAR_NAME = b"!dummyvar"


def checksummed(alg: int) -> bool:
    return alg not in (ChecksumAlg.OFF, ChecksumAlg.UNDEF)


def fix_crc(event: bytearray, alg: int) -> None:
    if checksummed(alg) and len(event) >= HEADER_LEN + CHECKSUM_LEN:
        end = len(event) - CHECKSUM_LEN
        _U32.pack_into(event, end, event_crc(memoryview(event)[:end], event[TYPE_CODE_OFFSET]))


def fake_event(
    type_code: int, server_id: int, body: bytes, *, log_pos: int, flags: int, alg: int
) -> bytes:
    """An event made up by the dump thread: timestamp 0, CRC32 iff ``alg`` says so."""
    checksum = checksummed(alg)
    length = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    data = _EVENT_HEADER.pack(0, type_code, server_id, length, log_pos, flags) + body
    if checksum:
        data += _U32.pack(event_crc(data, type_code))
    return data


def gtid_list_body(gtids: tuple[Gtid, ...], list_flags: int = 0) -> bytes:
    """The body of a GTID_LIST the dump thread makes up (padded when empty, as the server's)."""
    padding = b"" if gtids else EMPTY_GTID_LIST_PADDING
    event = GtidListEvent(gtids=gtids, list_flags=list_flags, padding=padding)
    return encode_gtid_list(event, _NO_CONTEXT)


def dummy_event(event: bytes | bytearray | memoryview, alg: int) -> bytes | None:
    """``Query_log_event::dummy_event``: the same-size no-op that replaces an event an old
    replica cannot handle (None if the event is too short to be replaced)."""
    out = bytearray(event)
    data_len = len(out) - (CHECKSUM_LEN if checksummed(alg) else 0)
    if data_len < _DUMMY_USER_VAR_MIN:
        return None
    flags = _U16.unpack_from(out, _FLAGS_OFFSET)[0]
    flags = (flags & ~EventFlag.THREAD_SPECIFIC) | EventFlag.SUPPRESS_USE
    _U16.pack_into(out, _FLAGS_OFFSET, flags)
    if data_len < _DUMMY_QUERY_MIN:
        # A NULL user variable named as much of "!dummyvar" as fits.
        name_len = data_len - (_DUMMY_USER_VAR_MIN - 1)
        out[TYPE_CODE_OFFSET] = EventType.USER_VAR
        _U32.pack_into(out, HEADER_LEN, name_len)
        out[HEADER_LEN + 4 : HEADER_LEN + 4 + name_len] = _DUMMY_VAR_NAME[:name_len]
        out[HEADER_LEN + 4 + name_len] = 1
    else:
        old_type = out[TYPE_CODE_OFFSET]
        out[TYPE_CODE_OFFSET] = EventType.QUERY
        text_at = HEADER_LEN + _DUMMY_QUERY_HEAD
        out[HEADER_LEN:text_at] = bytes(_DUMMY_QUERY_HEAD)
        text = _DUMMY_TEXT.format(old_type).encode()
        comment_len = data_len - (_DUMMY_QUERY_MIN - 1)
        comment = text[:comment_len].ljust(comment_len, b" ")
        out[text_at : text_at + comment_len] = comment
    fix_crc(out, alg)
    return bytes(out)


def begin_event(event: bytes | bytearray | memoryview, alg: int) -> bytes | None:
    """``Query_log_event::begin_event``: a GTID event rewritten in place as a BEGIN query
    (None unless the GTID body is 19 bytes, or 21 with a commit id)."""
    out = bytearray(event)
    data_len = len(out) - (CHECKSUM_LEN if checksummed(alg) else 0)
    if data_len not in (HEADER_LEN + _GTID_BODY_LEN, HEADER_LEN + _GTID_BODY_LEN + 2):
        return None
    flags = _U16.unpack_from(out, _FLAGS_OFFSET)[0]
    flags = (flags & ~EventFlag.THREAD_SPECIFIC) | EventFlag.SUPPRESS_USE
    _U16.pack_into(out, _FLAGS_OFFSET, flags)
    out[TYPE_CODE_OFFSET] = EventType.QUERY
    if data_len == HEADER_LEN + _GTID_BODY_LEN:
        status = b""
    else:
        # The two extra bytes become an empty time zone status variable.
        status = bytes((QueryStatus.TIME_ZONE, 0))
    # Thread id, exec time, db length and error code 0, the status variables, empty db.
    body = QUERY_POST_HEADER.pack(0, 0, 0, 0, len(status)) + status + b"\x00" + b"BEGIN"
    out[HEADER_LEN : HEADER_LEN + len(body)] = body
    fix_crc(out, alg)
    return bytes(out)
