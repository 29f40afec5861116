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

The main names are imported on first use (``import fakemaster.contract`` loads nothing else).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CallableAdapter",
    "Case",
    "CaseResult",
    "CommandAdapter",
    "Endpoint",
    "OutputWriter",
    "Verdict",
    "builtin_cases",
    "generated_cases",
    "run_case",
    "run_cases",
]

_WHERE = {
    "CallableAdapter": "fakemaster.contract.adapter",
    "CommandAdapter": "fakemaster.contract.adapter",
    "Endpoint": "fakemaster.contract.adapter",
    "OutputWriter": "fakemaster.contract.adapter",
    "Case": "fakemaster.contract.cases",
    "builtin_cases": "fakemaster.contract.cases",
    "generated_cases": "fakemaster.contract.cases",
    "Verdict": "fakemaster.contract.checks",
    "CaseResult": "fakemaster.contract.runner",
    "run_case": "fakemaster.contract.runner",
    "run_cases": "fakemaster.contract.runner",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'fakemaster.contract' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
