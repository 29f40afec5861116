"""Every field of an event or packet checked before it is encoded.

A field must have the type ``fakemaster/vocabulary/events.py`` (or ``fakemaster/vocabulary/packets.py``) declares for
it; an integer must fit the width its layout gives it (``fakemaster/vocabulary/header.py``,
``fakemaster/vocabulary/layouts.py``, ``fakemaster/vocabulary/packets.py``: the very Structs the encoders pack with);
a text must be writable in its encoding; a byte string must fit its length field. A value the
bytes cannot hold is an EncodeError naming the field (``xid.gtrid``, ``gtids[2].seq_no``),
never a struct.error, OverflowError or TypeError from deeper down, and never a silently
different value. What depends on several fields or on a code (a GTID's flags and the parts they
announce, status variables, optional metadata, row values, a table id's width in the stream)
is left to the body encoders, which raise EncodeError too.
"""

from __future__ import annotations

import dataclasses
import re
import struct
import typing
from collections.abc import Callable
from functools import cache
from types import NoneType, UnionType
from typing import Any

from encoder.primitives import name_bytes
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    AppendBlockEvent,
    BeginLoadQueryEvent,
    DeleteFileEvent,
    Event,
    ExecuteLoadQueryEvent,
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    HeartbeatEvent,
    IncidentEvent,
    IntvarEvent,
    QueryEvent,
    RandEvent,
    RotateEvent,
    RowsEvent,
    StartEncryptionEvent,
    TableMapEvent,
    UnknownEvent,
    UserVarEvent,
    XaPrepareEvent,
    XidEvent,
)
from fakemaster.vocabulary.header import HEADER
from fakemaster.vocabulary.layouts import (
    FDE_FIXED,
    GTID_FIXED,
    GTID_LIST_COUNT,
    GTID_LIST_ENTRY,
    GTID_XA_HEAD,
    INCIDENT_HEAD,
    INTVAR,
    LOAD_QUERY_EXTRA,
    QUERY_POST_HEADER,
    RAND,
    START_ENCRYPTION,
    U8,
    U16,
    U32,
    U64,
    USER_VAR_VALUE_HEAD,
    XA_PREPARE_HEAD,
)
from fakemaster.vocabulary.packets import (
    EOF_PACKET,
    ERR_HEAD,
    OK_STATUS_WARNINGS,
    SEMI_SYNC_ACK_HEAD,
    EofPacket,
    ErrPacket,
    OkPacket,
    SemiSyncAck,
)

__all__ = [
    "INTEGERS",
    "LENGTHS",
    "SIZED_BY_THEIR_ENCODER",
    "TEXTS",
    "check_fields",
    "item_bits",
    "unsized_integers",
]

# A field of a layout: (the Struct, the index of its item).
Item = tuple[struct.Struct, int]

# The layout item each integer field is written as, by class and dotted field path (the
# elements of a tuple field share its path). Inherited: Event's apply to every event.
_QUERY_HEAD = {
    "thread_id": (QUERY_POST_HEADER, 0),
    "exec_time": (QUERY_POST_HEADER, 1),
    "error_code": (QUERY_POST_HEADER, 3),
    "status_vars.code": (U8, 0),
}
_XA_XID_FORMAT = (XA_PREPARE_HEAD, 1)
INTEGERS: dict[type, dict[str, Item]] = {
    Event: {
        "timestamp": (HEADER, 0),
        "server_id": (HEADER, 2),
        "log_pos": (HEADER, 4),
        "flags": (HEADER, 5),
    },
    FormatDescriptionEvent: {
        "binlog_version": (FDE_FIXED, 0),
        "create_timestamp": (FDE_FIXED, 2),
        "header_length": (FDE_FIXED, 3),
        "checksum_alg": (U8, 0),
    },
    RotateEvent: {"position": (U64, 0)},
    HeartbeatEvent: {"position": (U64, 0)},
    StartEncryptionEvent: {"scheme": (START_ENCRYPTION, 0), "key_version": (START_ENCRYPTION, 1)},
    IncidentEvent: {"incident": (INCIDENT_HEAD, 0)},
    UnknownEvent: {"code": (HEADER, 1)},
    GtidEvent: {
        "seq_no": (GTID_FIXED, 0),
        "domain_id": (GTID_FIXED, 1),
        "flags2": (GTID_FIXED, 2),
        "commit_id": (U64, 0),
        "xid.format_id": (GTID_XA_HEAD, 0),
        "flags_extra": (U8, 0),
        "extra_engines": (U8, 0),
        "sa_seq_no": (U64, 0),
    },
    GtidListEvent: {
        "gtids.domain_id": (GTID_LIST_ENTRY, 0),
        "gtids.server_id": (GTID_LIST_ENTRY, 1),
        "gtids.seq_no": (GTID_LIST_ENTRY, 2),
        "list_flags": (GTID_LIST_COUNT, 0),
    },
    QueryEvent: _QUERY_HEAD,
    ExecuteLoadQueryEvent: {
        **_QUERY_HEAD,
        "file_id": (LOAD_QUERY_EXTRA, 0),
        "fn_pos_start": (LOAD_QUERY_EXTRA, 1),
        "fn_pos_end": (LOAD_QUERY_EXTRA, 2),
        "dup_handling": (LOAD_QUERY_EXTRA, 3),
    },
    BeginLoadQueryEvent: {"file_id": (U32, 0)},
    AppendBlockEvent: {"file_id": (U32, 0)},
    DeleteFileEvent: {"file_id": (U32, 0)},
    XidEvent: {"xid": (U64, 0)},
    XaPrepareEvent: {"xid.format_id": _XA_XID_FORMAT},
    IntvarEvent: {"kind": (INTVAR, 0), "value": (INTVAR, 1)},
    RandEvent: {"seed1": (RAND, 0), "seed2": (RAND, 1)},
    UserVarEvent: {
        "value_type": (USER_VAR_VALUE_HEAD, 0),
        "charset": (USER_VAR_VALUE_HEAD, 1),
        "value_flags": (U8, 0),
    },
    TableMapEvent: {
        "table_flags": (U16, 0),
        "column_types": (U8, 0),
        "optional_metadata.kind": (U8, 0),
    },
    RowsEvent: {"rows_flags": (U16, 0)},
    # Packets. OK's two counts are length-encoded integers: at most 64 bits.
    OkPacket: {
        "affected_rows": (U64, 0),
        "last_insert_id": (U64, 0),
        "status_flags": (OK_STATUS_WARNINGS, 0),
        "warnings": (OK_STATUS_WARNINGS, 1),
        "header": (U8, 0),
    },
    ErrPacket: {"errno": (ERR_HEAD, 1)},
    EofPacket: {"warnings": (EOF_PACKET, 1), "status_flags": (EOF_PACKET, 2)},
    SemiSyncAck: {"position": (SEMI_SYNC_ACK_HEAD, 1)},
}

# The integer fields with no one layout item, each checked by its body encoder instead, and
# why (tests/test_checklists.py: every other integer field of an event has its item above).
SIZED_BY_THEIR_ENCODER: dict[tuple[type, str], str] = {
    (TableMapEvent, "table_id"): "4 or 6 bytes, by the stream's FDE (encoder/rows.py)",
    (TableMapEvent, "column_meta"): "0, 1 or 2 bytes, by the column's type (encoder/rows.py)",
    (RowsEvent, "table_id"): "4 or 6 bytes, by the stream's FDE (encoder/rows.py)",
    (RowsEvent, "version"): "1 or 2: picks the type code, not written (encoder/rows.py)",
    (RowsEvent, "width"): "a packed integer at most the TABLE_MAP's columns (encoder/rows.py)",
}

# The length field each byte (or text) field's length is written in.
LENGTHS: dict[type, dict[str, Item]] = {
    IncidentEvent: {"message": (INCIDENT_HEAD, 1)},
    GtidEvent: {"xid.gtrid": (GTID_XA_HEAD, 1), "xid.bqual": (GTID_XA_HEAD, 2)},
    XaPrepareEvent: {"xid.gtrid": (XA_PREPARE_HEAD, 2), "xid.bqual": (XA_PREPARE_HEAD, 3)},
    QueryEvent: {"database": (QUERY_POST_HEADER, 2)},
    ExecuteLoadQueryEvent: {"database": (QUERY_POST_HEADER, 2)},
    UserVarEvent: {"name": (U32, 0), "value": (USER_VAR_VALUE_HEAD, 2)},
    TableMapEvent: {"database": (U8, 0), "table": (U8, 0)},
}

# How text fields are written: names are UTF-8 (undecodable bytes kept as they came), the
# server version Latin-1.


def _latin1(text: str) -> bytes:
    return text.encode("latin-1")


TEXTS: dict[type, dict[str, Callable[[str], bytes]]] = {
    FormatDescriptionEvent: {"server_version": _latin1},
    ErrPacket: {"sqlstate": _latin1},
}

_FORMAT_ITEM = re.compile(r"(\d*)([a-zA-Z?])")
_BITS = {"B": 8, "H": 16, "I": 32, "Q": 64}


def item_bits(item: Item) -> int:
    """The width of one unsigned integer item of a layout."""
    layout, index = item
    codes = [
        code
        for count, code in _FORMAT_ITEM.findall(layout.format.lstrip("<>=!@"))
        for _ in range(1 if code == "s" else int(count or 1))
    ]
    return _BITS[codes[index]]


# --- what each field must be -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Spec:
    """What a field's value must be: ``kind`` one of int, bool, bytes, str (``limit``: the
    values below it, or the most bytes), optional, sequence and record (``inner``: the value's,
    the elements' or, with ``record``, the fields' specs); ``any`` is left to its encoder."""

    kind: str
    limit: int | None = None
    encode: Callable[[str], bytes] | None = None
    inner: Any = None
    record: type | None = None


_ANY = Spec("any")


def _inherited(table: dict[type, dict[str, Any]], owner: type) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for cls in reversed(owner.__mro__):
        found.update(table.get(cls, {}))
    return found


def _spec_of(hint: Any, owner: type, path: str) -> Spec:
    """The spec of a field of ``owner`` at ``path`` declared as ``hint``."""
    if hint is Any:
        return _ANY
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        options = [option for option in typing.get_args(hint) if option is not NoneType]
        if len(options) != 1:
            raise TypeError(f"{owner.__name__}.{path}: no check for {hint}")
        return Spec("optional", inner=_spec_of(options[0], owner, path))
    if typing.get_origin(hint) is tuple:
        return Spec("sequence", inner=_spec_of(typing.get_args(hint)[0], owner, path))
    if hint is bool:
        return Spec("bool")
    if hint is int:
        item = _inherited(INTEGERS, owner).get(path)
        return Spec("int", None if item is None else 1 << item_bits(item))
    length = _inherited(LENGTHS, owner).get(path)
    most = None if length is None else (1 << item_bits(length)) - 1
    if hint is bytes:
        return Spec("bytes", most)
    if hint is str:
        return Spec("str", most, _inherited(TEXTS, owner).get(path, name_bytes))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return Spec("record", inner=_record_specs(hint, owner, path), record=hint)
    raise TypeError(f"{owner.__name__}.{path}: no check for {hint}")


def _record_specs(cls: type, owner: type, prefix: str = "") -> tuple[tuple[str, Spec], ...]:
    hints = typing.get_type_hints(cls)
    return tuple(
        (field.name, _spec_of(hints[field.name], owner, f"{prefix}.{field.name}" if prefix
                              else field.name))
        for field in dataclasses.fields(cls)
    )  # fmt: skip


def unsized_integers(cls: type) -> list[str]:
    """The dotted paths of ``cls``'s integer fields that no layout item of INTEGERS sizes."""

    def walk(specs: tuple[tuple[str, Spec], ...], prefix: str) -> list[str]:
        found = []
        for name, spec in specs:
            while spec.kind in ("optional", "sequence"):
                spec = spec.inner
            if spec.kind == "int" and spec.limit is None:
                found.append(prefix + name)
            elif spec.kind == "record":
                found += walk(spec.inner, f"{prefix}{name}.")
        return found

    return walk(_record_specs(cls, cls), "")


# --- the full check: the EncodeError of the first field that cannot be written ------------


def _describe(value: Any) -> str:
    # Imported for an error only: the row value encoder under it is not needed to check a
    # packet that is right (the first OK a server sends, issue #25).
    from encoder.values import describe_value

    return describe_value(value)


def _refuse(path: str, value: Any, why: str) -> EncodeError:
    return EncodeError(f"{path} {_describe(value)}: {why}", value=value, field=path)


def _check(spec: Spec, value: Any, path: str) -> None:
    if spec.kind != "any":
        _KIND_CHECKS.get(spec.kind, _check_record)(spec, value, path)


def _check_optional(spec: Spec, value: Any, path: str) -> None:
    if value is not None:
        _check(spec.inner, value, path)


def _check_int(spec: Spec, value: Any, path: str) -> None:
    limit = spec.limit
    if not isinstance(value, int):
        raise _refuse(path, value, "not an int")
    if limit is not None and not 0 <= value < limit:
        raise _refuse(path, value, f"not in 0..{limit - 1} ({limit.bit_length() - 1} bits)")


def _check_bool(spec: Spec, value: Any, path: str) -> None:
    # 0 and 1 are read back as False and True, which equal them.
    if not isinstance(value, int) or value not in (0, 1):
        raise _refuse(path, value, "not a bool")


def _check_bytes(spec: Spec, value: Any, path: str) -> None:
    limit = spec.limit
    if not isinstance(value, (bytes, bytearray)):
        raise _refuse(path, value, "not bytes")
    if limit is not None and len(value) > limit:
        raise _refuse(path, value, f"{len(value)} bytes, its length field holds {limit}")


def _check_str(spec: Spec, value: Any, path: str) -> None:
    limit = spec.limit
    if not isinstance(value, str):
        raise _refuse(path, value, "not a str")
    assert spec.encode is not None
    try:
        size = len(spec.encode(value))
    except UnicodeEncodeError as exc:
        raise _refuse(path, value, f"cannot be written: {exc.reason}") from None
    if limit is not None and size > limit:
        raise _refuse(path, value, f"{size} bytes, its length field holds {limit}")


def _check_sequence(spec: Spec, value: Any, path: str) -> None:
    if not isinstance(value, (tuple, list)):
        raise _refuse(path, value, "not a tuple")
    if spec.inner.kind != "any":
        for index, item in enumerate(value):
            _check(spec.inner, item, f"{path}[{index}]")


def _check_record(spec: Spec, value: Any, path: str) -> None:
    assert spec.record is not None
    if not isinstance(value, spec.record):
        raise _refuse(path, value, f"not a {spec.record.__name__}")
    for name, inner in spec.inner:
        _check(inner, getattr(value, name), f"{path}.{name}")


# The full check of each kind of field (a record's is the default).
_KIND_CHECKS: dict[str, Callable[[Spec, Any, str], None]] = {
    "optional": _check_optional,
    "int": _check_int,
    "bool": _check_bool,
    "bytes": _check_bytes,
    "str": _check_str,
    "sequence": _check_sequence,
}


# --- the quick check: compiled, true for the usual values ---------------------------------


class _Compiler:
    """A function ``obj -> bool`` per class: True when every field has its plain form (an int,
    exact bytes, ASCII str, tuple, in range), which the full check would accept; False sends
    the object to the full check, which explains what is wrong, or finds that nothing is."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"_len": len, "_isinstance": isinstance}
        self.lines: list[str] = []
        self.count = 0

    def name(self, obj: Any) -> str:
        self.count += 1
        found = f"_k{self.count}"
        self.namespace[found] = obj
        return found

    def expression(self, spec: Spec, var: str) -> str:
        kind, limit = spec.kind, spec.limit
        if kind == "any":
            return "True"
        if kind == "optional":
            return f"({var} is None or {self.expression(spec.inner, var)})"
        if kind == "int":
            exact = f"_isinstance({var}, int)"  # IntEnum members are ints too
            return exact if limit is None else f"({exact} and 0 <= {var} < {limit})"
        if kind == "bool":
            return f"({var} is True or {var} is False)"
        if kind == "bytes":
            exact = f"{var}.__class__ is bytes"
            return exact if limit is None else f"({exact} and _len({var}) <= {limit})"
        if kind == "str":
            # An ASCII text is its own bytes in UTF-8 and Latin-1 alike.
            exact = f"({var}.__class__ is str and {var}.isascii())"
            return exact if limit is None else f"({exact} and _len({var}) <= {limit})"
        if kind == "sequence":
            if spec.inner.kind == "any":
                return f"{var}.__class__ is tuple"
            item = self.expression(spec.inner, "x")
            return f"({var}.__class__ is tuple and all({item} for x in {var}))"
        return f"{self.function(spec.inner, spec.record)}({var})"

    def function(self, specs: tuple[tuple[str, Spec], ...], record: type | None) -> str:
        """The name of a generated function that is True for a record in its plain form."""
        name = f"_quick{self.count}"
        self.count += 1
        lines = [f"def {name}(o):"]
        if record is not None:
            lines.append(f"    if o.__class__ is not {self.name(record)}:")
            lines.append("        return False")
        for field, spec in specs:
            lines.append(f"    v = o.{field}")
            lines.append(f"    if not {self.expression(spec, 'v')}:")
            lines.append("        return False")
        lines.append("    return True")
        self.lines += lines
        return name


@cache
def _compiled(cls: type) -> tuple[Callable[[Any], bool], tuple[tuple[str, Spec], ...]]:
    specs = _record_specs(cls, cls)
    compiler = _Compiler()
    name = compiler.function(specs, None)
    exec(compile("\n".join(compiler.lines), f"<field checks of {cls.__name__}>", "exec"),
         compiler.namespace)  # fmt: skip
    quick: Callable[[Any], bool] = compiler.namespace[name]
    return quick, specs


def check_fields(obj: Any) -> None:
    """EncodeError (``field`` set) for the first field of an event or packet ``obj`` that its
    bytes cannot hold as it is."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise EncodeError(f"{_describe(obj)} is not an event or packet")
    quick, specs = _compiled(type(obj))
    if quick(obj):
        return
    for name, spec in specs:
        _check(spec, getattr(obj, name), name)
