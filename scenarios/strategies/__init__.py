"""Public hypothesis strategies: ``history`` (columns with values, tables, settings, whole
scenarios) and the codec-level ones (``control``, ``statements``, ``rows``, ``framing``,
``streams``: single events, packets and event streams). Submodules are imported on first use."""

from __future__ import annotations

from fakemaster import _lazy_attributes

__all__ = ["control", "framing", "history", "rows", "statements", "streams"]

# Each name is a submodule of this package.
_LAZY = {name: f"{__name__}.{name}" for name in __all__}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
