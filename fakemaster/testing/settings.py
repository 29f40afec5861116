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


def _setting(flag: str, parse: Callable[[str], Any], help: str, metavar: str) -> Any:
    """A :class:`RunSettings` field: unset (None) by default, with what its flag needs."""
    return dataclasses.field(
        default=None,
        metadata={"flag": flag, "parse": parse, "help": help, "metavar": metavar},
    )


@dataclass(frozen=True)
class RunSettings:
    """The ServerConfig fields set for the whole run; None: not set (ServerConfig's default)."""

    host: str | None = _setting(
        "host", str, "address fake masters listen on (default 127.0.0.1)", "ADDR"
    )
    server_id: int | None = _setting("server-id", int, "server id of fake masters (default 1)", "N")
    user: str | None = _setting("user", str, "account replicas log in with (default root)", "NAME")
    password: str | None = _setting("password", str, "its password (default: empty)", "TEXT")
    version: str | None = _setting(
        "version-string", str, "@@version (default 10.11.19-MariaDB-log)", "S"
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
        "checksum", _parse_checksum, "@@binlog_checksum (default CRC32)", "ALG"
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
    key ``fakemaster_<flag with underscores>``."""

    field: str
    flag: str
    parse: Callable[[str], Any]
    help: str
    metavar: str

    @property
    def option(self) -> str:
        return "--fakemaster-" + self.flag

    @property
    def ini(self) -> str:
        return "fakemaster_" + self.flag.replace("-", "_")


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
        if raw is None:
            ini_value = config.getini(setting.ini)
            if isinstance(ini_value, str) and ini_value.strip():
                raw, source = ini_value.strip(), f"ini key {setting.ini}"
        if raw is None:
            continue
        try:
            values[setting.field] = setting.parse(raw)
        except ValueError as exc:
            raise pytest.UsageError(f"fakemaster: {source}: {exc}") from None
    return RunSettings(**values)
