"""The changes of a transaction, resolved to whole rows: one INSERT, UPDATE or DELETE each.

What :class:`scenarios.history.Scenario` records for each statement, the oracle applies and the
compiler writes as rows events; its own module, below the history, so that the SQL of a
change (:mod:`scenarios.sql`) needs nothing of the history.
"""

from __future__ import annotations

from dataclasses import dataclass

from scenarios.schema import Table
from scenarios.state import Row

__all__ = ["Change", "Delete", "Insert", "Update"]


@dataclass(frozen=True, slots=True)
class Insert:
    """One INSERT statement: ``rows`` whole rows (model values), ``given`` the positions of the
    columns the statement names (the others took their defaults), ``filled`` those the
    server fills that it names not (the AUTO_INCREMENT column: logged in a MINIMAL image)."""

    table: Table
    rows: tuple[Row, ...]
    given: tuple[int, ...]
    filled: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Update:
    """One UPDATE statement of one row: ``before`` and ``after`` whole rows, ``assigned`` the
    positions of the columns its SET names."""

    table: Table
    before: Row
    after: Row
    assigned: tuple[int, ...]
    # Columns the server sets that the SET names not (ON UPDATE current_timestamp()).
    filled: tuple[int, ...] = ()

    @property
    def changes_nothing(self) -> bool:
        return all(
            type(a) is type(b) and a == b for a, b in zip(self.before, self.after, strict=True)
        )


@dataclass(frozen=True, slots=True)
class Delete:
    """One DELETE statement of one row (``before``, whole)."""

    table: Table
    before: Row


Change = Insert | Update | Delete
