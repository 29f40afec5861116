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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.server.master import BackgroundFakeMaster, FakeMaster
    from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.encryption import BinlogKeys
    from fakemaster.vocabulary.errors import DecodeError, EncodeError, FakemasterError

__version__ = "0.1.0"

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BackgroundFakeMaster": "fakemaster.server.master",
    "BinlogContext": "fakemaster.vocabulary.context",
    "BinlogKeys": "fakemaster.vocabulary.encryption",
    "DecodeError": "fakemaster.vocabulary.errors",
    "DirectoryBinlogStore": "fakemaster.store",
    "EncodeError": "fakemaster.vocabulary.errors",
    "FakeMaster": "fakemaster.server.master",
    "FakemasterError": "fakemaster.vocabulary.errors",
    "MemoryBinlogStore": "fakemaster.store",
    "ServerConfig": "fakemaster.config.server_config",
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


def _lazy_attributes(
    package: str, namespace: dict[str, Any], lazy: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names imported on first use (``lazy``:
    each name and the module that defines it); the subpackages ``protocol``, ``sql`` and
    ``store`` use it too."""

    def getattr_(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # the next access skips this function
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(lazy))

    return getattr_, dir_


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
