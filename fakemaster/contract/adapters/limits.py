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
_PZ = "@powersync/mysql-zongji 0.6.2 (a MySQL 8 fork: "
# How the ZongJi limits below were reproduced against a real primary: the scenario run on a
# MariaDB 10.11.19 by tests/support/mariadb_run.run_on_server, an account with check's grants,
# the same adapter pointed at it (FAKEMASTER_* set by hand): the same values or errors.
_REAL = "; reproduced against a real MariaDB 10.11.19 holding the same scenario"

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
        "every_type/cut-inside-update": "a 10.11 replica with MASTER_USE_GTID=no stops its IO"
        " thread (1595) when its connection breaks between two ROWS events of one statement:"
        " it resumes at the second, and the first event any primary sends on reconnect fails"
        " its Rows-event group check ('did not receive an expected Rows-log end-of-statement',"
        " queue_event in sql/slave.cc). Reproduced: the RST drops what the replica had not"
        " read yet; its error log shows it resuming at 425675, the second Write_rows of the"
        " first two-row INSERT (the first, at 425464, has no STMT_END_F; a 10.11 primary"
        " writes every_type's binlog the same: compare_with_server, tests/support/mariadb_run.py,"
        " finds no difference), though the fake cut in the next transaction",
    },
    "zongji": {
        "settings_changes/*": "@vlasky/zongji 0.9.0 reads @@GLOBAL.binlog_checksum once at"
        " start (index.js, _isChecksumEnabled; binlog_event.js cuts 4 bytes off every event"
        " when it was CRC32): in the file written with binlog_checksum=NONE its GTID_LIST is"
        " 'Truncated MariadbGtidList event: 16 bytes needed, 12 available'"
        + _REAL
        + " (its last file ending without a ROTATE, as the fake serves it)",
        "ddl_mid_stream/*": "the example client (zongji_client.mjs) keeps its tables by"
        " applying row images and does not follow DDL, which ZongJi hands over as query text"
        " (its change log passes; the final tables differ after RENAME/TRUNCATE/DROP)",
    },
    "powersync-zongji": {
        "every_type/*": _PZ + "lib/common.js) decodes a DECIMAL with parseFloat"
        " (99999999999999999999999999999999999.999... comes back as 1e+35) and a CHAR/VARCHAR"
        " as UTF-8 whatever its character set (only BLOB/TEXT go through iconv): latin1"
        " 'é€ÿ' comes back as '\ufffd\ufffd'" + _REAL,
        "generated/1": _PZ + "lib/common.js, parseNewDecimal) decodes a DECIMAL with"
        " parseFloat: DECIMAL(9,2) -9159522.20 comes back as -9159522.2",
        "no_log_metadata/*": _PZ + "lib/common.js) decodes a CHAR/VARCHAR as UTF-8 whatever"
        " its character set: latin1 'café' comes back as 'caf\ufffd'" + _REAL,
        "compressed/*": _PZ + "lib/code_map.js) knows none of MariaDB's *_ROWS_COMPRESSED"
        " events: they are skipped, their rows lost" + _REAL + " (settings_changes' compressed"
        " INSERT missing)",
        "settings_changes/*": _PZ + "index.js) reads @@GLOBAL.binlog_checksum once at start:"
        " in the file written with binlog_checksum=NONE it cuts 4 bytes off each event (the"
        " ROTATE's file name 'mysql-bin.00'; then ERR 1236 'Could not find first log file"
        " name')" + _REAL + " (its last file ending without a ROTATE, as the fake serves it)",
        "xa/*": _PZ + "it sets no @mariadb_slave_capability) gets each GTID rewritten as a"
        " BEGIN, which an XA GTID cannot be: the primary ends the dump with ERR 1236 'Failed"
        " to replace GTID event with backwards-compatible event: corrupt event.'"
        + _REAL
        + " (the same error at the XA PREPARE's GTID)",
        "ddl_mid_stream/*": _PZ + "index.js) reads a TABLE_MAP's columns from"
        " INFORMATION_SCHEMA.COLUMNS as they are now, not as they were: a table since dropped"
        " stops it ('Insufficient permissions to access [ddl.tmp], or the table has been"
        " dropped')" + _REAL,
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
