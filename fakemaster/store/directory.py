"""A directory of real binlog files, served byte for byte as its index lists them."""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import BinaryIO

from fakemaster.store.base import BinlogStore, UnknownBinlogFile
from fakemaster.vocabulary.errors import FakemasterError

__all__ = ["INCOMPLETE_MARKER", "DirectoryBinlogStore", "IncompleteRecording"]

# The file ``fakemaster record`` keeps in its output directory until the recording is whole
# (its replay file written): a recording stopped by an error keeps it, with the reason.
INCOMPLETE_MARKER = "fakemaster-recording.incomplete"


class IncompleteRecording(FakemasterError):
    """A directory holding a recording that did not finish (its marker names the reason)."""


class DirectoryBinlogStore(BinlogStore):
    """The binlog files listed in ``<basename>.index`` in ``directory``, served as they are.

    Index lines may be absolute paths or relative ones (``./mysql-bin.000001``); files are
    looked up by base name in ``directory`` when the listed path does not exist. The last file
    may grow; :meth:`poll` notices appended bytes and new index entries, and
    :meth:`start_watching` polls from a thread of its own (the server starts it; subscribing
    starts nothing). Files stay on disk:
    at most ``max_open_files`` are kept open, reads are by offset. A directory holding
    :data:`INCOMPLETE_MARKER` (a recording that did not finish) is refused with
    :class:`IncompleteRecording` unless ``allow_incomplete``.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        basename: str | None = None,
        *,
        max_open_files: int = 8,
        allow_incomplete: bool = False,
    ) -> None:
        self.directory = Path(directory)
        marker = self.directory / INCOMPLETE_MARKER
        if not allow_incomplete and marker.is_file():
            reason = marker.read_text(errors="replace").strip().splitlines()
            raise IncompleteRecording(
                f"{self.directory}: an incomplete recording"
                f" ({reason[0] if reason else 'no reason recorded'})"
            )
        if basename is None:
            basename = self._guess_basename(self.directory)
        super().__init__(basename)
        self.index_path = self.directory / f"{basename}.index"
        self.max_open_files = max_open_files
        self._names: list[str] = []
        self._paths: dict[str, Path] = {}
        self._purged: set[str] = set()
        self._handles: dict[str, BinaryIO] = {}
        self._identities: dict[str, Hashable] = {}
        # The sizes of files that were not the last one when measured (they no longer grow);
        # forgotten whenever the index changes.
        self._closed_sizes: dict[str, int] = {}
        self._generation = 0
        self._index_stamp: tuple[int, int] | None = None
        self._last_size: int | None = None
        self._watcher: threading.Thread | None = None
        self._watch_stop = threading.Event()
        self._read_index()
        last = self.last_file()
        self._last_size = self._physical_size(last) if last else None

    @staticmethod
    def _guess_basename(directory: Path) -> str:
        indexes = sorted(directory.glob("*.index"))
        if len(indexes) != 1:
            found = ", ".join(path.name for path in indexes) or "none"
            raise FileNotFoundError(
                f"expected exactly one *.index file in {directory} (found: {found}); "
                "give the binlog basename"
            )
        return indexes[0].name[: -len(".index")]

    def _read_index(self) -> bool:
        stat = self.index_path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._index_stamp:
            return False
        self._index_stamp = stamp
        names: list[str] = []
        paths: dict[str, Path] = {}
        text = self.index_path.read_text(errors="surrogateescape")
        lines = text.splitlines()
        for number, line in enumerate(lines):
            entry = line.strip()
            if not entry:
                continue
            listed = Path(entry)
            name = listed.name
            if listed.is_absolute() and listed.exists():
                path = listed
            else:
                path = self.directory / name
            if number == len(lines) - 1 and not text.endswith("\n") and not path.exists():
                # A line the primary is still appending: the start of a name, not yet a file.
                continue
            names.append(name)
            paths[name] = path
        changed = names != self._names
        if changed:
            self._closed_sizes = {}
        if set(self._names) - set(names):
            # Files left the index (purged, or RESET MASTER): a name may come back as a new
            # file, which may even get the old inode.
            self._generation += 1
            self._identities = {}
        self._names = names
        self._paths = paths
        for stale in set(self._handles) - set(paths):
            self._handles.pop(stale).close()
        return changed

    def file_names(self) -> list[str]:
        return [name for name in self._names if name not in self._purged]

    def _path(self, name: str) -> Path:
        try:
            return self._paths[name]
        except KeyError:
            raise UnknownBinlogFile(name) from None

    def file_identity(self, name: str) -> Hashable | None:
        with self._lock:
            identity = self._identities.get(name)
            if identity is None:
                try:
                    stat = self._path(name).stat()
                except OSError:
                    return None
                identity = self._identity_of(name, stat)
                self._identities[name] = identity
            return identity

    def _identity_of(self, name: str, stat: os.stat_result) -> Hashable:
        return (name, stat.st_dev, stat.st_ino, self._generation)

    def open_file(self, name: str) -> int | None:
        identity = self.file_identity(name)
        if identity is None:
            return None
        try:
            fd = os.open(self._path(name), os.O_RDONLY | os.O_CLOEXEC)
        except (OSError, UnknownBinlogFile):
            return None
        stat = os.fstat(fd)
        # Replaced since it was named: the descriptor is of another file.
        if identity != self._identity_of(name, stat):
            os.close(fd)
            return None
        return fd

    def _physical_size(self, name: str) -> int:
        return os.stat(self._path(name)).st_size

    def _closed_size(self, name: str) -> int:
        size = self._closed_sizes.get(name)
        if size is None:
            with self._lock:  # the index is read again under it: is_last cannot change here
                size = self._physical_size(name)
                if not self.is_last(name):
                    self._closed_sizes[name] = size
        return size

    def _handle(self, name: str) -> BinaryIO:
        handle = self._handles.pop(name, None)
        if handle is None:
            handle = open(self._path(name), "rb")  # noqa: SIM115 - kept open for later reads
            while len(self._handles) >= self.max_open_files:
                oldest = next(iter(self._handles))
                self._handles.pop(oldest).close()
        self._handles[name] = handle  # most recently used last
        return handle

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        with self._lock:  # held: another read may close the least recently used handle
            handle = self._handle(name)
            # The file's bytes now: a buffered read could give bytes cut from the file since.
            return os.pread(handle.fileno(), size, offset)

    def poll(self) -> bool:
        """Re-read the index and the last file's size; True (subscribers notified) if either
        changed."""
        with self._lock:
            changed = False
            try:
                changed = self._read_index()
            except FileNotFoundError:
                pass
            last = self.last_file()
            size = self._physical_size(last) if last else None
            if size != self._last_size:
                self._last_size = size
                changed = True
        if changed:
            self._changed()
        return changed

    def purge_to(self, name: str) -> list[str]:
        """Hide every file before ``name`` (the files on disk are left alone)."""
        self._require(name)
        purged: list[str] = []
        with self._lock:
            for existing in self.file_names():
                if existing == name:
                    break
                self._purged.add(existing)
                self._indexes.pop(existing, None)
                purged.append(existing)
        if purged:
            self._changed()
        return purged

    def start_watching(self, interval: float = 0.1) -> None:
        """Poll in a daemon thread every ``interval`` seconds until :meth:`close`."""
        if self._watcher is not None:
            return
        self._watch_stop.clear()

        def watch() -> None:
            while not self._watch_stop.wait(interval):
                try:
                    self.poll()
                except OSError:
                    pass

        self._watcher = threading.Thread(target=watch, name="binlog-dir-watch", daemon=True)
        self._watcher.start()

    def close(self) -> None:
        self._watch_stop.set()
        watcher = self._watcher
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout=5)
        self._watcher = None
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()

    def __enter__(self) -> DirectoryBinlogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
