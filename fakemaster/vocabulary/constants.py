"""Numbers of the MariaDB replication protocol, defined once for encoder, decoder and server."""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = [
    "BINLOG_VERSION",
    "BINLOG_MAGIC",
    "CHECKSUM_LEN",
    "GTID_LIST_COUNT_MASK",
    "GTID_LIST_FLAG_IGN_GTIDS",
    "GTID_LIST_FLAG_UNTIL_REACHED",
    "HEADER_LEN",
    "MARIADB_POST_HEADER_LENGTHS",
    "MAX_PACKET_PAYLOAD",
    "MAX_ALLOWED_PACKET_CEILING",
    "MAX_UNCOMPRESSED_LENGTH",
    "QUERY_STATUS_FIXED_SIZES",
    "SEMI_SYNC_MAGIC",
    "ChecksumAlg",
    "ColumnType",
    "Command",
    "DumpFlag",
    "EventFlag",
    "EventType",
    "GtidExtraFlag",
    "GtidFlag",
    "OptionalMetadata",
    "QueryStatus",
    "RowsFlag",
    "SlaveCapability",
    "TableMapFlag",
    "event_type_name",
]

BINLOG_MAGIC = b"\xfebin"
HEADER_LEN = 19
# The binlog format version every FORMAT_DESCRIPTION of MariaDB 10.x names.
BINLOG_VERSION = 4
CHECKSUM_LEN = 4
MAX_PACKET_PAYLOAD = 0xFFFFFF
PACKET_HEADER_LEN = 4  # 3-byte payload length, 1-byte sequence number
# The largest uncompressed length a decoder inflates a compressed record (QUERY_COMPRESSED,
# *_ROWS_COMPRESSED) to, unless told otherwise (BinlogContext.max_uncompressed_length). The
# record's header may claim up to 4 GiB; MariaDB's events are bounded by max_allowed_packet,
# whose ceiling is 1 GiB, and mariadb-binlog 10.11 refuses a record declaring one byte more.
# The ceiling of max_allowed_packet (SET GLOBAL max_allowed_packet = 4 GiB leaves 1 GiB): the
# largest event a dump thread reads and the largest compressed record mariadb-binlog inflates.
MAX_ALLOWED_PACKET_CEILING = 1 << 30
MAX_UNCOMPRESSED_LENGTH = MAX_ALLOWED_PACKET_CEILING

# The compressed protocol (CLIENT_COMPRESS): each compressed packet has a 7-byte header, the
# 3-byte length of its body, a 1-byte sequence number of its own and the 3-byte length of the
# body once inflated (0: the body is sent as it is); the body carries ordinary packets.
COMPRESSED_HEADER_LEN = 7
# MariaDB sends bodies shorter than this as they are (MIN_COMPRESS_LENGTH in my_compress.c),
# and also those zlib does not make strictly shorter.
MIN_COMPRESS_LENGTH = 50
# my_compress calls zlib's compress(): Z_DEFAULT_COMPRESSION, which is level 6.
COMPRESSION_LEVEL = 6
# The server's write buffer (net_buffer_length): a compressed packet holds at most this much
# unless one write is larger. The buffer grows in IO_SIZE steps when the server reads a
# larger packet (net_realloc), and later compressed packets grow with it.
NET_BUFFER_LENGTH = 16384
NET_BUFFER_STEP = 4096


class EventType(IntEnum):
    UNKNOWN = 0
    START_V3 = 1
    QUERY = 2
    STOP = 3
    ROTATE = 4
    INTVAR = 5
    LOAD = 6
    SLAVE = 7
    CREATE_FILE = 8
    APPEND_BLOCK = 9
    EXEC_LOAD = 10
    DELETE_FILE = 11
    NEW_LOAD = 12
    RAND = 13
    USER_VAR = 14
    FORMAT_DESCRIPTION = 15
    XID = 16
    BEGIN_LOAD_QUERY = 17
    EXECUTE_LOAD_QUERY = 18
    TABLE_MAP = 19
    PRE_GA_WRITE_ROWS = 20
    PRE_GA_UPDATE_ROWS = 21
    PRE_GA_DELETE_ROWS = 22
    WRITE_ROWS_V1 = 23
    UPDATE_ROWS_V1 = 24
    DELETE_ROWS_V1 = 25
    INCIDENT = 26
    HEARTBEAT = 27
    IGNORABLE = 28
    ROWS_QUERY = 29
    WRITE_ROWS_V2 = 30
    UPDATE_ROWS_V2 = 31
    DELETE_ROWS_V2 = 32
    MYSQL_GTID = 33
    ANONYMOUS_GTID = 34
    PREVIOUS_GTIDS = 35
    TRANSACTION_CONTEXT = 36
    VIEW_CHANGE = 37
    XA_PREPARE = 38
    PARTIAL_UPDATE_ROWS = 39
    TRANSACTION_PAYLOAD = 40
    HEARTBEAT_V2 = 41
    ANNOTATE_ROWS = 160
    BINLOG_CHECKPOINT = 161
    GTID = 162
    GTID_LIST = 163
    START_ENCRYPTION = 164
    QUERY_COMPRESSED = 165
    WRITE_ROWS_COMPRESSED_V1 = 166
    UPDATE_ROWS_COMPRESSED_V1 = 167
    DELETE_ROWS_COMPRESSED_V1 = 168
    WRITE_ROWS_COMPRESSED = 169
    UPDATE_ROWS_COMPRESSED = 170
    DELETE_ROWS_COMPRESSED = 171


def event_type_name(code: int) -> str:
    try:
        return EventType(code).name
    except ValueError:
        return f"UNKNOWN_{code}"


class EventFlag(IntFlag):
    BINLOG_IN_USE = 0x0001
    FORCED_ROTATE = 0x0002
    THREAD_SPECIFIC = 0x0004
    SUPPRESS_USE = 0x0008
    UPDATE_TABLE_MAP_VERSION = 0x0010
    ARTIFICIAL = 0x0020
    RELAY_LOG = 0x0040
    IGNORABLE = 0x0080
    NO_FILTER = 0x0100
    MTS_ISOLATE = 0x0200
    ACCEPT_OWN = 0x4000
    SKIP_REPLICATION = 0x8000


class ChecksumAlg(IntEnum):
    OFF = 0
    CRC32 = 1
    UNDEF = 255


# Post-header lengths MariaDB 10.11 announces in its FDE, index = event type - 1 (171 entries).
# (10.11.19 announces 10 for MySQL's types 39-41; 10.2 announced 0.)
MARIADB_POST_HEADER_LENGTHS = bytes(
    [56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 228, 0, 4, 26, 8]
    + [0, 0, 0, 8, 8, 8, 2, 0, 0, 0, 10, 10, 10, 0, 0, 0, 0, 0, 0]
    + [10, 10, 10]
    + [0] * 118
    + [0, 4, 19, 4, 0, 13, 8, 8, 8, 10, 10, 10]
)
assert len(MARIADB_POST_HEADER_LENGTHS) == 171


class GtidFlag(IntFlag):
    STANDALONE = 0x01
    GROUP_COMMIT_ID = 0x02
    TRANSACTIONAL = 0x04
    ALLOW_PARALLEL = 0x08
    WAITED = 0x10
    DDL = 0x20
    PREPARED_XA = 0x40
    COMPLETED_XA = 0x80


class GtidExtraFlag(IntFlag):
    MULTI_ENGINE = 0x01
    START_ALTER = 0x02
    COMMIT_ALTER = 0x04
    ROLLBACK_ALTER = 0x08


GTID_LIST_COUNT_MASK = (1 << 28) - 1
GTID_LIST_FLAG_UNTIL_REACHED = 1 << 28
GTID_LIST_FLAG_IGN_GTIDS = 1 << 29


class RowsFlag(IntFlag):
    STMT_END = 0x0001
    NO_FOREIGN_KEY_CHECKS = 0x0002
    RELAXED_UNIQUE_CHECKS = 0x0004
    COMPLETE_ROWS = 0x0008
    NO_CHECK_CONSTRAINT_CHECKS = 0x0080


class TableMapFlag(IntFlag):
    BIT_LEN_EXACT = 0x0001
    REFERRED_FK_DB = 0x0002
    HAS_TRIGGERS = 0x4000


class QueryStatus(IntEnum):
    """Status-variable codes of QUERY events."""

    FLAGS2 = 0
    SQL_MODE = 1
    CATALOG = 2
    AUTO_INCREMENT = 3
    CHARSET = 4
    TIME_ZONE = 5
    CATALOG_NZ = 6
    LC_TIME_NAMES = 7
    CHARSET_DATABASE = 8
    TABLE_MAP_FOR_UPDATE = 9
    MASTER_DATA_WRITTEN = 10
    INVOKER = 11
    UPDATED_DB_NAMES = 12
    MICROSECONDS = 13
    COMMIT_TS = 14
    COMMIT_TS2 = 15
    EXPLICIT_DEFAULTS_FOR_TIMESTAMP = 16
    DDL_LOGGED_WITH_XID = 17
    DEFAULT_COLLATION_FOR_UTF8MB4 = 18
    SQL_REQUIRE_PRIMARY_KEY = 19
    DEFAULT_TABLE_ENCRYPTION = 20
    HRNOW = 128
    XID = 129
    GTID_FLAGS3 = 130
    CHARACTER_SET_COLLATIONS = 131
    DUMMY = 255


# QUERY status variables whose value is one little-endian unsigned integer, by size in bytes.
QUERY_STATUS_FIXED_SIZES: dict[int, int] = {
    QueryStatus.FLAGS2: 4,
    QueryStatus.SQL_MODE: 8,
    QueryStatus.LC_TIME_NAMES: 2,
    QueryStatus.CHARSET_DATABASE: 2,
    QueryStatus.TABLE_MAP_FOR_UPDATE: 8,
    QueryStatus.MASTER_DATA_WRITTEN: 4,
    QueryStatus.MICROSECONDS: 3,
    QueryStatus.COMMIT_TS: 8,
    QueryStatus.EXPLICIT_DEFAULTS_FOR_TIMESTAMP: 1,
    QueryStatus.DDL_LOGGED_WITH_XID: 8,
    QueryStatus.DEFAULT_COLLATION_FOR_UTF8MB4: 2,
    QueryStatus.SQL_REQUIRE_PRIMARY_KEY: 1,
    QueryStatus.DEFAULT_TABLE_ENCRYPTION: 1,
    QueryStatus.HRNOW: 3,
    QueryStatus.XID: 8,
}


class OptionalMetadata(IntEnum):
    """TABLE_MAP optional metadata field types."""

    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12


class ColumnType(IntEnum):
    """Binlog column type codes (TABLE_MAP column types)."""

    DECIMAL = 0
    TINY = 1
    SHORT = 2
    LONG = 3
    FLOAT = 4
    DOUBLE = 5
    NULL = 6
    TIMESTAMP = 7
    LONGLONG = 8
    INT24 = 9
    DATE = 10
    TIME = 11
    DATETIME = 12
    YEAR = 13
    NEWDATE = 14
    VARCHAR = 15
    BIT = 16
    TIMESTAMP2 = 17
    DATETIME2 = 18
    TIME2 = 19
    BLOB_COMPRESSED = 140
    VARCHAR_COMPRESSED = 141
    JSON = 245
    NEWDECIMAL = 246
    ENUM = 247
    SET = 248
    TINY_BLOB = 249
    MEDIUM_BLOB = 250
    LONG_BLOB = 251
    BLOB = 252
    VAR_STRING = 253
    STRING = 254
    GEOMETRY = 255


class SlaveCapability(IntEnum):
    UNKNOWN = 0
    ANNOTATE = 1
    TOLERATE_HOLES = 2
    BINLOG_CHECKPOINT = 3
    GTID = 4


class DumpFlag(IntFlag):
    NON_BLOCK = 0x01
    SEND_ANNOTATE_ROWS = 0x02


class Command(IntEnum):
    SLEEP = 0x00
    QUIT = 0x01
    INIT_DB = 0x02
    QUERY = 0x03
    FIELD_LIST = 0x04
    PING = 0x0E
    CHANGE_USER = 0x11
    BINLOG_DUMP = 0x12
    REGISTER_SLAVE = 0x15
    STMT_PREPARE = 0x16
    STMT_EXECUTE = 0x17
    STMT_SEND_LONG_DATA = 0x18
    STMT_CLOSE = 0x19
    STMT_RESET = 0x1A
    STMT_FETCH = 0x1C
    BINLOG_DUMP_GTID = 0x1E
    RESET_CONNECTION = 0x1F
    SEMI_SYNC_ACK = 0xEF


SEMI_SYNC_MAGIC = 0xEF
