"""The replay file of a recording: what the recorded primary answered, for ``serve`` to answer
the same (sans-IO but for reading and writing the file).

``record`` writes ``fakemaster-replay.json`` (:data:`REPLAY_FILE`) next to the binlog files
(docs/record.md describes its fields): the primary's handshake version, its global variables
(``SHOW GLOBAL VARIABLES``: the answers to the statements a replica sends, ``SHOW VARIABLES
LIKE 'SERVER_ID'``, ``SELECT @@GLOBAL.gtid_domain_id``, ``@master_binlog_checksum`` ..., and
those CDC tools ask), its GTID positions and binary logs when the recording started, and where
the recording ended.

What wins. The served binlog bytes are the one source of truth: a replica applies them, and a
primary's variables agree with the binlog it wrote. So a replayed value that the served files
contradict (:mod:`fakemaster.config.served_variables`: version, server_id, checksum, row metadata,
server collation, max_allowed_packet) is not served, and :func:`replay_settings` says so;
values the files cannot tell (``gtid_domain_id``, ``sql_mode``, ``time_zone``...) are served as
recorded. GTID positions (``@@gtid_binlog_pos``...) are always computed from the served files.
Options given to ``serve`` win over the replay file (and, as always, must not contradict the
files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakemaster.config.served_facts import BinlogSource
from fakemaster.config.served_variables import ServedVariables
from fakemaster.config.server_config import ServerConfig
from fakemaster.config.variables import SYSTEM_VARIABLES, Value, setting_value
from fakemaster.record.replay_file import REPLAY_FILE, find_replay
from fakemaster.vocabulary.errors import ConfigError, FakemasterError
from fakemaster.vocabulary.inputs import InputError, loads_json, read_text

__all__ = [
    "FIELD_VARIABLES",
    "REPLAYED_VARIABLES",
    "REPLAY_FILE",
    "REPLAY_FORMAT",
    "Replay",
    "ReplayError",
    "ReplaySettings",
    "find_replay",
    "replay_settings",
]

REPLAY_FORMAT = 1

# The global variables a replay answers with (those the fake master knows): what replicas and
# CDC tools ask a primary. Left out: paths and ports of the recorded machine, session values,
# and the GTID positions (computed from the served files).
REPLAYED_VARIABLES = (
    "version",
    "version_comment",
    "version_compile_machine",
    "version_compile_os",
    "version_malloc_library",
    "version_source_revision",
    "version_ssl_library",
    "license",
    "protocol_version",
    "hostname",
    "server_id",
    "server_uid",
    "log_bin",
    "binlog_checksum",
    "binlog_row_image",
    "binlog_row_metadata",
    "binlog_annotate_row_events",
    "binlog_expire_logs_seconds",
    "expire_logs_days",
    "log_bin_compress",
    "log_bin_compress_min_len",
    "log_slave_updates",
    "encrypt_binlog",
    "max_binlog_size",
    "sync_binlog",
    "master_verify_checksum",
    "max_allowed_packet",
    "character_set_server",
    "collation_server",
    "character_set_system",
    "lower_case_table_names",
    "lower_case_file_system",
    "time_zone",
    "system_time_zone",
    "sql_mode",
    "explicit_defaults_for_timestamp",
    "default_storage_engine",
    "auto_increment_increment",
    "auto_increment_offset",
    "read_only",
    "gtid_domain_id",
    "gtid_strict_mode",
    "gtid_ignore_duplicates",
    "binlog_format",
    "slave_net_timeout",
    "lc_messages",
)

# Variables that are settings of the fake master (they change what it does, not only what it
# says): the replay sets the setting (a serve option of the same name wins).
FIELD_VARIABLES = (
    "rpl_semi_sync_master_enabled",
    "rpl_semi_sync_master_timeout",
)


class ReplayError(FakemasterError):
    """A replay file that cannot be read."""


@dataclass
class Replay:
    """The contents of a replay file (see docs/record.md)."""

    upstream: str = ""
    recorded_at: str = ""
    handshake_version: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    gtid: dict[str, str] = field(default_factory=dict)
    binary_logs: list[tuple[str, int]] = field(default_factory=list)
    basename: str = ""
    files: list[tuple[str, int]] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        document = {
            "fakemaster_replay": REPLAY_FORMAT,
            "upstream": self.upstream,
            "recorded_at": self.recorded_at,
            "handshake": {"server_version": self.handshake_version},
            "variables": dict(sorted(self.variables.items())),
            "gtid": self.gtid,
            "binary_logs_at_start": [{"name": n, "size": s} for n, s in self.binary_logs],
            "binlog": {
                "basename": self.basename,
                "index": f"{self.basename}.index",
                "files": [{"name": n, "size": s} for n, s in self.files],
                "end": self.end,
            },
        }
        return json.dumps(document, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "the replay file") -> Replay:
        try:
            document = loads_json(text, source=source)
        except InputError as error:
            raise ReplayError(str(error)) from None
        try:
            if not isinstance(document, dict):
                raise ReplayError(f"{source}: not a JSON object")
            version = document.get("fakemaster_replay")
            if version != REPLAY_FORMAT:
                raise ReplayError(
                    f"{source}: fakemaster_replay is {version!r}, this fakemaster reads "
                    f"{REPLAY_FORMAT}"
                )
            binlog = document.get("binlog", {})
            replay = cls(
                upstream=str(document.get("upstream", "")),
                recorded_at=str(document.get("recorded_at", "")),
                handshake_version=str(document.get("handshake", {}).get("server_version", "")),
                variables={str(k): str(v) for k, v in document.get("variables", {}).items()},
                gtid={str(k): str(v) for k, v in document.get("gtid", {}).items()},
                binary_logs=[
                    (str(f["name"]), int(f["size"]))
                    for f in document.get("binary_logs_at_start", [])
                ],
                basename=str(binlog.get("basename", "")),
                files=[(str(f["name"]), int(f["size"])) for f in binlog.get("files", [])],
                end=dict(binlog.get("end", {})),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ReplayError(f"{source}: not a replay file: {error}") from None
        _check_names(replay, source)
        return replay

    @classmethod
    def load(cls, path: Path) -> Replay:
        try:
            text = read_text(path)
        except OSError as error:
            raise ReplayError(f"{path}: {error.strerror or error}") from None
        except InputError as error:
            raise ReplayError(str(error)) from None
        return cls.from_json(text, str(path))

    def save(self, path: Path) -> None:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(self.to_json())
        partial.replace(path)


# A binlog file's base name as an index lists it: never a path out of the directory.
_FILE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")


def _check_names(replay: Replay, source: str) -> None:
    """Every file name a replay gives is a base name; sizes are file sizes."""
    named = [("binlog.basename", replay.basename)] if replay.basename else []
    for where, files in (
        ("binlog.files", replay.files),
        ("binary_logs_at_start", replay.binary_logs),
    ):
        for index, (name, size) in enumerate(files):
            named.append((f"{where}[{index}].name", name))
            if not 0 <= size < 1 << 64:
                raise ReplayError(f"{source}, {where}[{index}].size: {size} is not a file size")
    for where, name in named:
        if not _FILE_NAME.match(name):
            raise ReplayError(f"{source}, {where}: {name!r} is not a binlog file name")


@dataclass
class ReplaySettings:
    """What ``serve`` takes from a replay: global variables (as configuration), settings of the
    fake master (``FIELD_VARIABLES``, typed), and one note per recorded value not served."""

    variables: dict[str, Value] = field(default_factory=dict)
    fields: dict[str, Value] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def replay_settings(
    replay: Replay,
    source: BinlogSource | None,
    *,
    given: Mapping[str, Any] | None = None,
) -> ReplaySettings:
    """The settings ``serve`` takes from ``replay`` for the files of ``source``: the recorded
    values the fake master knows, less those the configuration ``given`` sets (the options
    win) and those the served bytes contradict (they win; a note says so)."""
    taken = {name.lower() for name in (given or {})}
    settings = ReplaySettings()
    for name in (*REPLAYED_VARIABLES, *FIELD_VARIABLES):
        text = replay.variables.get(name)
        if text is None or name in taken:
            continue
        var = SYSTEM_VARIABLES.get(name)
        if var is None:
            continue
        try:
            value = setting_value(var, text)
        except ValueError as error:
            settings.notes.append(f"{name}: the recorded {text!r} is not served ({error})")
            continue
        if name in FIELD_VARIABLES:
            settings.fields[name] = value
        else:
            settings.variables[name] = value
    # The served bytes win: drop what they contradict, one variable at a time.
    while settings.variables:
        try:
            config = ServerConfig(variables=settings.variables)
        except ConfigError as refused:
            if refused.variable is None or refused.variable not in settings.variables:
                raise
            settings.notes.append(f"{refused.variable}: not served ({refused})")
            del settings.variables[str(refused.variable)]
            continue
        if source is None:
            break
        served = ServedVariables(config, source)
        contradictions = served.sync({})  # reads the served files, then compares
        dropped = False
        for contradiction in contradictions:
            name = str(contradiction.variable)
            if name in settings.variables:
                settings.notes.append(
                    f"{name}: the replay file says {_text(settings.variables[name])}, the "
                    f"served binlog says {contradiction.served}: the binlog's value is served"
                )
                del settings.variables[name]
                dropped = True
        if not dropped:
            break
    return settings


def _text(value: Value) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)
