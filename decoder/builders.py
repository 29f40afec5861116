"""Event constructors for the decoder's hot path: positional, without ``__init__``.

A dataclass's generated ``__init__`` takes keyword arguments (the event classes are
``kw_only``) and costs about three times what setting the slots does; a decoder that builds an
event per binlog event (GTID, XID, ANNOTATE_ROWS, TABLE_MAP, rows) uses these instead. A builder
takes every field of its class, so that it gives what ``__init__`` gives (the class has no
``__post_init__`` and is not frozen, checked when the builder is made; a field added to the
class later makes :func:`event_builder` raise at import, rather than leave a slot unset).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["event_builder"]

Built = TypeVar("Built", bound="DataclassInstance")


def event_builder(cls: type[Built], names: tuple[str, ...]) -> Callable[..., Built]:
    """A function ``build(*values)`` giving ``cls(**dict(zip(names, values)))``; ``names`` must
    be every field of the dataclass ``cls``."""
    declared = [f.name for f in dataclasses.fields(cls)]
    if sorted(names) != sorted(declared):
        raise TypeError(f"{cls.__name__} builder: fields {declared}, given {list(names)}")
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or params.frozen or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: no builder for a frozen or post-initialised class")
    lines = [f"def build({', '.join(names)}):", "    event = _new(_cls)"]
    lines += [f"    event.{name} = {name}" for name in names]
    lines.append("    return event")
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    exec(compile("\n".join(lines) + "\n", f"<{cls.__name__} builder>", "exec"), namespace)
    build: Callable[..., Built] = namespace["build"]
    return build
