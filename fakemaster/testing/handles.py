"""The handles the plugin's fixtures yield: a fake master a test drives.

:class:`FakeMasterHandle` runs it in a background thread (with the fault and capture proxies of
``faults=`` and ``pcap=`` in front), for synchronous tests; :class:`AsyncFakeMasterHandle` runs
it in the test's event loop. Both share :class:`_Handle`: where to connect, the CHANGE MASTER
statement for a real replica, and changes to the binlog (made in the server's thread, so a
replica never sees half of an append). A handle starts and stops what ``builders.py`` built;
fakemaster's server modules are imported when a handle is made, not when the plugin loads.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.testing.builders import load_faults
from fakemaster.vocabulary.mariadb_types import FIXED_BINARY_TYPES, FixedBinaryValue

if TYPE_CHECKING:
    from fakemaster.client import Position
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.faults.proxy import BackgroundFaultProxy
    from fakemaster.scapy.capture import CaptureProxy
    from fakemaster.server.master import BackgroundFakeMaster, FakeMaster
    from fakemaster.store import AppendedEvent, AppendedGroup, BinlogStore
    from fakemaster.store.semi_sync import SemiSyncMaster
    from fakemaster.vocabulary.events import Event
    from scenarios.history import Scenario
    from scenarios.live import ScenarioStore
    from scenarios.oracle import Oracle

__all__ = [
    "DEFAULT_ACK_TIMEOUT",
    "DEFAULT_FAULTS_TIMEOUT",
    "AsyncFakeMasterHandle",
    "FakeMasterHandle",
]

# Seconds wait_for_ack waits by default (more than the default semi-sync timeout of 10 s).
DEFAULT_ACK_TIMEOUT = 15.0
# Seconds server_fault_results waits by default for the scheduled server faults.
DEFAULT_FAULTS_TIMEOUT = 60.0
_POLL = 0.05


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _sql_value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return str(value)
    return _sql_string(str(value))


class _Handle:
    """What the sync and async handles share: addresses, binlog changes, CHANGE MASTER."""

    config: ServerConfig
    store: BinlogStore

    def __init__(self, config: ServerConfig, store: BinlogStore, *, owns_store: bool) -> None:
        self.config = config
        self.store = store
        self.owns_store = owns_store
        self.check_errors = True
        self._semi: SemiSyncMaster | None = None
        self._last_group: tuple[str, int] | None = None
        self._oracle: Oracle | None = None
        if config.semi_sync_enabled:
            from fakemaster.store.semi_sync import semi_sync_master

            # Created now, so every transaction appended from here on waits for an ACK, as on
            # a primary with semi-sync on (dumps to semi-sync replicas share this state).
            self._semi = semi_sync_master(store, config)

    # -- implemented by each handle
    def _in_server(self, function: Callable[[], Any]) -> Any:
        raise NotImplementedError

    @property
    def master(self) -> FakeMaster:
        raise NotImplementedError

    # -- connecting

    @property
    def host(self) -> str:
        return self.config.host

    @property
    def port(self) -> int:
        return self.master.port

    @property
    def user(self) -> str:
        return self.config.user

    @property
    def password(self) -> str:
        return self.config.password

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def dsn(self) -> dict[str, Any]:
        """``pymysql.connect(**dsn)``; also python-mysql-replication's connection_settings."""
        return {"host": self.host, "port": self.port, "user": self.user, "password": self.password}

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised inside the server's connection handlers (clear it to accept
        them: the fixture fails the test at teardown otherwise)."""
        return self.master.errors

    def change_master_sql(
        self,
        *,
        use_gtid: str | None = None,
        log_file: str | None = None,
        log_pos: int | None = None,
        host: str | None = None,
        connection_name: str | None = None,
        **options: object,
    ) -> str:
        """The CHANGE MASTER TO statement that points a real MariaDB replica here.

        GTID mode (MASTER_USE_GTID=slave_pos) unless ``use_gtid`` says otherwise or a
        ``log_file``/``log_pos`` is given (then MASTER_USE_GTID=no; the file defaults to the
        first one, the position to 4). ``host`` replaces the listening address (a replica in
        a container); further ``options`` become ``MASTER_<NAME>=value`` (e.g.
        ``heartbeat_period=1``, ``connect_retry=1``).
        """
        settings = [
            f"MASTER_HOST={_sql_string(host or self.host)}",
            f"MASTER_PORT={self.port}",
            f"MASTER_USER={_sql_string(self.user)}",
            f"MASTER_PASSWORD={_sql_string(self.password)}",
        ]
        if log_file is not None or log_pos is not None:
            if use_gtid not in (None, "no"):
                raise ValueError("MASTER_LOG_FILE/MASTER_LOG_POS go with MASTER_USE_GTID=no")
            first = self.store.first_file()
            file_name = log_file if log_file is not None else first or ""
            settings.append(f"MASTER_LOG_FILE={_sql_string(file_name)}")
            settings.append(f"MASTER_LOG_POS={4 if log_pos is None else log_pos}")
            use_gtid = "no"
        elif use_gtid is None:
            use_gtid = "slave_pos"
        if use_gtid not in ("slave_pos", "current_pos", "no"):
            raise ValueError(f"use_gtid must be slave_pos, current_pos or no, not {use_gtid!r}")
        settings.append(f"MASTER_USE_GTID={use_gtid}")
        for name, value in options.items():
            key = name.upper()
            if not key.startswith("MASTER_"):
                key = "MASTER_" + key
            settings.append(f"{key}={_sql_value(value)}")
        named = f" {_sql_string(connection_name)}" if connection_name else ""
        return f"CHANGE MASTER{named} TO " + ", ".join(settings)

    # -- the scenario served (scenario=): what a client needs to start and to be checked

    def _scenario_store(self) -> ScenarioStore:
        from scenarios.live import ScenarioStore

        if not isinstance(self.store, ScenarioStore):
            raise TypeError(
                f"this fake master serves no scenario ({type(self.store).__name__}): "
                "start it with scenario="
            )
        return self.store

    @property
    def scenario(self) -> Scenario:
        """The scenario served (``scenario=``); TypeError for a fake master serving none."""
        return self._scenario_store().scenario

    @property
    def oracle(self) -> Oracle:
        """The scenario's oracle: ``handle.oracle.assert_matches(tables)`` checks a client."""
        if self._oracle is None:
            from scenarios.oracle import Oracle

            self._oracle = Oracle(self.scenario)
        return self._oracle

    @property
    def start_gtid(self) -> str:
        """The GTID position a client starts from to get the whole history (the binlog's GTID
        state before its first transaction, ``@@gtid_slave_pos``/``@slave_connect_state``
        text such as ``"0-1-5,1-1-7"``; ``""`` when the history starts from nothing). A
        client starting from ``""`` on a scenario with a ``gtid_state`` gets ERR 1236, as from
        a real primary whose older binlogs were purged."""
        from fakemaster.vocabulary.gtid_state import format_gtid_list

        state = sorted(self.scenario.gtid_state, key=lambda gtid: gtid.domain_id)
        return format_gtid_list(state)

    @property
    def start_file(self) -> str:
        """The binlog file a client dumping by file/position starts from (the first one)."""
        return self.store.first_file() or ""

    @property
    def start_pos(self) -> int:
        """The position in :attr:`start_file` a client starts from: 4, the first event."""
        return 4

    @property
    def start_position(self) -> Position:
        """:attr:`start_gtid`, :attr:`start_file` and :attr:`start_pos` as the position
        ``fakemaster.client`` takes (``BlockingReplica(..., start=handle.start_position)``)."""
        from fakemaster.client import Position

        return Position.from_gtids(self.start_gtid).at(self.start_file, self.start_pos)

    @property
    def end_gtid(self) -> str:
        """``@@gtid_binlog_pos`` once the whole history is in the binlog (released or not):
        a client whose position covers it has every transaction."""
        return self._scenario_store().history_end

    @property
    def end_position(self) -> Position:
        """:attr:`end_gtid` as a ``fakemaster.client`` position (``until=lambda p:
        p.covers(handle.end_position)``)."""
        from fakemaster.client import Position

        return Position.from_gtids(self.end_gtid)

    def initial_rows(self) -> dict[str, list[dict[str, Any]]]:
        """What a client holds before it reads the binlog: every table of the history, by
        ``database.table``, with the rows it held before the first transaction (a new copy
        each call; column name -> value). Values are as a binlog reader decodes them, so a
        change's before image equals its row: a BINARY(n) value without its trailing zero
        bytes, as MariaDB writes it in rows events (``X'610000'`` is ``b"a"``; the oracle
        pads it back when it compares). These rows are never in the binlog: a real CDC
        client gets them from a snapshot (SELECT, mariadb-dump), which the fake master also
        answers. UUID, INET4 and INET6 values are the bytes they are logged as (a BINARY(16)
        or BINARY(4) to a binlog reader, trailing zero bytes dropped)."""
        scenario = self.scenario
        tables: dict[str, list[dict[str, Any]]] = {}
        for name, table in scenario.initial_tables.items():
            names = table.column_names
            binary = {c.name for c in table.columns if c.type in _LOGGED_AS_BINARY}
            tables[name] = [
                {
                    column: _as_logged(value) if column in binary else value
                    for column, value in zip(names, row, strict=True)
                }
                for row in scenario.initial.rows[name]
            ]
        for name in scenario.tables:  # tables created by the history start empty
            tables.setdefault(name, [])
        return tables

    # -- the binlog

    def _writable(self, action: str) -> Any:
        if not hasattr(self.store, "append_transaction"):
            raise TypeError(f"{action} needs an in-memory store, not {type(self.store).__name__}")
        return self.store

    def append(self, events: Iterable[Event], *, stamp: bool = True) -> list[AppendedEvent]:
        """Write events at the end of the current binlog file (each gets its real end
        position; timestamp now unless it has one); connected replicas get them at once."""
        from fakemaster.store.memory import event_list

        store = self._writable("append")
        batch = event_list(events, "append")  # a TypeError here, not in the server's thread
        return list(self._in_server(lambda: store.append(batch, stamp=stamp)))

    def append_transaction(self, body: Sequence[Event], **options: Any) -> AppendedGroup:
        """Write one event group: a GTID event (the domain's next sequence number) and
        ``body``; ``options`` as ``MemoryBinlogStore.append_transaction`` takes them."""
        from fakemaster.store.memory import event_list

        store = self._writable("append_transaction")
        events = event_list(body, "append_transaction")
        group: AppendedGroup = self._in_server(lambda: store.append_transaction(events, **options))
        self._last_group = (group.file_name, group.end)
        return group

    def release(self, count: int = 1) -> int:
        """A scenario served with ``released=``: write its next ``count`` transactions into
        the binlog (in the server's thread; the SQL snapshot follows); the number written."""
        release = getattr(self.store, "release", None)
        if release is None:
            raise TypeError("release() needs a fake master serving a scenario")
        written: int = self._in_server(lambda: release(count))
        return written

    def release_all(self) -> int:
        """Write every transaction of the scenario not released yet; the number written."""
        pending = getattr(self.store, "pending", None)
        if pending is None:
            raise TypeError("release_all() needs a fake master serving a scenario")
        return self.release(int(pending))

    def rotate(self) -> str:
        """FLUSH BINARY LOGS: returns the new file's name."""
        store = self._writable("rotate")
        return str(self._in_server(store.rotate))

    def restart(self) -> str:
        """A clean server restart's binlog side (STOP, new file); returns its name."""
        store = self._writable("restart")
        return str(self._in_server(store.restart))

    def purge_to(self, file_name: str, *, force: bool = False) -> list[str]:
        """PURGE BINARY LOGS TO ``file_name``: returns the names of the purged files. As on a
        real primary the purge stops at the first file a running dump reads; ``force=True``
        purges it anyway (the dump then ends with ERR 1236 when it next reads it)."""
        return list(self._in_server(lambda: self.master.purge_to(file_name, force=force)))

    def master_status(self) -> tuple[str, int]:
        """SHOW MASTER STATUS: the current file and its size."""
        status: tuple[str, int] = self._in_server(self.store.master_status)
        return status

    # -- semi-sync

    def _ack_target(self, file_name: str | None, position: int | None) -> tuple[str, int]:
        if self._semi is None:
            raise RuntimeError(
                "semi-sync replication is off on this fake master: start it with semi_sync=True"
            )
        if file_name is not None and position is not None:
            return file_name, position
        if file_name is not None or position is not None:
            raise ValueError("give both file_name and position, or neither")
        if self._last_group is not None:
            return self._last_group
        return self.master_status()

    def _timeout_message(self, target: tuple[str, int], timeout: float) -> str:
        assert self._semi is not None
        acked = self._semi.reply_position
        so_far = f"{acked[0]}:{acked[1]}" if acked else "nothing"
        return (
            f"no semi-sync ACK for {target[0]}:{target[1]} within {timeout} s "
            f"(replicas acknowledged {so_far})"
        )


class FakeMasterHandle(_Handle):
    """A fake master running in a background thread, for synchronous tests.

    Every method may be called from any thread.
    """

    def __init__(
        self,
        config: ServerConfig,
        store: BinlogStore,
        *,
        owns_store: bool,
        faults: Any = None,
        pcap: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(config, store, owns_store=owns_store)
        from fakemaster.faults.plan import FaultPlan
        from fakemaster.server.master import BackgroundFakeMaster

        self.plan, self.server_faults = (
            load_faults(faults) if faults is not None else (FaultPlan(), ())
        )
        self.pcap: Path | None = Path(pcap) if pcap is not None else None
        self.fault_proxy: BackgroundFaultProxy | None = None
        self.capture: CaptureProxy | None = None
        self._fault_task: asyncio.Task[list[Any]] | None = None
        self._capture_open = False
        # With wire faults or a capture the server listens on a loopback port of its own and
        # the proxies (the capture outermost: it records what clients see) on the address
        # configured, as `serve --faults --pcap` chains them.
        self._proxied = bool(self.plan.faults) or self.pcap is not None
        served = replace(config, host="127.0.0.1", port=0) if self._proxied else config
        self.server: BackgroundFakeMaster = BackgroundFakeMaster(served, store)
        self._running = False

    def start(self) -> FakeMasterHandle:
        self.server.start()
        self._running = True
        upstream = (self.server.host, self.server.port)
        if self.plan.faults:
            from fakemaster.faults.proxy import BackgroundFaultProxy

            outermost = self.pcap is None
            self.fault_proxy = BackgroundFaultProxy(
                upstream,
                self.plan,
                host=self.config.host if outermost else "127.0.0.1",
                port=self.config.port if outermost else 0,
            ).start()
            upstream = (self.fault_proxy.host, self.fault_proxy.port)
        if self.pcap is not None:
            from fakemaster.scapy.capture import CaptureProxy

            self.capture = CaptureProxy(
                *upstream, self.pcap, host=self.config.host, port=self.config.port
            )
            self._capture_open = True
        if self.server_faults:
            from fakemaster.faults.server_faults import schedule

            master, faults = self.master, self.server_faults
            self._fault_task = self.server.call(lambda: schedule(master, faults))
        return self

    def stop(self) -> None:
        """Stop listening and close every connection (the fixtures do it at teardown); a
        capture's file is complete once this returns."""
        if self._running:
            self._running = False
            task = self._fault_task
            if task is not None:
                self.server.call(task.cancel)
            if self.fault_proxy is not None:
                self.fault_proxy.stop()
            self.server.stop()
        if self.capture is not None and self._capture_open:
            # Last: the server's closes reach the relays, which then end by themselves.
            self._capture_open = False
            self.capture.close(timeout=10.0)
        if self.owns_store:
            close = getattr(self.store, "close", None)
            if callable(close):
                close()

    def __enter__(self) -> FakeMasterHandle:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def master(self) -> FakeMaster:
        master = self.server.master
        if master is None:
            raise RuntimeError("the fake master is not running")
        return master

    # -- the outermost listener: the capture, else the fault proxy, else the server

    @property
    def host(self) -> str:
        if self.capture is not None:
            return self.capture.host
        if self.fault_proxy is not None:
            return self.fault_proxy.host
        return self.config.host

    @property
    def port(self) -> int:
        if self.capture is not None:
            return self.capture.port
        if self.fault_proxy is not None:
            return self.fault_proxy.port
        return self.master.port

    @property
    def server_port(self) -> int:
        """The fake master's own port (behind the proxies, if any)."""
        return self.master.port

    @property
    def proxy_errors(self) -> list[BaseException]:
        """Unexpected exceptions of the fault proxy's connection handlers (they fail the
        test at teardown, like :attr:`errors`)."""
        return self.fault_proxy.errors if self.fault_proxy is not None else []

    # -- faults only the server can make (docs/faults.md)

    def server_fault_results(self, timeout: float = DEFAULT_FAULTS_TIMEOUT) -> list[Any]:
        """Wait until every server fault of ``faults=`` happened; what each returned (purged
        file names, killed thread ids, None, or the exception it raised, also recorded in
        :attr:`errors`). TimeoutError after ``timeout`` seconds."""
        task = self._fault_task
        if task is None:
            return []
        done = threading.Event()
        self.server.call(lambda: task.add_done_callback(lambda _task: done.set()))
        if not done.wait(timeout):
            raise TimeoutError(f"server faults not done within {timeout} s")
        return list(task.result())

    def dumps(self) -> list[tuple[int, int, str | None]]:
        """The running dumps: (thread id, the replica's server id, the file it reads)."""
        return self.server.dumps()

    def kill_dump(self, *, thread_id: int | None = None, server_id: int | None = None) -> list[int]:
        """KILL the dump of connection ``thread_id`` or those of the replica ``server_id`` as
        SQL ``KILL`` does (the socket closes, no packet); returns the thread ids killed."""
        return self.server.kill_dump(thread_id=thread_id, server_id=server_id)

    def restart(self, server_id: int | None = None, store: BinlogStore | None = None) -> str:
        """A restart of the primary (or a failover on the same port): every connection closed
        with FIN as by a shutdown, then the binlog goes on in a new file (a memory store: STOP,
        the next file), ``server_id`` and ``store`` if given; returns the current file."""
        if not self._running:
            return super().restart()
        self.server.restart(server_id, store)
        if store is not None:
            self.store = store
        if server_id is not None:
            self.config = replace(self.config, server_id=server_id)
        return self.master_status()[0]

    def _in_server(self, function: Callable[[], Any]) -> Any:
        if self._running:
            return self.server.call(function)
        return function()

    def wait_for_ack(
        self,
        file_name: str | None = None,
        position: int | None = None,
        *,
        timeout: float = DEFAULT_ACK_TIMEOUT,
    ) -> bool:
        """Wait until a semi-sync replica acknowledged ``(file_name, position)``, by default
        the end of the last transaction appended through this handle (or the end of the
        binlog). True once acknowledged; False if the primary gave up first (semi-sync
        switched off after its ``semi_sync_timeout_ms``, as a real primary does); TimeoutError
        after ``timeout`` seconds without either."""
        target = self._ack_target(file_name, position)
        semi = self._semi
        assert semi is not None
        done = threading.Event()
        results: list[bool] = []

        def settled(acknowledged: bool) -> None:
            results.append(acknowledged)
            done.set()

        semi.wait_for_ack(*target, settled)
        deadline = time.monotonic() + timeout
        while not done.wait(_POLL):
            semi.check_timeouts()  # also when no replica is connected to check them
            if time.monotonic() >= deadline and not done.is_set():
                raise TimeoutError(self._timeout_message(target, timeout))
        return results[0]


class AsyncFakeMasterHandle(_Handle):
    """A fake master running in the current event loop, for async tests.

    Its methods must be called from that loop (they are not thread-safe).
    """

    def __init__(self, config: ServerConfig, store: BinlogStore, *, owns_store: bool) -> None:
        super().__init__(config, store, owns_store=owns_store)
        from fakemaster.server.master import FakeMaster

        self._master = FakeMaster(config, store)

    @property
    def master(self) -> FakeMaster:
        return self._master

    async def start(self) -> AsyncFakeMasterHandle:
        await self._master.start()
        return self

    async def stop(self) -> None:
        await self._master.stop()
        if self.owns_store:
            close = getattr(self.store, "close", None)
            if callable(close):
                close()

    async def __aenter__(self) -> AsyncFakeMasterHandle:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _in_server(self, function: Callable[[], Any]) -> Any:
        return function()

    async def wait_for_ack(
        self,
        file_name: str | None = None,
        position: int | None = None,
        *,
        timeout: float = DEFAULT_ACK_TIMEOUT,
    ) -> bool:
        """As :meth:`FakeMasterHandle.wait_for_ack`, without blocking the event loop."""
        target = self._ack_target(file_name, position)
        semi = self._semi
        assert semi is not None
        loop = asyncio.get_running_loop()
        settled: asyncio.Future[bool] = loop.create_future()

        def on_settled(acknowledged: bool) -> None:
            def resolve() -> None:
                if not settled.done():
                    settled.set_result(acknowledged)

            loop.call_soon_threadsafe(resolve)

        semi.wait_for_ack(*target, on_settled)
        deadline = loop.time() + timeout
        while not settled.done():
            await asyncio.wait([settled], timeout=_POLL)
            semi.check_timeouts()
            if loop.time() >= deadline and not settled.done():
                raise TimeoutError(self._timeout_message(target, timeout))
        return settled.result()


# Column types whose values a binlog reader gets as BINARY(n) bytes.
_LOGGED_AS_BINARY = frozenset({"binary", *FIXED_BINARY_TYPES})


def _as_logged(value: Any) -> Any:
    """A BINARY(n), UUID or INET value as rows events carry it: bytes without trailing zeros."""
    if isinstance(value, FixedBinaryValue):
        value = value.logged()
    return value.rstrip(b"\x00") if isinstance(value, bytes) else value
