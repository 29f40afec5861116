"""One policy for optional "peer" software that tests run against (this project's tests and
the fixtures of :mod:`fakemaster.contract.pytest` that users' tests take).

A peer is something outside this repository that a test drives: a real
MariaDB server, python-mysql-replication, PySpark, ...  When a peer is
missing, CI must FAIL (a silently skipped differential test is worse than
none); a developer who knowingly lacks the peer can opt into skipping with
``FAKEMASTER_ALLOW_MISSING_PEERS=1``.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

__all__ = ["ALLOW_MISSING_ENV", "missing_peers_allowed", "require_module", "require_peer"]

ALLOW_MISSING_ENV = "FAKEMASTER_ALLOW_MISSING_PEERS"


def missing_peers_allowed() -> bool:
    return os.environ.get(ALLOW_MISSING_ENV, "").strip() == "1"


def require_peer(name: str, found: bool, how_to_install: str) -> None:
    """Return if ``found``; otherwise skip or fail the current test.

    Skips only when ``FAKEMASTER_ALLOW_MISSING_PEERS=1`` is set in the
    environment; fails otherwise.  Call it from a test or fixture.
    """
    if found:
        return
    message = (
        f"peer {name!r} is not available. To install it: {how_to_install}. "
        f"(Set {ALLOW_MISSING_ENV}=1 to skip instead of failing.)"
    )
    if missing_peers_allowed():
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


def require_module(module: str, how_to_install: str) -> None:
    """:func:`require_peer` for a Python module, usable at the top of a test module (before it
    imports the module): skipping then skips the whole test module."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        found = False
    if found:
        return
    message = (
        f"peer {module!r} is not available. To install it: {how_to_install}. "
        f"(Set {ALLOW_MISSING_ENV}=1 to skip instead of failing.)"
    )
    if missing_peers_allowed():
        pytest.skip(message, allow_module_level=True)
    pytest.fail(message, pytrace=False)
