"""Binlog files built as :class:`~fakemaster.store.memory.MemoryBinlogStore` builds them, but
written into a directory as they grow (with their ``<basename>.index``), so that a history of
any length is written in bounded memory; the directory is then what a
:class:`~fakemaster.store.directory.DirectoryBinlogStore` (``fakemaster serve --binlog-dir``)
serves, byte for byte the files the memory store would hold."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Self

from fakemaster.store.memory import DEFAULT_SERVER_VERSION, FileBytes, MemoryBinlogStore
from fakemaster.vocabulary.events import Gtid

__all__ = ["DiskBinlogStore", "DiskFile"]

# Appended bytes kept before one write: a group is a few hundred bytes, a system call per group
# would cost more than its encoding.
_WRITE_BEHIND = 1 << 16


class DiskFile:
    """The bytes of one binlog file on disk (created, or emptied, when made): appended through a
    buffer of at most ``_WRITE_BEHIND`` bytes, which a read or an overwrite writes out first."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path = path
        self._opened = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._written = 0
        self._pending = bytearray()
        self += data

    @property
    def _fd(self) -> int:
        # A settled file (not the current one) is opened again only when it is read.
        if self._opened < 0:
            self._opened = os.open(self.path, os.O_RDWR)
        return self._opened

    def __len__(self) -> int:
        return self._written + len(self._pending)

    def __iadd__(self, data: bytes, /) -> Self:
        self._pending += data
        if len(self._pending) >= _WRITE_BEHIND:
            self.flush()
        return self

    def flush(self) -> None:
        """Write the buffered bytes out (to the operating system)."""
        pending, self._pending = self._pending, bytearray()
        with memoryview(pending) as view:
            while view:
                done = os.pwrite(self._fd, view, self._written)
                self._written += done
                view = view[done:]

    def __getitem__(self, index: slice, /) -> bytes:
        start, stop, _ = index.indices(len(self))
        if stop > self._written:
            self.flush()
        return os.pread(self._fd, max(0, stop - start), start)

    def __setitem__(self, index: slice, value: bytes, /) -> None:
        start, stop, _ = index.indices(len(self))
        if stop - start != len(value):
            raise ValueError("a file's bytes are overwritten in place, never resized")
        self.flush()
        os.pwrite(self._fd, value, start)

    def close(self) -> None:
        """Write the buffered bytes out and close the file (a later read opens it again)."""
        if self._pending:
            self.flush()
        if self._opened >= 0:
            os.close(self._opened)
            self._opened = -1


class DiskBinlogStore(MemoryBinlogStore):
    """A :class:`~fakemaster.store.memory.MemoryBinlogStore` whose files are written into
    ``directory`` (created if missing; files of the same names there are overwritten) and listed
    in its ``<basename>.index``; only a write-behind buffer of the current file stays in memory.
    It serves while it is written, as the memory store does. :meth:`close` (or leaving a
    ``with`` block) writes everything out; :meth:`flush` does so and keeps it open."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        server_id: int = 1,
        server_version: str = DEFAULT_SERVER_VERSION,
        basename: str = "mysql-bin",
        checksum: bool = True,
        domain_id: int = 0,
        first_file_number: int = 1,
        clock: Callable[[], float] = time.time,
        initial_state: Iterable[Gtid] = (),
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.index_path = self.directory / f"{basename}.index"
        self.index_path.write_text("")
        super().__init__(
            server_id=server_id,
            server_version=server_version,
            basename=basename,
            checksum=checksum,
            domain_id=domain_id,
            first_file_number=first_file_number,
            clock=clock,
            initial_state=initial_state,
        )

    def _new_file(self, name: str, data: bytes) -> FileBytes:
        if self._files:  # the current file is complete: no descriptor kept for it
            self._disk(self.current_file).close()
        made = DiskFile(self.directory / name, data)
        with self.index_path.open("a") as index:
            index.write(f"./{name}\n")
        return made

    def _disk(self, name: str) -> DiskFile:
        found = self._files[name]
        assert isinstance(found, DiskFile)
        return found

    def flush(self) -> None:
        """Every byte written so far on disk (the files stay open)."""
        with self._lock:
            for name in self._files:
                self._disk(name).flush()

    def purge_to(self, name: str) -> list[str]:
        files = {existing: self._disk(existing) for existing in self.file_names()}
        purged = super().purge_to(name)
        for gone in purged:
            files[gone].close()
        return purged

    def close(self) -> None:
        """Write everything out and close the files (they stay in the directory)."""
        with self._lock:
            for name in self._files:
                self._disk(name).close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
