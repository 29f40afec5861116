"""A deliberately broken client for the contract tests: the python-mysql-replication client of
:mod:`fakemaster.contract.adapters.python_mysql_replication` with one flaw: after a reconnect it resumes one transaction before its last committed position, so that transaction is applied twice. It
still declares exactly-once delivery; ``fakemaster check`` must report it failing on the cases
where it reconnects::

    python -m fakemaster.contract.adapters.reapplies_transaction HOST PORT OUT
"""

from __future__ import annotations

import sys

from fakemaster.contract.adapters.python_mysql_replication import main as _main

__all__ = ["FLAW", "main"]

FLAW = "reapply-after-reconnect"


def main() -> int:
    return _main(flaw=FLAW, name="reapplies_transaction")


if __name__ == "__main__":
    sys.exit(main())
