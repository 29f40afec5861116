"""MariaDB's error numbers, by the names MariaDB gives them (include/mysqld_error.h).

Every error number fakemaster sends, reads or compares is named here, once; the texts and
SQLSTATEs the server answers with live beside the code that builds the ERR packet
(:data:`fakemaster.protocol.resultset.ERRORS`).

Plain module constants rather than an IntEnum: the names are MariaDB's own ``#define``s,
verbatim, so a search for one finds both this code and MariaDB's source (an enum would read
``ErrorCode.ER_PARSE_ERROR`` or drop MariaDB's prefix); and an error number travels as a plain
int (ERR packets, ``SqlError.errno``, a real primary's answer) where a number MariaDB has and
this module does not name must still fit.
"""

from __future__ import annotations

__all__ = [
    "ER_ACCESS_DENIED_ERROR",
    "ER_BAD_DB_ERROR",
    "ER_BAD_FIELD_ERROR",
    "ER_CANNOT_USER",
    "ER_CANT_CHANGE_TX_CHARACTERISTICS",
    "ER_CANT_LOCK_LOG_TABLE",
    "ER_COLLATION_CHARSET_MISMATCH",
    "ER_CONNECTION_KILLED",
    "ER_CON_COUNT_ERROR",
    "ER_DBACCESS_DENIED_ERROR",
    "ER_DUPLICATE_GTID_DOMAIN",
    "ER_EMPTY_QUERY",
    "ER_GLOBAL_VARIABLE",
    "ER_HANDSHAKE_ERROR",
    "ER_ILLEGAL_VALUE_FOR_TYPE",
    "ER_INCORRECT_GLOBAL_LOCAL_VAR",
    "ER_INCORRECT_GTID_STATE",
    "ER_KILL_DENIED_ERROR",
    "ER_LOCAL_VARIABLE",
    "ER_MALFORMED_PACKET",
    "ER_MASTER_FATAL_ERROR_READING_BINLOG",
    "ER_MASTER_INFO",
    "ER_NET_ERROR_ON_WRITE",
    "ER_NET_PACKETS_OUT_OF_ORDER",
    "ER_NET_PACKET_TOO_LARGE",
    "ER_NET_READ_ERROR",
    "ER_NET_READ_INTERRUPTED",
    "ER_NET_WRITE_INTERRUPTED",
    "ER_NONEXISTING_GRANT",
    "ER_NONUNIQ_TABLE",
    "ER_NOT_SUPPORTED_AUTH_MODE",
    "ER_NOT_SUPPORTED_YET",
    "ER_NO_DB_ERROR",
    "ER_KEY_DOES_NOT_EXISTS",
    "ER_NO_SUCH_TABLE",
    "ER_NO_SUCH_THREAD",
    "ER_NO_TABLES_USED",
    "ER_PARSE_ERROR",
    "ER_PASSWORD_NO_MATCH",
    "ER_QUERY_INTERRUPTED",
    "ER_SERVER_SHUTDOWN",
    "ER_SLAVE_FATAL_ERROR",
    "ER_SLAVE_SAME_ID",
    "ER_SPECIFIC_ACCESS_DENIED_ERROR",
    "ER_SP_DOES_NOT_EXIST",
    "ER_STMT_HAS_NO_OPEN_CURSOR",
    "ER_TABLEACCESS_DENIED_ERROR",
    "ER_TABLE_NOT_LOCKED",
    "ER_TOO_MANY_USER_CONNECTIONS",
    "ER_UNKNOWN_CHARACTER_SET",
    "ER_UNKNOWN_COLLATION",
    "ER_UNKNOWN_COM_ERROR",
    "ER_UNKNOWN_ERROR",
    "ER_UNKNOWN_STMT_HANDLER",
    "ER_UNKNOWN_STORAGE_ENGINE",
    "ER_UNKNOWN_STRUCTURED_VARIABLE",
    "ER_UNKNOWN_SYSTEM_VARIABLE",
    "ER_UNKNOWN_TABLE",
    "ER_UNKNOWN_TIME_ZONE",
    "ER_USER_CREATE_EXISTS",
    "ER_USER_DROP_EXISTS",
    "ER_VARIABLE_IS_READONLY",
    "ER_WRONG_ARGUMENTS",
    "ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT",
    "ER_WRONG_DB_NAME",
    "ER_WRONG_TABLE_NAME",
    "ER_WRONG_TYPE_FOR_VAR",
    "ER_WRONG_USAGE",
    "ER_WRONG_VALUE_FOR_VAR",
    "ER_ABORTING_CONNECTION",
]

# --- connecting and logging in ------------------------------------------------------------
ER_CON_COUNT_ERROR = 1040
ER_HANDSHAKE_ERROR = 1043
ER_DBACCESS_DENIED_ERROR = 1044
ER_NONEXISTING_GRANT = 1141  # "There is no such grant defined for user 'u' on host 'h'"
ER_ACCESS_DENIED_ERROR = 1045
ER_NOT_SUPPORTED_AUTH_MODE = 1251
# --- accounts: CREATE USER, DROP USER, GRANT, REVOKE ---------------------------------------
ER_PASSWORD_NO_MATCH = 1133  # GRANT to an account that does not exist
ER_WRONG_USAGE = 1221  # "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES"
ER_CANNOT_USER = 1396  # "Operation CREATE USER failed for 'u'@'h'"
ER_USER_CREATE_EXISTS = 1973  # the note of CREATE USER IF NOT EXISTS
ER_USER_DROP_EXISTS = 1974  # the note of DROP USER IF EXISTS
ER_TOO_MANY_USER_CONNECTIONS = 1203

# --- the connection ending: shutdown, KILL, network ---------------------------------------
ER_SERVER_SHUTDOWN = 1053
ER_NO_SUCH_THREAD = 1094
ER_KILL_DENIED_ERROR = 1095
ER_ABORTING_CONNECTION = 1152
ER_NET_PACKET_TOO_LARGE = 1153
ER_NET_PACKETS_OUT_OF_ORDER = 1156
ER_NET_READ_ERROR = 1158
ER_NET_READ_INTERRUPTED = 1159
ER_NET_ERROR_ON_WRITE = 1160
ER_NET_WRITE_INTERRUPTED = 1161
ER_QUERY_INTERRUPTED = 1317
ER_CONNECTION_KILLED = 1927

# --- commands and statements --------------------------------------------------------------
ER_UNKNOWN_COM_ERROR = 1047
ER_PARSE_ERROR = 1064
ER_EMPTY_QUERY = 1065
ER_UNKNOWN_ERROR = 1105
ER_NOT_SUPPORTED_YET = 1235
ER_ILLEGAL_VALUE_FOR_TYPE = 1367
ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582
ER_SP_DOES_NOT_EXIST = 1305  # "FUNCTION f does not exist", "SAVEPOINT s does not exist"

# --- databases, tables, columns -----------------------------------------------------------
ER_NO_DB_ERROR = 1046
ER_BAD_DB_ERROR = 1049
ER_BAD_FIELD_ERROR = 1054
ER_NONUNIQ_TABLE = 1066
ER_UNKNOWN_STORAGE_ENGINE = 1286
ER_KEY_DOES_NOT_EXISTS = 1176  # an index hint naming no key of the table
ER_NO_TABLES_USED = 1096
ER_TABLE_NOT_LOCKED = 1100
ER_WRONG_DB_NAME = 1102
ER_WRONG_TABLE_NAME = 1103
ER_UNKNOWN_TABLE = 1109
ER_TABLEACCESS_DENIED_ERROR = 1142
ER_NO_SUCH_TABLE = 1146
ER_CANT_LOCK_LOG_TABLE = 1556
ER_MASTER_INFO = 1617  # "There is no master connection 'name'"

# --- system variables, character sets, transactions ---------------------------------------
ER_UNKNOWN_CHARACTER_SET = 1115
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_SPECIFIC_ACCESS_DENIED_ERROR = 1227
ER_LOCAL_VARIABLE = 1228
ER_GLOBAL_VARIABLE = 1229
ER_WRONG_VALUE_FOR_VAR = 1231
ER_WRONG_TYPE_FOR_VAR = 1232
ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238
ER_COLLATION_CHARSET_MISMATCH = 1253
ER_UNKNOWN_COLLATION = 1273
ER_UNKNOWN_TIME_ZONE = 1298
ER_CANT_CHANGE_TX_CHARACTERISTICS = 1568
ER_VARIABLE_IS_READONLY = 1621
ER_UNKNOWN_STRUCTURED_VARIABLE = 4081

# --- prepared statements ------------------------------------------------------------------
ER_WRONG_ARGUMENTS = 1210
ER_UNKNOWN_STMT_HANDLER = 1243
ER_STMT_HAS_NO_OPEN_CURSOR = 1421
ER_MALFORMED_PACKET = 1835

# --- replication --------------------------------------------------------------------------
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
ER_SLAVE_FATAL_ERROR = 1593
ER_INCORRECT_GTID_STATE = 1941
ER_DUPLICATE_GTID_DOMAIN = 1943
ER_SLAVE_SAME_ID = 4052
