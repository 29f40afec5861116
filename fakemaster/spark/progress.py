"""Decoding progress from the data source's tasks to the driver, and its lines on stderr.

A task decoding a binlog file sends, at most every half second and when the file is done, a
UDP datagram ``{"file", "size", "pos", "events", "done"}`` to the address the data source's
``progress`` option names (``host:port``; the driver's address, which every executor reaches).
Datagrams are fire-and-forget: a lost one only delays the next line, and a task never waits
for the driver. :class:`ProgressListener` (driver side) receives them and renders one line.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["FileProgress", "ProgressListener", "ProgressSender", "progress_line"]

_INTERVAL = 0.5  # seconds between two datagrams of one file
_MAX_DATAGRAM = 65_000


class ProgressSender:
    """A task's reporter for one file: :meth:`items` passes the decoder's items through,
    counting events and the offset reached."""

    def __init__(
        self, address: str, path: str, size: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        host, _, port = address.rpartition(":")
        self.target = (host, int(port))
        self.path = path
        self.size = size
        self.clock = clock
        self.events = 0
        self.pos = 0
        self.sent_at = -_INTERVAL
        self.offsets: Any = None  # every event's offset, when a walk of the headers gave them
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def count_events_at(self, offsets: Any) -> None:
        """The offsets of every event of the file (sorted): events are then counted up to the
        offset reached, also those the decoder skips (it decodes only what it needs)."""
        self.offsets = offsets

    def _events(self, done: bool) -> int:
        if self.offsets is None:
            return self.events
        import numpy as np

        if done:
            return len(self.offsets)
        return int(np.searchsorted(self.offsets, self.pos, side="right"))

    def items(self, items: Iterable[Any]) -> Iterator[Any]:
        """``items`` (the columnar decoder's ``(offset, event)`` pairs and change batches),
        reporting the offset and the events read as they pass."""
        for item in items:
            if isinstance(item, tuple):
                self.events += 1
                self.pos = max(self.pos, int(item[0]))
            else:  # a ChangeBatch: rows events of one table
                offsets = item.record_batch.column("event_offset")
                if len(offsets):
                    self.events += len(set(offsets.to_pylist()))
                    self.pos = max(self.pos, int(offsets[-1].as_py()))
            if self.clock() - self.sent_at >= _INTERVAL:
                self.send(done=False)
            yield item

    def send(self, *, done: bool) -> None:
        self.sent_at = self.clock()
        message = {
            "file": self.path,
            "size": self.size,
            "pos": self.size if done else self.pos,
            "events": self._events(done),
            "done": done,
        }
        try:
            self.sock.sendto(json.dumps(message).encode()[:_MAX_DATAGRAM], self.target)
        except OSError:
            pass  # progress is best effort: the driver may be gone or unreachable

    def close(self) -> None:
        self.sock.close()


@dataclass
class FileProgress:
    size: int = 0
    pos: int = 0
    events: int = 0
    done: bool = False


class ProgressListener:
    """The driver's end: a UDP socket on ``host`` and a thread that keeps each file's latest
    report (:meth:`files`)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.sock.settimeout(0.2)
        self.address = f"{host}:{self.sock.getsockname()[1]}"
        self._files: dict[str, FileProgress] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(_MAX_DATAGRAM)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                message = json.loads(data)
                update = FileProgress(
                    int(message["size"]),
                    int(message["pos"]),
                    int(message["events"]),
                    bool(message["done"]),
                )
                path = str(message["file"])
            except (ValueError, KeyError, TypeError):
                continue  # not ours
            with self._lock:
                seen = self._files.get(path)
                # Datagrams may arrive out of order: a file never goes back.
                if seen is None or (update.done, update.pos) >= (seen.done, seen.pos):
                    self._files[path] = update

    def files(self) -> dict[str, FileProgress]:
        with self._lock:
            return {path: FileProgress(**vars(p)) for path, p in self._files.items()}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop returns


def progress_line(
    files: dict[str, FileProgress], total: int, total_bytes: int, elapsed: float
) -> str:
    """``[pipeline] decoding: D/T files, B of S read, E events, N s; FILE P% (E events), ...``:
    the files done, the bytes and events decoded so far, then each file in progress
    (``total_bytes``: the files' sizes as the driver knows them, 0 when it does not)."""
    done = sum(p.done for p in files.values())
    read = sum(p.pos for p in files.values())
    size = max(total_bytes, sum(p.size for p in files.values()))
    events = sum(p.events for p in files.values())
    line = (
        f"[pipeline] decoding: {done}/{total} files, {_size(read)} of {_size(size)} read,"
        f" {events:,} events, {elapsed:.0f} s"
    )
    active = [
        f"{path.rsplit('/', 1)[-1]} {100 * p.pos // max(p.size, 1)}% ({p.events:,} events)"
        for path, p in sorted(files.items())
        if not p.done
    ]
    return line + (f"; {', '.join(active)}" if active else "")
