"""A deliberately tiny, independent binlog *file* walker for harness tests.

It only reads the common 19-byte event header (it does not depend on the
project's decoder, so it can check what the real server wrote).  Used to
assert that a workload produced the event types it is meant to cover.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BINLOG_MAGIC = b"\xfebin"
HEADER_LEN = 19

EVENT_TYPE_NAMES: dict[int, str] = {
    0: "UNKNOWN",
    1: "START_V3",
    2: "QUERY",
    3: "STOP",
    4: "ROTATE",
    5: "INTVAR",
    6: "LOAD",
    7: "SLAVE",
    8: "CREATE_FILE",
    9: "APPEND_BLOCK",
    10: "EXEC_LOAD",
    11: "DELETE_FILE",
    12: "NEW_LOAD",
    13: "RAND",
    14: "USER_VAR",
    15: "FORMAT_DESCRIPTION",
    16: "XID",
    17: "BEGIN_LOAD_QUERY",
    18: "EXECUTE_LOAD_QUERY",
    19: "TABLE_MAP",
    20: "PRE_GA_WRITE_ROWS",
    21: "PRE_GA_UPDATE_ROWS",
    22: "PRE_GA_DELETE_ROWS",
    23: "WRITE_ROWS_V1",
    24: "UPDATE_ROWS_V1",
    25: "DELETE_ROWS_V1",
    26: "INCIDENT",
    27: "HEARTBEAT",
    28: "IGNORABLE",
    29: "ROWS_QUERY",
    30: "WRITE_ROWS_V2",
    31: "UPDATE_ROWS_V2",
    32: "DELETE_ROWS_V2",
    33: "MYSQL_GTID",
    34: "ANONYMOUS_GTID",
    35: "PREVIOUS_GTIDS",
    38: "XA_PREPARE",
    160: "ANNOTATE_ROWS",
    161: "BINLOG_CHECKPOINT",
    162: "GTID",
    163: "GTID_LIST",
    164: "START_ENCRYPTION",
    165: "QUERY_COMPRESSED",
    166: "WRITE_ROWS_COMPRESSED_V1",  # what MariaDB writes with log_bin_compress=ON
    167: "UPDATE_ROWS_COMPRESSED_V1",
    168: "DELETE_ROWS_COMPRESSED_V1",
    169: "WRITE_ROWS_COMPRESSED",  # v2 layout; defined but never written by MariaDB
    170: "UPDATE_ROWS_COMPRESSED",
    171: "DELETE_ROWS_COMPRESSED",
}


@dataclass(frozen=True)
class EventHeader:
    pos: int
    timestamp: int
    type_code: int
    server_id: int
    event_length: int
    next_pos: int
    flags: int

    @property
    def type_name(self) -> str:
        return EVENT_TYPE_NAMES.get(self.type_code, f"TYPE_{self.type_code}")


def iter_event_headers(path: str | Path) -> Iterator[EventHeader]:
    """Yield the header of every complete event in a binlog file."""
    with open(path, "rb") as f:
        if f.read(4) != BINLOG_MAGIC:
            raise ValueError(f"{path}: not a binlog file (bad magic)")
        pos = 4
        while True:
            head = f.read(HEADER_LEN)
            if len(head) < HEADER_LEN:
                return
            ts, typ, sid, length, nxt, flags = struct.unpack("<IBIIIH", head)
            if length < HEADER_LEN:
                raise ValueError(f"{path}: corrupt event at {pos} (length {length})")
            yield EventHeader(pos, ts, typ, sid, length, nxt, flags)
            pos += length
            f.seek(pos)


def event_type_counts(paths: list[Path] | list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for p in paths:
        for h in iter_event_headers(p):
            counts[h.type_name] += 1
    return counts
