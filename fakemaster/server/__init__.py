"""The shell of the fake master: the asyncio server, its connections' sockets and TLS, the
threads that send dumps, the loop thread and the logs. Only this package (and the tools) touch
sockets, threads and the event loop; the protocol itself is :mod:`fakemaster.core`.

``from fakemaster.server import FakeMaster, BackgroundFakeMaster`` works as before the layout
moved the listening server to :mod:`fakemaster.server.master`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.server.master import BackgroundFakeMaster, FakeMaster

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BackgroundFakeMaster": "fakemaster.server.master",
    "FakeMaster": "fakemaster.server.master",
}

__all__ = ["BackgroundFakeMaster", "FakeMaster"]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
