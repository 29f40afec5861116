"""The status variables a fake master shows (SHOW [GLOBAL|SESSION] STATUS), in MariaDB 10.11's
order, and which statement counts in which ``Com_*`` counter.

Tools compute with them (pt-mysql-summary: the query cache's use, the key cache's, InnoDB's
buffer pool, whether LOCK TABLES, XA or prepared statements were ever used, and the rate of every
counter between two reads). Each is either counted by the fake as the server counts it (every
``Com_*`` by the statements it answers, ``Questions``, ``Connections``, ``Threads_*`` ...: see
:func:`com_variable` and :mod:`~fakemaster.sql.answers.show`) or, where the fake has nothing to
count (it has no query cache, key cache or buffer pool), the value a stock MariaDB 10.11.19
shows right after it started (128 MiB buffer pool, 128 MiB key buffer, nothing run yet:
:data:`IDLE_VALUES`). The other five hundred variables of a real server (per-engine and
per-handler internals) are not shown.
"""

from __future__ import annotations

from fakemaster.vocabulary.errcodes import ER_PARSE_ERROR, ER_UNKNOWN_STORAGE_ENGINE

__all__ = ["GLOBAL_ONLY", "IDLE_VALUES", "PARSE_TIME_ERRORS", "STATUS_ORDER", "com_variable"]

# Every variable shown, in the order 10.11.19's SHOW GLOBAL STATUS lists them (not quite
# alphabetical: the server's own table order).
STATUS_ORDER: tuple[str, ...] = tuple(
    """
    Aborted_clients Aborted_connects Aborted_connects_preauth Binlog_snapshot_file
    Binlog_snapshot_position Com_admin_commands Com_alter_db Com_alter_db_upgrade
    Com_alter_event Com_alter_function Com_alter_procedure Com_alter_server Com_alter_sequence
    Com_alter_table Com_alter_user Com_analyze Com_assign_to_keycache Com_backup Com_backup_lock
    Com_begin Com_binlog Com_call_procedure Com_change_db Com_change_master Com_check
    Com_checksum Com_commit Com_compound_sql Com_create_db Com_create_event Com_create_function
    Com_create_index Com_create_package Com_create_package_body Com_create_procedure
    Com_create_role Com_create_sequence Com_create_server Com_create_table
    Com_create_temporary_table Com_create_trigger Com_create_udf Com_create_user Com_create_view
    Com_dealloc_sql Com_delete Com_delete_multi Com_do Com_drop_db Com_drop_event
    Com_drop_function Com_drop_index Com_drop_procedure Com_drop_package Com_drop_package_body
    Com_drop_role Com_drop_server Com_drop_sequence Com_drop_table Com_drop_temporary_table
    Com_drop_trigger Com_drop_user Com_drop_view Com_empty_query Com_execute_immediate
    Com_execute_sql Com_flush Com_get_diagnostics Com_grant Com_grant_role Com_ha_close
    Com_ha_open Com_ha_read Com_help Com_insert Com_insert_select Com_install_plugin Com_kill
    Com_load Com_lock_tables Com_optimize Com_preload_keys Com_prepare_sql Com_purge
    Com_purge_before_date Com_release_savepoint Com_rename_table Com_rename_user Com_repair
    Com_replace Com_replace_select Com_reset Com_resignal Com_revoke Com_revoke_all
    Com_revoke_role Com_rollback Com_rollback_to_savepoint Com_savepoint Com_select
    Com_set_option Com_show_authors Com_show_binlog_events Com_show_binlogs Com_show_charsets
    Com_show_collations Com_show_contributors Com_show_create_db Com_show_create_event
    Com_show_create_func Com_show_create_package Com_show_create_package_body
    Com_show_create_proc Com_show_create_table Com_show_create_trigger Com_show_create_user
    Com_show_databases Com_show_engine_logs Com_show_engine_mutex Com_show_engine_status
    Com_show_errors Com_show_events Com_show_explain Com_show_analyze Com_show_fields
    Com_show_function_status Com_show_generic Com_show_grants Com_show_keys
    Com_show_binlog_status Com_show_open_tables Com_show_package_status
    Com_show_package_body_status Com_show_plugins Com_show_privileges Com_show_procedure_status
    Com_show_processlist Com_show_profile Com_show_profiles Com_show_relaylog_events
    Com_show_slave_hosts Com_show_slave_status Com_show_status Com_show_storage_engines
    Com_show_table_status Com_show_tables Com_show_triggers Com_show_variables Com_show_warnings
    Com_shutdown Com_signal Com_start_all_slaves Com_start_slave Com_stmt_close Com_stmt_execute
    Com_stmt_fetch Com_stmt_prepare Com_stmt_reprepare Com_stmt_reset Com_stmt_send_long_data
    Com_stop_all_slaves Com_stop_slave Com_truncate Com_uninstall_plugin Com_unlock_tables
    Com_update Com_update_multi Com_xa_commit Com_xa_end Com_xa_prepare Com_xa_recover
    Com_xa_rollback Com_xa_start Compression Connections Delayed_errors Delayed_insert_threads
    Delayed_writes Innodb_buffer_pool_pages_data Innodb_buffer_pool_pages_dirty
    Innodb_buffer_pool_pages_flushed Innodb_buffer_pool_pages_free
    Innodb_buffer_pool_pages_made_not_young Innodb_buffer_pool_pages_made_young
    Innodb_buffer_pool_pages_misc Innodb_buffer_pool_pages_old Innodb_buffer_pool_pages_total
    Innodb_buffer_pool_pages_lru_flushed Innodb_buffer_pool_pages_lru_freed
    Innodb_buffer_pool_pages_split Innodb_page_size Key_blocks_not_flushed Key_blocks_unused
    Key_blocks_used Key_blocks_warm Key_read_requests Key_reads Key_write_requests Key_writes
    Max_used_connections Open_tables Prepared_stmt_count Qcache_free_blocks Qcache_free_memory
    Qcache_hits Qcache_inserts Qcache_lowmem_prunes Qcache_not_cached Qcache_queries_in_cache
    Qcache_total_blocks Queries Questions Rpl_semi_sync_master_clients
    Rpl_semi_sync_master_status Slaves_connected Ssl_accepts Threads_connected Threads_running
    Uptime Uptime_since_flush_status
    """.split()
)

# What a stock 10.11.19 shows right after start where the fake has nothing to count.
IDLE_VALUES: dict[str, str] = {
    "Aborted_clients": "0",
    "Aborted_connects": "0",
    "Aborted_connects_preauth": "0",
    "Delayed_errors": "0",
    "Delayed_insert_threads": "0",
    "Delayed_writes": "0",
    "Innodb_buffer_pool_pages_data": "296",
    "Innodb_buffer_pool_pages_dirty": "0",
    "Innodb_buffer_pool_pages_flushed": "0",
    "Innodb_buffer_pool_pages_free": "7816",
    "Innodb_buffer_pool_pages_made_not_young": "0",
    "Innodb_buffer_pool_pages_made_young": "0",
    "Innodb_buffer_pool_pages_misc": "0",
    "Innodb_buffer_pool_pages_old": "0",
    "Innodb_buffer_pool_pages_total": "8112",
    "Innodb_buffer_pool_pages_lru_flushed": "0",
    "Innodb_buffer_pool_pages_lru_freed": "0",
    "Innodb_buffer_pool_pages_split": "0",
    "Innodb_page_size": "16384",
    "Key_blocks_not_flushed": "0",
    "Key_blocks_unused": "107163",
    "Key_blocks_used": "0",
    "Key_blocks_warm": "0",
    "Key_read_requests": "0",
    "Key_reads": "0",
    "Key_write_requests": "0",
    "Key_writes": "0",
    "Open_tables": "10",
    "Prepared_stmt_count": "0",
    "Qcache_free_blocks": "1",
    "Qcache_free_memory": "1031272",
    "Qcache_hits": "0",
    "Qcache_inserts": "0",
    "Qcache_lowmem_prunes": "0",
    "Qcache_not_cached": "0",
    "Qcache_queries_in_cache": "0",
    "Qcache_total_blocks": "1",
    "Ssl_accepts": "0",
}

# The Com_ counter of each statement of the table (fakemaster.sql.statements), by its handler's
# name; the handlers answering several kinds of statement are told apart by the statement's
# first words (_BY_WORDS). not_supported and SET STATEMENT ... FOR (its inner statement counts)
# count nothing.
_BY_HANDLER = {
    "select_any": "Com_select",
    "explain": "Com_select",  # EXPLAIN SELECT is a SELECT to the server's counters
    "set_statement": "Com_set_option",
    "show_variables": "Com_show_variables",
    "show_status": "Com_show_status",
    "show_master_status": "Com_show_binlog_status",
    "show_databases": "Com_show_databases",
    "show_create_database": "Com_show_create_db",
    "show_create_table": "Com_show_create_table",
    "show_tables": "Com_show_tables",
    "show_table_status": "Com_show_table_status",
    "show_columns": "Com_show_fields",
    "show_index": "Com_show_keys",
    "show_events": "Com_show_events",
    "flush_tables": "Com_flush",
    "flush_logs": "Com_flush",
    "unlock_tables": "Com_unlock_tables",
    "lock_tables": "Com_lock_tables",
    "start_consistent_snapshot": "Com_begin",
    "begin": "Com_begin",
    "show_binary_logs": "Com_show_binlogs",
    "show_slave_hosts": "Com_show_slave_hosts",
    "show_slave_status": "Com_show_slave_status",
    "show_processlist": "Com_show_processlist",
    "show_grants": "Com_show_grants",
    "create_user": "Com_create_user",
    "drop_user": "Com_drop_user",
    "grant": "Com_grant",
    "revoke": "Com_revoke",
    "show_engines": "Com_show_storage_engines",
    "show_triggers": "Com_show_triggers",
    "kill": "Com_kill",
    "use_database": "Com_change_db",
}
_BY_WORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "end_transaction": (("COMMIT", "Com_commit"), ("ROLLBACK", "Com_rollback")),
    "savepoint": (
        ("SAVEPOINT", "Com_savepoint"),
        ("RELEASE", "Com_release_savepoint"),
        ("ROLLBACK", "Com_rollback_to_savepoint"),
    ),
    "show_warnings": (("SHOW WARNINGS", "Com_show_warnings"), ("SHOW ERRORS", "Com_show_errors")),
    "show_routine_status": (
        ("SHOW FUNCTION", "Com_show_function_status"),
        ("SHOW PROCEDURE", "Com_show_procedure_status"),
        ("SHOW PACKAGE BODY", "Com_show_package_body_status"),
        ("SHOW PACKAGE", "Com_show_package_status"),
    ),
    # SHOW PLUGINS LIKE/WHERE counts in nothing (10.11 answers it as an information_schema read).
    "show_plugins": (("SHOW PLUGINS", "Com_show_plugins"),),
    "show_engine": (
        ("STATUS", "Com_show_engine_status"),
        ("MUTEX", "Com_show_engine_mutex"),
        ("LOGS", "Com_show_engine_logs"),
    ),
}


def com_variable(handler: str, plain: str) -> str | None:
    """The ``Com_*`` counter a statement answered by ``handler`` (its function's name) counts
    in; ``plain`` is its text with the comments blanked. None: it counts in none."""
    found = _BY_HANDLER.get(handler)
    if found is not None:
        return found
    choices = _BY_WORDS.get(handler)
    if choices is None:
        return None
    words = " ".join(plain.split()).upper()
    if handler == "show_engine":  # SHOW ENGINE name STATUS|MUTEX|LOGS: the last word
        last = words.rsplit(" ", 1)[-1]
        return next((name for word, name in choices if word == last), None)
    if handler == "show_plugins":
        return choices[0][1] if words == choices[0][0] else None
    return next((name for prefix, name in choices if words.startswith(prefix)), None)


# Errors MariaDB finds while parsing, before it counts the statement: a statement failing with
# one counts in no Com_* counter (SHOW ENGINE 'x' STATUS, SHOW ENGINE NDB STATUS).
PARSE_TIME_ERRORS = frozenset({ER_PARSE_ERROR, ER_UNKNOWN_STORAGE_ENGINE})

# Counted over the whole server even in SHOW SESSION STATUS.
GLOBAL_ONLY = frozenset({"Queries"})
