"""How a fake master presents itself: identity, accounts, replication settings, variables."""

from __future__ import annotations

import base64
import hashlib
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from fakemaster.accounts import Account
from fakemaster.encryption import BinlogKeys
from fakemaster.protocol.charsets import charset_default, collation_by_name
from fakemaster.protocol.variables import SYSTEM_VARIABLES, Value, VarKind

MIB = 1 << 20


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """Settings of one :class:`fakemaster.server.FakeMaster`.

    Defaults describe a stock MariaDB 10.11 primary with binary logging on (ROW format, CRC32
    checksums) and character set utf8mb4, the configuration Debian packages ship.
    """

    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port
    server_id: int = 1
    # Without the "5.5.5-" prefix that the handshake adds (as MariaDB does for old clients).
    version: str = "10.11.19-MariaDB-log"
    version_comment: str = "mariadb.org binary distribution"
    # The account replicas log in with: an admin (ALL PRIVILEGES WITH GRANT OPTION) when it is
    # root, otherwise a replication account (REPLICATION SLAVE, REPLICATION CLIENT).
    user: str = "root"
    password: str = ""
    # More replication accounts: user name -> password.
    extra_users: Mapping[str, str] = field(default_factory=dict)
    # Accounts with any other grants; one named like `user` or an `extra_users` entry wins.
    accounts: tuple[Account, ...] = ()
    binlog_checksum: str = "CRC32"
    binlog_basename: str = "mysql-bin"
    binlog_format: str = "ROW"
    gtid_domain_id: int = 0
    gtid_strict_mode: bool = False
    semi_sync_enabled: bool = False
    semi_sync_timeout_ms: int = 10000
    # Heartbeat period (ns) for replicas that never set @master_heartbeat_period; 0 = none, as a
    # real primary.
    default_heartbeat_period_ns: int = 0
    character_set_server: str = "utf8mb4"
    collation_server: str = "utf8mb4_general_ci"
    max_allowed_packet: int = 16 * MIB
    hostname: str = "fakemaster"
    datadir: str = "/var/lib/mysql/"
    databases: tuple[str, ...] = ("information_schema", "mysql", "performance_schema", "sys")
    # Overrides of global system variables by name (values typed as the variable's kind).
    variables: Mapping[str, Value] = field(default_factory=dict)
    # True: statements the fake master does not know get the ERR a real server would give;
    # False: they get an OK (for tools that send statements nobody cares to emulate).
    strict_queries: bool = True
    first_thread_id: int = 1
    # Server-side TLS: when set, CLIENT_SSL is advertised and SSL requests are honoured.
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)
    # MariaDB answers MySQL's COM_BINLOG_DUMP_GTID with "Unknown command"; True hands it to the
    # dump stream instead (for MySQL-flavoured clients).
    mysql_gtid_dump: bool = False
    # Seconds a client may take to log in (a real server's connect_timeout).
    handshake_timeout: float = 10.0
    # Bytes queued for one client before the server waits for it to drain.
    write_buffer_high_water: int = 1 * MIB
    # The keys of encrypted binlog files (encrypt_binlog=ON): with them dumps send such files
    # decrypted, as a primary whose key plugin has the keys; without them such a dump fails.
    binlog_keys: BinlogKeys | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.binlog_checksum.upper() not in ("NONE", "CRC32"):
            raise ValueError(f"binlog_checksum must be NONE or CRC32, not {self.binlog_checksum!r}")
        if charset_default(self.character_set_server) is None:
            raise ValueError(f"unknown character set {self.character_set_server!r}")
        collation = collation_by_name(self.collation_server)
        if collation is None:
            raise ValueError(f"unknown collation {self.collation_server!r}")
        for name in self.variables:
            if name.lower() not in SYSTEM_VARIABLES:
                raise ValueError(f"unknown system variable {name!r}")

    @property
    def handshake_version(self) -> str:
        return "5.5.5-" + self.version

    @property
    def server_collation_id(self) -> int:
        collation = collation_by_name(self.collation_server)
        assert collation is not None  # checked in __post_init__
        return collation.id

    def all_accounts(self) -> dict[str, Account]:
        """Every account that may log in, by user name."""
        table = {
            user: Account.replication(user, password) for user, password in self.extra_users.items()
        }
        make = Account.admin if self.user == "root" else Account.replication
        table[self.user] = make(self.user, self.password)
        table.update((account.user, account) for account in self.accounts)
        return table

    def log_bin_basename(self) -> str:
        return self.datadir.rstrip("/") + "/" + self.binlog_basename

    def server_uid(self) -> str:
        """A stable stand-in for MariaDB's ``server_uid`` (base64 of a SHA1)."""
        seed = f"{self.hostname}:{self.server_id}:{self.port}".encode()
        return base64.b64encode(hashlib.sha1(seed).digest()).decode()

    def global_variables(self, port: int | None = None) -> dict[str, Value]:
        """Initial global values of every known system variable."""
        values: dict[str, Value] = {name: var.default for name, var in SYSTEM_VARIABLES.items()}
        server_charset = charset_default(self.character_set_server)
        assert server_charset is not None
        derived: dict[str, Value] = {
            "version": self.version,
            "version_comment": self.version_comment,
            "server_id": self.server_id,
            "binlog_checksum": self.binlog_checksum.upper(),
            "binlog_format": self.binlog_format.upper(),
            "gtid_domain_id": self.gtid_domain_id,
            "gtid_strict_mode": self.gtid_strict_mode,
            "rpl_semi_sync_master_enabled": self.semi_sync_enabled,
            "rpl_semi_sync_master_timeout": self.semi_sync_timeout_ms,
            "max_allowed_packet": self.max_allowed_packet,
            "hostname": self.hostname,
            "datadir": self.datadir,
            "log_bin_basename": self.log_bin_basename(),
            "log_bin_index": self.log_bin_basename() + ".index",
            "server_uid": self.server_uid(),
            "port": port if port is not None else self.port,
            "report_port": port if port is not None else self.port,
            "have_ssl": "YES" if self.ssl_context is not None else "DISABLED",
            "character_set_server": server_charset.charset,
            "collation_server": self.collation_server.lower(),
            "character_set_database": server_charset.charset,
            "collation_database": self.collation_server.lower(),
            "character_set_client": server_charset.charset,
            "character_set_connection": server_charset.charset,
            "character_set_results": server_charset.charset,
            "collation_connection": self.collation_server.lower(),
        }
        values.update(derived)
        for name, value in self.variables.items():
            var = SYSTEM_VARIABLES[name.lower()]
            values[var.name] = _coerce(var.kind, value)
        return values


def _coerce(kind: VarKind, value: Value) -> Value:
    if value is None:
        return None
    if kind is VarKind.BOOL:
        if isinstance(value, str):
            return value.upper() in ("ON", "1", "TRUE")
        return bool(value)
    if kind in (VarKind.UINT, VarKind.INT):
        return int(value)
    if kind is VarKind.DOUBLE:
        return float(value)
    return str(value)
