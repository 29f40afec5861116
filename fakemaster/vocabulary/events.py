"""Binlog events as typed objects: the one vocabulary of the encoder, decoder and server.

Every event carries the common v4 header fields (``timestamp``, ``server_id``, ``log_pos``,
``flags``); ``event_length`` and the CRC are derived when encoding. Fields keep what the bytes
hold (raw bitmaps, status variables in written order, trailing bytes) so that encoding a decoded
event gives back the server's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from fakemaster.vocabulary.constants import (
    BINLOG_VERSION,
    MARIADB_POST_HEADER_LENGTHS,
    ChecksumAlg,
    EventFlag,
    EventType,
)

# A row image: per table column its value, or ABSENT for a column the image leaves out; an
# UPDATE's row is a (before, after) pair of them.
if TYPE_CHECKING:
    from fakemaster.vocabulary.values import ColumnValue, _Absent

    RowImage: TypeAlias = tuple[ColumnValue | _Absent, ...]
    RowPair: TypeAlias = tuple[RowImage, RowImage]
else:
    # At run time both read as Any: the field checks (encoder/fields.py) and the JSON form
    # (forms/jsonform.py) read these annotations, and a row's values are not theirs to check
    # but the column writers' and the value forms'.
    RowImage = RowPair = Any

__all__ = [
    "ROWS_EVENT_CLASSES",
    "AnnotateRowsEvent",
    "AppendBlockEvent",
    "BeginLoadQueryEvent",
    "BinlogCheckpointEvent",
    "DeleteFileEvent",
    "DeleteRowsEvent",
    "Event",
    "ExecuteLoadQueryEvent",
    "FormatDescriptionEvent",
    "Gtid",
    "GtidEvent",
    "GtidListEvent",
    "HeartbeatEvent",
    "IncidentEvent",
    "IntvarEvent",
    "MetadataField",
    "QueryEvent",
    "RandEvent",
    "RotateEvent",
    "RowsEvent",
    "StartEncryptionEvent",
    "StatusVar",
    "StopEvent",
    "TableMapEvent",
    "UnknownEvent",
    "UpdateRowsEvent",
    "UserVarEvent",
    "WriteRowsEvent",
    "XaPrepareEvent",
    "XaXid",
    "XidEvent",
]


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class Event:
    """The common v4 header fields of every event; ``TYPE`` is the event's type code."""

    timestamp: int = 0
    server_id: int = 1
    log_pos: int = 0
    flags: int = 0

    TYPE: ClassVar[int] = EventType.UNKNOWN

    # One __eq__ and one __repr__ for every event class, the same as dataclass would generate
    # for each (eq: the fields as a tuple, for an object of the same class only): generating
    # them per class took about a third of this module's import, which ``serve`` waits for
    # before it listens (issue #7, readiness).
    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = _field_values(self.__class__)
        return bool(values(self) == values(other))

    __hash__ = None  # type: ignore[assignment]  # mutable, as dataclass makes it with eq

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{self.__class__.__qualname__}({shown})"

    @property
    def type_code(self) -> int:
        return self.TYPE

    @property
    def is_artificial(self) -> bool:
        return bool(self.flags & EventFlag.ARTIFICIAL)


_FIELD_VALUES: dict[type, attrgetter[Any]] = {}


def _field_values(cls: type) -> attrgetter[Any]:
    """The tuple of an event's compared field values (a getter, made once per class)."""
    getter = _FIELD_VALUES.get(cls)
    if getter is None:
        names = [f.name for f in fields(cls) if f.compare]
        getter = _FIELD_VALUES[cls] = attrgetter(*names)
    return getter


# --- file and stream control -------------------------------------------------------------


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class FormatDescriptionEvent(Event):
    """FORMAT_DESCRIPTION: the server version, header and post-header lengths, checksum."""

    TYPE: ClassVar[int] = EventType.FORMAT_DESCRIPTION
    binlog_version: int = BINLOG_VERSION
    server_version: str = "10.11.14-MariaDB-log"
    # Bytes after the version's NUL in its 50-byte field (10.1 wrote "10.1.24-MariaDB\0log").
    server_version_tail: bytes = b""
    create_timestamp: int = 0
    header_length: int = 19
    post_header_lengths: bytes = MARIADB_POST_HEADER_LENGTHS
    # None: an FDE of a server without checksum support (no alg byte, no CRC).
    checksum_alg: int | None = ChecksumAlg.CRC32

    def post_header_length(self, type_code: int) -> int:
        index = type_code - 1
        if 0 <= index < len(self.post_header_lengths):
            return self.post_header_lengths[index]
        return 0


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class RotateEvent(Event):
    """A real ROTATE ends a file; an artificial one (flags 0x20, timestamp 0) starts a dump."""

    TYPE: ClassVar[int] = EventType.ROTATE
    position: int = 4
    next_file: str = ""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class StopEvent(Event):
    """STOP: the server stopped; the last event of its binlog file."""

    TYPE: ClassVar[int] = EventType.STOP


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class HeartbeatEvent(Event):
    """``position`` is set when the real position is > 4 GiB (header log_pos is then 0)."""

    TYPE: ClassVar[int] = EventType.HEARTBEAT
    file_name: str = ""
    position: int | None = None


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class StartEncryptionEvent(Event):
    """START_ENCRYPTION: the events after it are encrypted with this key version and nonce."""

    TYPE: ClassVar[int] = EventType.START_ENCRYPTION
    scheme: int = 1
    key_version: int = 1
    nonce: bytes = bytes(12)


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class IncidentEvent(Event):
    """INCIDENT: something happened that a replica cannot replay (e.g. lost events)."""

    TYPE: ClassVar[int] = EventType.INCIDENT
    incident: int = 1
    message: bytes = b""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class UnknownEvent(Event):
    """Any event type this codec does not model, kept as its raw body."""

    code: int = EventType.UNKNOWN
    body: bytes = b""

    @property
    def type_code(self) -> int:
        return self.code


# --- GTIDs --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gtid:
    """A MariaDB GTID: domain, server id and sequence number (``str``: ``D-S-N``)."""

    domain_id: int
    server_id: int
    seq_no: int

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"

    @classmethod
    def parse(cls, text: str) -> Gtid:
        domain, server, seq = (int(part) for part in text.strip().split("-"))
        return cls(domain, server, seq)


@dataclass(frozen=True, slots=True)
class XaXid:
    """The XID of an XA transaction: format id, global transaction id and branch qualifier."""

    format_id: int
    gtrid: bytes
    bqual: bytes


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class GtidEvent(Event):
    """MariaDB GTID (162). The GTID's server id is the header's ``server_id``."""

    TYPE: ClassVar[int] = EventType.GTID
    seq_no: int = 1
    domain_id: int = 0
    flags2: int = 0
    commit_id: int | None = None  # present iff flags2 has GROUP_COMMIT_ID
    xid: XaXid | None = None  # present iff flags2 has PREPARED_XA or COMPLETED_XA
    flags_extra: int = 0
    extra_engines: int | None = None  # iff flags_extra has MULTI_ENGINE
    sa_seq_no: int | None = None  # iff flags_extra has COMMIT_ALTER or ROLLBACK_ALTER
    # Every byte after the known fields, unless those are exactly the zero padding to 19 bytes
    # (then b""): newer servers' flags_extra fields and odd padding survive (decoder/gtid.py).
    trailing: bytes = b""

    @property
    def gtid(self) -> Gtid:
        return Gtid(self.domain_id, self.server_id, self.seq_no)


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class GtidListEvent(Event):
    """GTID_LIST: the last GTID of each domain and server before this file."""

    TYPE: ClassVar[int] = EventType.GTID_LIST
    gtids: tuple[Gtid, ...] = ()
    list_flags: int = 0  # the top 4 bits of the count field (UNTIL_REACHED, IGN_GTIDS)
    padding: bytes = b""  # bytes after the entries (a real server writes 2 zeros after none)


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class BinlogCheckpointEvent(Event):
    """BINLOG_CHECKPOINT: the oldest binlog file a crash recovery would need."""

    TYPE: ClassVar[int] = EventType.BINLOG_CHECKPOINT
    file_name: str = ""


# --- statements ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusVar:
    """One QUERY status variable; ``value`` is typed by code (see decoder/query.py)."""

    code: int
    value: Any


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class QueryEvent(Event):
    """QUERY: a statement, its default database and status variables."""

    TYPE: ClassVar[int] = EventType.QUERY
    thread_id: int = 0
    exec_time: int = 0
    error_code: int = 0
    status_vars: tuple[StatusVar, ...] = ()
    database: str = ""
    query: bytes = b""
    compressed: bool = False  # QUERY_COMPRESSED (165): the query text is a zlib record

    @property
    def type_code(self) -> int:
        return EventType.QUERY_COMPRESSED if self.compressed else EventType.QUERY


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class ExecuteLoadQueryEvent(Event):
    """EXECUTE_LOAD_QUERY: the LOAD DATA statement of a loaded file (``file_id``)."""

    TYPE: ClassVar[int] = EventType.EXECUTE_LOAD_QUERY
    thread_id: int = 0
    exec_time: int = 0
    error_code: int = 0
    file_id: int = 0
    fn_pos_start: int = 0
    fn_pos_end: int = 0
    dup_handling: int = 0
    status_vars: tuple[StatusVar, ...] = ()
    database: str = ""
    query: bytes = b""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class BeginLoadQueryEvent(Event):
    """BEGIN_LOAD_QUERY: the first block of a LOAD DATA file."""

    TYPE: ClassVar[int] = EventType.BEGIN_LOAD_QUERY
    file_id: int = 0
    data: bytes = b""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class AppendBlockEvent(Event):
    """APPEND_BLOCK: a further block of a LOAD DATA file."""

    TYPE: ClassVar[int] = EventType.APPEND_BLOCK
    file_id: int = 0
    data: bytes = b""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class DeleteFileEvent(Event):
    """DELETE_FILE: a LOAD DATA file's blocks are dropped."""

    TYPE: ClassVar[int] = EventType.DELETE_FILE
    file_id: int = 0


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class XidEvent(Event):
    """XID: the commit of a transaction of a transactional engine."""

    TYPE: ClassVar[int] = EventType.XID
    xid: int = 0


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class XaPrepareEvent(Event):
    """XA_PREPARE: an XA transaction is prepared (or committed in one phase)."""

    TYPE: ClassVar[int] = EventType.XA_PREPARE
    one_phase: bool = False
    xid: XaXid = field(default_factory=lambda: XaXid(0, b"", b""))


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class IntvarEvent(Event):
    """INTVAR: LAST_INSERT_ID or INSERT_ID for the next statement."""

    TYPE: ClassVar[int] = EventType.INTVAR
    kind: int = 2  # 1 LAST_INSERT_ID, 2 INSERT_ID
    value: int = 0


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class RandEvent(Event):
    """RAND: the seeds of RAND() for the next statement."""

    TYPE: ClassVar[int] = EventType.RAND
    seed1: int = 0
    seed2: int = 0


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class UserVarEvent(Event):
    """``value`` is the raw value bytes as stored (None for NULL); see decoder/statement.py."""

    TYPE: ClassVar[int] = EventType.USER_VAR
    name: bytes = b""
    value: bytes | None = None
    value_type: int = 0  # 0 STRING, 1 REAL, 2 INT, 4 DECIMAL
    charset: int = 0
    value_flags: int | None = None  # the trailing flags byte (bit 0 = unsigned) when present
    trailing: bytes = b""


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class AnnotateRowsEvent(Event):
    """ANNOTATE_ROWS: the statement that made the row events after it."""

    TYPE: ClassVar[int] = EventType.ANNOTATE_ROWS
    query: bytes = b""


# --- row-based replication ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataField:
    """One TABLE_MAP optional metadata TLV; ``value`` is typed by ``kind`` (see decoder/rows.py)."""

    kind: int
    value: Any


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class TableMapEvent(Event):
    """TABLE_MAP: a table id's database, table, column types, metadata and optional metadata."""

    TYPE: ClassVar[int] = EventType.TABLE_MAP
    table_id: int = 0
    table_flags: int = 1
    database: str = ""
    table: str = ""
    column_types: tuple[int, ...] = ()
    # Per-column metadata as the little-endian value of its 0, 1 or 2 bytes.
    column_meta: tuple[int, ...] = ()
    nullable: tuple[bool, ...] = ()
    optional_metadata: tuple[MetadataField, ...] = ()


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class RowsEvent(Event):
    """WRITE/UPDATE/DELETE rows, v1, v2 or compressed.

    ``columns_present`` (and ``columns_present_after`` for UPDATE) are the raw bitmaps.
    Each row is a tuple with one entry per table column: the value, None for NULL, or
    ``ABSENT`` for a column that is not part of the image. UPDATE rows are
    ``(before, after)`` pairs.
    """

    KIND: ClassVar[str] = ""
    table_id: int = 0
    rows_flags: int = 0
    version: int = 1
    extra_data: bytes = b""  # v2 only: the extra data after its 2-byte length
    compressed: bool = False
    width: int = 0
    columns_present: bytes = b""
    # A row image each, or for UPDATE a (before, after) pair of them.
    rows: tuple[RowImage | RowPair, ...] = ()

    _CODES: ClassVar[dict[tuple[int, bool], int]] = {}

    @property
    def type_code(self) -> int:
        return self._CODES[(self.version, self.compressed)]


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class WriteRowsEvent(RowsEvent):
    """WRITE_ROWS (v1/v2, compressed or not): inserted rows."""

    KIND: ClassVar[str] = "write"
    _CODES: ClassVar[dict[tuple[int, bool], int]] = {
        (1, False): EventType.WRITE_ROWS_V1,
        (2, False): EventType.WRITE_ROWS_V2,
        (1, True): EventType.WRITE_ROWS_COMPRESSED_V1,
        (2, True): EventType.WRITE_ROWS_COMPRESSED,
    }


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class DeleteRowsEvent(RowsEvent):
    """DELETE_ROWS (v1/v2, compressed or not): deleted rows."""

    KIND: ClassVar[str] = "delete"
    _CODES: ClassVar[dict[tuple[int, bool], int]] = {
        (1, False): EventType.DELETE_ROWS_V1,
        (2, False): EventType.DELETE_ROWS_V2,
        (1, True): EventType.DELETE_ROWS_COMPRESSED_V1,
        (2, True): EventType.DELETE_ROWS_COMPRESSED,
    }


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class UpdateRowsEvent(RowsEvent):
    """UPDATE_ROWS (v1/v2, compressed or not): rows before and after."""

    KIND: ClassVar[str] = "update"
    columns_present_after: bytes = b""
    _CODES: ClassVar[dict[tuple[int, bool], int]] = {
        (1, False): EventType.UPDATE_ROWS_V1,
        (2, False): EventType.UPDATE_ROWS_V2,
        (1, True): EventType.UPDATE_ROWS_COMPRESSED_V1,
        (2, True): EventType.UPDATE_ROWS_COMPRESSED,
    }


ROWS_EVENT_CLASSES: dict[int, tuple[type[RowsEvent], int, bool]] = {
    code: (cls, version, compressed)
    for cls in (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)
    for (version, compressed), code in cls._CODES.items()
}
