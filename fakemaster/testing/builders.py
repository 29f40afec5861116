"""Building what a fake master of the pytest plugin serves, from the factory's options (the
run's settings under a test's own options and its ``@pytest.mark.fake_master`` marker): its
:class:`~fakemaster.config.server_config.ServerConfig`, its binlog store (in memory, a
directory, the demo or a scenario) and, for ``faults=``, its fault plan.

Plain functions of values, no running server: the handles (``handles.py``) start what these
build. Every fakemaster import is inside the function that needs it, so loading the plugin in
a pytest run costs nothing until a fixture is used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.faults.plan import FaultPlan
    from fakemaster.faults.server_faults import ServerFault
    from fakemaster.store import BinlogStore

__all__ = ["build_server", "load_faults", "memory_store"]


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
    defaults: Mapping[str, Any],
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
    defaults: Mapping[str, Any],
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
    # The scenario's accounts, then the configured ones (which win for the same user name).
    fields["accounts"] = (*scenario.accounts, *fields.get("accounts", base.accounts))
    store = ScenarioStore(scenario, released=released)
    return replace(base, variables=variables, **fields), store, True


def load_faults(spec: Any) -> tuple[FaultPlan, tuple[ServerFault, ...]]:
    """(wire fault plan, server faults) of ``faults=``: a FaultPlan, a plan file's path
    (``.toml`` or ``.json``: its ``[[faults]]`` and ``[[server_faults]]``), or an iterable of
    :class:`~fakemaster.faults.plan.Fault` and
    :class:`~fakemaster.faults.server_faults.ServerFault` values. A bad plan raises
    ``PlanError``; anything else in a list, TypeError."""
    from fakemaster.faults.plan import Fault, FaultPlan
    from fakemaster.faults.server_faults import ServerFault, load_plan_file

    if isinstance(spec, FaultPlan):
        return spec, ()
    if isinstance(spec, str | os.PathLike):
        return load_plan_file(Path(spec))
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
