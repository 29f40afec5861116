"""Contract tests for replication clients: serve known histories under faults, run any client
through an adapter, and judge what it reconstructed (docs/contract.md).

* :mod:`fakemaster.contract.adapter`: the adapter interface (a command or a callable) and the
  JSON-lines form a client writes;
* :mod:`fakemaster.contract.checks`: the verdicts (no loss, no duplicates, changes as served,
  per-key order, final tables, caught up);
* :mod:`fakemaster.contract.cases`: built-in scenarios under their faults, generated cases;
* :mod:`fakemaster.contract.runner`: serving a case and running the client;
* :mod:`fakemaster.contract.report`: the terminal table and JUnit XML;
* :mod:`fakemaster.contract.command`: ``python -m fakemaster check``;
* :mod:`fakemaster.contract.roundtrip`: property-based round trips (hypothesis);
* :mod:`fakemaster.contract.pytest`: the cases as pytest parameters, a real MariaDB replica
  fixture;
* :mod:`fakemaster.contract.adapters`: example clients.

Nothing is imported here (``import fakemaster.contract`` stays light).
"""

from __future__ import annotations

__all__: list[str] = []
