"""Example clients for ``fakemaster check``, each runnable as
``python -m fakemaster.contract.adapters.<name> HOST PORT OUT`` (the other values from the
``FAKEMASTER_*`` environment the check sets, or options):

* ``python_mysql_replication``: a CDC client on python-mysql-replication that resumes from its
  last committed position after any fault (extra ``[test]``: mysql-replication);
* ``drops_after_reconnect`` and ``reapplies_transaction``: the same client with a flaw each
  (it loses the first row change after a reconnect; it resumes one transaction too early and
  applies it twice), to show what the check reports;
* ``broken_fakemaster_client FLAW``: the project's own client with one flaw each (NULL for a
  value, a key change out of order, the last change lost or written twice, a partial before
  image, DDL not followed, XA applied at its prepare): each verdict seen failing;
* ``mariadb_replica``: a real MariaDB replica (needs ``mariadbd``) on a temporary datadir;
* ``fakemaster_client``: the project's own replica client (:mod:`fakemaster.client`), by
  file/position or (``--gtid``) by GTID;
* ``zongji [--package NAME]``: the Node example client (``zongji_client.mjs``) on @vlasky/zongji
  or @powersync/mysql-zongji (npm, tests/node);
* ``mariadb_binlog``: ``mariadb-binlog --read-from-remote-server``, its printed row images
  decoded;
* ``asyncmy_binlog``: a CDC client on asyncmy's binlog reader (extra ``[test]``: asyncmy).

The known limits of each real client, as the compatibility matrix (docs/compatibility.md) tells
them apart from unexpected failures, are in :mod:`.limits`.
"""

from __future__ import annotations

__all__ = ["ADAPTERS"]

# The example clients' module names (``python -m fakemaster.contract.adapters.<name>``).
ADAPTERS = (
    "python_mysql_replication",
    "drops_after_reconnect",
    "reapplies_transaction",
    "mariadb_replica",
    "fakemaster_client",
    "broken_fakemaster_client",
    "zongji",
    "mariadb_binlog",
    "asyncmy_binlog",
)
