"""Event groups in raw binlog bytes: which event ends a transaction or a standalone group
(what the server's binlog readers decide, ``Log_event::is_part_of_group`` and
``peek_is_commit_rollback``).
"""

from __future__ import annotations

from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, EventType, GtidFlag
from fakemaster.vocabulary.layouts import GTID_FLAGS2_OFFSET, QUERY_POST_HEADER

__all__ = ["GROUP_PART_TYPES", "GroupTracker", "is_commit_or_rollback"]

_GTID_FLAGS2_AT = HEADER_LEN + GTID_FLAGS2_OFFSET

GROUP_PART_TYPES = frozenset(
    {
        EventType.GTID,
        EventType.INTVAR,
        EventType.RAND,
        EventType.USER_VAR,
        EventType.TABLE_MAP,
        EventType.ANNOTATE_ROWS,
    }
)


def is_commit_or_rollback(event: bytes | bytearray | memoryview, checksum: bool) -> bool:
    """Whether a QUERY event's text is exactly COMMIT or ROLLBACK (``peek_is_commit_rollback``:
    the bytes before the CRC end with the database name's NUL and the statement)."""
    end = len(event) - (CHECKSUM_LEN if checksum else 0)
    if end < HEADER_LEN + QUERY_POST_HEADER.size or end < 9:
        return False
    return bytes(event[end - 7 : end]) == b"\x00COMMIT" or bytes(event[end - 9 : end]) == (
        b"\x00ROLLBACK"
    )


class GroupTracker:
    """Finds the event that ends each event group, in event order.

    A group opened by a standalone GTID ends with the first event that is not part of a group
    (``Log_event::is_part_of_group``); a transaction ends with XID, XA_PREPARE or a QUERY that
    is COMMIT or ROLLBACK. Without GTIDs (old binlogs) the same transaction ends count.
    """

    __slots__ = ("standalone",)

    def __init__(self) -> None:
        self.standalone = False

    def feed(self, type_code: int, event: bytes | bytearray | memoryview, checksum: bool) -> bool:
        """True if this event ends a group."""
        if type_code == EventType.GTID:
            self.standalone = bool(
                len(event) > _GTID_FLAGS2_AT and event[_GTID_FLAGS2_AT] & GtidFlag.STANDALONE
            )
            return False
        if self.standalone:
            if type_code in GROUP_PART_TYPES:
                return False
            self.standalone = False
            return True
        if type_code in (EventType.XID, EventType.XA_PREPARE):
            return True
        return type_code == EventType.QUERY and is_commit_or_rollback(event, checksum)
