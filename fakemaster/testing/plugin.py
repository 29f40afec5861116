"""pytest plugin of fakemaster: a fake MariaDB 10.11 primary per test (see docs/pytest-plugin.md).

Registered through the ``pytest11`` entry point, so installing fakemaster is all it takes.

Fixtures:

* ``fake_master``: a :class:`FakeMasterHandle` listening on a free port of 127.0.0.1, serving an
  in-memory binlog that holds only the first file's start events; stopped at teardown, where
  the errors the server recorded inside its connections fail the test. The
  ``@pytest.mark.fake_master(**options)`` marker passes options (as the factory takes them).
* ``fake_master_factory``: ``fake_master_factory(**options)`` starts another one (options:
  :class:`~fakemaster.config.server_config.ServerConfig` fields, ``config``, ``store``, ``binlog_dir``,
  ``semi_sync``, ``demo``, ``scenario``, ``check_errors``, ``faults``, ``pcap``).
  ``scenario=`` serves a :class:`scenarios.Scenario`, a built-in one's name or a TOML file,
  with the server variables its settings describe, and answers SQL snapshots (SHOW CREATE
  TABLE, SELECT, information_schema...) from its oracle at the released position;
  ``released=n`` starts with only its first n transactions in the binlog, the handle's
  ``release(count)`` / ``release_all()`` write more (held back while a client holds FLUSH
  TABLES WITH READ LOCK). ``faults=`` (a FaultPlan, a list of
  faults, or a plan file) puts a fault proxy in front of the server and schedules the plan's
  server faults in it; ``pcap=`` (a path) records the traffic with a capture proxy in front
  (outermost); the handle's address is then the outermost proxy's.
* ``fake_master_serving``: ``with fake_master_serving(**options) as master:`` the factory's
  fake master for one block; session-scoped, for hypothesis ``@given`` tests (one server per
  example). A handle serving a scenario carries it: ``scenario``, ``oracle``, the start
  position (``start_gtid``, ``start_file``, ``start_pos``, ``start_position``), the end
  (``end_gtid``, ``end_position``) and ``initial_rows()``.
* ``async_fake_master`` / ``async_fake_master_factory``: the same running in the test's event
  loop, for async tests (needs pytest-asyncio).

The synchronous fixtures run the server in a background thread; a handle's methods may be
called from any thread: binlog changes run in the server's thread, so a replica never sees half
of an append.

Settings for every fake master of a run, as command-line flags or ini keys (the flag wins):
``--fakemaster-server-id`` / ``fakemaster_server_id``, ``--fakemaster-user``,
``--fakemaster-password``, ``--fakemaster-account`` (one account a line, as ``serve
--account``), ``--fakemaster-server-version``, ``--fakemaster-semi-sync``,
``--fakemaster-semi-sync-timeout`` (ms), ``--fakemaster-gtid-domain-id``,
``--fakemaster-binlog-checksum`` (formerly ``--fakemaster-checksum``, still read),
``--fakemaster-host``: each named as ``serve``'s option of the same setting.

The plugin is this module's options and fixtures only; what they stand on lives next to it:
``settings.py`` (the run's settings as a typed value), ``builders.py`` (a server's config,
store and fault plan from the options), ``handles.py`` (the handles the fixtures yield) and
``factories.py`` (starting handles and failing a test with their errors at teardown). The
names a test imports from here are re-exported (``__all__``).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar, cast

import pytest

from fakemaster.testing.builders import load_faults
from fakemaster.testing.factories import AsyncFakeMasterFactory, FakeMasterFactory, serving
from fakemaster.testing.handles import (
    DEFAULT_ACK_TIMEOUT,
    DEFAULT_FAULTS_TIMEOUT,
    AsyncFakeMasterHandle,
    FakeMasterHandle,
)
from fakemaster.testing.settings import SETTINGS, RunSettings, Setting, read_settings

__all__ = [
    "DEFAULT_ACK_TIMEOUT",
    "DEFAULT_FAULTS_TIMEOUT",
    "SETTINGS",
    "AsyncFakeMasterFactory",
    "AsyncFakeMasterHandle",
    "FakeMasterFactory",
    "FakeMasterHandle",
    "RunSettings",
    "Setting",
    "async_fake_master",
    "async_fake_master_factory",
    "fake_master",
    "fake_master_factory",
    "fake_master_serving",
    "load_faults",
    "read_settings",
    "serving",
]

_SETTINGS_KEY = pytest.StashKey[RunSettings]()


# --- options --------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakemaster", "fake MariaDB primary (fakemaster fixtures)")
    for setting in SETTINGS:
        text = f"{setting.help} (ini: {setting.ini})"
        # A bare --fakemaster-semi-sync means true.
        flag_options = {"nargs": "?", "const": "true"} if setting.metavar == "BOOL" else {}
        group.addoption(
            setting.option,
            dest=setting.ini,
            default=None,
            metavar=setting.metavar,
            help=text,
            **flag_options,
        )
        parser.addini(setting.ini, help=f"fakemaster: {setting.help}")
        if setting.old_option is not None and setting.old_ini is not None:
            # The former spelling, kept working and out of the help (CHANGELOG.md).
            group.addoption(
                setting.old_option,
                dest=setting.ini,
                default=None,
                metavar=setting.metavar,
                help=argparse.SUPPRESS,
            )
            parser.addini(setting.old_ini, help=f"fakemaster: deprecated, use {setting.ini}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_master(**options): options of the fake_master fixture's server (as "
        "fake_master_factory takes them)",
    )
    config.stash[_SETTINGS_KEY] = read_settings(config)


def _run_defaults(config: pytest.Config) -> dict[str, Any]:
    """The ServerConfig fields the run's settings give every fake master."""
    return config.stash.get(_SETTINGS_KEY, RunSettings()).config_fields()


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("fake_master")
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError("@pytest.mark.fake_master takes keyword options only")
    return dict(marker.kwargs)


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def fake_master_factory(pytestconfig: pytest.Config) -> Iterator[FakeMasterFactory]:
    """Start fake masters with ``fake_master_factory(**options)``; stopped at teardown."""
    factory = FakeMasterFactory(_run_defaults(pytestconfig))
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def fake_master(
    fake_master_factory: FakeMasterFactory, request: pytest.FixtureRequest
) -> FakeMasterHandle:
    """A fake MariaDB 10.11 primary on a free port of 127.0.0.1 (see the module docstring)."""
    return fake_master_factory(**_marker_options(request))


class Serving(Protocol):
    """``fake_master_serving(**options)``: a context manager yielding a started handle."""

    def __call__(self, **options: Any) -> AbstractContextManager[FakeMasterHandle]: ...


@pytest.fixture(scope="session")
def fake_master_serving(pytestconfig: pytest.Config) -> Serving:
    """``with fake_master_serving(**options) as master:`` a fake master for one block, with the
    run's settings (``fakemaster.testing.factories.serving``). Session-scoped, so a hypothesis
    ``@given`` test may take it and start one fake master per example."""
    defaults = _run_defaults(pytestconfig)
    return cast(Serving, functools.partial(serving, defaults))


_Function = TypeVar("_Function", bound=Callable[..., object])


class _FixtureDecorator(Protocol):
    """A bare fixture decorator, typed as keeping the function's own type (for mypy)."""

    def __call__(self, function: _Function, /) -> _Function: ...


def _async_fixture_decorator() -> _FixtureDecorator:
    """pytest-asyncio's fixture decorator, else pytest's (the async fixtures then fail with
    pytest's "needs a plugin" message). pytest-asyncio is optional, so its decorator is typed
    here, once, as what the fixtures below need."""
    decorator: object
    try:
        import pytest_asyncio
    except ImportError:
        decorator = pytest.fixture
    else:
        decorator = pytest_asyncio.fixture
    return cast(_FixtureDecorator, decorator)


_async_fixture = _async_fixture_decorator()


@_async_fixture
async def async_fake_master_factory(
    pytestconfig: pytest.Config,
) -> AsyncIterator[AsyncFakeMasterFactory]:
    """Start fake masters in the test's event loop: ``await async_fake_master_factory()``."""
    factory = AsyncFakeMasterFactory(_run_defaults(pytestconfig))
    try:
        yield factory
    finally:
        await factory.close()


@_async_fixture
async def async_fake_master(
    async_fake_master_factory: AsyncFakeMasterFactory, request: pytest.FixtureRequest
) -> AsyncFakeMasterHandle:
    """``fake_master`` for async tests: the server runs in the test's event loop."""
    return await async_fake_master_factory(**_marker_options(request))
