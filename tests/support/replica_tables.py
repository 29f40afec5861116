"""A replica's tables checked against the oracle's final rows (the snapshot-dump and
served-to-replica tests share it)."""

from __future__ import annotations

from scenarios.history import Scenario
from scenarios.oracle import Oracle, canonical_rows
from scenarios.sql import SESSION_SETUP
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import select_cells

__all__ = ["compare_with_oracle"]


def compare_with_oracle(replica: MariaDBServer, scenario: Scenario) -> None:
    """Assert that every table of the scenario holds on the replica the oracle's final rows
    (order aside)."""
    connection = replica.connect(conv={})
    try:
        with connection.cursor() as cursor:
            cursor.execute(SESSION_SETUP[0])
            oracle = Oracle(scenario)
            for name, table in scenario.tables.items():
                got = sorted(select_cells(cursor, scenario, name), key=_order)
                want = sorted(canonical_rows(table, oracle.final.rows[name]), key=_order)
                assert got == want, name
    finally:
        connection.close()


def _order(cells: tuple[str | None, ...]) -> tuple[tuple[bool, str], ...]:
    # NULL first, then by text: a total order on the cells select_cells returns.
    return tuple((cell is not None, cell or "") for cell in cells)
