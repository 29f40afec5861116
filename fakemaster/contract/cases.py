"""The cases of ``fakemaster check``: every built-in scenario clean and under the faults that
matter for it, plus generated cases (a history and a fault plan drawn from a seed).

Every fault of a case applies to the first dump session only: a client that reconnects gets a
clean stream, so "healed" means "after the first reconnect". The faults are ones a correct client
survives with nothing lost and nothing applied twice (docs/faults.md, column "A correct client"):
cuts (FIN and RST, between and inside events, mid-transaction), a half-open connection, stalls,
re-slicing of the byte stream, a resent event, a corrupted CRC, an early EOF and the shutdown
ERR. Fatal errors (ERR 1236) are not among them: a correct client stops there.

A case name is ``SCENARIO/FAULT`` (``SCENARIO/clean`` without faults) or ``generated/SEED``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fnmatch import fnmatchcase

from fakemaster.faults.plan import Fault, FaultKind, FaultPlan, Point, PointKind, Where, random_plan
from scenarios.history import Scenario, Settings

__all__ = [
    "DEFAULT_GENERATED",
    "GENERATED_KINDS",
    "SCENARIO_FAULTS",
    "Case",
    "builtin_cases",
    "generated_case",
    "generated_cases",
    "generated_scenario",
    "select_cases",
]

DEFAULT_GENERATED = 4
# Kinds a generated plan draws from (each survivable; see the module docstring).
GENERATED_KINDS = (
    FaultKind.CUT,
    FaultKind.STALL,
    FaultKind.TRICKLE,
    FaultKind.LATENCY,
    FaultKind.DUPLICATE,
    FaultKind.CORRUPT_CRC,
    FaultKind.EOF,
)


@dataclass(frozen=True)
class Case:
    """A scenario (built afresh by ``build``) served under ``plan``."""

    name: str
    build: Callable[[], Scenario] = field(compare=False)
    plan: FaultPlan = FaultPlan()
    description: str = ""
    seed: int | None = None

    @property
    def scenario_name(self) -> str:
        return self.name.split("/", 1)[0]


def _tx(n: int, where: Where = Where.BEFORE, offset: int = 0, into: int = 0) -> Point:
    return Point(PointKind.TRANSACTION, n, where, offset, into)


def _cut(point: Point, close: str = "fin") -> FaultPlan:
    return FaultPlan((Fault(FaultKind.CUT, point, 0, {"close": close}),))


def _one(kind: FaultKind, point: Point, **params: object) -> FaultPlan:
    return FaultPlan((Fault(kind, point, 0, dict(params)),))


# scenario -> [(fault label, plan, what it shows)]: every built-in scenario has its faults
# (tests/test_checklists.py).
SCENARIO_FAULTS: dict[str, list[tuple[str, FaultPlan, str]]] = {
    "every_type": [
        (
            "trickle",
            _one(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), size=7),
            "the whole stream in 7-byte pieces (values straddle every read; ClickHouse#31990)",
        ),
        (
            "cut-inside-update",
            _cut(_tx(2, Where.INSIDE, 3, into=40), "rst"),
            "RST 40 bytes into the ROWS event of the two-row update",
        ),
    ],
    "multi_domain": [
        ("cut-before-tx", _cut(_tx(5)), "FIN before the 6th transaction (domain 2)"),
        (
            "rst-inside-last",
            _cut(_tx(12, Where.INSIDE, 4), "rst"),
            "RST between the two statements of the last transaction (domain 1, server 6)",
        ),
    ],
    "rotation_storm": [
        ("cut-at-rotations", _cut(_tx(10)), "FIN right after three rotations in a row"),
        (
            "eof",
            _one(FaultKind.EOF, _tx(20)),
            "an EOF packet mid-stream: a non-blocking dump that looks finished",
        ),
        (
            "blackhole",
            _one(FaultKind.BLACKHOLE, _tx(25)),
            "half-open: the connection stays, nothing flows (needs a read timeout)",
        ),
    ],
    "minimal_image": [
        (
            "cut-mid-transaction",
            _cut(_tx(2, Where.INSIDE, 5)),
            "FIN inside the four-statement transaction (key-only before images)",
        ),
    ],
    "noblob_image": [
        (
            "duplicate-rows",
            _one(FaultKind.DUPLICATE, _tx(2, Where.INSIDE, 3)),
            "a ROWS event sent twice (same position): applied once",
        ),
    ],
    "compressed": [
        (
            "cut-in-compressed",
            _cut(_tx(0, Where.INSIDE, 3, into=40), "rst"),
            "RST 40 bytes into a compressed ROWS event",
        ),
        (
            "corrupt-crc",
            _one(FaultKind.CORRUPT_CRC, _tx(1, Where.INSIDE, 3), target="body"),
            "a damaged ROWS event (its CRC no longer matches): not applied, read again",
        ),
    ],
    "primary_key_updates": [
        (
            "cut-in-swap",
            _cut(_tx(1, Where.INSIDE, 6)),
            "FIN inside the transaction that swaps two keys",
        ),
        ("stall", _one(FaultKind.STALL, _tx(2), duration=0.3), "a 0.3 s pause mid-stream"),
    ],
    "no_key_duplicates": [
        (
            "duplicate-delete",
            _one(FaultKind.DUPLICATE, _tx(2, Where.INSIDE, 3)),
            "the DELETE of one of identical rows sent twice: one row goes, not two",
        ),
    ],
    "many_tables": [
        (
            "rst-in-big-transaction",
            _cut(_tx(0, Where.INSIDE, 100), "rst"),
            "RST in the middle of the transaction that touches sixty tables",
        ),
        (
            "shutdown-error",
            _one(FaultKind.ERROR, _tx(2), preset="shutdown"),
            "ERR 1053 'Server shutdown in progress' mid-stream: reconnect",
        ),
    ],
    # The model's scenarios (DDL, settings, MyISAM, XA, restarts, idle, large rows).
    "large_rows": [
        (
            "rst-in-17mib-rows",
            _cut(_tx(1, Where.INSIDE, 3, into=1 << 20), "rst"),
            "RST 1 MiB into the 17 MiB rows event",
        ),
    ],
    "restart_new_server_id": [
        ("cut-after-restart", _cut(_tx(2)), "FIN before the first transaction after a restart"),
    ],
    "no_log_metadata": [
        ("cut-before-tx", _cut(_tx(1)), "FIN before the second transaction"),
    ],
    "xa": [
        ("cut-before-xa-commit", _cut(_tx(2)), "FIN between an XA PREPARE and what follows"),
    ],
    "ddl_mid_stream": [
        ("cut-after-alter", _cut(_tx(3)), "FIN right after an ALTER TABLE"),
    ],
    "non_transactional": [
        (
            "cut-between-groups",
            _cut(_tx(1)),
            "FIN between a MyISAM statement's group and its transaction's",
        ),
    ],
    "settings_changes": [
        ("cut-before-tx", _cut(_tx(2)), "FIN before the third group, after settings changed"),
    ],
    "long_idle": [
        ("cut-after-idle", _cut(_tx(1)), "FIN before the group written after the idle period"),
    ],
    # Served whole here (a check serves the history, not its live defaults).
    "snapshot_then_stream": [
        (
            "rst-mid-transaction",
            _cut(_tx(5, Where.INSIDE, 3), "rst"),
            "RST inside a transaction that changes rows the snapshot holds",
        ),
    ],
    "live_stream": [
        (
            "cut-deep-in-stream",
            _cut(_tx(1500, Where.INSIDE, 2)),
            "FIN inside a transaction deep in a 2,000-transaction stream",
        ),
    ],
}


def builtin_cases() -> list[Case]:
    """Every built-in scenario clean, then under each of its faults."""
    from scenarios.library import LIBRARY

    cases = []
    for name, (text, builder) in LIBRARY.items():
        summary = " ".join(text.split())
        cases.append(Case(f"{name}/clean", builder, FaultPlan(), f"{summary} No faults."))
        for label, plan, what in SCENARIO_FAULTS.get(name, []):
            cases.append(Case(f"{name}/{label}", builder, plan, f"{summary} Fault: {what}."))
    return cases


# --- generated cases ----------------------------------------------------------------------------

_WORDS = ("", "a", "zz", "O'Brien", "naïve", "日本", "tab\there", "x" * 20)


def generated_scenario(seed: int) -> Scenario:
    """A history drawn from ``seed``: two tables (one keyed, one without a key), 6 to 20
    transactions of inserts, updates (of the key too) and deletes, sometimes a rotation."""
    rng = random.Random(seed)
    scenario = Scenario(
        Settings(
            binlog_row_metadata="FULL",
            binlog_row_image=rng.choice(("FULL", "FULL", "MINIMAL", "NOBLOB")),
            binlog_annotate_row_events=rng.random() < 0.7,
        )
    )
    scenario.create_table(
        "CREATE TABLE gen.k (id INT PRIMARY KEY, n BIGINT, s VARCHAR(20), d DECIMAL(10,2),"
        " t DATETIME(3), b BLOB)",
        rows=[{"id": i, "n": i * 1000, "s": "init"} for i in range(rng.randrange(4))],
    )
    scenario.create_table("CREATE TABLE gen.nokey (a INT, s VARCHAR(10))")
    live: list[int] = [row[0] for row in scenario.initial.rows["gen.k"]]
    nokey: list[tuple[int, str]] = []
    next_id = 100

    def values() -> dict[str, object]:
        return {
            "n": rng.choice((None, rng.randrange(-(1 << 63), 1 << 63))),
            "s": rng.choice(_WORDS),
            "d": Decimal(rng.randrange(-(10**9), 10**9)) / 100,
            "t": f"20{rng.randrange(10, 38)}-0{rng.randrange(1, 10)}-1{rng.randrange(10)}"
            f" 12:34:56.{rng.randrange(1000):03d}",
            "b": bytes(rng.randrange(256) for _ in range(rng.randrange(8))),
        }

    for _ in range(rng.randrange(6, 21)):
        with scenario.transaction() as tx:
            for _ in range(rng.randrange(1, 5)):
                choice = rng.random()
                if choice < 0.4 or not live:
                    tx.insert("gen.k", {"id": next_id, **values()})
                    live.append(next_id)
                    next_id += 1
                elif choice < 0.6:
                    row = rng.choice(live)
                    change = dict(rng.sample(sorted(values().items()), rng.randrange(1, 4)))
                    if rng.random() < 0.2:
                        change["id"] = next_id
                        live[live.index(row)] = next_id
                        next_id += 1
                    tx.update("gen.k", {"id": row}, change)
                elif choice < 0.75:
                    row = live.pop(rng.randrange(len(live)))
                    tx.delete("gen.k", {"id": row})
                elif choice < 0.9 or not nokey:
                    item = (rng.randrange(3), rng.choice(("p", "q")))
                    tx.insert("gen.nokey", {"a": item[0], "s": item[1]})
                    nokey.append(item)
                else:
                    item = nokey.pop(rng.randrange(len(nokey)))
                    tx.delete("gen.nokey", {"a": item[0], "s": item[1]})
        if rng.random() < 0.15:
            scenario.rotate()
    return scenario


def generated_case(seed: int) -> Case:
    """The history of :func:`generated_scenario` and a plan of one or two faults, both from
    ``seed``."""
    scenario = generated_scenario(seed)
    count = len([t for t in scenario.transactions if t.writes_rows])
    plan = random_plan(
        seed,
        count=1 + seed % 2,
        kinds=GENERATED_KINDS,
        events=max(3, count * 4),
        transactions=max(1, count),
        max_duration=0.3,
    )
    kinds = ", ".join(sorted({fault.kind.value for fault in plan.faults}))
    return Case(
        f"generated/{seed}",
        lambda: generated_scenario(seed),
        plan,
        f"a history and a plan ({kinds}) drawn from seed {seed}",
        seed,
    )


def generated_cases(seed: int, count: int = DEFAULT_GENERATED) -> list[Case]:
    """``count`` generated cases, from seeds ``seed``, ``seed + 1``, ..."""
    return [generated_case(seed + n) for n in range(count)]


def select_cases(cases: Sequence[Case], only: Sequence[str] = ()) -> list[Case]:
    """The cases whose name matches one of ``only`` (exact names or shell patterns such as
    ``compressed/*``); every case when ``only`` is empty. A pattern matching nothing is an
    error (ValueError)."""
    if not only:
        return list(cases)
    chosen = [case for case in cases if any(fnmatchcase(case.name, p) for p in only)]
    unmatched = [p for p in only if not any(fnmatchcase(case.name, p) for case in cases)]
    if unmatched:
        raise ValueError(f"no case matches {', '.join(unmatched)} (see --list)")
    return chosen
