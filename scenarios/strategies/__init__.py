"""Public hypothesis strategies: ``history`` (columns with values, tables, settings, whole
scenarios) and the codec-level ones (``control``, ``statements``, ``rows``, ``framing``,
``streams``: single events, packets and event streams). Submodules are imported on first use."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["control", "framing", "history", "rows", "statements", "streams"]


def __getattr__(name: str) -> ModuleType:
    if name not in __all__:
        raise AttributeError(f"module 'scenarios.strategies' has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
