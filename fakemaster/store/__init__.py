"""The binlog files a fake master serves: built in memory, or a directory of real binlog files."""

from fakemaster.store.base import (
    DEFAULT_SERVER_VERSION,
    AppendedEvent,
    AppendedGroup,
    BinlogReadError,
    BinlogStore,
    DirectoryBinlogStore,
    GtidInFile,
    MemoryBinlogStore,
    UnknownBinlogFile,
)

__all__ = [
    "DEFAULT_SERVER_VERSION",
    "AppendedEvent",
    "AppendedGroup",
    "BinlogReadError",
    "BinlogStore",
    "DirectoryBinlogStore",
    "GtidInFile",
    "MemoryBinlogStore",
    "UnknownBinlogFile",
]
