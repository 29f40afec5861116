"""The client/server protocol of the fake master, sans-IO.

* :mod:`~fakemaster.protocol.handshake`: Handshake V10, HandshakeResponse41, auth switch,
  mysql_native_password, capability flags;
* :mod:`~fakemaster.protocol.resultset`: column definitions, text result sets, OK (with
  session-state tracking), ERR and EOF packets, MariaDB's error texts;
* :mod:`~fakemaster.protocol.queries`: the table of statements the fake master answers and the
  SQL-visible server and session state;
* :mod:`~fakemaster.protocol.sqltext`: the small SQL lexer and expression parser behind it;
* :mod:`~fakemaster.protocol.variables`: the system variables (scope, type, default);
* :mod:`~fakemaster.protocol.charsets`: MariaDB 10.11's character sets and collations.
"""
