"""A scenario served live: its transactions written into the served binlog on demand
(:meth:`ScenarioStore.release`) or at a rate (:func:`release_at_rate`), the SQL snapshot
following what the binlog holds.

:class:`ScenarioStore` is the memory store fakemaster serves for a scenario. It holds the
released prefix of the compiled scenario; ``released`` counts the scenario's transactions, DDL
statements and XA COMMIT/ROLLBACK in it (the points of :class:`~scenarios.oracle.Oracle`; a
transaction that changes no row writes nothing but counts; rotations, settings, restarts and
idle periods are written before the next point, or after the last), updated under the store's
lock in the same step as the events are appended, so that a snapshot (rows) taken with ``SHOW MASTER
STATUS`` describes the same point (:meth:`ScenarioStore.snapshot_point`). Its
``table_catalogue`` is the :class:`~scenarios.catalogue.ScenarioCatalogue` the server answers
``SHOW``/``SELECT``/``information_schema`` from.

Releasing from another thread than the server's goes through the server (the pytest plugin's
handle and :class:`~fakemaster.server.master.BackgroundFakeMaster` do so); the store wakes waiting
dumps itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from fakemaster.store.memory import MemoryBinlogStore
from fakemaster.vocabulary.gtid_state import format_gtid_list
from scenarios.catalogue import ScenarioCatalogue, ScenarioSnapshot
from scenarios.compiler import CompileOptions, compile_groups, write_step
from scenarios.history import Ddl, Idle, Scenario, Step, Transaction, XaEnd

__all__ = ["ScenarioStore", "release_at_rate"]


class ScenarioStore(MemoryBinlogStore):
    """The binlog of ``scenario`` with its first ``released`` points (transactions, DDL
    statements, XA COMMIT/ROLLBACK) written (all of them when ``released`` is None);
    :meth:`release` writes more."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        released: int | None = None,
        options: CompileOptions | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        options = options or CompileOptions()
        settings = scenario.initial_settings
        # The clock without ``clock``: idle periods move it on.
        self._idle_clock = float(options.timestamp)
        super().__init__(
            server_id=settings.server_id,
            server_version=settings.server_version,
            checksum=settings.binlog_checksum,
            domain_id=settings.gtid_domain_id,
            clock=clock or (lambda: self._idle_clock),
            initial_state=scenario.gtid_state,
        )
        self.scenario = scenario
        self._compiled_groups, self._compiled_bodies = compile_groups(scenario, options)
        self._total = sum(
            1 for step in scenario.steps if isinstance(step, Transaction | Ddl | XaEnd)
        )
        self._step = 0  # the next step of scenario.steps to write
        self.released = 0
        # While hold() is true (a client holds FLUSH TABLES WITH READ LOCK on the server that
        # serves this store), releases wait: deferred is how many, written by resume().
        self.hold: Callable[[], bool] = lambda: False
        self.deferred = 0
        self.table_catalogue = ScenarioCatalogue(scenario, lambda: self.released)
        self.release(self._total if released is None else released)

    @property
    def total(self) -> int:
        return self._total

    @property
    def history_end(self) -> str:
        """``@@gtid_binlog_pos`` once the whole history is written (released or not): the last
        GTID of each domain, the scenario's ``gtid_state`` for a domain it never writes to."""
        last = {gtid.domain_id: gtid for gtid in self.scenario.gtid_state}
        for groups in self._compiled_groups.values():  # in the history's order
            for group in groups:
                if group.gtid is not None:
                    last[group.gtid.domain_id] = group.gtid
        return format_gtid_list(last[domain] for domain in sorted(last))

    @property
    def pending(self) -> int:
        return self._total - self.released

    def release(self, count: int = 1) -> int:
        """Write the next ``count`` points (fewer when fewer are left) and the steps before
        each (rotations, settings, restarts, idle periods); the number written. The steps after
        the last one are written with it. While ``hold()`` (a read lock on the server),
        nothing is written: they wait for :meth:`resume` (0 is returned)."""
        if count < 0:
            raise ValueError("release a number of transactions >= 0")
        if self.hold():
            self.deferred += min(count, self.pending - self.deferred)
            return 0
        steps = self.scenario.steps
        written = 0
        while written < count and self.released < self._total:
            step = steps[self._step]
            self._step += 1
            if not isinstance(step, Transaction | Ddl | XaEnd):
                self._write_step(step)
                continue
            with self._lock:
                self._write_step(step)
                self.released += 1
            written += 1
        if self.released == self._total:
            while self._step < len(steps):  # trailing rotations, settings, restarts, idle
                self._step += 1
                self._write_step(steps[self._step - 1])
        return written

    def idle_ahead(self) -> int:
        """The seconds of the idle periods written with the next point (between the last
        point released and the next one; 0 when none is left)."""
        if not self.pending:
            return 0
        seconds = 0
        for step in self.scenario.steps[self._step :]:
            if isinstance(step, Transaction | Ddl | XaEnd):
                break
            if isinstance(step, Idle):
                seconds += step.seconds
        return seconds

    def release_all(self) -> int:
        return self.release(self.pending)

    def resume(self) -> int:
        """Write the releases that waited for a read lock; the number written."""
        count, self.deferred = self.deferred, 0
        return self.release(count)

    def _idled(self, seconds: int) -> None:
        self._idle_clock += seconds

    def _write_step(self, step: Step) -> None:
        write_step(
            self,
            step,
            self._compiled_groups.get(id(step), ()),
            bodies=self._compiled_bodies,
            idle=self._idled,
        )

    def snapshot_point(self) -> tuple[ScenarioSnapshot, tuple[str, int], str]:
        """(the tables, SHOW MASTER STATUS, @@gtid_binlog_pos) at one instant."""
        with self._lock:
            return (
                self.table_catalogue.snapshot_after(self.released),
                self.master_status(),
                self.gtid_binlog_pos(),
            )


async def release_at_rate(
    store: ScenarioStore,
    rate: float,
    *,
    idle_scale: float = 1.0,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """Release one point (transaction, DDL statement, XA COMMIT/ROLLBACK) every ``1 / rate``
    seconds until none is left (run it on the server's event loop). An idle period before a
    point pauses the releases for its duration times ``idle_scale`` (0: no pause): meanwhile
    the binlog does not grow, and a connected replica receives only heartbeats (at the period
    it asked for). ``sleep`` is how it waits (a test can drive it)."""
    if rate <= 0:
        raise ValueError("the rate is transactions per second, > 0")
    if idle_scale < 0:
        raise ValueError("the idle scale is a factor >= 0")
    while store.pending:
        await sleep(1.0 / rate)
        idle = store.idle_ahead() * idle_scale
        if idle > 0:
            await sleep(idle)
        store.release(1)
