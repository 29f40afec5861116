"""The served binlog's table catalogue is made at the first question (issue #25: ``serve``
loads it when a client asks about tables, not before listening; tests/test_lazy_imports.py
checks the module stays unloaded) and then answers as the catalogue made at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakemaster.server.lazy_catalogue import LazyBinlogCatalogue
from fakemaster.sql.tables.binlog_catalogue import BinlogCatalogue
from fakemaster.store.directory import DirectoryBinlogStore
from tests.test_lazy_imports import binlog_dir


class CountingStore:
    """A store that counts how often its files are listed."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.listed = 0

    def file_names(self) -> Any:
        self.listed += 1
        return self.store.file_names()

    def iter_events(self, name: str, start: int) -> Any:
        return self.store.iter_events(name, start)


def test_the_catalogue_is_made_and_read_at_the_first_question(tmp_path: Path) -> None:
    with DirectoryBinlogStore(binlog_dir(tmp_path)) as store:
        counting = CountingStore(store)
        lazy = LazyBinlogCatalogue(counting)
        assert counting.listed == 0
        direct = BinlogCatalogue(store)
        databases = lazy.databases()
        assert counting.listed >= 1
        assert databases == direct.databases() and databases
        for database in databases:
            assert lazy.tables(database) == direct.tables(database)
        assert lazy.text_codec("utf8mb4") == direct.text_codec("utf8mb4")
        assert lazy.catalogue is lazy.catalogue  # made once
