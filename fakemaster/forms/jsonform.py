"""The JSON form of events: lossless, readable, and generic over the event dataclasses.

``event_to_json`` gives a dict of JSON values (``json.dumps`` needs no hooks) and
``event_from_json`` rebuilds the exact event from it. The conversion walks
``dataclasses.fields`` and restores container and scalar types from the field annotations, so
event classes and fields added later need no code here. See docs/json-form.md for the format.

Values JSON cannot hold are single-key tagged objects: ``{"b": "text"}`` (readable UTF-8) or
``{"hex": "00ff"}`` for bytes, ``{"decimal": "-0.00"}``, ``{"date": ...}``,
``{"datetime": ...}``, ``{"time": ...}``, ``{"timestamp": [seconds, microsecond]}``,
``{"absent": true}``, ``{"float": "nan"}``; in a field typed ``Any`` a value of one of the
project's own classes is ``{"ClassName": form}``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import types
import typing
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from fakemaster.vocabulary import events as events_module
from fakemaster.vocabulary import values as values_module
from fakemaster.vocabulary.constants import (
    EventType,
    OptionalMetadata,
    QueryStatus,
    event_type_name,
)
from fakemaster.vocabulary.errors import FakemasterError
from fakemaster.vocabulary.events import (
    ROWS_EVENT_CLASSES,
    Event,
    Gtid,
    MetadataField,
    QueryEvent,
    StatusVar,
    UnknownEvent,
)
from fakemaster.vocabulary.layouts import F64, U64
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp

__all__ = [
    "ANNOTATION_KEYS",
    "RAW_KEY",
    "TYPE_KEY",
    "JsonFormError",
    "JsonValue",
    "event_from_json",
    "event_to_json",
    "type_code_from_name",
    "value_from_json",
    "value_to_json",
]

JsonValue = Any  # None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]

TYPE_KEY = "type"
RAW_KEY = "raw"
# Keys a reader may find next to the fields: tools add them for people, not for the event.
ANNOTATION_KEYS = frozenset({"offset"})


class JsonFormError(FakemasterError, ValueError):
    """A JSON object that is not the JSON form of an event, or a value with no JSON form."""


# --- which class and fixed field values a type name stands for -----------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _EventKind:
    cls: type[Event]
    # Fields whose value the type code decides: not written, set from the type when read.
    fixed: dict[str, Any]


def _event_classes() -> list[type[Event]]:
    """The vocabulary's event classes, read from its module: never ``__subclasses__()``, which
    also holds the originals ``dataclass(slots=True)`` replaced (until the garbage collector
    runs) and any subclass some other code defines."""
    return [
        value
        for value in vars(events_module).values()
        if isinstance(value, type)
        and issubclass(value, Event)
        and value is not Event
        and value.__module__ == events_module.__name__
    ]


def _build_kinds() -> dict[int, _EventKind]:
    kinds: dict[int, _EventKind] = {}
    for cls in _event_classes():
        if "TYPE" in cls.__dict__ and dataclasses.is_dataclass(cls):
            kinds[int(cls.TYPE)] = _EventKind(cls, {})
    kinds[EventType.QUERY] = _EventKind(QueryEvent, {"compressed": False})
    kinds[EventType.QUERY_COMPRESSED] = _EventKind(QueryEvent, {"compressed": True})
    for code, (cls, version, compressed) in ROWS_EVENT_CLASSES.items():
        kinds[code] = _EventKind(cls, {"version": version, "compressed": compressed})
    return kinds


_KINDS_CACHE: dict[int, _EventKind] = {}


def _kinds() -> dict[int, _EventKind]:
    if not _KINDS_CACHE:
        _KINDS_CACHE.update(_build_kinds())
    return _KINDS_CACHE


_UNKNOWN_NAME = re.compile(r"UNKNOWN_(\d+)")


def type_code_from_name(name: str) -> int:
    """The event type code of a name as ``event_type_name`` writes it ("QUERY", "UNKNOWN_200")."""
    try:
        return int(EventType[name])
    except KeyError:
        pass
    match = _UNKNOWN_NAME.fullmatch(name)
    if match is None:
        raise JsonFormError(f"unknown event type name {name!r}")
    code = int(match.group(1))
    if not 0 <= code <= 255:
        raise JsonFormError(f"event type code {code} out of range 0..255")
    return code


# --- field types from annotations ---------------------------------------------------------

_HINTS_CACHE: dict[type, dict[str, Any]] = {}


def _field_hints(cls: type) -> dict[str, Any]:
    hints = _HINTS_CACHE.get(cls)
    if hints is None:
        module = sys.modules.get(cls.__module__)
        hints = typing.get_type_hints(cls, vars(module) if module else None)
        _HINTS_CACHE[cls] = hints
    return hints


def _init_fields(cls: type) -> list[dataclasses.Field[Any]]:
    return [f for f in dataclasses.fields(cls) if f.init]


def _hint_members(hint: Any) -> tuple[Any, ...]:
    """The alternatives of a union hint, or the hint alone."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _hint_admits(hint: Any, cls: type) -> bool:
    return any(member is cls for member in _hint_members(hint))


# --- classes that may appear tagged inside fields typed Any ---------------------------------


def _is_namedtuple_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _value_classes() -> dict[str, type]:
    """The project's own value classes by name: dataclasses and named tuples (not events)."""
    found: dict[str, type] = {}
    for module in (events_module, values_module):
        for name, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and obj.__module__ == module.__name__
                and not issubclass(obj, Event)
                and (dataclasses.is_dataclass(obj) or _is_namedtuple_class(obj))
            ):
                found[name] = obj
    return found


# --- scalars ------------------------------------------------------------------------------

_CANONICAL_NAN_BITS = U64.unpack(F64.pack(float("nan")))[0]


def _float_to_json(value: float) -> JsonValue:
    if math.isfinite(value):
        return float(value)
    if math.isinf(value):
        return {"float": "inf" if value > 0 else "-inf"}
    bits = U64.unpack(F64.pack(value))[0]
    if bits == _CANONICAL_NAN_BITS:
        return {"float": "nan"}
    # A NaN with another sign or payload: keep its exact bits.
    return {"float": f"0x{bits:016x}"}


def _float_from_json(text: Any) -> float:
    if not isinstance(text, str):
        raise JsonFormError(f"float tag needs a string, got {text!r}")
    if text in ("nan", "inf", "-inf"):
        return float(text)
    if re.fullmatch(r"0x[0-9a-fA-F]{16}", text):
        return float(F64.unpack(U64.pack(int(text, 16)))[0])
    raise JsonFormError(f"bad float tag {text!r}")


# Text with other control characters (bitmaps, packed numbers) reads better as hex.
_UNREADABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _bytes_to_json(value: bytes | bytearray | memoryview) -> JsonValue:
    raw = bytes(value)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": raw.hex()}
    if _UNREADABLE.search(text):
        return {"hex": raw.hex()}
    return {"b": text}


def _bytes_from_tag(tag: str, body: Any) -> bytes:
    if not isinstance(body, str):
        raise JsonFormError(f"bytes tag {tag!r} needs a string, got {body!r}")
    if tag == "b":
        try:
            return body.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JsonFormError(f"bytes text is not encodable as UTF-8: {exc}") from None
    try:
        return bytes.fromhex(body)
    except ValueError:
        raise JsonFormError(f"bad hex bytes {body!r}") from None


def _fraction_text(microsecond: int) -> str:
    return f".{microsecond:06d}"


# Temporal text forms: any digits per part (servers store more than the valid ranges), an
# optional '-' where a part could be negative only in hand-made values, and a fraction that is
# the microsecond count itself when it has 6 or more digits.
_INT = r"(-?\d+)"
_DATE_RE = re.compile(rf"{_INT}-{_INT}-{_INT}")
_CLOCK = rf"{_INT}:{_INT}:{_INT}(?:\.(\d+))?"
_DATETIME_RE = re.compile(rf"{_INT}-{_INT}-{_INT}[ T]{_CLOCK}")
_TIME_RE = re.compile(rf"(-?)(\d+):{_INT}:{_INT}(?:\.(\d+))?")


def _microseconds(fraction: str | None) -> int:
    if not fraction:
        return 0
    return int(fraction.ljust(6, "0")) if len(fraction) < 6 else int(fraction)


def _date_text(value: Date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _datetime_text(value: DateTime) -> str:
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
        + _fraction_text(value.microsecond)
    )


def _time_text(value: Time) -> str:
    sign = "-" if value.negative else ""
    return f"{sign}{value.hour:02d}:{value.minute:02d}:{value.second:02d}" + _fraction_text(
        value.microsecond
    )


def _parse(pattern: re.Pattern[str], text: Any, what: str) -> re.Match[str]:
    match = pattern.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise JsonFormError(f"bad {what} text {text!r}")
    return match


def _date_from_json(text: Any) -> Date:
    year, month, day = _parse(_DATE_RE, text, "date").groups()
    return Date(int(year), int(month), int(day))


def _datetime_from_json(text: Any) -> DateTime:
    year, month, day, hour, minute, second, fraction = _parse(
        _DATETIME_RE, text, "datetime"
    ).groups()
    return DateTime(
        int(year),
        int(month),
        int(day),
        int(hour),
        int(minute),
        int(second),
        _microseconds(fraction),
    )


def _time_from_json(text: Any) -> Time:
    sign, hour, minute, second, fraction = _parse(_TIME_RE, text, "time").groups()
    return Time(sign == "-", int(hour), int(minute), int(second), _microseconds(fraction))


def _timestamp_from_json(body: Any) -> Timestamp:
    if (
        not isinstance(body, list)
        or len(body) != 2
        or not all(isinstance(part, int) and not isinstance(part, bool) for part in body)
    ):
        raise JsonFormError(f"timestamp needs [seconds, microsecond], got {body!r}")
    return Timestamp(body[0], body[1])


def _decimal_from_json(text: Any) -> Decimal:
    if not isinstance(text, str):
        raise JsonFormError(f"decimal needs a string, got {text!r}")
    try:
        return Decimal(text)
    except InvalidOperation:
        raise JsonFormError(f"bad decimal {text!r}") from None


def _absent_from_json(body: Any) -> Any:
    if body is not True:
        raise JsonFormError(f"absent tag needs true, got {body!r}")
    return ABSENT


_SCALAR_TAGS: dict[str, Any] = {
    "b": lambda body: _bytes_from_tag("b", body),
    "hex": lambda body: _bytes_from_tag("hex", body),
    "decimal": _decimal_from_json,
    "date": _date_from_json,
    "datetime": _datetime_from_json,
    "time": _time_from_json,
    "timestamp": _timestamp_from_json,
    "absent": _absent_from_json,
    "float": _float_from_json,
}


# --- values to JSON -----------------------------------------------------------------------


def _special_to_json(value: Any) -> JsonValue:
    """The JSON form of a value JSON has no type for, or ``NotImplemented``."""
    if value is ABSENT:
        return {"absent": True}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_to_json(value)
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    # The temporal named tuples before any other tuple.
    if isinstance(value, DateTime):
        return {"datetime": _datetime_text(value)}
    if isinstance(value, Date):
        return {"date": _date_text(value)}
    if isinstance(value, Time):
        return {"time": _time_text(value)}
    if isinstance(value, Timestamp):
        return {"timestamp": [int(value.seconds), int(value.microsecond)]}
    return NotImplemented


def value_to_json(value: Any, hint: Any = Any) -> JsonValue:
    """The JSON form of ``value`` in a position annotated ``hint``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # an IntEnum becomes its number
    if isinstance(value, float):
        return _float_to_json(value)
    special = _special_to_json(value)
    if special is not NotImplemented:
        return special
    cls = type(value)
    if dataclasses.is_dataclass(value) or _is_namedtuple_class(cls):
        form = _object_to_json(value)
        if _hint_admits(hint, cls):
            return form
        if _value_classes().get(cls.__name__) is not cls:
            raise JsonFormError(f"no JSON form for a {cls.__qualname__} in an untyped field")
        return {cls.__name__: form}
    if isinstance(value, (tuple, list)):
        item_hints = _item_hints(hint, len(value))
        return [
            value_to_json(item, item_hint)
            for item, item_hint in zip(value, item_hints, strict=True)
        ]
    raise JsonFormError(f"no JSON form for {cls.__qualname__} value {value!r}")


def _item_hints(hint: Any, count: int) -> list[Any]:
    for member in _hint_members(hint):
        if typing.get_origin(member) is tuple:
            args = typing.get_args(member)
            if len(args) == 2 and args[1] is Ellipsis:
                return [args[0]] * count
            if len(args) == count:
                return list(args)
    return [Any] * count


def _object_to_json(value: Any) -> JsonValue:
    if isinstance(value, Gtid):
        return str(value)
    if isinstance(value, StatusVar):
        form: dict[str, JsonValue] = {"code": value.code}
        name = _enum_name(QueryStatus, value.code)
        if name is not None:
            form["name"] = "Q_" + name
        form["value"] = value_to_json(value.value)
        return form
    if isinstance(value, MetadataField):
        form = {"kind": value.kind}
        name = _enum_name(OptionalMetadata, value.kind)
        if name is not None:
            form["name"] = name
        form["value"] = value_to_json(value.value)
        return form
    return _fields_to_json(value)


def _enum_name(enum: Any, code: int) -> str | None:
    try:
        return str(enum(code).name)
    except ValueError:
        return None


def _fields_to_json(value: Any) -> dict[str, JsonValue]:
    cls = type(value)
    hints = _field_hints(cls)
    if dataclasses.is_dataclass(value):
        names = [f.name for f in _init_fields(cls)]
    else:
        names = list(cls._fields)
    return {name: value_to_json(getattr(value, name), hints.get(name, Any)) for name in names}


# --- values from JSON ---------------------------------------------------------------------


def value_from_json(data: JsonValue, hint: Any = Any) -> Any:
    """The value whose JSON form is ``data``, in a position annotated ``hint``."""
    if hint is Any or hint is object:
        return _untyped_from_json(data)
    members = _hint_members(hint)
    if len(members) > 1:
        if data is None and type(None) in members:
            return None
        others = [member for member in members if member is not type(None)]
        if len(others) == 1:
            return value_from_json(data, others[0])
        return _untyped_from_json(data)
    origin = typing.get_origin(hint)
    if origin is tuple:
        if not isinstance(data, list):
            raise JsonFormError(f"expected a list for {hint}, got {data!r}")
        return tuple(
            value_from_json(item, item_hint)
            for item, item_hint in zip(data, _item_hints(hint, len(data)), strict=True)
        )
    if origin is not None:
        return _untyped_from_json(data)
    plain = _PLAIN_FROM_JSON.get(hint)
    if plain is not None:
        return plain(data)
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or _is_namedtuple_class(hint)):
        if hint in (Date, DateTime, Time, Timestamp):
            return _untyped_from_json(data)
        return _object_from_json(data, hint)
    return _untyped_from_json(data)


def _bytes_field_from_json(data: JsonValue) -> bytes:
    if isinstance(data, str):  # plain text is accepted for hand-written input
        return data.encode("utf-8")
    value = _untyped_from_json(data)
    if not isinstance(value, bytes):
        raise JsonFormError(f"expected bytes, got {data!r}")
    return value


def _bool_field_from_json(data: JsonValue) -> bool:
    if not isinstance(data, bool):
        raise JsonFormError(f"expected true or false, got {data!r}")
    return data


def _int_field_from_json(data: JsonValue) -> int:
    if not isinstance(data, int) or isinstance(data, bool):
        raise JsonFormError(f"expected an integer, got {data!r}")
    return data


def _str_field_from_json(data: JsonValue) -> str:
    if not isinstance(data, str):
        raise JsonFormError(f"expected a string, got {data!r}")
    return data


def _float_field_from_json(data: JsonValue) -> float:
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return float(data)
    value = _untyped_from_json(data)
    if not isinstance(value, float):
        raise JsonFormError(f"expected a number, got {data!r}")
    return value


# The value of a field annotated with a plain type, from its JSON form.
_PLAIN_FROM_JSON: dict[object, Callable[[JsonValue], object]] = {
    bytes: _bytes_field_from_json,
    bool: _bool_field_from_json,
    int: _int_field_from_json,
    str: _str_field_from_json,
    float: _float_field_from_json,
}


def _untyped_from_json(data: JsonValue) -> Any:
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return tuple(_untyped_from_json(item) for item in data)
    if isinstance(data, dict):
        if len(data) != 1:
            raise JsonFormError(f"a tagged value has exactly one key, got {sorted(data)}")
        ((tag, body),) = data.items()
        scalar = _SCALAR_TAGS.get(tag)
        if scalar is not None:
            return scalar(body)
        cls = _value_classes().get(tag)
        if cls is None:
            raise JsonFormError(f"unknown value tag {tag!r}")
        return _object_from_json(body, cls)
    raise JsonFormError(f"not a JSON value: {data!r}")


def _object_from_json(data: JsonValue, cls: type) -> Any:
    if cls is Gtid:
        if not isinstance(data, str):
            raise JsonFormError(f"a GTID is a 'domain-server-seq' string, got {data!r}")
        try:
            return Gtid.parse(data)
        except ValueError:
            raise JsonFormError(f"bad GTID {data!r}") from None
    if not isinstance(data, dict):
        raise JsonFormError(f"expected an object for {cls.__name__}, got {data!r}")
    if cls in (StatusVar, MetadataField):
        data = {key: value for key, value in data.items() if key != "name"}
    return _construct(cls, data, what=cls.__name__)


Constructed = TypeVar("Constructed")


def _construct(
    cls: type[Constructed], data: dict[str, JsonValue], *, what: str, fixed: Any = None
) -> Constructed:
    hints = _field_hints(cls)
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in _init_fields(cls)]
    else:
        names = list(cls._fields)  # type: ignore[attr-defined]
    unknown = set(data) - set(names)
    if unknown:
        raise JsonFormError(f"{what} has no field(s) {', '.join(sorted(unknown))}")
    kwargs: dict[str, Any] = {}
    for name in names:
        if name in data:
            try:
                kwargs[name] = value_from_json(data[name], hints.get(name, Any))
            except JsonFormError as exc:
                raise JsonFormError(f"{what}.{name}: {exc}") from None
    if fixed:
        kwargs.update(fixed)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise JsonFormError(f"{what}: {exc}") from None


# --- events -------------------------------------------------------------------------------


def event_to_json(event: Event) -> dict[str, JsonValue]:
    """The JSON form of ``event``: ``{"type": NAME, header fields..., body fields...}``."""
    code = event.type_code
    form: dict[str, JsonValue] = {TYPE_KEY: event_type_name(code)}
    fixed: dict[str, Any]
    if isinstance(event, UnknownEvent):
        form[RAW_KEY] = True
        fixed = {"code": code}
    else:
        kind = _kinds().get(code)
        fixed = kind.fixed if kind is not None and kind.cls is type(event) else {}
    hints = _field_hints(type(event))
    for f in _init_fields(type(event)):
        if f.name in fixed:
            continue
        try:
            form[f.name] = value_to_json(getattr(event, f.name), hints.get(f.name, Any))
        except JsonFormError as exc:
            raise JsonFormError(f"{form[TYPE_KEY]}.{f.name}: {exc}") from None
    return form


def event_from_json(data: dict[str, JsonValue]) -> Event:
    """The event whose JSON form is ``data``; missing fields take their defaults.

    ``"offset"`` (added by ``dump --json``) is ignored. Raises JsonFormError on anything else
    that is not part of the form.
    """
    if not isinstance(data, dict):
        raise JsonFormError(f"an event is a JSON object, got {type(data).__name__}")
    name = data.get(TYPE_KEY)
    if isinstance(name, int) and not isinstance(name, bool):
        code = name
        if not 0 <= code <= 255:
            raise JsonFormError(f"event type code {code} out of range 0..255")
    elif isinstance(name, str):
        code = type_code_from_name(name)
    else:
        raise JsonFormError(f'an event needs a "type" name, got {name!r}')
    label = event_type_name(code)
    raw = data.get(RAW_KEY, False)
    if not isinstance(raw, bool):
        raise JsonFormError(f'"raw" must be true or false, got {raw!r}')
    fields = {
        key: value
        for key, value in data.items()
        if key not in (TYPE_KEY, RAW_KEY) and key not in ANNOTATION_KEYS
    }
    kind = _kinds().get(code)
    if raw or kind is None:
        return _construct(UnknownEvent, fields, what=label, fixed={"code": code})
    for key, value in kind.fixed.items():
        if key in fields and fields.pop(key) != value:
            raise JsonFormError(f"{label}: {key} is decided by the type and must be {value!r}")
    event: Event = _construct(kind.cls, fields, what=label, fixed=kind.fixed)
    return event
