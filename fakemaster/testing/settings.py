"""The run-wide settings of the pytest plugin: the ServerConfig fields a run sets for every fake
master, as ``--fakemaster-<flag>`` command-line flags or ``fakemaster_<flag>`` ini keys.

:class:`RunSettings` is the typed value; each of its fields also carries its flag, parser and
help text, so the list of settings is written once and :data:`SETTINGS` (what the plugin's
``pytest_addoption`` registers) is derived from it. :func:`read_settings` reads the value from a
pytest config (a flag wins over its ini key). Only stdlib and pytest here: the plugin loads this
module in every pytest run of a project that installs fakemaster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

__all__ = ["SETTINGS", "RunSettings", "Setting", "read_settings"]


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _parse_checksum(text: str) -> str:
    upper = text.strip().upper()
    if upper not in ("CRC32", "NONE"):
        raise ValueError(f"expected CRC32 or NONE, got {text!r}")
    return upper


def _parse_accounts(text: str) -> tuple[Any, ...]:
    """One ``USER[@HOST]:PASSWORD[:GRANTS]`` account a line (serve's ``--account``); loaded
    only when the setting is given."""
    from fakemaster.config.account_spec import parse_account

    return tuple(parse_account(line.strip()) for line in text.splitlines() if line.strip())


def _setting(
    flag: str, parse: Callable[[str], Any], help: str, metavar: str, old_flag: str | None = None
) -> Any:
    """A :class:`RunSettings` field: unset (None) by default, with what its flag needs (and the
    flag it was once spelled, kept working)."""
    return dataclasses.field(
        default=None,
        metadata={
            "flag": flag,
            "parse": parse,
            "help": help,
            "metavar": metavar,
            "old_flag": old_flag,
        },
    )


@dataclass(frozen=True)
class RunSettings:
    """The ServerConfig fields set for the whole run; None: not set (ServerConfig's default)."""

    host: str | None = _setting(
        "host", str, "address fake masters listen on (default 127.0.0.1)", "HOST"
    )
    server_id: int | None = _setting("server-id", int, "server id of fake masters (default 1)", "N")
    user: str | None = _setting("user", str, "account replicas log in with (default root)", "USER")
    password: str | None = _setting("password", str, "its password (default: empty)", "PASSWORD")
    accounts: tuple[Any, ...] | None = _setting(
        "account",
        _parse_accounts,
        "more accounts, one a line, each USER[@HOST]:PASSWORD[:GRANTS] as serve --account",
        "USER:PASSWORD:GRANTS",
    )
    version: str | None = _setting(
        "server-version",
        str,
        "@@version (default 10.11.19-MariaDB-log)",
        "VERSION",
        old_flag="version-string",
    )
    semi_sync_enabled: bool | None = _setting(
        "semi-sync", _parse_bool, "semi-sync replication on", "BOOL"
    )
    semi_sync_timeout_ms: int | None = _setting(
        "semi-sync-timeout", int, "rpl_semi_sync_master_timeout (default 10000)", "MS"
    )
    gtid_domain_id: int | None = _setting(
        "gtid-domain-id", int, "@@gtid_domain_id (default 0)", "N"
    )
    binlog_checksum: str | None = _setting(
        "binlog-checksum",
        _parse_checksum,
        "@@binlog_checksum (default CRC32)",
        "CRC32|NONE",
        old_flag="checksum",
    )

    def config_fields(self) -> dict[str, Any]:
        """The ServerConfig fields set, as keyword arguments (a fresh dict)."""
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if getattr(self, field.name) is not None
        }


@dataclass(frozen=True)
class Setting:
    """A ServerConfig field settable for the whole run as ``--fakemaster-<flag>`` or the ini
    key ``fakemaster_<flag with underscores>``; the flag is serve's option of the same setting
    (tests/fakemaster/test_cli_consistency.py). ``old_flag``: a former spelling, still read."""

    field: str
    flag: str
    parse: Callable[[str], Any]
    help: str
    metavar: str
    old_flag: str | None = None

    @property
    def option(self) -> str:
        return "--fakemaster-" + self.flag

    @property
    def ini(self) -> str:
        return "fakemaster_" + self.flag.replace("-", "_")

    @property
    def old_option(self) -> str | None:
        return None if self.old_flag is None else "--fakemaster-" + self.old_flag

    @property
    def old_ini(self) -> str | None:
        return None if self.old_flag is None else "fakemaster_" + self.old_flag.replace("-", "_")


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(field.name, **field.metadata) for field in dataclasses.fields(RunSettings)
)


def read_settings(config: pytest.Config) -> RunSettings:
    """The settings given by command-line flags or, failing those, ini keys; a value its
    setting cannot parse is a :class:`pytest.UsageError`."""
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = config.getoption(setting.ini, None)
        source = setting.option
        for ini in (setting.ini, setting.old_ini):
            if raw is None and ini is not None:
                ini_value = config.getini(ini)
                if isinstance(ini_value, str) and ini_value.strip():
                    raw, source = ini_value.strip(), f"ini key {ini}"
        if raw is None:
            continue
        try:
            values[setting.field] = setting.parse(raw)
        except ValueError as exc:
            raise pytest.UsageError(f"fakemaster: {source}: {exc}") from None
    return RunSettings(**values)
