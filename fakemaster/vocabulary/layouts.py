"""Byte layouts of event bodies, defined once for the encoder, the decoder and the server.

The common event header is in fakemaster/vocabulary/header.py, packet layouts in fakemaster/vocabulary/packets.py,
protocol numbers in fakemaster/vocabulary/constants.py; the decoder's modules document each layout in
full (decoder/control.py, gtid.py, query.py, statement.py).
"""

from __future__ import annotations

import re
import struct

__all__ = [
    "Buffer",
    "EMPTY_GTID_LIST_PADDING",
    "F32",
    "F64",
    "FDE_CREATE_TIMESTAMP_OFFSET",
    "FDE_FIXED",
    "FDE_HEADER_LENGTH_OFFSET",
    "FDE_SERVER_VERSION_OFFSET",
    "GTID_BODY_MIN",
    "GTID_FIXED",
    "GTID_FLAGS2_OFFSET",
    "GTID_LIST_COUNT",
    "GTID_LIST_ENTRY",
    "GTID_XA_HEAD",
    "HEARTBEAT_POSITIONS",
    "I64",
    "INCIDENT_HEAD",
    "INTVAR",
    "LOAD_QUERY_EXTRA",
    "MAX_BQUAL_SIZE",
    "MAX_DBS_IN_EVENT_MTS",
    "MAX_GTRID_SIZE",
    "NONCE_LEN",
    "PAIR16",
    "QUERY_POST_HEADER",
    "RAND",
    "SERVER_VERSION_LEN",
    "START_ENCRYPTION",
    "TRIPLE16",
    "U8",
    "U16",
    "U32",
    "U64",
    "USER_VAR_VALUE_HEAD",
    "XA_PREPARE_HEAD",
    "fde_has_checksum",
]

# What codec functions read from and write into.
Buffer = bytes | bytearray | memoryview

# Little-endian unsigned integers: every integer of the binlog format but the big-endian
# parts of row values.
U8 = struct.Struct("<B")
U16 = struct.Struct("<H")
U32 = struct.Struct("<I")
U64 = struct.Struct("<Q")
PAIR16 = struct.Struct("<HH")
TRIPLE16 = struct.Struct("<HHH")
# Little-endian signed 64-bit and IEEE 754 single and double: BIGINT, FLOAT and DOUBLE row
# values, and the numbers of MySQL's binary JSON.
I64 = struct.Struct("<q")
F32 = struct.Struct("<f")
F64 = struct.Struct("<d")

# --- FORMAT_DESCRIPTION (15) ------------------------------------------------------------------
# binlog_version u16 | server_version char[50] | create_timestamp u32 | header_length u8,
# then the post-header lengths, then (servers with checksums) the checksum algorithm u8.
# Offsets are counted from the start of the body.
FDE_FIXED = struct.Struct("<H50sIB")
SERVER_VERSION_LEN = 50
FDE_SERVER_VERSION_OFFSET = 2
FDE_CREATE_TIMESTAMP_OFFSET = FDE_SERVER_VERSION_OFFSET + SERVER_VERSION_LEN
FDE_HEADER_LENGTH_OFFSET = FDE_CREATE_TIMESTAMP_OFFSET + 4
assert FDE_FIXED.size == FDE_HEADER_LENGTH_OFFSET + 1
_VERSION_RE = re.compile(rb"(\d+)\.(\d+)\.(\d+)")


def fde_has_checksum(server_version: bytes) -> bool:
    """Whether an FDE of this server version (the bytes before its NUL) carries the
    checksum-alg byte and a CRC: MariaDB >= 5.3, MySQL >= 5.6.1. Readers know it from the
    version alone."""
    match = _VERSION_RE.match(server_version)
    if not match:
        return False
    version = tuple(int(part) for part in match.groups())
    if b"MariaDB" in server_version or b"-maria-" in server_version:
        return version >= (5, 3, 0)
    return version >= (5, 6, 1)


# --- HEARTBEAT (27): [position u64,] file name -----------------------------------------------
# The position is written when the real one does not fit the header's log_pos (which is then 0):
# from 4 GiB on. A reader takes the first 8 bytes for it when they read as a number in this
# range: the first 8 bytes of a file name have a printable, non-zero top byte.
HEARTBEAT_POSITIONS = range(1 << 32, 1 << 56)

# --- START_ENCRYPTION (164): scheme u8 | key_version u32 | nonce[12] --------------------------
NONCE_LEN = 12
START_ENCRYPTION = struct.Struct(f"<BI{NONCE_LEN}s")

# --- INCIDENT (26): incident u16 | message_length u8 | message --------------------------------
INCIDENT_HEAD = struct.Struct("<HB")

# --- GTID (162) and GTID_LIST (163) -----------------------------------------------------------
# seq_no u64 | domain_id u32 | flags2 u8, optional parts, zero padding up to GTID_BODY_MIN.
GTID_FIXED = struct.Struct("<QIB")
GTID_FLAGS2_OFFSET = 12
GTID_BODY_MIN = 19
# The XA xid of a GTID: format_id u32 | gtrid_len u8 | bqual_len u8 (then gtrid, bqual).
GTID_XA_HEAD = struct.Struct("<IBB")
# count u32 (GTID_LIST_COUNT_MASK of constants.py), then count * (domain u32 | server u32 |
# seq_no u64).
GTID_LIST_COUNT = U32
GTID_LIST_ENTRY = struct.Struct("<IIQ")
# A real server pads an empty GTID_LIST so that the event can later be replaced in place
# by a dummy event (MariaDB 10.11.19 writes exactly these two zero bytes).
EMPTY_GTID_LIST_PADDING = b"\x00\x00"

# --- QUERY (2), EXECUTE_LOAD_QUERY (18) -------------------------------------------------------
# thread_id u32 | exec_time u32 | db_len u8 | error_code u16 | status_vars_len u16
QUERY_POST_HEADER = struct.Struct("<IIBHH")
# EXECUTE_LOAD_QUERY's extra post-header: file_id u32 | fn_pos_start u32 | fn_pos_end u32 |
# dup_handling u8
LOAD_QUERY_EXTRA = struct.Struct("<IIIB")
# UPDATED_DB_NAMES holds at most this many names (a larger count means "too many": no names).
MAX_DBS_IN_EVENT_MTS = 16

# --- statement-side events ---------------------------------------------------------------------
# XA_PREPARE (38): one_phase u8 | format_id u32 | gtrid_len u32 | bqual_len u32
XA_PREPARE_HEAD = struct.Struct("<BIII")
MAX_GTRID_SIZE = 64
MAX_BQUAL_SIZE = 64
# INTVAR (5): kind u8 | value u64
INTVAR = struct.Struct("<BQ")
# RAND (13): seed1 u64 | seed2 u64
RAND = struct.Struct("<QQ")
# USER_VAR (14), after the name and is_null: value_type u8 | charset u32 | value_len u32
USER_VAR_VALUE_HEAD = struct.Struct("<BII")
