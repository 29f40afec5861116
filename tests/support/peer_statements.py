"""What real clients sent before a dump, as their servers' general query logs recorded them
(``../shared/reference/peer-sessions/``): one definition for the tests and benchmarks that
replay them."""

from __future__ import annotations

__all__ = ["REPLICA_BY_POSITION"]

# A MariaDB 10.11 replica's IO thread starting by file and position (replica-pos.log), up to
# its COM_BINLOG_DUMP of mysql-bin.000001 at 4.
REPLICA_BY_POSITION = (
    "SELECT UNIX_TIMESTAMP()",
    "SHOW VARIABLES LIKE 'SERVER_ID'",
    "SET @master_heartbeat_period= 1000000000",
    "SET @master_binlog_checksum= @@global.binlog_checksum",
    "SELECT @master_binlog_checksum",
    "SET @mariadb_slave_capability=4",
    "SELECT binlog_gtid_pos('mysql-bin.000001',4)",
)
