"""The SQL a fake primary answers: the statement table, its answers and the tables they read.

* :mod:`~fakemaster.sql.statements`: the table of statements the fake master answers and
  :func:`execute`, which answers a COM_QUERY;
* :mod:`~fakemaster.sql.answers`: the statements' answers, one job a module (SELECT, SET,
  SHOW, KILL/USE/transactions, the unsupported ones, ...);
* :mod:`~fakemaster.sql.expressions` evaluates what SELECT and SET compute, to
  :mod:`~fakemaster.sql.sqlvalue`'s typed values; :mod:`~fakemaster.sql.sqltext` is the small
  SQL lexer and expression parser, :mod:`~fakemaster.sql.like` the LIKE patterns;
* :mod:`~fakemaster.sql.state`: the SQL-visible server and session state, and
  :class:`BinlogPositions`, what SQL reads of the binlog (its files and GTID positions);
  :mod:`~fakemaster.sql.outcome`: what executing a statement gives;
* :mod:`~fakemaster.sql.tables`: the tables SQL reads (the served schemas' catalogue, the
  catalogue read from a binlog, information_schema, the mysql system tables).

The names needed to answer SQL without the network are here, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.sql.outcome import Outcome
    from fakemaster.sql.state import BinlogPositions, ServerState, SessionState
    from fakemaster.sql.statements import execute

# Each lazily exposed name and the module that defines it.
_LAZY = {
    "BinlogPositions": "fakemaster.sql.state",
    "Outcome": "fakemaster.sql.outcome",
    "ServerState": "fakemaster.sql.state",
    "SessionState": "fakemaster.sql.state",
    "execute": "fakemaster.sql.statements",
}

__all__ = ["BinlogPositions", "Outcome", "ServerState", "SessionState", "execute"]


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
