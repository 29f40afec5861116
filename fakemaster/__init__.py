"""fakemaster: a fake MariaDB primary for testing replica clients and CDC pipelines.

The names a user needs first are here, imported on first use: ``import fakemaster`` (which the
codec does through the vocabulary modules) loads none of the server.

* the server: :class:`FakeMaster` (asyncio), :class:`BackgroundFakeMaster` (in a thread),
  :class:`ServerConfig`;
* what it serves: :class:`MemoryBinlogStore`, :class:`DirectoryBinlogStore`;
* the codec's state and keys: :class:`BinlogContext`, :class:`BinlogKeys`;
* the errors: :class:`FakemasterError`, :class:`DecodeError`, :class:`EncodeError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.config import ServerConfig
    from fakemaster.context import BinlogContext
    from fakemaster.encryption import BinlogKeys
    from fakemaster.errors import DecodeError, EncodeError, FakemasterError
    from fakemaster.server import BackgroundFakeMaster, FakeMaster
    from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore

__version__ = "0.1.0"

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BackgroundFakeMaster": "fakemaster.server",
    "BinlogContext": "fakemaster.context",
    "BinlogKeys": "fakemaster.encryption",
    "DecodeError": "fakemaster.errors",
    "DirectoryBinlogStore": "fakemaster.store",
    "EncodeError": "fakemaster.errors",
    "FakeMaster": "fakemaster.server",
    "FakemasterError": "fakemaster.errors",
    "MemoryBinlogStore": "fakemaster.store",
    "ServerConfig": "fakemaster.config",
}

__all__ = [
    "BackgroundFakeMaster",
    "BinlogContext",
    "BinlogKeys",
    "DecodeError",
    "DirectoryBinlogStore",
    "EncodeError",
    "FakeMaster",
    "FakemasterError",
    "MemoryBinlogStore",
    "ServerConfig",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fakemaster' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access skips this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
