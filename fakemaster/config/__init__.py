"""How the fake primary presents itself: its configuration (:class:`ServerConfig`), its
accounts and privileges, its system variables, and what the binlog it serves proves about the
server that wrote it (served facts and the variables made to agree with them).

Below the SQL answers and the sans-IO core, which both read it; it imports neither.
``from fakemaster.config import ServerConfig`` works as before the layout moved it to
:mod:`fakemaster.config.server_config`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig

# Each lazily exposed name and the module that defines it.
_LAZY = {"ServerConfig": "fakemaster.config.server_config"}

__all__ = ["ServerConfig"]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
