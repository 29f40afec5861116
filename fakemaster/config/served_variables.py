"""The variables a fake master reports, made to agree with the binlog it serves (sans-IO).

One source of truth: what the served bytes prove (:mod:`fakemaster.config.served_facts`) is what
``SELECT @@version, @@binlog_checksum, @@server_id, ...``, ``SHOW VARIABLES`` and the handshake
say. The configuration fills in what the bytes cannot tell (an empty binlog, no TABLE_MAP yet)
and is checked against what they do tell: a configured value that contradicts them is a
:class:`fakemaster.vocabulary.errors.ConfigError` naming the variable, both values and where the binlog
says otherwise.

The variables, and what settles them:

==========================  ================================================================
version                     the newest FORMAT_DESCRIPTION's server version
binlog_checksum             its checksum algorithm (NONE or CRC32)
server_id                   its server id
log_slave_updates           ON once an event of another server id was logged
binlog_row_metadata         the newest TABLE_MAP that tells (FULL, MINIMAL or NO_LOG)
character_set_server,       the collation_server of the sessions that logged QUERY events
collation_server            (a configured one passes if any of them had it)
max_allowed_packet          at least the packet of the largest event (MariaDB keeps multiples
                            of 1024)
==========================  ================================================================

:meth:`ServedVariables.sync` brings a dict of global values up to date with what was appended
since the last call. A value is written when the bytes' verdict changes, so a ``SET GLOBAL``
stands until the binlog says something new (as on a real server, whose next events follow the
new setting).
"""

from __future__ import annotations

import dataclasses
from collections.abc import MutableMapping
from typing import Any

from fakemaster.config.served_facts import BinlogSource, FactsScanner, ServedFacts
from fakemaster.config.server_config import (
    DEFAULT_MAX_ALLOWED_PACKET,
    DERIVABLE_FIELDS,
    SERVER_CHARSET_VARIABLES,
    ServerConfig,
)
from fakemaster.config.variables import Value
from fakemaster.protocol.charsets import Collation, collation_by_id, collation_by_name
from fakemaster.vocabulary.constants import ChecksumAlg
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import ConfigError

__all__ = [
    "SERVED_VARIABLES",
    "ServedVariables",
    "handshake_version",
    "packet_size_for",
    "server_collation_id",
]

# MariaDB's block size for max_allowed_packet: values are multiples of it.
PACKET_BLOCK = 1024
# The FORMAT_DESCRIPTION keeps 50 bytes of the version, its NUL included.
FDE_VERSION_CHARS = 49
# What a pre-4.1 client is told: MariaDB's prefix to its version in the handshake.
HANDSHAKE_VERSION_PREFIX = "5.5.5-"

# Every global this module may write (the server character set's companions included).
SERVED_VARIABLES = frozenset(
    {
        "version",
        "binlog_checksum",
        "server_id",
        "log_slave_updates",
        "binlog_row_metadata",
        "max_allowed_packet",
        *SERVER_CHARSET_VARIABLES,
    }
)


def packet_size_for(event_size: int) -> int:
    """The smallest max_allowed_packet (a multiple of 1024) that lets a binlog event through:
    the dump sends it behind a one-byte OK header."""
    needed = event_size + 1
    return -(-needed // PACKET_BLOCK) * PACKET_BLOCK


def handshake_version(globals_: MutableMapping[str, Value]) -> str:
    """The server version of the handshake: MariaDB puts "5.5.5-" in front of @@version."""
    return HANDSHAKE_VERSION_PREFIX + str(globals_["version"])


def server_collation_id(globals_: MutableMapping[str, Value]) -> int:
    """The collation id the handshake announces: @@collation_server's."""
    collation = collation_by_name(str(globals_["collation_server"]))
    assert collation is not None  # only known collations get there
    return collation.id


class ServedVariables:
    """The configuration and the served binlog, reconciled.

    Without a source (a server without a binlog) the configuration alone speaks.
    """

    def __init__(
        self,
        config: ServerConfig,
        source: BinlogSource | None = None,
        *,
        keys: BinlogKeys | None = None,
    ) -> None:
        self.config = config
        self.scanner = FactsScanner(source, keys) if source is not None else None
        self._written: dict[str, Value] = {}
        self._reported: set[tuple[str, str]] = set()
        self._synced_once = False

    @staticmethod
    def for_positions(config: ServerConfig, positions: Any) -> ServedVariables:
        """For a server whose SQL side reads ``positions``: its facts when it is a binlog store
        (anything with the reading API), else the configuration's word only."""
        reads = all(callable(getattr(positions, name, None)) for name in _SOURCE_METHODS)
        return ServedVariables(
            config, positions if reads else None, keys=getattr(config, "binlog_keys", None)
        )

    @property
    def facts(self) -> ServedFacts:
        return self.scanner.facts if self.scanner is not None else ServedFacts()

    # --- reconciling ----------------------------------------------------------------------

    def sync(self, globals_: MutableMapping[str, Value]) -> list[ConfigError]:
        """Read what was appended, update ``globals_`` where the binlog's verdict changed,
        and return the contradictions with the configuration not returned before."""
        changed = self.scanner.refresh() if self.scanner is not None else False
        if not changed and self._synced_once:
            return []
        self._synced_once = True
        for name, value in self.effective_config().global_variables().items():
            if name in SERVED_VARIABLES and self._written.get(name, _UNSET) != value:
                globals_[name] = value
                self._written[name] = value
        fresh = []
        for error in self.contradictions():
            key = (str(error.variable), str(error.served))
            if key not in self._reported:
                self._reported.add(key)
                fresh.append(error)
        return fresh

    def effective_config(self) -> ServerConfig:
        """The configuration with what the served bytes tell put in (they win)."""
        config = self.config
        told = self._told()
        fields = {name: told.pop(name) for name in list(told) if name in _FIELDS}
        variables = {
            name: value
            for name, value in config.variables.items()
            if name.lower() not in fields and name.lower() not in told
        }
        variables.update(told)
        return dataclasses.replace(config, variables=variables, **fields)

    def _told(self) -> dict[str, Any]:
        """The values the bytes settle, by variable (fields of ServerConfig by their name)."""
        facts = self.facts
        config = self.config
        told: dict[str, Any] = {}
        if facts.server_version is not None:
            told["version"] = facts.server_version
        if facts.checksum_alg is not None:
            told["binlog_checksum"] = _checksum_name(facts.checksum_alg)
        if facts.server_id is not None:
            told["server_id"] = facts.server_id
        if facts.foreign_server_id is not None:
            told["log_slave_updates"] = True
        if facts.row_metadata is not None:
            told["binlog_row_metadata"] = facts.row_metadata
        collation = self._served_collation()
        if collation is not None:
            told["character_set_server"] = collation.charset
            told["collation_server"] = collation.name
        if facts.largest_event:
            configured = config.configured("max_allowed_packet")
            floor = int(configured) if configured is not None else DEFAULT_MAX_ALLOWED_PACKET
            told["max_allowed_packet"] = max(floor, packet_size_for(facts.largest_event))
        return told

    def _served_collation(self) -> Collation | None:
        facts = self.facts
        if facts.server_collation_id is None:
            return None
        configured = self.config.configured_collation()
        if configured is not None and self._collation_seen(configured):
            return configured  # some session logged with it: the global may well be that
        return collation_by_id(facts.server_collation_id)

    def _collation_seen(self, configured: Collation) -> bool:
        facts = self.facts
        if self.config.configured("collation_server") is not None:
            return configured.id in facts.server_collation_ids
        served = (collation_by_id(id_) for id_ in facts.server_collation_ids)
        return any(c is not None and c.charset == configured.charset for c in served)

    # --- contradictions -------------------------------------------------------------------

    def contradictions(self) -> list[ConfigError]:
        """Every configured value the served bytes contradict."""
        facts = self.facts
        config = self.config
        evidence = facts.evidence
        found: list[ConfigError] = []

        def differ(name: str, configured: Value, served: Value, why: str = "") -> None:
            where = evidence.get(name) or evidence.get(why) or "the served binlog"
            found.append(
                ConfigError(
                    f"{name}: configured {_show(configured)}, but the served binlog says "
                    f"{_show(served)} ({where}); leave {name} out to serve the binlog's value",
                    variable=name,
                    configured=configured,
                    served=served,
                )
            )

        version = config.configured("version")
        served_version = facts.server_version
        if version is not None and served_version is not None:
            text = str(version)
            if text != served_version and not (
                len(served_version) >= FDE_VERSION_CHARS and text.startswith(served_version)
            ):
                differ("version", text, served_version)
        checksum = config.configured("binlog_checksum")
        if checksum is not None and facts.checksum_alg is not None:
            served_checksum = _checksum_name(facts.checksum_alg)
            if str(checksum).upper() != served_checksum:
                differ("binlog_checksum", str(checksum).upper(), served_checksum)
        server_id = config.configured("server_id")
        if server_id is not None and facts.server_id is not None and server_id != facts.server_id:
            differ("server_id", server_id, facts.server_id)
        if config.configured("log_slave_updates") is False and facts.foreign_server_id:
            differ("log_slave_updates", "OFF", "ON (it logged events of other servers)")
        row_metadata = config.configured("binlog_row_metadata")
        if row_metadata is not None and facts.row_metadata not in (None, row_metadata):
            differ("binlog_row_metadata", row_metadata, facts.row_metadata)
        configured_collation = config.configured_collation()
        served_collation = (
            collation_by_id(facts.server_collation_id)
            if facts.server_collation_id is not None
            else None
        )
        if (
            configured_collation is not None
            and served_collation is not None
            and not self._collation_seen(configured_collation)
        ):
            if config.configured("collation_server") is not None:
                differ("collation_server", configured_collation.name, served_collation.name)
            else:
                differ(
                    "character_set_server",
                    configured_collation.charset,
                    served_collation.charset,
                    why="collation_server",
                )
        packet = config.configured("max_allowed_packet")
        if packet is not None and facts.largest_event:
            needed = packet_size_for(facts.largest_event)
            if int(packet) < needed:
                differ("max_allowed_packet", packet, f"at least {needed}")
        return found


_SOURCE_METHODS = ("file_names", "file_size", "read")
_FIELDS = frozenset(DERIVABLE_FIELDS)
_UNSET = object()


def _checksum_name(alg: int) -> str:
    return "CRC32" if alg == ChecksumAlg.CRC32 else "NONE"


def _show(value: Value) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)
