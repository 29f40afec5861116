"""Contract tests for replication clients: serve known histories under faults, run any client
through an adapter, and judge what it reconstructed (docs/contract.md).

* :mod:`fakemaster.contract.adapter`: the adapter interface (a command or a callable) and the
  JSON-lines form a client writes;
* :mod:`fakemaster.contract.checks`: the verdicts (no loss, no duplicates, changes as served,
  per-key order, final tables, caught up);
* :mod:`fakemaster.contract.cases`: built-in scenarios under their faults, generated cases;
* :mod:`fakemaster.contract.runner`: serving a case and running the client;
* :mod:`fakemaster.contract.process`: running a client command under a time limit that holds,
  its stdout and stderr read in bounded memory;
* :mod:`fakemaster.contract.report`: the terminal table and JUnit XML;
* :mod:`fakemaster.cli.check`: ``python -m fakemaster check``;
* :mod:`fakemaster.contract.roundtrip`: property-based round trips (hypothesis);
* :mod:`fakemaster.contract.pytest`: the cases as pytest parameters, a real MariaDB replica
  fixture;
* :mod:`fakemaster.contract.adapters`: example clients.

The main names are imported on first use (``import fakemaster.contract`` loads nothing else).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.contract.adapter import CallableAdapter, CommandAdapter, Endpoint, OutputWriter
    from fakemaster.contract.cases import Case, builtin_cases, generated_cases
    from fakemaster.contract.checks import Verdict
    from fakemaster.contract.runner import CaseResult, run_case, run_cases

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

# Each name and the module that defines it.
_LAZY = {
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


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
