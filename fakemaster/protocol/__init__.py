"""The client/server protocol of the fake master, sans-IO.

* :mod:`~fakemaster.protocol.handshake`: Handshake V10, HandshakeResponse41, auth switch,
  mysql_native_password, capability flags;
* :mod:`~fakemaster.protocol.resultset`: column definitions, text result sets, OK (with
  session-state tracking), ERR and EOF packets, MariaDB's error texts;
* :mod:`~fakemaster.sql.statements`: the table of statements the fake master answers and
  :func:`execute`, which answers a COM_QUERY;
* the statements, one job a module: :mod:`~fakemaster.sql.answers.select`,
  :mod:`~fakemaster.sql.answers.set_statement`, :mod:`~fakemaster.sql.answers.show`,
  :mod:`~fakemaster.sql.answers.connection_statements` (KILL, USE, transactions),
  :mod:`~fakemaster.sql.answers.unsupported`; :mod:`~fakemaster.sql.expressions` evaluates
  what SELECT and SET compute, to :mod:`~fakemaster.sql.sqlvalue`'s typed values;
* :mod:`~fakemaster.sql.state`: the SQL-visible server and session state;
  :mod:`~fakemaster.sql.outcome`: what executing a statement gives;
* :mod:`~fakemaster.sql.sqltext`: the small SQL lexer and expression parser;
* :mod:`~fakemaster.config.variables`: the system variables (scope, type, default);
* :mod:`~fakemaster.protocol.charsets`: MariaDB 10.11's character sets and collations.

The names needed to answer SQL without the network are here, imported on first use (the
configuration imports :mod:`~fakemaster.protocol.charsets`, which must not load the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.protocol.resultset import SqlError
    from fakemaster.sql.outcome import Outcome
    from fakemaster.sql.state import BinlogCatalog, ServerState, SessionState
    from fakemaster.sql.statements import execute

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BinlogCatalog": "fakemaster.sql.state",
    "Outcome": "fakemaster.sql.outcome",
    "ServerState": "fakemaster.sql.state",
    "SessionState": "fakemaster.sql.state",
    "SqlError": "fakemaster.protocol.resultset",
    "execute": "fakemaster.sql.statements",
}

__all__ = ["BinlogCatalog", "Outcome", "ServerState", "SessionState", "SqlError", "execute"]


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
