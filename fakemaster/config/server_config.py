"""How a fake master presents itself: identity, accounts, replication settings, variables."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fakemaster.config.accounts import Account
from fakemaster.config.variables import SYSTEM_VARIABLES, Value, setting_value
from fakemaster.protocol.charsets import Collation, charset_default, collation_by_name
from fakemaster.vocabulary.errors import ConfigError

if TYPE_CHECKING:  # only annotations: the configuration loads neither ssl nor the event classes
    import ssl

    from fakemaster.vocabulary.encryption import BinlogKeys

__all__ = [
    "DEFAULT_BINLOG_CHECKSUM",
    "DEFAULT_COLLATION_SERVER",
    "DEFAULT_MAX_ALLOWED_PACKET",
    "DEFAULT_MAX_LOGIN_PACKET",
    "DEFAULT_SERVER_ID",
    "DEFAULT_VERSION",
    "DERIVABLE_FIELDS",
    "SERVER_CHARSET_VARIABLES",
    "ServerConfig",
    "charset_variables",
]

MIB = 1 << 20

# What a stock MariaDB 10.11 primary as Debian packages it says when neither the configuration
# nor the served binlog tells.
DEFAULT_SERVER_ID = 1
DEFAULT_VERSION = "10.11.19-MariaDB-log"
DEFAULT_BINLOG_CHECKSUM = "CRC32"
DEFAULT_COLLATION_SERVER = "utf8mb4_general_ci"
DEFAULT_MAX_ALLOWED_PACKET = 16 * MIB
DEFAULT_MAX_LOGIN_PACKET = 64 * 1024

# The fields that describe what the served binlog can tell (fakemaster.config.served_variables): None
# derives them from the binlog, a value is checked against it.
DERIVABLE_FIELDS = (
    "server_id",
    "version",
    "binlog_checksum",
    "character_set_server",
    "collation_server",
    "max_allowed_packet",
)


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """Settings of one :class:`fakemaster.server.master.FakeMaster`.

    Defaults describe a stock MariaDB 10.11 primary with binary logging on (ROW format, CRC32
    checksums) and character set utf8mb4, the configuration Debian packages ship.

    The fields of :data:`DERIVABLE_FIELDS` (and ``variables`` entries such as
    ``binlog_row_metadata`` or ``log_slave_updates``) left unset are what the served binlog
    says, as a real primary's variables agree with the binlog it wrote; set, they must agree
    with it (``FakeMaster.start`` raises ConfigError otherwise) and stand where the binlog
    cannot tell.
    """

    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port
    # Derived (see above): the newest FORMAT_DESCRIPTION's server id.
    server_id: int | None = None
    # Derived: the newest FORMAT_DESCRIPTION's server version. Without the "5.5.5-" prefix that
    # the handshake adds (as MariaDB does for old clients).
    version: str | None = None
    version_comment: str = "mariadb.org binary distribution"
    # The account replicas log in with: an admin (ALL PRIVILEGES WITH GRANT OPTION) when it is
    # root, otherwise a replication account (REPLICATION SLAVE, REPLICATION CLIENT).
    user: str = "root"
    password: str = ""
    # More replication accounts: user name -> password.
    extra_users: Mapping[str, str] = field(default_factory=dict)
    # Accounts with any other grants; one named like `user` or an `extra_users` entry wins.
    accounts: tuple[Account, ...] = ()
    # Derived: the newest FORMAT_DESCRIPTION's checksum algorithm (NONE or CRC32).
    binlog_checksum: str | None = None
    binlog_basename: str = "mysql-bin"
    binlog_format: str = "ROW"
    gtid_domain_id: int = 0
    gtid_strict_mode: bool = False
    semi_sync_enabled: bool = False
    semi_sync_timeout_ms: int = 10000
    # Heartbeat period (ns) for replicas that never set @master_heartbeat_period; 0 = none, as a
    # real primary.
    default_heartbeat_period_ns: int = 0
    # Derived: the server collation QUERY events were logged with.
    character_set_server: str | None = None
    collation_server: str | None = None
    # Derived: at least what the largest served event needs.
    max_allowed_packet: int | None = None
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
    # Seconds a client may take to log in, counted from the accept (a real server's
    # connect_timeout, which MariaDB applies per read: a total bound stops a client trickling
    # its handshake response one byte at a time).
    handshake_timeout: float = 10.0
    # Largest packet a client may send before it logged in (ERR 1153 and a close above it).
    # MariaDB 10.11 bounds it only by max_allowed_packet; a smaller bound keeps clients that
    # never log in from holding megabytes each. Real handshake responses take a few hundred
    # bytes (connection attributes included).
    max_login_packet: int = DEFAULT_MAX_LOGIN_PACKET
    # Bytes queued for one client before the server waits for it to drain.
    write_buffer_high_water: int = 1 * MIB
    # Disk the frame cache may use: binlog files framed once as dump packets, sent to every
    # plain replica with sendfile (fakemaster.server.frame_cache). 0 turns it off.
    frame_cache_bytes: int = 4 * 1024 * MIB
    # Where its (unnamed) files go; None: the system's temporary directory.
    frame_cache_dir: str | None = None
    # How far below the event loop's thread the threads that send dumps and frame files run
    # (a Linux nice increment, 0-19; 0 keeps them level; fakemaster.server.sender.
    # lower_thread_priority). Level by default: lowered ones lost their share of a loaded
    # machine (15x MariaDB's dump time with 4 CPU hogs); logins stay prompt through the loop's
    # gate instead (fakemaster.server.loop_gate).
    dump_thread_niceness: int = 0
    # The keys of encrypted binlog files (encrypt_binlog=ON): with them dumps send such files
    # decrypted, as a primary whose key plugin has the keys; without them such a dump fails.
    binlog_keys: BinlogKeys | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.dump_thread_niceness <= 19:
            raise ConfigError(
                f"dump_thread_niceness must be 0-19, not {self.dump_thread_niceness}",
                variable="dump_thread_niceness",
                configured=self.dump_thread_niceness,
            )
        if self.binlog_checksum is not None and self.binlog_checksum.upper() not in (
            "NONE",
            "CRC32",
        ):
            raise ConfigError(
                f"binlog_checksum must be NONE or CRC32, not {self.binlog_checksum!r}",
                variable="binlog_checksum",
                configured=self.binlog_checksum,
            )
        for name, value in self.variables.items():
            var = SYSTEM_VARIABLES.get(name.lower())
            if var is None:
                raise ConfigError(f"unknown system variable {name!r}", variable=name)
            try:
                setting_value(var, value)
            except ValueError as exc:
                raise ConfigError(str(exc), variable=var.name, configured=value) from None
        for name in DERIVABLE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                try:
                    setting_value(SYSTEM_VARIABLES[name], value)
                except ValueError as exc:
                    raise ConfigError(str(exc), variable=name, configured=value) from None
        self.configured_collation()  # a collation of another character set fails here

    def configured(self, name: str) -> Value:
        """The value the configuration gives the system variable ``name`` (a ``variables``
        entry, else a field of :data:`DERIVABLE_FIELDS`), typed as the server keeps it; None
        when it leaves the variable to the served binlog or to MariaDB's default."""
        var = SYSTEM_VARIABLES[name]
        for key, value in self.variables.items():
            if key.lower() == name:
                return setting_value(var, value)
        if name in DERIVABLE_FIELDS:
            return setting_value(var, getattr(self, name))
        return None

    def configured_collation(self) -> Collation | None:
        """The server collation the configuration gives (collation_server, else the default
        collation of character_set_server), or None."""
        charset = self.configured("character_set_server")
        collation_name = self.configured("collation_server")
        if collation_name is None:
            return charset_default(str(charset)) if charset is not None else None
        collation = collation_by_name(str(collation_name))
        assert collation is not None  # checked by setting_value
        if charset is not None and collation.charset != charset:
            raise ConfigError(
                f"COLLATION '{collation.name}' is not valid for CHARACTER SET '{charset}'",
                variable="collation_server",
                configured=collation.name,
            )
        return collation

    def server_collation(self) -> Collation:
        """The configured server collation, else MariaDB's (Debian's) default."""
        collation = self.configured_collation() or collation_by_name(DEFAULT_COLLATION_SERVER)
        assert collation is not None
        return collation

    @property
    def handshake_version(self) -> str:
        return "5.5.5-" + (self.version or DEFAULT_VERSION)

    @property
    def server_collation_id(self) -> int:
        return self.server_collation().id

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
        seed = f"{self.hostname}:{self.server_id or DEFAULT_SERVER_ID}:{self.port}".encode()
        return base64.b64encode(hashlib.sha1(seed).digest()).decode()

    def global_variables(self, port: int | None = None) -> dict[str, Value]:
        """Initial global values of every known system variable: configured, else MariaDB's
        defaults (the served binlog's values replace them: fakemaster.config.served_variables)."""
        values: dict[str, Value] = {name: var.default for name, var in SYSTEM_VARIABLES.items()}
        checksum = self.binlog_checksum or DEFAULT_BINLOG_CHECKSUM
        max_allowed_packet = self.max_allowed_packet
        derived: dict[str, Value] = {
            "version": self.version or DEFAULT_VERSION,
            "version_comment": self.version_comment,
            "server_id": self.server_id if self.server_id is not None else DEFAULT_SERVER_ID,
            "binlog_checksum": checksum.upper(),
            "binlog_format": self.binlog_format.upper(),
            "gtid_domain_id": self.gtid_domain_id,
            "gtid_strict_mode": self.gtid_strict_mode,
            "rpl_semi_sync_master_enabled": self.semi_sync_enabled,
            "rpl_semi_sync_master_timeout": self.semi_sync_timeout_ms,
            "max_allowed_packet": (
                max_allowed_packet if max_allowed_packet is not None else DEFAULT_MAX_ALLOWED_PACKET
            ),
            "hostname": self.hostname,
            "datadir": self.datadir,
            "log_bin_basename": self.log_bin_basename(),
            "log_bin_index": self.log_bin_basename() + ".index",
            "server_uid": self.server_uid(),
            "port": port if port is not None else self.port,
            "report_port": port if port is not None else self.port,
            "have_ssl": "YES" if self.ssl_context is not None else "DISABLED",
            **charset_variables(self.server_collation()),
        }
        values.update(derived)
        for name, value in self.variables.items():
            var = SYSTEM_VARIABLES[name.lower()]
            values[var.name] = setting_value(var, value)
        return values


# The character set variables that follow the server's collation: its databases, and clients
# that do not say theirs, use it too.
SERVER_CHARSET_VARIABLES = (
    "character_set_server",
    "collation_server",
    "character_set_database",
    "collation_database",
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
)


def charset_variables(server: Collation) -> dict[str, Value]:
    """The values of :data:`SERVER_CHARSET_VARIABLES` for a server collation."""
    return {
        name: server.name if name.startswith("collation_") else server.charset
        for name in SERVER_CHARSET_VARIABLES
    }
