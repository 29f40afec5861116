"""Freeing what a big statement made a slice at a time.

Dropping the last reference to a list of a million objects frees them all in one call that
holds the GIL throughout (0.3 s for the two million tokens of a 1,000,000-element IN list): a
worker thread reading a big statement would stop every other thread, the event loop among
them, that long. Emptied from the end a slice at a time, the list frees at most
:data:`SLICE` objects per call, and the interpreter may switch threads between the calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["SLICE", "defer_release", "release_deferred", "release_in_slices", "release_set"]

SLICE = 4096


def release_in_slices(items: list[Any]) -> None:
    """Empty ``items``, a slice at a time (what no one else holds is freed as it goes)."""
    while len(items) > SLICE:
        del items[-SLICE:]
    items.clear()


def release_set(items: set[Any]) -> None:
    """Empty ``items`` an element at a time (a set has no slices)."""
    pop = items.pop
    for _ in range(len(items)):
        pop()


_deferred = threading.local()


def defer_release(release: Callable[[], None]) -> None:
    """Have ``release()`` called when the statement being answered in this thread is done
    (by :func:`release_deferred`): for what lives as long as the statement, such as the sets
    an IN list is looked up in, which the WHERE clause holds until the end."""
    pending: list[Callable[[], None]] | None = getattr(_deferred, "pending", None)
    if pending is None:
        pending = _deferred.pending = []
    pending.append(release)


def release_deferred() -> None:
    pending: list[Callable[[], None]] = getattr(_deferred, "pending", None) or []
    _deferred.pending = []
    for release in pending:
        release()
