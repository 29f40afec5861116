"""Checklists: what else a new event class, fault kind or built-in scenario needs.

Each extension point is a table, and each check below reads the tables and names the file to
edit for whatever is missing:

* an event class (fakemaster/vocabulary/events.py) needs a body encoder (encoder/core.py's
  ENCODERS), a body decoder for its type codes (decoder/core.py's DECODERS), a width for each
  of its integer fields (encoder/fields.py), a describer in the listing
  (fakemaster/forms/listing.py) and a hypothesis strategy (scenarios/strategies/streams.py);
* a fault kind needs its row (fakemaster/faults/kinds.py) and its handling
  (fakemaster/faults/engine.py);
* a built-in scenario (scenarios/library.py) needs its line in README.md and its faults in the
  contract cases (fakemaster/contract/cases.py).

Each check is a function of the tables, so that the tests at the end can feed it an incomplete
one and see it fail with the file's name.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fakemaster.vocabulary.events as events_module
from decoder.core import DECODERS
from encoder.core import ENCODERS
from encoder.fields import SIZED_BY_THEIR_ENCODER, unsized_integers
from fakemaster.contract.cases import SCENARIO_FAULTS
from fakemaster.faults import engine as engine_module
from fakemaster.faults.engine import ACTIVATIONS, EVENT_CHANGES, FaultEngine
from fakemaster.faults.kinds import EVENT_KINDS, KINDS, FaultKind, KindRow
from fakemaster.faults.plan import Fault, Point, PointKind
from fakemaster.forms.listing import DESCRIBERS
from fakemaster.vocabulary.events import Event, QueryEvent, RowsEvent, UnknownEvent
from scenarios.library import LIBRARY
from scenarios.strategies.streams import EVENT_STRATEGIES
from tests.budget import examples

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
ENGINE_SOURCE = Path(engine_module.__file__).read_text(encoding="utf-8")


def concrete_event_classes(namespace: Mapping[str, Any]) -> list[type[Event]]:
    """The event classes of ``namespace`` that no other of them derives from."""
    classes = [
        value
        for value in namespace.values()
        if isinstance(value, type) and issubclass(value, Event)
    ]
    return [cls for cls in classes if not any(o is not cls and issubclass(o, cls) for o in classes)]


EVENT_CLASSES = concrete_event_classes(vars(events_module))

# Event classes whose decoding needs no entry of their own in DECODERS, and why.
DECODED_WITHOUT_A_CODE: dict[type[Event], str] = {
    UnknownEvent: "any type code without a decoder: decoder/core.py falls back to decode_unknown",
}


def type_codes(cls: type[Event]) -> set[int]:
    """The type codes an event of ``cls`` is written with."""
    codes = {int(code) for code in getattr(cls, "_CODES", {}).values()} or {int(cls.TYPE)}
    if issubclass(cls, QueryEvent):
        codes.add(int(cls(compressed=True).type_code))
    return codes


# --- the checks: each returns what is missing, every message starting with the file ---------


def missing_encoders(classes: Iterable[type[Event]], encoders: Mapping[type, Any]) -> list[str]:
    return [
        f"encoder/core.py: ENCODERS has no body encoder for {cls.__name__} (write one in its "
        f"family's module, encoder/control.py, gtid.py, query.py, statement.py or rows.py, and "
        f"put it in that module's ENCODERS table, which encoder/core.py registers)"
        for cls in classes
        if cls not in encoders
    ]


def missing_decoders(
    classes: Iterable[type[Event]],
    decoders: Mapping[int, Any],
    exempt: Mapping[type[Event], str] = DECODED_WITHOUT_A_CODE,
) -> list[str]:
    found = []
    for cls in classes:
        if cls in exempt:
            continue
        missing = sorted(type_codes(cls) - set(decoders))
        if missing:
            found.append(
                f"decoder/core.py: DECODERS has no body decoder for {cls.__name__}'s type "
                f"code(s) {missing} (write one in its family's module, decoder/control.py, "
                f"gtid.py, query.py, statement.py or rows.py, and put it in that module's "
                f"DECODERS table, which decoder/core.py registers)"
            )
    return found


def unsized_fields(
    classes: Iterable[type[Event]],
    exempt: Mapping[tuple[type, str], str] = SIZED_BY_THEIR_ENCODER,
    unsized: Callable[[type], list[str]] = unsized_integers,
) -> list[str]:
    return [
        f"encoder/fields.py: {cls.__name__}.{path} is an integer field with no layout item "
        f"in INTEGERS, so nothing checks it fits its bytes (add its item, or say in "
        f"SIZED_BY_THEIR_ENCODER which encoder checks it)"
        for cls in classes
        for path in unsized(cls)
        if not any((owner, path) in exempt for owner in cls.__mro__)
    ]


def undescribed(classes: Iterable[type[Event]], describers: Collection[type]) -> list[str]:
    return [
        f"fakemaster/forms/listing.py: DESCRIBERS has no describer for {cls.__name__} (it "
        f"would be listed as the generic 'Class field=value' line)"
        for cls in classes
        if not any(owner in describers for owner in cls.__mro__ if owner not in (Event, object))
    ]


def without_strategy(classes: Iterable[type[Event]], strategies: Collection[type]) -> list[str]:
    return [
        f"scenarios/strategies/streams.py: EVENT_STRATEGIES has no strategy for {cls.__name__} "
        f"(write one in scenarios/strategies/control.py, statements.py or rows.py and add its "
        f"row)"
        for cls in classes
        if cls not in strategies
    ]


def kinds_without_row(kinds: Iterable[FaultKind], rows: Mapping[FaultKind, KindRow]) -> list[str]:
    found = []
    for kind in kinds:
        row = rows.get(kind)
        if row is None:
            found.append(
                f"fakemaster/faults/kinds.py: FaultKind.{kind.name} has no row in KINDS (its "
                f"parameters, its seeded draw, its hypothesis draw)"
            )
        elif row.kind is not kind:
            found.append(f"fakemaster/faults/kinds.py: the row of {kind.name} is {row.kind.name}'s")
    return found


def kinds_without_handling(
    kinds: Iterable[FaultKind],
    event_kinds: Collection[FaultKind],
    activations: Mapping[FaultKind, Any],
    event_changes: Mapping[FaultKind, Any],
    engine_source: str,
) -> list[str]:
    found = []
    for kind in kinds:
        if kind in event_kinds:
            if kind not in event_changes:
                found.append(
                    f"fakemaster/faults/engine.py: EVENT_CHANGES has no change for the event "
                    f"kind FaultKind.{kind.name}"
                )
            continue
        activation = activations.get(kind)
        if activation is None:
            found.append(
                f"fakemaster/faults/engine.py: ACTIVATIONS says nothing of what "
                f"FaultKind.{kind.name} does at its point"
            )
        elif activation is FaultEngine._start_regime and not (
            re.search(rf"_active\(FaultKind\.{kind.name}\b", engine_source)
            or re.search(rf"_SILENCING = .*FaultKind\.{kind.name}\b", engine_source)
        ):
            found.append(
                f"fakemaster/faults/engine.py: FaultKind.{kind.name} starts a regime that "
                f"nothing reads (no _active(FaultKind.{kind.name}, ...), not in _SILENCING)"
            )
    return found


def readme_scenario_list(readme: str) -> list[str]:
    """The names in README.md's list of the built-in scenarios."""
    match = re.search(r"lists the built-in ones \(([^)]*)\)", readme)
    return re.findall(r"`(\w+)`", match.group(1)) if match else []


def scenarios_not_in_readme(names: Iterable[str], readme: str) -> list[str]:
    listed = readme_scenario_list(readme)
    found = [
        f"README.md: the built-in scenario {name!r} is not in the list after "
        f"'`python -m fakemaster scenarios` lists the built-in ones ('"
        for name in names
        if name not in listed
    ]
    found += [
        f"README.md: {name!r} is listed as a built-in scenario and is none"
        for name in listed
        if name not in names
    ]
    return found


def scenarios_without_cases(names: Iterable[str], cases: Mapping[str, list[Any]]) -> list[str]:
    found = [
        f"fakemaster/contract/cases.py: the built-in scenario {name!r} has no faults in "
        f"SCENARIO_FAULTS (fakemaster check serves it only clean)"
        for name in names
        if not cases.get(name)
    ]
    found += [
        f"fakemaster/contract/cases.py: SCENARIO_FAULTS names {name!r}, no built-in scenario"
        for name in cases
        if name not in names
    ]
    return found


# --- the checks on the project's tables -----------------------------------------------------


def test_the_event_classes_are_found() -> None:
    names = {cls.__name__ for cls in EVENT_CLASSES}
    assert {"QueryEvent", "WriteRowsEvent", "UnknownEvent"} <= names
    assert "RowsEvent" not in names and "Event" not in names


def test_every_event_class_has_an_encoder() -> None:
    assert not missing_encoders(EVENT_CLASSES, ENCODERS), missing_encoders(EVENT_CLASSES, ENCODERS)


def test_every_event_class_has_a_decoder() -> None:
    assert not missing_decoders(EVENT_CLASSES, DECODERS), missing_decoders(EVENT_CLASSES, DECODERS)


def test_every_integer_field_of_an_event_is_sized() -> None:
    assert not unsized_fields(EVENT_CLASSES), unsized_fields(EVENT_CLASSES)


def test_every_exemption_from_the_field_check_is_still_needed() -> None:
    stale = [
        f"encoder/fields.py: SIZED_BY_THEIR_ENCODER names {owner.__name__}.{path}, which "
        f"INTEGERS sizes (or which is no integer field)"
        for owner, path in SIZED_BY_THEIR_ENCODER
        if path not in unsized_integers(owner)
    ]
    assert not stale, stale


def test_every_event_class_is_described_in_the_listing() -> None:
    assert not undescribed(EVENT_CLASSES, DESCRIBERS), undescribed(EVENT_CLASSES, DESCRIBERS)


def test_every_event_class_has_a_strategy() -> None:
    problems = without_strategy(EVENT_CLASSES, EVENT_STRATEGIES)
    assert not problems, problems


@pytest.mark.parametrize("cls", sorted(EVENT_STRATEGIES, key=lambda cls: cls.__name__))
@settings(max_examples=examples(0.05), database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_each_event_strategy_draws_its_class(cls: type[Event], data: Any) -> None:
    drawn = data.draw(EVENT_STRATEGIES[cls]())
    assert type(drawn) is cls, f"scenarios/strategies/streams.py: the row of {cls.__name__}"


def test_every_fault_kind_has_its_row() -> None:
    problems = kinds_without_row(FaultKind, KINDS)
    assert not problems, problems
    assert set(KINDS) == set(FaultKind)


def test_every_fault_kind_has_its_engine_handling() -> None:
    problems = kinds_without_handling(
        FaultKind, EVENT_KINDS, ACTIVATIONS, EVENT_CHANGES, ENGINE_SOURCE
    )
    assert not problems, problems
    assert not set(ACTIVATIONS) & set(EVENT_CHANGES), "a kind is handled twice in engine.py"


# A point every kind can take (event kinds apply to a whole event).
EVENT_POINT = Point(PointKind.EVENT, 3)


@pytest.mark.parametrize("kind", list(FaultKind))
def test_each_kind_draws_valid_parameters_from_a_seed(kind: FaultKind) -> None:
    for seed in range(30):
        params = KINDS[kind].random_params(random.Random(seed), 0.5)
        Fault(kind, EVENT_POINT, 0, params)


@pytest.mark.parametrize("kind", list(FaultKind))
@settings(max_examples=examples(1 / 3), database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_each_kind_draws_valid_parameters_with_hypothesis(kind: FaultKind, data: Any) -> None:
    params = data.draw(KINDS[kind].hypothesis_params(st, 1.0))
    Fault(kind, EVENT_POINT, 0, params)


def test_every_built_in_scenario_is_in_the_readme() -> None:
    problems = scenarios_not_in_readme(list(LIBRARY), README)
    assert not problems, problems


def test_every_built_in_scenario_has_contract_cases() -> None:
    problems = scenarios_without_cases(list(LIBRARY), SCENARIO_FAULTS)
    assert not problems, problems


# --- each check fails, naming the file, when a table misses a row ---------------------------


@dataclass(kw_only=True, slots=True, repr=False, eq=False)
class ForgottenEvent(Event):
    """An event class added to the vocabulary and to no table."""

    TYPE: ClassVar[int] = 199
    counter: int = 0


def _without(table: Mapping[Any, Any], key: Any) -> dict[Any, Any]:
    return {k: v for k, v in table.items() if k != key}


def _fails_naming(problems: list[str], file: str, name: str) -> None:
    assert problems, "the check passed an incomplete table"
    assert all(problem.startswith(f"{file}: ") for problem in problems), problems
    assert any(name in problem for problem in problems), problems


def test_a_forgotten_event_class_fails_every_event_check() -> None:
    classes = [*EVENT_CLASSES, ForgottenEvent]
    name = "ForgottenEvent"
    _fails_naming(missing_encoders(classes, ENCODERS), "encoder/core.py", name)
    _fails_naming(missing_decoders(classes, DECODERS), "decoder/core.py", name)
    _fails_naming(unsized_fields(classes), "encoder/fields.py", f"{name}.counter")
    _fails_naming(undescribed(classes, DESCRIBERS), "fakemaster/forms/listing.py", name)
    _fails_naming(
        without_strategy(classes, EVENT_STRATEGIES), "scenarios/strategies/streams.py", name
    )


@pytest.mark.parametrize(
    ("check", "file"),
    [
        (lambda cls: missing_encoders(EVENT_CLASSES, _without(ENCODERS, cls)), "encoder/core.py"),
        (
            lambda cls: missing_decoders(
                EVENT_CLASSES, {code: d for code, d in DECODERS.items() if code != cls.TYPE}
            ),
            "decoder/core.py",
        ),
        (
            lambda cls: undescribed(EVENT_CLASSES, _without(DESCRIBERS, cls)),
            "fakemaster/forms/listing.py",
        ),
        (
            lambda cls: without_strategy(EVENT_CLASSES, _without(EVENT_STRATEGIES, cls)),
            "scenarios/strategies/streams.py",
        ),
    ],
    ids=["encoder", "decoder", "listing", "strategies"],
)
def test_a_row_left_out_of_an_event_table_fails(
    check: Callable[[type[Event]], list[str]], file: str
) -> None:
    _fails_naming(check(QueryEvent), file, "QueryEvent")


def test_a_rows_event_without_its_own_describer_is_described_by_its_base() -> None:
    # WRITE/UPDATE/DELETE share RowsEvent's describer: leaving it out fails for all three.
    problems = undescribed(EVENT_CLASSES, _without(DESCRIBERS, RowsEvent))
    _fails_naming(problems, "fakemaster/forms/listing.py", "UpdateRowsEvent")
    assert len(problems) == 3


def test_an_exemption_left_out_of_the_field_check_fails() -> None:
    exempt = _without(SIZED_BY_THEIR_ENCODER, (RowsEvent, "width"))
    _fails_naming(unsized_fields(EVENT_CLASSES, exempt), "encoder/fields.py", "RowsEvent.width")


def test_a_fault_kind_without_its_row_fails() -> None:
    rows = _without(KINDS, FaultKind.LATENCY)
    _fails_naming(kinds_without_row(FaultKind, rows), "fakemaster/faults/kinds.py", "LATENCY")


@pytest.mark.parametrize(
    ("activations", "event_changes", "source", "name"),
    [
        (_without(ACTIVATIONS, FaultKind.CUT), EVENT_CHANGES, ENGINE_SOURCE, "CUT"),
        (ACTIVATIONS, _without(EVENT_CHANGES, FaultKind.TRUNCATE), ENGINE_SOURCE, "TRUNCATE"),
        (
            ACTIVATIONS,
            EVENT_CHANGES,
            ENGINE_SOURCE.replace("_active(FaultKind.LATENCY", "_active(LATENCY"),
            "LATENCY",
        ),
    ],
    ids=["activation", "event-change", "regime-never-read"],
)
def test_a_fault_kind_without_its_engine_handling_fails(
    activations: Mapping[FaultKind, Any],
    event_changes: Mapping[FaultKind, Any],
    source: str,
    name: str,
) -> None:
    problems = kinds_without_handling(FaultKind, EVENT_KINDS, activations, event_changes, source)
    _fails_naming(problems, "fakemaster/faults/engine.py", name)


def test_a_scenario_missing_from_the_readme_fails() -> None:
    readme = README.replace("`rotation_storm`, ", "")
    _fails_naming(scenarios_not_in_readme(list(LIBRARY), readme), "README.md", "rotation_storm")


def test_a_scenario_without_contract_cases_fails() -> None:
    cases = _without(SCENARIO_FAULTS, "xa")
    _fails_naming(
        scenarios_without_cases(list(LIBRARY), cases), "fakemaster/contract/cases.py", "'xa'"
    )
