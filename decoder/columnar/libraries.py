"""pyarrow and numpy, each imported on first use (numpy optional: the per-value Python
conversions without it), and from how many values numpy is worth setting up.
"""

from __future__ import annotations

from typing import Any

# What the package's other modules (and the tests) take from here; the names with an
# underscore are the package's own, not the project's API.
__all__ = [
    "_np",
    "_pa",
]


_PYARROW: list[Any] = []


def _pa() -> Any:
    """pyarrow, imported on first use."""
    if not _PYARROW:
        import pyarrow  # type: ignore[import-untyped]

        _PYARROW.append(pyarrow)
    return _PYARROW[0]


# Below this many values the per-value Python loops are as fast as setting numpy up.
_VECTOR_MIN = 32
_NUMPY: list[Any] = []


def _np() -> Any:
    """numpy, or None when it is not installed (the per-value Python conversions then)."""
    if not _NUMPY:
        try:
            import numpy

            _NUMPY.append(numpy)
        except ImportError:  # pragma: no cover - numpy comes with pyarrow's usual installs
            _NUMPY.append(None)
    return _NUMPY[0]
