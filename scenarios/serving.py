"""What serving a scenario takes besides its binlog: the server variables that describe how it
was written (one source of truth with the served bytes), and finding a scenario by name or
file (``serve --scenario NAME|FILE``, the pytest plugin's ``scenario=``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.errors import ScenarioError

if TYPE_CHECKING:
    from scenarios.history import Scenario, Settings

__all__ = ["find_scenario", "scenario_variables"]


def _on_off(value: bool) -> str:
    return "ON" if value else "OFF"


def scenario_variables(settings: Settings) -> dict[str, str]:
    """The global variables (as server options) of a MariaDB primary that writes the binlog
    ``settings`` describe: ``binlog_format=ROW``, the row image and metadata, annotations,
    compression, checksum, server id and version."""
    return {
        "binlog_format": "ROW",
        "binlog_row_image": settings.binlog_row_image,
        "binlog_row_metadata": settings.binlog_row_metadata,
        "binlog_annotate_row_events": _on_off(settings.binlog_annotate_row_events),
        "log_bin_compress": _on_off(settings.log_bin_compress),
        "log_bin_compress_min_len": str(settings.log_bin_compress_min_len),
        "binlog_checksum": "CRC32" if settings.binlog_checksum else "NONE",
        "server_id": str(settings.server_id),
        "version": settings.server_version,
    }


def find_scenario(spec: str | Path | Scenario) -> Scenario:
    """A scenario: ``spec`` itself, a built-in one by name (:mod:`scenarios.library`), or a
    TOML file (a path, or a name ending in ``.toml``)."""
    from scenarios.history import Scenario

    if isinstance(spec, Scenario):
        return spec
    from scenarios.library import LIBRARY, build
    from scenarios.toml_form import read_scenario

    text = str(spec)
    if isinstance(spec, str) and spec in LIBRARY:
        return build(spec)
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        return read_scenario(path)
    raise ScenarioError(
        f"no scenario {text!r}: not a TOML file, nor one of the built-in scenarios"
        f" ({', '.join(LIBRARY)})"
    )
