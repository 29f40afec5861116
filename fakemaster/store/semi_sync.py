"""Semi-synchronous replication: the primary's state, shared by all dumps of one store.

:class:`SemiSyncMaster` knows which transaction ends wait for an ACK, the ACKs received, the
switch to asynchronous replication after a timeout and back once a replica caught up;
:func:`semi_sync_master` gives the one of a store (created on first use). A
:class:`~fakemaster.core.dump.stream.DumpStream` to a replica that set ``@rpl_semi_sync_slave`` asks it
which events request an ACK and reports the ACKs it receives.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

from fakemaster.store import BinlogStore
from fakemaster.store.base import MAGIC_LEN
from fakemaster.vocabulary.constants import ChecksumAlg
from fakemaster.vocabulary.groups import GroupTracker
from fakemaster.vocabulary.header import TYPE_CODE_OFFSET

__all__ = ["AckCallback", "Position", "SemiSyncConfig", "SemiSyncMaster", "semi_sync_master"]


Position = tuple[str, int]
AckCallback = Callable[[bool], None]


class SemiSyncConfig(Protocol):
    """What semi-sync needs to know of the server (``fakemaster.config.server_config.ServerConfig``)."""

    @property
    def semi_sync_enabled(self) -> bool: ...
    @property
    def semi_sync_timeout_ms(self) -> int: ...


class SemiSyncMaster:
    """The primary's semi-sync state (``Repl_semi_sync_master``), shared by its dumps.

    Every event group appended to the store while semi-sync is ON waits for an ACK; a dump to a
    semi-sync replica requests one on the group's last event. When the oldest waiting group has
    waited ``timeout_ms`` (checked lazily, on every dump's :meth:`DumpStream.next_chunk` and on
    :meth:`check_timeouts`), semi-sync switches OFF: no group waits and no ACK is requested
    until a replica reaches the latest group end, where one ACK is requested; that ACK switches
    it back ON. Methods may be called from any thread; ACK callbacks run in the calling thread.
    """

    def __init__(
        self,
        store: BinlogStore,
        *,
        enabled: bool = True,
        timeout_ms: int = 10000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.timeout = timeout_ms / 1000.0
        self.clock = clock
        self.is_on = True
        self.clients = 0
        self.requested_acks = 0
        self.received_acks = 0
        self.off_times = 0
        self._lock = threading.RLock()
        self._commit: Position | None = None
        self._reply: Position | None = None
        self._active: deque[tuple[Position, float]] = deque()
        self._active_set: set[Position] = set()
        self._waiters: list[tuple[Position, AckCallback]] = []
        self._tracker = GroupTracker()
        last = store.last_file()
        self._seen: Position | None = (last, store.file_size(last)) if last else None
        self._unsubscribe = store.subscribe(self._on_store_change)

    def close(self) -> None:
        self._unsubscribe()

    @property
    def reply_position(self) -> Position | None:
        """The furthest (file, position) a replica acknowledged."""
        return self._reply

    @property
    def waiting(self) -> list[Position]:
        """Group ends still waiting for an ACK, oldest first."""
        with self._lock:
            return [position for position, _ in self._active]

    # -- commits -------------------------------------------------------------------------

    def _on_store_change(self, _version: int) -> None:
        with self._lock:
            for position in self._new_group_ends():
                self._register(position)

    def _new_group_ends(self) -> Iterator[Position]:
        store = self.store
        if self._seen is None:
            first = store.first_file()
            if first is None:
                return
            self._seen = (first, MAGIC_LEN)
        name, pos = self._seen
        while True:
            if not store.has_file(name):
                return
            checksum = store.checksum_alg(name) == ChecksumAlg.CRC32
            for offset, event in store.iter_events(name, pos):
                end = offset + len(event)
                self._seen = (name, end)
                if self._tracker.feed(event[TYPE_CODE_OFFSET], event, checksum):
                    yield (name, end)
            following = store.next_file(name)
            if following is None:
                return
            name, pos = following, MAGIC_LEN
            self._seen = (name, pos)

    def _register(self, position: Position) -> None:
        if self._commit is None or position > self._commit:
            self._commit = position
        if self.enabled and self.is_on:
            self._active.append((position, self.clock()))
            self._active_set.add(position)
            self.requested_acks += 1

    def check_timeouts(self) -> None:
        """Switch OFF if the oldest waiting group waited longer than the timeout."""
        with self._lock:
            if self._active and self.clock() - self._active[0][1] >= self.timeout:
                self._switch_off()

    def _switch_off(self) -> None:
        self._active.clear()
        self._active_set.clear()
        if self.is_on:
            self.is_on = False
            self.off_times += 1
            self._reply = None
        waiters, self._waiters = self._waiters, []
        for _position, callback in waiters:
            callback(False)

    # -- the dump side -------------------------------------------------------------------

    def dump_started(self, file_name: str, position: int) -> None:
        """A semi-sync replica starts reading at (file, position): that much counts as ACKed."""
        with self._lock:
            self.clients += 1
        self.report_reply(file_name, position, count=False)

    def dump_ended(self) -> None:
        with self._lock:
            self.clients = max(0, self.clients - 1)

    def need_ack(self, file_name: str, end: int) -> bool:
        """Whether the event ending at (file, end) is sent with the ACK-requested flag
        (``update_sync_header``)."""
        if not self.enabled:
            return False
        position = (file_name, end)
        with self._lock:
            if self._seen is None or position > self._seen:
                # A dump may hear of an append before this object does (store subscribers
                # are called in turn); a real primary registers a transaction for an ACK
                # before any dump thread can send it.
                for group_end in self._new_group_ends():
                    self._register(group_end)
            if self.is_on:
                if self._reply is not None and position <= self._reply:
                    return False
                return position in self._active_set
            return self._commit is None or position >= self._commit

    def report_reply(self, file_name: str, position: int, *, count: bool = True) -> None:
        """A replica acknowledged everything up to (file, position)."""
        if not self.enabled:
            return
        acked = (file_name, position)
        fired: list[AckCallback] = []
        with self._lock:
            if count:
                self.received_acks += 1
            if not self.is_on and (self._commit is None or acked >= self._commit):
                self.is_on = True
            if self._reply is None or acked >= self._reply:
                self._reply = acked
                while self._active and self._active[0][0] <= acked:
                    done, _ = self._active.popleft()
                    self._active_set.discard(done)
                remaining: list[tuple[Position, AckCallback]] = []
                for waited, callback in self._waiters:
                    if waited <= acked:
                        fired.append(callback)
                    else:
                        remaining.append((waited, callback))
                self._waiters = remaining
        for callback in fired:
            callback(True)

    # -- for tests -----------------------------------------------------------------------

    def is_acked(self, file_name: str, position: int) -> bool:
        with self._lock:
            return self._reply is not None and (file_name, position) <= self._reply

    def wait_for_ack(self, file_name: str, position: int, callback: AckCallback) -> None:
        """Call ``callback(True)`` once a replica acknowledged (file, position) (at once if one
        did), ``callback(False)`` if semi-sync is or goes OFF first."""
        target = (file_name, position)
        with self._lock:
            if self._reply is not None and target <= self._reply:
                result: bool | None = True
            elif not (self.enabled and self.is_on):
                result = False
            else:
                self._waiters.append((target, callback))
                result = None
        if result is not None:
            callback(result)


_REGISTRY_LOCK = threading.Lock()


def semi_sync_master(
    store: BinlogStore,
    config: SemiSyncConfig | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> SemiSyncMaster:
    """The semi-sync state of the primary serving ``store`` (created on first use)."""
    with _REGISTRY_LOCK:
        master = store.semi_sync
        if master is None:
            master = SemiSyncMaster(
                store,
                enabled=bool(config.semi_sync_enabled) if config is not None else True,
                timeout_ms=config.semi_sync_timeout_ms if config is not None else 10000,
                clock=clock,
            )
            store.semi_sync = master
        assert isinstance(master, SemiSyncMaster)
        return master
