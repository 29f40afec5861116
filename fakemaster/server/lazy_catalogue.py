"""The table catalogue of a served binlog, made at the first question asked of it.

``serve`` listens before any client asks about tables: the binlog catalogue's module (its
decoder, its DDL patterns) is loaded when a client first looks at the tables (SHOW TABLES,
information_schema), not before the first accept (issue #25: start-up CPU).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.sql.tables.catalogue import CatalogueTable, Snapshot, TableCatalogue

__all__ = ["LazyBinlogCatalogue"]


class LazyBinlogCatalogue:
    """A :class:`~fakemaster.sql.tables.binlog_catalogue.BinlogCatalogue` of ``store``, made
    when first used (thread-safe)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._catalogue: TableCatalogue | None = None

    @property
    def catalogue(self) -> TableCatalogue:
        catalogue = self._catalogue
        if catalogue is None:
            with self._lock:
                if self._catalogue is None:
                    from fakemaster.sql.tables.binlog_catalogue import BinlogCatalogue

                    self._catalogue = BinlogCatalogue(self._store)
                catalogue = self._catalogue
        return catalogue

    def databases(self) -> Sequence[str]:
        return self.catalogue.databases()

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        return self.catalogue.tables(database)

    def snapshot(self) -> Snapshot:
        return self.catalogue.snapshot()

    def text_codec(self, charset: str) -> str | None:
        return self.catalogue.text_codec(charset)
