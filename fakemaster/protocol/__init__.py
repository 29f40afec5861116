"""The client/server wire protocol of the fake master, sans-IO: the bytes, not the SQL.

* :mod:`~fakemaster.protocol.handshake`: Handshake V10, HandshakeResponse41, auth switch,
  mysql_native_password, capability flags;
* :mod:`~fakemaster.protocol.compression`: the compressed protocol (CLIENT_COMPRESS) of one
  connection;
* :mod:`~fakemaster.protocol.resultset`: column definitions, text result sets, OK (with
  session-state tracking), ERR and EOF packets, MariaDB's error texts;
* :mod:`~fakemaster.protocol.charsets`: MariaDB 10.11's character sets and collations.

What the statements mean is :mod:`fakemaster.sql`'s job. The error every answer may raise is
here, imported on first use (the configuration imports :mod:`~fakemaster.protocol.charsets`,
which must not load the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.protocol.resultset import SqlError

# Each lazily exposed name and the module that defines it.
_LAZY = {"SqlError": "fakemaster.protocol.resultset"}

__all__ = ["SqlError"]


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
