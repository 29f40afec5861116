"""The PySpark the tests run on, for the tests of what differs between versions: the Python
streaming source's admission control (``latestOffset(start, limit)``, ``ReadMaxRows``,
``SupportsTriggerAvailableNow``) arrived in 4.2 (the notes' version matrix; checked on the
4.0.5, 4.1.4 and 4.3.0 wheels by test_versions.py).

A test of a 4.2+ feature asserts the 4.0/4.1 behaviour instead where it can express it (the
source runs without admission control: ``maxRowsPerBatch`` is ignored, an ``availableNow``
query reads to the end in one batch), never skips."""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["admission_control", "pyspark_version"]


def pyspark_version() -> tuple[int, int]:
    """The installed PySpark's (major, minor), from its distribution's metadata."""
    major, minor = version("pyspark").split(".")[:2]
    return int(major), int(minor)


def admission_control() -> bool:
    """Whether this PySpark gives Python streaming sources admission control (4.2+)."""
    return pyspark_version() >= (4, 2)
