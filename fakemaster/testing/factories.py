"""The factories behind the plugin's fixtures: ``fake_master_factory(**options)`` builds a
server from the options (``builders.py``) and starts a handle (``handles.py``) on it; at
teardown the factory stops every handle it started and fails the test with the errors their
servers recorded.

Apart from the handles because they are the test's side of a handle's life: the fixtures own
a factory, the test owns the handles it gets.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from fakemaster.testing.builders import build_server
from fakemaster.testing.handles import AsyncFakeMasterHandle, FakeMasterHandle

__all__ = ["AsyncFakeMasterFactory", "FakeMasterFactory", "format_errors", "serving"]


def _where(handle: FakeMasterHandle | AsyncFakeMasterHandle) -> str:
    try:
        return handle.address
    except RuntimeError:  # stopped by the test already
        return f"{handle.host} (stopped)"


def format_errors(where: str, errors: Sequence[BaseException]) -> str:
    parts = [f"the fake master at {where} recorded {len(errors)} error(s) in its connections:"]
    for error in errors:
        parts.append("".join(traceback.format_exception(error)).rstrip())
    return "\n\n".join(parts)


class FakeMasterFactory:
    """``fake_master_factory(**options)``: start a fake master; all stop at teardown."""

    def __init__(self, defaults: Mapping[str, Any]) -> None:
        self.defaults = defaults
        self.handles: list[FakeMasterHandle] = []

    def __call__(
        self,
        *,
        check_errors: bool = True,
        faults: Any = None,
        pcap: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> FakeMasterHandle:
        config, store, owns_store = build_server(self.defaults, **options)
        handle = FakeMasterHandle(config, store, owns_store=owns_store, faults=faults, pcap=pcap)
        handle.check_errors = check_errors
        try:
            handle.start()
        except BaseException:
            handle.stop()
            raise
        self.handles.append(handle)
        return handle

    def close(self) -> None:
        """Stop every fake master; fail if any recorded errors (those that check them)."""
        failures = []
        for handle in reversed(self.handles):
            where = _where(handle)
            handle.stop()
            errors = [*handle.errors, *handle.proxy_errors]
            if handle.check_errors and errors:
                failures.append(format_errors(where, errors))
        self.handles.clear()
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)


@contextmanager
def serving(
    defaults: Mapping[str, Any] | None = None,
    *,
    check_errors: bool = True,
    faults: Any = None,
    pcap: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Iterator[FakeMasterHandle]:
    """``with serving(**options) as master:`` a fake master for the block only (options as
    ``fake_master_factory`` takes them, over ``defaults``): what a hypothesis ``@given`` test
    starts once per example, where per-test fixtures would be shared by every example. Leaving
    the block stops it; the errors its server recorded then raise AssertionError (unless the
    block raised first, or ``check_errors=False``)."""
    config, store, owns_store = build_server(defaults or {}, **options)
    handle = FakeMasterHandle(config, store, owns_store=owns_store, faults=faults, pcap=pcap)
    try:
        handle.start()
        yield handle
    except BaseException:
        handle.stop()
        raise
    where = _where(handle)
    handle.stop()
    errors = [*handle.errors, *handle.proxy_errors]
    if check_errors and errors:
        raise AssertionError(format_errors(where, errors))


class AsyncFakeMasterFactory:
    """``await async_fake_master_factory(**options)``: the async counterpart."""

    def __init__(self, defaults: Mapping[str, Any]) -> None:
        self.defaults = defaults
        self.handles: list[AsyncFakeMasterHandle] = []

    async def __call__(self, *, check_errors: bool = True, **options: Any) -> AsyncFakeMasterHandle:
        for name in ("faults", "pcap"):
            if options.get(name) is not None:
                raise TypeError(f"{name}= needs the synchronous fixtures (fake_master_factory)")
            options.pop(name, None)
        config, store, owns_store = build_server(self.defaults, **options)
        handle = AsyncFakeMasterHandle(config, store, owns_store=owns_store)
        handle.check_errors = check_errors
        try:
            await handle.start()
        except BaseException:
            await handle.stop()
            raise
        self.handles.append(handle)
        return handle

    async def close(self) -> None:
        failures = []
        for handle in reversed(self.handles):
            where = _where(handle)
            await handle.stop()
            if handle.check_errors and handle.errors:
                failures.append(format_errors(where, list(handle.errors)))
        self.handles.clear()
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)
