"""Fault plans: what goes wrong on a replication connection, and where, as plain data.

A :class:`FaultPlan` is a tuple of :class:`Fault` values. Each fault has a kind
(:class:`FaultKind`), a point of the server->client dump stream where it happens
(:class:`Point`), the dump session it applies to (``session``: 0 is the first connection
through the proxy that asked for a binlog dump, 1 the next, ...; None: every one) and the
parameters of its kind (validated, defaults filled in: :data:`PARAMETERS`).

Points (all counted within one dump session, from the first byte the server sends after the
client's COM_BINLOG_DUMP):

* ``event`` n: the n-th event packet (0 is the fake ROTATE; heartbeats are not counted: their
  number depends on timing). ``where``: ``before`` its first byte, ``after`` its last byte, or
  ``inside``: after ``offset`` bytes of its packet(s) (the 4-byte headers counted; an offset
  past the packet's end is clamped to one byte before it).
* ``transaction`` n: the n-th event group that starts with a GTID event. ``before`` its GTID
  event, ``after`` the event that ends it, ``inside``: before its ``offset``-th event (the
  GTID event is event 0; a group with fewer events is cut before its last event, so the cut
  stays inside the group).
  With ``into`` > 0 (``before`` or ``inside``), the point is that many bytes into that event's
  packet(s): a cut inside an event inside a transaction.
* ``gtid`` "domain-server-seq": the group of that GTID, with the same ``where``/``offset``/
  ``into``.
* ``byte`` n: after exactly n bytes delivered to the client.
* ``time`` t: t seconds (on the engine's clock) after the dump started.

Faults that change an event (``corrupt_crc``, ``truncate``, ``duplicate``) apply to the event
at an ``event`` point, or to the event of a group an ``transaction``/``gtid`` point names
(``before``: the GTID event, ``inside``: event ``offset`` of the group, ``after``: the event
that ends the group). Every other fault starts at the point and lasts until the connection
ends, or for ``duration`` seconds where the kind takes one.

Plans load from and save to JSON and TOML (:meth:`FaultPlan.from_json`,
:meth:`FaultPlan.from_toml`, :meth:`FaultPlan.to_json`, :meth:`FaultPlan.to_toml`), in this
form (TOML shown; JSON is the same structure, with ``"session": null`` also accepted)::

    seed = 7                      # optional: the seed random_plan drew it from
    [[faults]]
    kind = "cut"
    at = { event = 12, where = "inside", offset = 30 }
    close = "rst"
    session = 0                   # or "all"

:func:`random_plan` draws a plan from a seed; the same seed and arguments give the same plan.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from fakemaster.faults.kinds import (
    ERROR_PRESETS,
    EVENT_KINDS,
    KINDS,
    MAX_SECONDS,
    CloseMode,
    ErrorPreset,
    FaultKind,
    Param,
    PlanError,
    is_int,
    is_number,
)
from fakemaster.vocabulary.inputs import InputError, loads_json, loads_toml, read_text

__all__ = [
    "ERROR_PRESETS",
    "EVENT_KINDS",
    "PARAMETERS",
    "CloseMode",
    "ErrorPreset",
    "Fault",
    "FaultKind",
    "FaultPlan",
    "PlanError",
    "Point",
    "PointKind",
    "Where",
    "random_plan",
]


class PointKind(StrEnum):
    EVENT = "event"
    TRANSACTION = "transaction"
    GTID = "gtid"
    BYTE = "byte"
    TIME = "time"


class Where(StrEnum):
    BEFORE = "before"
    INSIDE = "inside"
    AFTER = "after"


_GROUP_POINTS = frozenset({PointKind.TRANSACTION, PointKind.GTID})
_GTID_TEXT = re.compile(r"^(\d+)-(\d+)-(\d+)$")
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


# The parameters of each kind: name -> (type, default, bounds); kinds.py holds them.
PARAMETERS: Mapping[FaultKind, Mapping[str, Param]] = MappingProxyType(
    {kind: row.parameters for kind, row in KINDS.items()}
)


def _parse_gtid(text: str) -> tuple[int, int, int]:
    match = _GTID_TEXT.match(text)
    if match is None:
        raise PlanError(f"a gtid point must be 'domain-server-seq', not {text!r}")
    domain, server, seq = (int(part) for part in match.groups())
    if domain > _U32 or server > _U32 or seq > _U64:
        raise PlanError(f"gtid {text!r} is out of range")
    return domain, server, seq


@dataclass(frozen=True, slots=True)
class Point:
    """A point of one dump session's server->client stream (see the module docstring)."""

    kind: PointKind
    value: int | float | str
    where: Where = Where.BEFORE
    offset: int = 0
    # transaction/gtid points before or inside a group: this many bytes into the event's
    # packet(s) (0: before the event; clamped to one byte before the packet's end).
    into: int = 0

    def __post_init__(self) -> None:
        try:
            kind = PointKind(self.kind)
            where = Where(self.where)
        except ValueError as error:
            raise PlanError(str(error)) from None
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "where", where)
        value = self.value
        if kind is PointKind.GTID:
            if not isinstance(value, str):
                raise PlanError(f"a gtid point's value must be a string, not {value!r}")
            _parse_gtid(value)
        elif kind is PointKind.TIME:
            if not is_number(value) or not 0 <= float(value) <= MAX_SECONDS:
                raise PlanError(
                    f"a time point must be a number of seconds from 0 to {MAX_SECONDS:g},"
                    f" not {value!r}"
                )
            object.__setattr__(self, "value", float(value))
        elif not is_int(value) or not 0 <= int(value) <= _U64:
            raise PlanError(
                f"a {kind.value} point must be an integer >= 0 below 2^64, not {value!r}"
            )
        if not is_int(self.offset) or self.offset < 0:
            raise PlanError(f"a point's offset must be an integer >= 0, not {self.offset!r}")
        if kind in (PointKind.BYTE, PointKind.TIME):
            if where is not Where.BEFORE or self.offset:
                raise PlanError(f"a {kind.value} point takes no where/offset")
        elif where is Where.INSIDE:
            if self.offset < 1:
                raise PlanError("a point inside an event or a group needs an offset >= 1")
        elif self.offset:
            raise PlanError("an offset is only for points 'inside' an event or a group")
        if not is_int(self.into) or self.into < 0:
            raise PlanError(f"a point's 'into' must be an integer >= 0, not {self.into!r}")
        if self.into and (kind not in _GROUP_POINTS or where is Where.AFTER):
            raise PlanError("'into' is only for transaction/gtid points before or inside a group")

    @property
    def gtid(self) -> tuple[int, int, int]:
        """(domain, server_id, seq_no) of a gtid point."""
        return _parse_gtid(str(self.value))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.kind.value: self.value}
        if self.where is not Where.BEFORE:
            out["where"] = self.where.value
        if self.offset:
            out["offset"] = self.offset
        if self.into:
            out["into"] = self.into
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Point:
        if not isinstance(data, Mapping):
            raise PlanError(f"a point must be a table/object, not {data!r}")
        kinds = [key for key in data if key in PointKind.__members__.values()]
        unknown = set(data) - set(kinds) - {"where", "offset", "into"}
        if unknown:
            raise PlanError(f"unknown keys in a point: {sorted(unknown)}")
        if len(kinds) != 1:
            names = [kind.value for kind in PointKind]
            raise PlanError(f"a point needs exactly one of {names}, not {sorted(data)}")
        return cls(
            PointKind(kinds[0]),
            data[kinds[0]],
            data.get("where", Where.BEFORE),
            data.get("offset", 0),
            data.get("into", 0),
        )


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault: its kind, where it happens, which dump session, and its parameters."""

    kind: FaultKind
    at: Point
    session: int | None = 0
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            kind = FaultKind(self.kind)
        except ValueError:
            names = [kind.value for kind in FaultKind]
            raise PlanError(f"unknown fault kind {self.kind!r} (one of {names})") from None
        object.__setattr__(self, "kind", kind)
        if not isinstance(self.at, Point):
            raise PlanError(f"a fault's point must be a Point, not {self.at!r}")
        if self.session is not None and (not is_int(self.session) or self.session < 0):
            raise PlanError(f"session must be an integer >= 0 or None, not {self.session!r}")
        schema = PARAMETERS[kind]
        unknown = set(self.params) - set(schema)
        if unknown:
            raise PlanError(
                f"{kind.value} takes no parameters {sorted(unknown)} ({sorted(schema)})"
            )
        checked = {
            name: spec.check(name, self.params.get(name, spec.default))
            for name, spec in schema.items()
        }
        if kind in EVENT_KINDS:
            if self.at.kind not in (PointKind.EVENT, *_GROUP_POINTS):
                raise PlanError(f"{kind.value} needs an event, transaction or gtid point")
            if self.at.kind is PointKind.EVENT and self.at.where is not Where.BEFORE:
                raise PlanError(f"{kind.value} applies to a whole event: use where='before'")
            if self.at.into:
                raise PlanError(f"{kind.value} applies to a whole event: 'into' is not for it")
        if kind is FaultKind.CORRUPT_CRC and checked["target"] == "crc":
            offset = checked["offset"]
            if offset is not None and offset > 3:
                raise PlanError("corrupt_crc of the crc: offset must be 0..3")
        if kind is FaultKind.WRONG_HEARTBEAT:
            if checked["position"] is None and checked["file"] is None:
                raise PlanError("wrong_heartbeat needs a 'position' or a 'file'")
            if checked["file"] is not None and not checked["file"].isascii():
                raise PlanError(f"wrong_heartbeat: file must be ASCII: {checked['file']!r}")
        if kind is FaultKind.ERROR and checked["sqlstate"] is not None:
            if len(checked["sqlstate"]) != 5 or not checked["sqlstate"].isascii():
                raise PlanError(f"sqlstate must be 5 ASCII characters: {checked['sqlstate']!r}")
        object.__setattr__(self, "params", MappingProxyType(checked))

    def error_packet(self) -> ErrorPreset:
        """An ``error`` fault's ERR: its preset with the parameters given over it."""
        if self.kind is not FaultKind.ERROR:
            raise PlanError(f"a {self.kind.value} fault sends no ERR packet")
        preset = ERROR_PRESETS[self.params["preset"]]
        params = self.params
        return ErrorPreset(
            preset.errno if params["errno"] is None else params["errno"],
            preset.sqlstate if params["sqlstate"] is None else params["sqlstate"],
            preset.message if params["message"] is None else params["message"],
            preset.seq if params["seq"] is None else params["seq"],
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.at, self.session, tuple(sorted(self.params.items()))))

    def applies_to(self, session: int) -> bool:
        return self.session is None or self.session == session

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "at": self.at.to_dict()}
        out["session"] = "all" if self.session is None else self.session
        defaults = PARAMETERS[self.kind]
        for name, value in self.params.items():
            if value is not None and value != defaults[name].default:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Fault:
        if not isinstance(data, Mapping):
            raise PlanError(f"a fault must be a table/object, not {data!r}")
        if "kind" not in data or "at" not in data:
            raise PlanError(f"a fault needs 'kind' and 'at': {dict(data)!r}")
        session = data.get("session", 0)
        if session == "all":
            session = None
        params = {k: v for k, v in data.items() if k not in ("kind", "at", "session")}
        try:
            return cls(data["kind"], Point.from_dict(data["at"]), session, params)
        except PlanError as error:
            raise PlanError(f"fault {dict(data)!r}: {error}") from None


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """Faults, in the order given; ``seed`` is the seed it was drawn from (or None)."""

    faults: tuple[Fault, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        faults = tuple(self.faults)
        for fault in faults:
            if not isinstance(fault, Fault):
                raise PlanError(f"a plan holds Fault values, not {fault!r}")
        object.__setattr__(self, "faults", faults)
        if self.seed is not None and not is_int(self.seed):
            raise PlanError(f"seed must be an integer, not {self.seed!r}")

    def __len__(self) -> int:
        return len(self.faults)

    def for_session(self, session: int) -> tuple[Fault, ...]:
        return tuple(fault for fault in self.faults if fault.applies_to(session))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.seed is not None:
            out["seed"] = self.seed
        out["faults"] = [fault.to_dict() for fault in self.faults]
        return out

    @classmethod
    def from_dict(cls, data: Any) -> FaultPlan:
        if not isinstance(data, Mapping):
            raise PlanError(f"a fault plan must be a table/object, not {type(data).__name__}")
        unknown = set(data) - {"seed", "faults"}
        if unknown:
            raise PlanError(f"unknown keys in a fault plan: {sorted(unknown)}")
        faults = data.get("faults", [])
        if not isinstance(faults, list):
            raise PlanError("'faults' must be a list")
        items = []
        for index, item in enumerate(faults):
            try:
                items.append(Fault.from_dict(item))
            except PlanError as error:
                raise PlanError(f"faults[{index}]: {error}") from None
        return cls(tuple(items), data.get("seed"))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = "<json>") -> FaultPlan:
        try:
            data = loads_json(text, source=source)
        except InputError as error:
            raise PlanError(str(error)) from None
        if isinstance(data, Mapping):
            data = dict(data)
            faults = data.get("faults", [])
            if isinstance(faults, list):
                data["faults"] = [
                    {**item, "session": "all"}
                    if isinstance(item, Mapping) and "session" in item and item["session"] is None
                    else item
                    for item in faults
                ]
        return cls.from_dict(data)

    def to_toml(self) -> str:
        lines = []
        if self.seed is not None:
            lines.append(f"seed = {self.seed}")
        if not self.faults:
            lines.append("faults = []")
        for fault in self.faults:
            data = fault.to_dict()
            lines.append("")
            lines.append("[[faults]]")
            for key, value in data.items():
                lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines).lstrip("\n") + "\n"

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<toml>") -> FaultPlan:
        try:
            data = loads_toml(text, source=source)
        except InputError as error:
            raise PlanError(str(error)) from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: Any) -> FaultPlan:
        """A plan from a ``.json`` or ``.toml`` file (by its suffix)."""
        name = str(path)
        if not name.endswith((".toml", ".json")):
            raise PlanError(f"a fault plan file ends with .json or .toml: {name}")
        try:
            text = read_text(name)
        except InputError as error:
            raise PlanError(str(error)) from None
        try:
            if name.endswith(".toml"):
                return cls.from_toml(text, source=name)
            return cls.from_json(text, source=name)
        except PlanError as error:
            text = str(error)
            raise PlanError(text if text.startswith(name) else f"{name}: {text}") from None

    def save(self, path: Any) -> None:
        name = str(path)
        if name.endswith(".toml"):
            text = self.to_toml()
        elif name.endswith(".json"):
            text = self.to_json()
        else:
            raise PlanError(f"a fault plan file ends with .json or .toml: {name}")
        with open(name, "w", encoding="utf-8") as handle:
            handle.write(text)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string for these texts
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise PlanError(f"cannot write {value!r} to TOML")


# --- random plans -----------------------------------------------------------------------------

_DEFAULT_KINDS = tuple(FaultKind)


def random_plan(
    seed: int,
    *,
    count: int = 1,
    kinds: Iterable[FaultKind | str] | None = None,
    events: int = 40,
    transactions: int = 8,
    sessions: int = 1,
    max_duration: float = 0.5,
) -> FaultPlan:
    """A plan of ``count`` faults drawn from ``seed`` (the same arguments, the same plan).

    Points fall among the first ``events`` events (from event 2, after the fake ROTATE and the
    FORMAT_DESCRIPTION), the first ``transactions`` groups, or the bytes those events span
    (about 64 bytes each); each fault goes to one of the first ``sessions`` dump sessions.
    Durations are at most ``max_duration`` seconds; cuts and errors are drawn as often as
    other kinds."""
    if not is_int(seed):
        raise PlanError(f"seed must be an integer, not {seed!r}")
    if count < 0 or events < 3 or transactions < 1 or sessions < 1:
        raise PlanError(
            "random_plan needs count >= 0, events >= 3, transactions >= 1, sessions >= 1"
        )
    chosen: Sequence[FaultKind] = (
        _DEFAULT_KINDS if kinds is None else tuple(FaultKind(kind) for kind in kinds)
    )
    if not chosen:
        raise PlanError("random_plan needs at least one kind")
    rng = random.Random(seed)
    faults = []
    for _ in range(count):
        kind = rng.choice(chosen)
        faults.append(
            Fault(
                kind,
                _random_point(rng, kind, events, transactions),
                rng.randrange(sessions),
                KINDS[kind].random_params(rng, max_duration),
            )
        )
    return FaultPlan(tuple(faults), seed)


def _random_point(rng: random.Random, kind: FaultKind, events: int, transactions: int) -> Point:
    if kind in EVENT_KINDS:
        if rng.random() < 0.5:
            return Point(PointKind.EVENT, rng.randrange(2, events))
        where = rng.choice(list(Where))
        offset = rng.randrange(1, 4) if where is Where.INSIDE else 0
        return Point(PointKind.TRANSACTION, rng.randrange(transactions), where, offset)
    choice = rng.randrange(3)
    if choice == 0:
        where = rng.choice(list(Where))
        offset = rng.randrange(1, 64) if where is Where.INSIDE else 0
        return Point(PointKind.EVENT, rng.randrange(2, events), where, offset)
    if choice == 1:
        where = rng.choice(list(Where))
        offset = rng.randrange(1, 4) if where is Where.INSIDE else 0
        into = 0 if where is Where.AFTER or rng.random() < 0.5 else rng.randrange(1, 64)
        return Point(PointKind.TRANSACTION, rng.randrange(transactions), where, offset, into)
    return Point(PointKind.BYTE, rng.randrange(events * 64))
