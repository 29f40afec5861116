"""The changes of a transaction, resolved to whole rows: one INSERT, UPDATE or DELETE each.

What :class:`scenarios.history.Scenario` records for each statement, the oracle applies and the
compiler writes as rows events; its own module, below the history, so that the SQL of a
change (:mod:`scenarios.sql`) needs nothing of the history.
"""

from __future__ import annotations

from dataclasses import dataclass

from scenarios.schema import Table
from scenarios.state import Row

__all__ = ["Change", "Delete", "Insert", "SequenceWrite", "Update"]


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
    """One DELETE statement of one row (``before``, whole). In a system-versioned table the
    row stays as history: ``after`` is it with its period ended (logged as an UPDATE)."""

    table: Table
    before: Row
    after: Row | None = None


@dataclass(frozen=True, slots=True)
class SequenceWrite(Insert):
    """``SELECT NEXTVAL(s)`` or ``SELECT SETVAL(s, n)`` (``sql``): the sequence's row goes
    from ``before`` to ``rows[0]``, logged as a WRITE_ROWS of it (non-transactional); no row
    (``rows`` empty) when the statement leaves the row as it is (nothing logged).
    ``value``: what the statement returns (None: SETVAL changed nothing)."""

    before: Row = ()
    sql: str = ""
    value: int | None = None


Change = Insert | Update | Delete
