"""Faults only the primary can make (docs/faults.md, "hooks"), as data, applied to a running
:class:`~fakemaster.server.master.FakeMaster`.

A :class:`ServerFault` is one of:

* ``purge``: ``PURGE BINARY LOGS TO to`` (``to``: a file name; absent: the last file).
  Like a real primary, the purge stops at the first file a dump reads; ``force = true``
  purges it anyway (the dump then ends with ERR 1236 when it next reads the file).
* ``kill_dump``: KILL of the dumps of ``server_id`` (a replica's server id) or of the
  connection ``thread_id``: the socket closes without a packet.
* ``restart``: every connection closed with FIN, the binlog goes on in a new file (a memory
  store), and ``server_id`` (absent: the same) is served on the same port.

Each fault happens ``at`` seconds after :func:`schedule` is called (default 0). In a plan
file (TOML; JSON is the same structure)::

    [[server_faults]]
    kind = "kill_dump"
    server_id = 2
    at = 5.0
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fakemaster.faults.kinds import MAX_SECONDS
from fakemaster.faults.plan import FaultPlan, PlanError
from fakemaster.vocabulary.inputs import (
    InputError,
    finite_number,
    loads_json,
    loads_toml,
    read_text,
)

__all__ = [
    "ServerFault",
    "ServerFaultKind",
    "apply_server_fault",
    "load_plan_file",
    "load_server_faults",
    "schedule",
]


class ServerFaultKind(StrEnum):
    PURGE = "purge"
    KILL_DUMP = "kill_dump"
    RESTART = "restart"


# The parameters each kind takes, with their types.
_PARAMS: Mapping[ServerFaultKind, Mapping[str, tuple[type, ...]]] = MappingProxyType(
    {
        ServerFaultKind.PURGE: {"to": (str,), "force": (bool,)},
        ServerFaultKind.KILL_DUMP: {"server_id": (int,), "thread_id": (int,)},
        ServerFaultKind.RESTART: {"server_id": (int,)},
    }
)

# A binlog file's name as PURGE BINARY LOGS TO takes it: a base name in the index, never a path.
_BINLOG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")


@dataclass(frozen=True)
class ServerFault:
    """One server-side fault: its kind, when (``at`` seconds) and its parameters."""

    kind: ServerFaultKind
    at: float = 0.0
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            kind = ServerFaultKind(self.kind)
        except ValueError:
            raise PlanError(f"unknown server fault kind {self.kind!r}") from None
        object.__setattr__(self, "kind", kind)
        try:
            finite_number(self.at, name="'at' (seconds)", minimum=0.0, maximum=MAX_SECONDS)
        except ValueError as exc:
            raise PlanError(f"{kind}: {exc}") from None
        allowed = _PARAMS[kind]
        for name, value in self.params.items():
            if name not in allowed:
                raise PlanError(f"{kind}: unknown parameter {name!r}")
            types = allowed[name]
            if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
                raise PlanError(f"{kind}: {name} = {value!r} is not a {types[0].__name__}")
        to = self.params.get("to")
        if kind is ServerFaultKind.PURGE and to is not None and not _BINLOG_NAME.match(to):
            raise PlanError(f"purge: to = {to!r} is not a binlog file name (no directories)")
        if kind is ServerFaultKind.KILL_DUMP and len(self.params) != 1:
            raise PlanError("kill_dump: name either server_id or thread_id")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "at": self.at, **self.params}

    @classmethod
    def from_dict(cls, data: Any) -> ServerFault:
        if not isinstance(data, Mapping) or "kind" not in data:
            raise PlanError(f"a server fault is a table with a kind, not {data!r}")
        rest = {key: value for key, value in data.items() if key not in ("kind", "at")}
        return cls(data["kind"], data.get("at", 0.0), rest)


def load_server_faults(
    text: str, *, toml: bool = True, source: str = "<plan>"
) -> tuple[ServerFault, ...]:
    """The ``server_faults`` of a plan file's text (TOML, or JSON with ``toml=False``); a plan
    without them gives ()."""
    try:
        data = loads_toml(text, source=source) if toml else loads_json(text, source=source)
    except InputError as error:
        raise PlanError(str(error)) from None
    if not isinstance(data, Mapping):
        raise PlanError("a plan is a table")
    faults = data.get("server_faults", [])
    if not isinstance(faults, list):
        raise PlanError("server_faults is a list of tables")
    loaded = []
    for index, item in enumerate(faults):
        try:
            loaded.append(ServerFault.from_dict(item))
        except PlanError as error:
            raise PlanError(f"{source}: server_faults[{index}]: {error}") from None
    return tuple(loaded)


def load_plan_file(path: str | Path) -> tuple[FaultPlan, tuple[ServerFault, ...]]:
    """(wire fault plan, server faults) of a plan file (``.json``: JSON, else TOML). Every
    error, of the file's bytes, syntax, nesting, numbers or names, is a PlanError naming the
    file; OSError passes through."""
    path = Path(path)
    source = str(path)
    toml = path.suffix != ".json"
    try:
        text = read_text(path)
        data = loads_toml(text, source=source) if toml else loads_json(text, source=source)
    except InputError as error:
        raise PlanError(str(error)) from None
    if not isinstance(data, Mapping):
        raise PlanError(f"{source}: a plan is a table/object, not {type(data).__name__}")
    try:
        wire = FaultPlan.from_dict({k: v for k, v in data.items() if k != "server_faults"})
    except PlanError as error:
        raise PlanError(f"{source}: {error}") from None
    return wire, load_server_faults(text, toml=toml, source=source)


async def apply_server_fault(master: Any, fault: ServerFault) -> Any:
    """Make ``fault`` happen on ``master`` (a running FakeMaster, in its event loop); returns
    what the hook returns (purged file names, killed thread ids, None)."""
    params = fault.params
    if fault.kind is ServerFaultKind.PURGE:
        to = params.get("to")
        if to is None:
            to = master.store.last_file()
        return master.purge_to(to, force=bool(params.get("force", False)))
    if fault.kind is ServerFaultKind.KILL_DUMP:
        return await master.kill_dump(
            thread_id=params.get("thread_id"), server_id=params.get("server_id")
        )
    await master.restart(server_id=params.get("server_id"))
    return None


def schedule(master: Any, faults: Iterable[ServerFault]) -> asyncio.Task[list[Any]]:
    """Apply ``faults`` to ``master`` in order of ``at`` (seconds from now), in a task of the
    running loop (the master's); the task's result is what each fault returned. An exception
    of a hook is recorded in ``master.errors`` and the next faults still happen."""

    async def run() -> list[Any]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        results: list[Any] = []
        for fault in sorted(faults, key=lambda f: f.at):
            delay = start + fault.at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                results.append(await apply_server_fault(master, fault))
            except Exception as error:  # noqa: BLE001 - kept, the plan goes on
                master.record_error(error)
                results.append(error)
        return results

    return asyncio.get_running_loop().create_task(run())
