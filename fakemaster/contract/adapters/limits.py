"""The known limits of each real client in the compatibility matrix (docs/compatibility.md):
client id -> case pattern (``fnmatch``, as ``check --only``) -> why the client fails it, with
where that is documented or how it was reproduced. A failing case that matches is a *known
limit* in the matrix; any other failure is *unexpected*.

A limit is written down only once it has been seen failing for that reason; a client author
reading the matrix should be able to check each one.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["KNOWN_LIMITS", "known_limit"]

_PMR = (
    "python-mysql-replication 1.0.17 (docs/contract.md, 'Example clients'; reproduced by the"
    " cases): "
)
_SCHEMA = (
    " from INFORMATION_SCHEMA.COLUMNS over its SQL connection; a fake master serves no rows"
    " there for a scenario's tables, so the client stops at that table's first TABLE_MAP"
    " (reproduced: the case's stderr, 'Insufficient permissions to access [db.t], or the table"
    " has been dropped')"
)

KNOWN_LIMITS: Mapping[str, Mapping[str, str]] = {
    "fakemaster-client": {},
    "python-mysql-replication": {
        "compressed/*": _PMR + "skips MariaDB's *_ROWS_COMPRESSED events without an error",
        "no_log_metadata/*": _PMR
        + "without the TABLE_MAP's charset metadata it decodes every string as UTF-8"
        " (UnicodeDecodeError on a latin1 'é')",
        "settings_changes/*": _PMR
        + "reads binlog_checksum once at connect, not from each file's FORMAT_DESCRIPTION",
        "xa/*": _PMR + "hands over XA PREPARE / XA COMMIT without transaction semantics",
        "ddl_mid_stream/*": _PMR + "hands over DDL as query text only (tables not followed)",
    },
    "asyncmy": {
        "every_type/*": "asyncmy 0.2.18 misreads a negative TIME (-838:59:59 as -837:00:01) and"
        " an empty SET as NULL (reproduced: every_type/clean)",
        "compressed/*": "asyncmy 0.2.18 implements none of MariaDB's *_ROWS_COMPRESSED events"
        " (asyncmy/replication/packets.py's event map): they are skipped as not implemented",
        "settings_changes/*": "asyncmy 0.2.18 reads binlog_checksum once at connect, not from"
        " each file's FORMAT_DESCRIPTION: in the file written with binlog_checksum=NONE it cuts"
        " 4 bytes off each event (the ROTATE's file name 'mysql-bin.00'; then ERR 1236)",
        "ddl_mid_stream/*": "the adapter hands asyncmy the snapshot's columns and does not follow"
        " DDL: a table created mid-stream has no columns, its rows are lost",
    },
    "mariadb-replica": {
        "compressed/corrupt-crc": "a 10.11 replica stops its IO thread on a damaged event"
        " (1595) and does not reconnect (docs/faults.md)",
    },
    "zongji": {
        "no_log_metadata/*": "@vlasky/zongji 0.9.0: without binlog_row_metadata=FULL it takes"
        " the column metadata (README, 'Table metadata source')" + _SCHEMA,
        "settings_changes/*": "@vlasky/zongji 0.9.0: once binlog_row_metadata is set to NO_LOG"
        " it takes the column metadata (README, 'Table metadata source')" + _SCHEMA,
        "ddl_mid_stream/*": "the example client (zongji_client.mjs) keeps its tables by"
        " applying row images and does not follow DDL, which ZongJi hands over as query text"
        " (its change log passes; the final tables differ after RENAME/TRUNCATE/DROP)",
    },
    "powersync-zongji": {
        "*": "@powersync/mysql-zongji 0.6.2 (a MySQL 8 fork that does not read the TABLE_MAP's"
        " optional metadata) always takes the column metadata" + _SCHEMA,
    },
    "mariadb-binlog": {
        "ddl_mid_stream/*": "the adapter maps @N to the snapshot's columns and does not follow"
        " DDL (the tool prints no column names: binlog_row_metadata=FULL is not used by its -v"
        " output)",
    },
}


def known_limit(client: str, case: str) -> str | None:
    """Why ``client`` is known to fail ``case``, or None."""
    from fnmatch import fnmatchcase

    for pattern, reason in KNOWN_LIMITS.get(client, {}).items():
        if fnmatchcase(case, pattern):
            return reason
    return None
