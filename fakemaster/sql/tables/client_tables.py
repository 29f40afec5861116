"""The databases and tables clients create on a fake master (pt-table-checksum's
``percona.checksums``): a small in-memory store per server.

A fake master's binlog is its scenario's: what clients write here is kept in memory for the
server's life, answered to SELECT, and never written to the served binlog, so a replica of the
fake does not see it (docs/verified-facts.md). The scenario's own databases are not writable.
Each table is described in the catalogue's model (:class:`~fakemaster.sql.tables.catalogue.
CatalogueTable`), so its columns are described in result sets as the served tables' are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakemaster.sql.tables.catalogue import CatalogueTable, CellValue

__all__ = ["ClientStore", "ClientTable"]


@dataclass(slots=True)
class ClientTable:
    model: CatalogueTable
    # Each row's cells in column order, as the served tables' snapshots hold them (numbers as
    # their text, character columns as str, TIMESTAMP as TimestampCell).
    rows: list[list[CellValue]] = field(default_factory=list)

    @property
    def key(self) -> tuple[int, ...]:
        """The primary key's columns, by position (empty: no primary key)."""
        primary = self.model.primary_key
        if primary is None:
            return ()
        return tuple(self.model.position(name) or 0 for name in primary.columns)


@dataclass(slots=True)
class ClientStore:
    """database -> table name -> table (names as written: case-sensitive, as on Linux)."""

    databases: dict[str, dict[str, ClientTable]] = field(default_factory=dict)
