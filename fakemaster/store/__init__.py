"""The binlog files a fake master serves: built in memory, or a directory of real binlog files.

A store is an ordered list of binlog files (``mysql-bin.000001``, ...). Readers take whole
events by offset ranges (:meth:`BinlogStore.read`), never a whole file. What the dump thread
needs besides the bytes is derived from event headers only, lazily: each file's FORMAT_DESCRIPTION
and GTID_LIST (the GTID state at the start of the file), the GTIDs the file holds, and the end of
the last complete event of the active (last) file.

Three backends:

* :class:`MemoryBinlogStore` builds files like a MariaDB 10.11 primary: every file starts with
  FORMAT_DESCRIPTION, GTID_LIST and BINLOG_CHECKPOINT, events get their real end positions,
  transactions get GTIDs, :meth:`~MemoryBinlogStore.rotate` writes a real ROTATE.
* :class:`DiskBinlogStore` builds them the same way, written into a directory as they grow
  (bounded memory; the directory is then a :class:`DirectoryBinlogStore`'s).
* :class:`DirectoryBinlogStore` serves the files listed in ``<basename>.index`` byte for byte.
  The last file may be growing (another process appends to it, or rotates to a new file): call
  :meth:`~BinlogStore.poll` (or :meth:`~DirectoryBinlogStore.start_watching`) to pick changes up.

The base class and its reading API are in :mod:`~fakemaster.store.base`, the backends in
:mod:`~fakemaster.store.memory` and :mod:`~fakemaster.store.directory`, how event groups end in
raw bytes in :mod:`~fakemaster.vocabulary.groups`; the names users need are here, imported on first
use.

Changes are announced without asyncio: :attr:`BinlogStore.version` increases and the callbacks
registered with :meth:`BinlogStore.subscribe` are called (from the thread that made the change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.store.base import BinlogReadError, BinlogStore, GtidInFile, UnknownBinlogFile
    from fakemaster.store.directory import DirectoryBinlogStore
    from fakemaster.store.disk import DiskBinlogStore
    from fakemaster.store.memory import (
        DEFAULT_SERVER_VERSION,
        AppendedEvent,
        AppendedGroup,
        MemoryBinlogStore,
    )

# Each lazily exposed name and the module that defines it: serving a directory needs neither
# the memory store nor the encoder it builds files with.
_LAZY = {
    "DEFAULT_SERVER_VERSION": "fakemaster.store.memory",
    "AppendedEvent": "fakemaster.store.memory",
    "AppendedGroup": "fakemaster.store.memory",
    "BinlogReadError": "fakemaster.store.base",
    "BinlogStore": "fakemaster.store.base",
    "DirectoryBinlogStore": "fakemaster.store.directory",
    "DiskBinlogStore": "fakemaster.store.disk",
    "GtidInFile": "fakemaster.store.base",
    "MemoryBinlogStore": "fakemaster.store.memory",
    "UnknownBinlogFile": "fakemaster.store.base",
}

__all__ = [
    "DEFAULT_SERVER_VERSION",
    "AppendedEvent",
    "AppendedGroup",
    "BinlogReadError",
    "BinlogStore",
    "DirectoryBinlogStore",
    "DiskBinlogStore",
    "GtidInFile",
    "MemoryBinlogStore",
    "UnknownBinlogFile",
]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
