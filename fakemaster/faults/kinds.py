"""Fault kinds: one row per kind, with every fact about it a plan needs.

A row (:class:`KindRow`) holds a kind's parameters (type, default, bounds), whether it changes
one event or the stream from its point on, how :func:`~fakemaster.faults.plan.random_plan`
draws its parameters from a seed and how the hypothesis strategies
(:mod:`fakemaster.faults.strategies`) draw them. A new kind is a member of :class:`FaultKind`,
a row in :data:`KINDS` and its handling in :mod:`fakemaster.faults.engine`;
tests/test_checklists.py fails, naming the file, while one of them is missing.

The hypothesis draws take the ``hypothesis.strategies`` module as an argument, so that this
module (which serves) does not import hypothesis, a test dependency.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from fakemaster.vocabulary.errcodes import ER_MASTER_FATAL_ERROR_READING_BINLOG, ER_SERVER_SHUTDOWN
from fakemaster.vocabulary.errors import FakemasterError

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "ERROR_PRESETS",
    "EVENT_KINDS",
    "KINDS",
    "MAX_DELAY",
    "MAX_SECONDS",
    "CloseMode",
    "ErrorPreset",
    "FaultKind",
    "KindRow",
    "Param",
    "PlanError",
]


class PlanError(FakemasterError, ValueError):
    """A fault plan (or a part of one) that is not valid; the message says which part."""


class FaultKind(StrEnum):
    CUT = "cut"
    BLACKHOLE = "blackhole"
    STALL = "stall"
    TRICKLE = "trickle"
    BANDWIDTH = "bandwidth"
    LATENCY = "latency"
    CORRUPT_CRC = "corrupt_crc"
    TRUNCATE = "truncate"
    DUPLICATE = "duplicate"
    ERROR = "error"
    EOF = "eof"
    WITHHOLD_HEARTBEAT = "withhold_heartbeat"
    WRONG_HEARTBEAT = "wrong_heartbeat"
    DROP_ACKS = "drop_acks"


class CloseMode(StrEnum):
    FIN = "fin"  # an orderly close (shutdown of the write side, then close)
    RST = "rst"  # an abortive close (SO_LINGER 0): the peer gets ECONNRESET
    NONE = "none"  # keep the connection open, forward nothing more


@dataclass(frozen=True, slots=True)
class ErrorPreset:
    """An ERR packet a real primary sends mid-dump: errno, SQLSTATE, text, and the sequence
    number it carries (None: the next of the connection's packets)."""

    errno: int
    sqlstate: str
    message: str
    seq: int | None = None


# ERR packets by name, for ``error`` faults (``preset``). Texts are MariaDB 10.11's.
ERROR_PRESETS: Mapping[str, ErrorPreset] = MappingProxyType(
    {
        # Binlog read errors of the dump thread (sql_repl.cc, read_log_event), as ERR 1236.
        "truncated": ErrorPreset(
            ER_MASTER_FATAL_ERROR_READING_BINLOG,
            "HY000",
            "binlog truncated in the middle of event; consider out of disk space on master",
        ),
        "bogus": ErrorPreset(
            ER_MASTER_FATAL_ERROR_READING_BINLOG, "HY000", "bogus data in log event"
        ),
        "too_large": ErrorPreset(
            ER_MASTER_FATAL_ERROR_READING_BINLOG,
            "HY000",
            "log event entry exceeded max_allowed_packet; Increase max_allowed_packet on master",
        ),
        "crc": ErrorPreset(
            ER_MASTER_FATAL_ERROR_READING_BINLOG,
            "HY000",
            "event read from binlog did not pass crc check",
        ),
        "purged": ErrorPreset(
            ER_MASTER_FATAL_ERROR_READING_BINLOG,
            "HY000",
            "Could not find first log file name in binary log index file",
        ),
        # ER_SERVER_SHUTDOWN. A MariaDB 10.11 primary does NOT send it to a dumping connection
        # when it shuts down: it closes the socket (FIN) without a packet (docs/faults.md);
        # use a ``cut`` with close="fin" to do what it does, this preset to test a client's
        # handling of the ERR that other servers and proxies send.
        "shutdown": ErrorPreset(ER_SERVER_SHUTDOWN, "08S01", "Server shutdown in progress"),
    }
)


def is_int(value: object) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """A finite int or float that is not a bool."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(float(value))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a kind: its type, default and bounds."""

    kind: str  # "int", "float", "str", "choice"
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False  # None allowed
    required: bool = False

    def check(self, name: str, value: Any) -> Any:
        if value is None:
            if self.optional and not self.required:
                return None
            raise PlanError(f"parameter {name!r} is required")
        if self.kind == "int":
            if not is_int(value):
                raise PlanError(f"parameter {name!r} must be an integer, not {value!r}")
        elif self.kind == "float":
            if not is_number(value):
                raise PlanError(f"parameter {name!r} must be a finite number, not {value!r}")
            value = float(value)
        elif self.kind == "str":
            if not isinstance(value, str):
                raise PlanError(f"parameter {name!r} must be a string, not {value!r}")
        elif value not in self.choices:
            raise PlanError(
                f"parameter {name!r} must be one of {list(self.choices)}, not {value!r}"
            )
        if self.minimum is not None and value < self.minimum:
            raise PlanError(f"parameter {name!r} must be at least {self.minimum}, not {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise PlanError(f"parameter {name!r} must be at most {self.maximum}, not {value!r}")
        return value


# A seeded draw of a kind's parameters: (the plan's random generator, max_duration) -> params.
RandomDraw = Callable[[random.Random, float], dict[str, Any]]
# A hypothesis draw of them: (hypothesis.strategies, max_duration) -> a strategy of params.
HypothesisDraw = Callable[[ModuleType, float], "SearchStrategy[dict[str, Any]]"]


@dataclass(frozen=True, slots=True)
class KindRow:
    """Everything about one fault kind but what the engine does with it (engine.py)."""

    kind: FaultKind
    parameters: Mapping[str, Param]
    random_params: RandomDraw
    hypothesis_params: HypothesisDraw
    # True: the kind changes the one event at its point (corrupt, truncate, duplicate);
    # False: it acts on the stream from its point on.
    changes_one_event: bool = False


_CLOSES = tuple(mode.value for mode in CloseMode)
# Bounds of every time a plan gives: a fault lasts at most a day, a per-packet delay or pause
# at most an hour (1e308 would hold the stream forever), a rate or size at most 1 GiB.
MAX_SECONDS = 86400.0
MAX_DELAY = 3600.0
_MAX_BYTES = 1 << 30
_DURATION = Param("float", None, minimum=0.0, maximum=MAX_SECONDS, optional=True)
_U32 = (1 << 32) - 1
_BINLOG_NAME = r"mysql-bin\.[0-9]{6}"


# --- seeded draws (random_plan): the order of the generator's calls is the plan a seed gives --


def _duration(rng: random.Random, max_duration: float) -> float:
    return round(rng.uniform(0.0, max_duration), 3)


def _random_none(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {}


def _random_duration(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"duration": _duration(rng, max_duration)}


def _random_cut(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"close": rng.choice(("fin", "rst"))}


def _random_trickle(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"size": rng.randrange(1, 64), "duration": _duration(rng, max_duration)}


def _random_bandwidth(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"rate": rng.randrange(1 << 10, 1 << 20), "duration": _duration(rng, max_duration)}


def _random_latency(rng: random.Random, max_duration: float) -> dict[str, Any]:
    delay = round(rng.uniform(0.0, max_duration / 4), 3)
    return {"delay": delay, "duration": _duration(rng, max_duration)}


def _random_corrupt_crc(rng: random.Random, max_duration: float) -> dict[str, Any]:
    target = rng.choice(("crc", "body"))
    return {"target": target, "offset": rng.randrange(4) if target == "crc" else None}


def _random_duplicate(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"count": rng.randrange(1, 3)}


def _random_error(rng: random.Random, max_duration: float) -> dict[str, Any]:
    return {"preset": rng.choice(tuple(ERROR_PRESETS)), "close": rng.choice(("fin", "rst"))}


def _random_wrong_heartbeat(rng: random.Random, max_duration: float) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"position": rng.randrange(4, 1 << 16)}
    return {"file": f"mysql-bin.{rng.randrange(1, 1000):06d}"}


# --- hypothesis draws: each shrinks towards the kind's defaults -----------------------------


def _durations(st: ModuleType, max_duration: float) -> SearchStrategy[float | None]:
    strategy: SearchStrategy[float | None] = st.one_of(st.none(), st.floats(0.0, max_duration))
    return strategy


def _drawn(strategy: Any) -> SearchStrategy[dict[str, Any]]:
    drawn: SearchStrategy[dict[str, Any]] = strategy
    return drawn


def _hypothesis_none(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.just({}))


def _hypothesis_cut(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({"close": st.sampled_from(["fin", "rst"])}))


def _hypothesis_stall(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({"duration": st.floats(0.0, max_duration)}))


def _hypothesis_trickle(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(
        st.fixed_dictionaries(
            {"size": st.integers(1, 64)},
            optional={"interval": st.floats(0.0, 0.01), "duration": _durations(st, max_duration)},
        )
    )


def _hypothesis_bandwidth(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(
        st.fixed_dictionaries(
            {"rate": st.integers(1, 1 << 20)}, optional={"duration": _durations(st, max_duration)}
        )
    )


def _hypothesis_latency(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(
        st.fixed_dictionaries(
            {"delay": st.floats(0.0, max_duration)},
            optional={"duration": _durations(st, max_duration)},
        )
    )


def _hypothesis_corrupt_crc(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(
        st.one_of(
            st.fixed_dictionaries(
                {"target": st.just("crc")},
                optional={"offset": st.integers(0, 3), "mask": st.integers(1, 255)},
            ),
            st.fixed_dictionaries(
                {"target": st.just("body")},
                optional={"offset": st.integers(0, 300), "mask": st.integers(1, 255)},
            ),
        )
    )


def _hypothesis_truncate(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({}, optional={"keep": st.integers(1, 300)}))


def _hypothesis_duplicate(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({}, optional={"count": st.integers(1, 3)}))


def _hypothesis_error(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(
        st.fixed_dictionaries(
            {},
            optional={
                "preset": st.sampled_from(sorted(ERROR_PRESETS)),
                "close": st.sampled_from(["fin", "rst", "none"]),
            },
        )
    )


def _hypothesis_eof(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({}, optional={"close": st.sampled_from(["fin", "rst"])}))


def _hypothesis_duration(st: ModuleType, max_duration: float) -> SearchStrategy[dict[str, Any]]:
    return _drawn(st.fixed_dictionaries({}, optional={"duration": _durations(st, max_duration)}))


def _hypothesis_wrong_heartbeat(
    st: ModuleType, max_duration: float
) -> SearchStrategy[dict[str, Any]]:
    names = st.from_regex(_BINLOG_NAME, fullmatch=True)
    return _drawn(
        st.one_of(
            st.fixed_dictionaries({"position": st.integers(0, _U32)}, optional={"file": names}),
            st.fixed_dictionaries(
                {"file": names}, optional={"duration": _durations(st, max_duration)}
            ),
        )
    )


# --- the table ------------------------------------------------------------------------------

_ROWS = (
    KindRow(
        FaultKind.CUT,
        {"close": Param("choice", "fin", choices=("fin", "rst"))},
        _random_cut,
        _hypothesis_cut,
    ),
    KindRow(FaultKind.BLACKHOLE, {}, _random_none, _hypothesis_none),
    # No duration: a hold, until the shell releases it (FaultProxy.release).
    KindRow(FaultKind.STALL, {"duration": _DURATION}, _random_duration, _hypothesis_stall),
    KindRow(
        FaultKind.TRICKLE,
        {
            "size": Param("int", 1, minimum=1, maximum=_MAX_BYTES),
            "interval": Param("float", 0.0, minimum=0.0, maximum=MAX_DELAY),
            "duration": _DURATION,
        },
        _random_trickle,
        _hypothesis_trickle,
    ),
    KindRow(
        FaultKind.BANDWIDTH,
        {
            "rate": Param("int", None, minimum=1, maximum=_MAX_BYTES, required=True),
            "duration": _DURATION,
        },
        _random_bandwidth,
        _hypothesis_bandwidth,
    ),
    KindRow(
        FaultKind.LATENCY,
        {
            "delay": Param("float", None, minimum=0.0, maximum=MAX_DELAY, required=True),
            "duration": _DURATION,
        },
        _random_latency,
        _hypothesis_latency,
    ),
    KindRow(
        FaultKind.CORRUPT_CRC,
        {
            "target": Param("choice", "crc", choices=("crc", "body")),
            # crc: which byte of the CRC (0-3); body: which byte of the event, counted from
            # its first byte (the header's timestamp), before the CRC.
            "offset": Param("int", None, minimum=0, maximum=_MAX_BYTES, optional=True),
            "mask": Param("int", 0xFF, minimum=1, maximum=0xFF),
        },
        _random_corrupt_crc,
        _hypothesis_corrupt_crc,
        changes_one_event=True,
    ),
    KindRow(
        FaultKind.TRUNCATE,
        {"keep": Param("int", None, minimum=1, maximum=_MAX_BYTES, optional=True)},
        _random_none,
        _hypothesis_truncate,
        changes_one_event=True,
    ),
    KindRow(
        FaultKind.DUPLICATE,
        {"count": Param("int", 1, minimum=1, maximum=16)},
        _random_duplicate,
        _hypothesis_duplicate,
        changes_one_event=True,
    ),
    KindRow(
        FaultKind.ERROR,
        {
            "preset": Param("choice", "truncated", choices=tuple(ERROR_PRESETS)),
            "errno": Param("int", None, minimum=1, maximum=0xFFFF, optional=True),
            "sqlstate": Param("str", None, optional=True),
            "message": Param("str", None, optional=True),
            "seq": Param("int", None, minimum=0, maximum=0xFF, optional=True),
            "close": Param("choice", "fin", choices=_CLOSES),
        },
        _random_error,
        _hypothesis_error,
    ),
    KindRow(
        FaultKind.EOF,
        {"close": Param("choice", "fin", choices=_CLOSES)},
        _random_none,
        _hypothesis_eof,
    ),
    KindRow(
        FaultKind.WITHHOLD_HEARTBEAT,
        {"duration": _DURATION},
        _random_duration,
        _hypothesis_duration,
    ),
    # Heartbeats from the point on carry this position (header log_pos) and/or file name.
    KindRow(
        FaultKind.WRONG_HEARTBEAT,
        {
            "position": Param("int", None, minimum=0, maximum=_U32, optional=True),
            "file": Param("str", None, optional=True),
            "duration": _DURATION,
        },
        _random_wrong_heartbeat,
        _hypothesis_wrong_heartbeat,
    ),
    # The replica's semi-sync ACKs (client->server) are dropped from the point on.
    KindRow(FaultKind.DROP_ACKS, {"duration": _DURATION}, _random_duration, _hypothesis_duration),
)

KINDS: Mapping[FaultKind, KindRow] = MappingProxyType({row.kind: row for row in _ROWS})

# Kinds that change one event rather than the stream from a point on.
EVENT_KINDS = frozenset(row.kind for row in _ROWS if row.changes_one_event)
