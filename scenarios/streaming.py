"""A history compiled and written as it is made, in memory independent of its length.

:func:`to_store` compiles a whole :class:`~scenarios.history.Scenario` held in memory (about
1.6 KB per row change). Here the history is a generator that adds steps to the scenario and
yields between them; after each yield the new steps are taken from the scenario
(:meth:`~scenarios.history.Scenario.take_steps`), compiled (:class:`~scenarios.compiler.
StepCompiler`, which keeps only what the next step needs) and written, then dropped::

    scenario = Scenario()
    scenario.create_table("CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")

    def history(scenario):
        for n in range(10_000_000):
            scenario.insert("shop.orders", {"id": n, "note": f"order {n}"})
            yield

    store = stream_history(scenario, history(scenario), directory="binlogs")
    # binlogs/mysql-bin.index and its files: `fakemaster serve --binlog-dir binlogs`
    Oracle(scenario).final          # the tables at the end (the model's current rows)

    scenario, store = stream_toml("history.toml", directory="binlogs")   # a TOML file's steps

With ``directory`` the files go to disk as they grow (:class:`~fakemaster.store.disk.
DiskBinlogStore`); without, into a memory store (the compiled history is still not held, the
binlog bytes are). The files are byte for byte those :func:`~scenarios.compiler.to_store`
writes for the same history. What stays in memory is the model's current tables (each change is
checked against them, and an update or delete needs the row it changes), so memory follows the
tables' size, not the history's length; the oracle answers the final state from them only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from fakemaster.store.disk import DiskBinlogStore
from fakemaster.store.memory import MemoryBinlogStore
from scenarios.compiler import CompileOptions, StepCompiler, write_step
from scenarios.history import Scenario
from scenarios.toml_form import read_scenario_steps

__all__ = ["StreamWriter", "stream_history", "stream_toml"]


class StreamWriter:
    """Writes the steps added to ``scenario`` into ``store`` (a new store with the scenario's
    settings when None: a :class:`~fakemaster.store.disk.DiskBinlogStore` in ``directory``, or a
    :class:`~fakemaster.store.memory.MemoryBinlogStore`) each time :meth:`flush` is called,
    dropping them from the scenario. The clock of a new store without ``clock`` is
    ``options.timestamp`` moved on by idle periods, as in :func:`~scenarios.compiler.to_store`.
    Its tables' initial rows must be declared before the first flush that finds a step."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        store: MemoryBinlogStore | None = None,
        directory: str | os.PathLike[str] | None = None,
        options: CompileOptions | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.scenario = scenario
        self.options = options or CompileOptions()
        self._now = float(self.options.timestamp)
        if store is None:
            store = _new_store(scenario, directory, clock or (lambda: self._now))
        self.store = store
        self._compiler: StepCompiler | None = None
        self._bodies: dict[int, bytes] = {}
        self.written = 0  # steps written so far

    def _idle(self, seconds: int) -> None:
        self._now += seconds

    def flush(self) -> int:
        """Compile and write the steps added since the last flush; returns how many."""
        steps = self.scenario.take_steps()
        if not steps:
            return 0
        if self._compiler is None:
            self._compiler = StepCompiler(self.scenario, self.options, self._bodies)
        compiler, bodies, store = self._compiler, self._bodies, self.store
        for step in steps:
            compiler.step(step)
            write_step(store, step, compiler.compiled, bodies=bodies, idle=self._idle)
            compiler.compiled.clear()
            # Bodies are found by id(event): the events just written are freed now and their
            # ids may come back, so only the TABLE_MAPs a later step reuses keep theirs.
            if len(bodies) > len(compiler.stamped_maps):
                live = compiler.live_bodies()
                for key in [key for key in bodies if key not in live]:
                    del bodies[key]
        self.written += len(steps)
        return len(steps)


def _new_store(
    scenario: Scenario, directory: str | os.PathLike[str] | None, clock: Callable[[], float]
) -> MemoryBinlogStore:
    settings = scenario.initial_settings
    if directory is None:
        return MemoryBinlogStore(
            server_id=settings.server_id,
            server_version=settings.server_version,
            checksum=settings.binlog_checksum,
            domain_id=settings.gtid_domain_id,
            clock=clock,
            initial_state=scenario.gtid_state,
        )
    return DiskBinlogStore(
        directory,
        server_id=settings.server_id,
        server_version=settings.server_version,
        checksum=settings.binlog_checksum,
        domain_id=settings.gtid_domain_id,
        clock=clock,
        initial_state=scenario.gtid_state,
    )


def stream_history(
    scenario: Scenario,
    history: Iterable[object],
    *,
    store: MemoryBinlogStore | None = None,
    directory: str | os.PathLike[str] | None = None,
    options: CompileOptions | None = None,
    clock: Callable[[], float] | None = None,
) -> MemoryBinlogStore:
    """Run ``history`` (a generator adding steps to ``scenario``, yielding between them),
    writing the steps after each item it yields and at its end (see the module docstring);
    returns the store, every byte on disk when it is a :class:`~fakemaster.store.disk.
    DiskBinlogStore`."""
    writer = StreamWriter(scenario, store=store, directory=directory, options=options, clock=clock)
    for _ in history:
        writer.flush()
    writer.flush()
    if isinstance(writer.store, DiskBinlogStore):
        writer.store.flush()
    return writer.store


def stream_toml(
    path: str | os.PathLike[str],
    *,
    store: MemoryBinlogStore | None = None,
    directory: str | os.PathLike[str] | None = None,
    options: CompileOptions | None = None,
) -> tuple[Scenario, MemoryBinlogStore]:
    """The history of a TOML scenario file streamed (:func:`stream_history`, one step at a
    time, its ``generate`` rows made as the step that inserts them is): the scenario (its final
    tables) and the store."""
    scenario, steps = read_scenario_steps(os.fspath(path))
    written = stream_history(scenario, steps, store=store, directory=directory, options=options)
    return scenario, written
