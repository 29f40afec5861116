"""pytest plugin of fakemaster: a fake MariaDB 10.11 primary per test (see docs/pytest-plugin.md).

Registered through the ``pytest11`` entry point, so installing fakemaster is all it takes.

Fixtures:

* ``fake_master``: a :class:`FakeMasterHandle` listening on a free port of 127.0.0.1, serving an
  in-memory binlog that holds only the first file's start events; stopped at teardown, where
  the errors the server recorded inside its connections fail the test. The
  ``@pytest.mark.fake_master(**options)`` marker passes options (as the factory takes them).
* ``fake_master_factory``: ``fake_master_factory(**options)`` starts another one (options:
  :class:`~fakemaster.config.server_config.ServerConfig` fields, ``config``, ``store``, ``binlog_dir``,
  ``semi_sync``, ``demo``, ``scenario``, ``check_errors``, ``faults``, ``pcap``).
  ``scenario=`` serves a :class:`scenarios.Scenario`, a built-in one's name or a TOML file,
  with the server variables its settings describe, and answers SQL snapshots (SHOW CREATE
  TABLE, SELECT, information_schema...) from its oracle at the released position;
  ``released=n`` starts with only its first n transactions in the binlog, the handle's
  ``release(count)`` / ``release_all()`` write more (held back while a client holds FLUSH
  TABLES WITH READ LOCK). ``faults=`` (a FaultPlan, a list of
  faults, or a plan file) puts a fault proxy in front of the server and schedules the plan's
  server faults in it; ``pcap=`` (a path) records the traffic with a capture proxy in front
  (outermost); the handle's address is then the outermost proxy's.
* ``async_fake_master`` / ``async_fake_master_factory``: the same running in the test's event
  loop, for async tests (needs pytest-asyncio).

The synchronous fixtures run the server in a background thread; a handle's methods may be
called from any thread: binlog changes run in the server's thread, so a replica never sees half
of an append.

Settings for every fake master of a run, as command-line flags or ini keys (the flag wins):
``--fakemaster-server-id`` / ``fakemaster_server_id``, ``--fakemaster-user``,
``--fakemaster-password``, ``--fakemaster-version-string``, ``--fakemaster-semi-sync``,
``--fakemaster-semi-sync-timeout`` (ms), ``--fakemaster-gtid-domain-id``,
``--fakemaster-checksum``, ``--fakemaster-host``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.faults.plan import FaultPlan
    from fakemaster.faults.proxy import BackgroundFaultProxy
    from fakemaster.faults.server_faults import ServerFault
    from fakemaster.scapy.capture import CaptureProxy
    from fakemaster.server.master import BackgroundFakeMaster, FakeMaster
    from fakemaster.store import AppendedEvent, AppendedGroup, BinlogStore
    from fakemaster.store.semi_sync import SemiSyncMaster
    from fakemaster.vocabulary.events import Event

__all__ = [
    "DEFAULT_ACK_TIMEOUT",
    "DEFAULT_FAULTS_TIMEOUT",
    "SETTINGS",
    "AsyncFakeMasterFactory",
    "AsyncFakeMasterHandle",
    "FakeMasterFactory",
    "FakeMasterHandle",
    "Setting",
    "async_fake_master",
    "async_fake_master_factory",
    "fake_master",
    "fake_master_factory",
    "load_faults",
]

try:
    import pytest_asyncio
except ImportError:  # the async fixtures then fail with pytest's "needs a plugin" message
    pytest_asyncio = None  # type: ignore[assignment]

# Seconds wait_for_ack waits by default (more than the default semi-sync timeout of 10 s).
DEFAULT_ACK_TIMEOUT = 15.0
# Seconds server_fault_results waits by default for the scheduled server faults.
DEFAULT_FAULTS_TIMEOUT = 60.0
_POLL = 0.05


# --- settings -------------------------------------------------------------------------------


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _parse_checksum(text: str) -> str:
    upper = text.strip().upper()
    if upper not in ("CRC32", "NONE"):
        raise ValueError(f"expected CRC32 or NONE, got {text!r}")
    return upper


@dataclass(frozen=True)
class Setting:
    """A ServerConfig field settable for the whole run as ``--fakemaster-<flag>`` or the ini
    key ``fakemaster_<flag with underscores>``."""

    field: str
    flag: str
    parse: Callable[[str], Any]
    help: str
    metavar: str

    @property
    def option(self) -> str:
        return "--fakemaster-" + self.flag

    @property
    def ini(self) -> str:
        return "fakemaster_" + self.flag.replace("-", "_")


SETTINGS: tuple[Setting, ...] = (
    Setting("host", "host", str, "address fake masters listen on (default 127.0.0.1)", "ADDR"),
    Setting("server_id", "server-id", int, "server id of fake masters (default 1)", "N"),
    Setting("user", "user", str, "account replicas log in with (default root)", "NAME"),
    Setting("password", "password", str, "its password (default: empty)", "TEXT"),
    Setting("version", "version-string", str, "@@version (default 10.11.19-MariaDB-log)", "S"),
    Setting("semi_sync_enabled", "semi-sync", _parse_bool, "semi-sync replication on", "BOOL"),
    Setting(
        "semi_sync_timeout_ms",
        "semi-sync-timeout",
        int,
        "rpl_semi_sync_master_timeout (default 10000)",
        "MS",
    ),
    Setting("gtid_domain_id", "gtid-domain-id", int, "@@gtid_domain_id (default 0)", "N"),
    Setting(
        "binlog_checksum", "checksum", _parse_checksum, "@@binlog_checksum (default CRC32)", "ALG"
    ),
)

_SETTINGS_KEY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakemaster", "fake MariaDB primary (fakemaster fixtures)")
    for setting in SETTINGS:
        text = f"{setting.help} (ini: {setting.ini})"
        # A bare --fakemaster-semi-sync means true.
        flag_options = {"nargs": "?", "const": "true"} if setting.metavar == "BOOL" else {}
        group.addoption(
            setting.option,
            dest=setting.ini,
            default=None,
            metavar=setting.metavar,
            help=text,
            **flag_options,
        )
        parser.addini(setting.ini, help=f"fakemaster: {setting.help}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_master(**options): options of the fake_master fixture's server (as "
        "fake_master_factory takes them)",
    )
    config.stash[_SETTINGS_KEY] = read_settings(config)


def read_settings(config: pytest.Config) -> dict[str, Any]:
    """The ServerConfig fields set by command-line flags or, failing those, ini keys."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = config.getoption(setting.ini, None)
        source = setting.option
        if raw is None:
            ini_value = config.getini(setting.ini)
            if isinstance(ini_value, str) and ini_value.strip():
                raw, source = ini_value.strip(), f"ini key {setting.ini}"
        if raw is None:
            continue
        try:
            values[setting.field] = setting.parse(raw)
        except ValueError as exc:
            raise pytest.UsageError(f"fakemaster: {source}: {exc}") from None
    return values


# --- building a fake master -----------------------------------------------------------------


def memory_store(config: ServerConfig) -> BinlogStore:
    """An in-memory binlog as the server ``config`` describes writes it: the first file with
    only its start events (FORMAT_DESCRIPTION, GTID_LIST, BINLOG_CHECKPOINT)."""
    from fakemaster.store import MemoryBinlogStore

    values = config.global_variables()  # configured, else MariaDB's defaults
    return MemoryBinlogStore(
        server_id=int(values["server_id"] or 0),
        server_version=str(values["version"]),
        basename=config.binlog_basename,
        checksum=values["binlog_checksum"] == "CRC32",
        domain_id=config.gtid_domain_id,
    )


def build_server(
    defaults: dict[str, Any],
    *,
    config: ServerConfig | None = None,
    store: BinlogStore | None = None,
    binlog_dir: str | os.PathLike[str] | None = None,
    binlog_basename: str | None = None,
    semi_sync: bool | None = None,
    demo: bool = False,
    scenario: Any = None,
    released: int | None = None,
    **fields: Any,
) -> tuple[ServerConfig, BinlogStore, bool]:
    """(config, store, whether the store is ours to close) for the factory's options;
    ``released``: with ``scenario``, how many of its transactions are in the binlog at start
    (None: all; the handle's ``release()`` writes more)."""
    from fakemaster.config.server_config import ServerConfig

    if sum((store is not None, binlog_dir is not None, demo, scenario is not None)) > 1:
        raise ValueError("give at most one of store, binlog_dir, demo and scenario")
    if semi_sync is not None:
        fields["semi_sync_enabled"] = semi_sync
    if scenario is not None:
        return _scenario_server(defaults, scenario, config, fields, released)
    if released is not None:
        raise ValueError("released= goes with scenario=")
    if config is None:
        config = ServerConfig(**{"port": 0, **defaults, **fields})
    elif fields:
        config = replace(config, **fields)
    if binlog_dir is not None:
        from fakemaster.store import DirectoryBinlogStore

        # What the files tell (version, server id, checksum, ...) the server derives itself.
        directory = DirectoryBinlogStore(binlog_dir, binlog_basename)
        return replace(config, binlog_basename=directory.basename), directory, True
    if demo:
        from fakemaster.store.demo import demo_store

        values = config.global_variables()
        demo_binlog, _writer = demo_store(
            server_id=int(values["server_id"] or 0),
            server_version=str(values["version"]),
            checksum=values["binlog_checksum"] == "CRC32",
            domain_id=config.gtid_domain_id,
        )
        variables = {"binlog_row_metadata": "FULL", **config.variables}
        return replace(config, variables=variables), demo_binlog, True
    if store is None:
        return config, memory_store(config), True
    return config, store, False


def _scenario_server(
    defaults: dict[str, Any],
    spec: Any,
    config: ServerConfig | None,
    fields: dict[str, Any],
    released: int | None = None,
) -> tuple[ServerConfig, BinlogStore, bool]:
    """A scenario (a :class:`scenarios.Scenario`, a built-in one's name or a TOML file)
    compiled into a memory store, served with the variables its settings describe (a
    contradicting ``variables`` entry is a ValueError); its GTID domain unless one is given."""
    from fakemaster.config.server_config import ServerConfig
    from scenarios.library import serving
    from scenarios.live import ScenarioStore
    from scenarios.serving import find_scenario, scenario_variables

    if released is None:  # a built-in scenario served live by default starts as it says
        released = serving(spec).released
    scenario = find_scenario(spec)
    told = scenario_variables(scenario.settings)
    base = config or ServerConfig(**{"port": 0, **defaults})
    given = {**base.variables, **fields.pop("variables", {})}
    variables = {
        name: value
        for name, value in told.items()
        if name not in ("server_id", "version", "binlog_checksum")  # the binlog tells them
    }
    for name, value in given.items():
        if name in variables:
            mine = ServerConfig(variables={name: variables[name]}).global_variables()[name]
            if ServerConfig(variables={name: value}).global_variables()[name] != mine:
                raise ValueError(
                    f"variables: {name}={value!r} contradicts the scenario's {variables[name]}"
                )
        variables[name] = value
    if "gtid_domain_id" not in fields and config is None and "gtid_domain_id" not in defaults:
        fields["gtid_domain_id"] = scenario.settings.gtid_domain_id
    store = ScenarioStore(scenario, released=released)
    return replace(base, variables=variables, **fields), store, True


def load_faults(spec: Any) -> tuple[FaultPlan, tuple[ServerFault, ...]]:
    """(wire fault plan, server faults) of ``faults=``: a FaultPlan, a plan file's path
    (``.toml`` or ``.json``: its ``[[faults]]`` and ``[[server_faults]]``), or an iterable of
    :class:`~fakemaster.faults.plan.Fault` and
    :class:`~fakemaster.faults.server_faults.ServerFault` values. A bad plan raises
    ``PlanError``; anything else in a list, TypeError."""
    import json
    import tomllib

    from fakemaster.faults.plan import Fault, FaultPlan, PlanError
    from fakemaster.faults.server_faults import ServerFault, load_server_faults

    if isinstance(spec, FaultPlan):
        return spec, ()
    if isinstance(spec, str | os.PathLike):
        path = Path(spec)
        text = path.read_text(encoding="utf-8")
        toml = path.suffix != ".json"
        try:
            data = tomllib.loads(text) if toml else json.loads(text)
        except ValueError as error:  # TOML and JSON errors are ValueErrors
            raise PlanError(f"{path}: not a plan: {error}") from None
        if not isinstance(data, dict):
            raise PlanError(f"{path}: a plan is a table")
        wire = FaultPlan.from_dict({k: v for k, v in data.items() if k != "server_faults"})
        return wire, load_server_faults(text, toml=toml)
    if isinstance(spec, Iterable) and not isinstance(spec, bytes | dict):
        wire_faults: list[Fault] = []
        server_faults: list[ServerFault] = []
        for item in spec:
            if isinstance(item, Fault):
                wire_faults.append(item)
            elif isinstance(item, ServerFault):
                server_faults.append(item)
            else:
                raise TypeError(f"faults: expected Fault or ServerFault values, not {item!r}")
        return FaultPlan(tuple(wire_faults)), tuple(server_faults)
    raise TypeError(
        f"faults= takes a FaultPlan, a plan file's path or a list of faults, not {spec!r}"
    )


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _sql_value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return str(value)
    return _sql_string(str(value))


def _where(handle: _Handle) -> str:
    try:
        return handle.address
    except RuntimeError:  # stopped by the test already
        return f"{handle.host} (stopped)"


def format_errors(where: str, errors: Sequence[BaseException]) -> str:
    parts = [f"the fake master at {where} recorded {len(errors)} error(s) in its connections:"]
    for error in errors:
        parts.append("".join(traceback.format_exception(error)).rstrip())
    return "\n\n".join(parts)


# --- handles --------------------------------------------------------------------------------


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


# --- fixtures -------------------------------------------------------------------------------


class FakeMasterFactory:
    """``fake_master_factory(**options)``: start a fake master; all stop at teardown."""

    def __init__(self, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.handles: list[FakeMasterHandle] = []

    def __call__(
        self,
        *,
        check_errors: bool = True,
        faults: Any = None,
        pcap: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> FakeMasterHandle:
        config, store, owns_store = build_server(self.defaults, **options)
        handle = FakeMasterHandle(config, store, owns_store=owns_store, faults=faults, pcap=pcap)
        handle.check_errors = check_errors
        try:
            handle.start()
        except BaseException:
            handle.stop()
            raise
        self.handles.append(handle)
        return handle

    def close(self) -> None:
        """Stop every fake master; fail if any recorded errors (those that check them)."""
        failures = []
        for handle in reversed(self.handles):
            where = _where(handle)
            handle.stop()
            errors = [*handle.errors, *handle.proxy_errors]
            if handle.check_errors and errors:
                failures.append(format_errors(where, errors))
        self.handles.clear()
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)


class AsyncFakeMasterFactory:
    """``await async_fake_master_factory(**options)``: the async counterpart."""

    def __init__(self, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.handles: list[AsyncFakeMasterHandle] = []

    async def __call__(self, *, check_errors: bool = True, **options: Any) -> AsyncFakeMasterHandle:
        for name in ("faults", "pcap"):
            if options.get(name) is not None:
                raise TypeError(f"{name}= needs the synchronous fixtures (fake_master_factory)")
            options.pop(name, None)
        config, store, owns_store = build_server(self.defaults, **options)
        handle = AsyncFakeMasterHandle(config, store, owns_store=owns_store)
        handle.check_errors = check_errors
        try:
            await handle.start()
        except BaseException:
            await handle.stop()
            raise
        self.handles.append(handle)
        return handle

    async def close(self) -> None:
        failures = []
        for handle in reversed(self.handles):
            where = _where(handle)
            await handle.stop()
            if handle.check_errors and handle.errors:
                failures.append(format_errors(where, list(handle.errors)))
        self.handles.clear()
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)


def _settings(config: pytest.Config) -> dict[str, Any]:
    if _SETTINGS_KEY not in config.stash:
        return {}
    settings = config.stash[_SETTINGS_KEY]
    return settings.copy()


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("fake_master")
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError("@pytest.mark.fake_master takes keyword options only")
    return dict(marker.kwargs)


@pytest.fixture
def fake_master_factory(pytestconfig: pytest.Config) -> Iterator[FakeMasterFactory]:
    """Start fake masters with ``fake_master_factory(**options)``; stopped at teardown."""
    factory = FakeMasterFactory(_settings(pytestconfig))
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def fake_master(
    fake_master_factory: FakeMasterFactory, request: pytest.FixtureRequest
) -> FakeMasterHandle:
    """A fake MariaDB 10.11 primary on a free port of 127.0.0.1 (see the module docstring)."""
    return fake_master_factory(**_marker_options(request))


_async_fixture: Any = pytest_asyncio.fixture if pytest_asyncio is not None else pytest.fixture


@_async_fixture
async def async_fake_master_factory(
    pytestconfig: pytest.Config,
) -> AsyncIterator[AsyncFakeMasterFactory]:
    """Start fake masters in the test's event loop: ``await async_fake_master_factory()``."""
    factory = AsyncFakeMasterFactory(_settings(pytestconfig))
    try:
        yield factory
    finally:
        await factory.close()


@_async_fixture
async def async_fake_master(
    async_fake_master_factory: AsyncFakeMasterFactory, request: pytest.FixtureRequest
) -> AsyncFakeMasterHandle:
    """``fake_master`` for async tests: the server runs in the test's event loop."""
    return await async_fake_master_factory(**_marker_options(request))
