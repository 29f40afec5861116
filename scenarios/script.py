"""A scenario as a SQL script: the statements of each step and what sets a server up with its
tables, to run on a real MariaDB (the differential tests, the contract checks).

The statements assume the session of :data:`scenarios.sql.SESSION_SETUP`. Above
:mod:`scenarios.history` (it reads its steps), built on :mod:`scenarios.sql`, which spells one
change, one DDL statement or one table.
"""

from __future__ import annotations

from typing import Any

from scenarios.history import (
    SETTABLE,
    Ddl,
    Idle,
    Restart,
    Rotate,
    Scenario,
    SetSettings,
    Step,
    Transaction,
    XaEnd,
    xa_text,
)
from scenarios.sql import create_table_sql, insert_rows_sql, quote_name, statement_sql

__all__ = ["set_sql", "setup_sql", "step_sql", "transaction_sql"]


def transaction_sql(transaction: Transaction) -> list[str]:
    """The statements of ``transaction``, from choosing its GTID domain and server id to its
    COMMIT (an XA transaction: XA START to XA PREPARE, or XA COMMIT ... ONE PHASE)."""
    ids = [
        f"SET SESSION gtid_domain_id = {transaction.domain_id}",
        f"SET SESSION server_id = {transaction.server_id}",
    ]
    statements = [statement_sql(change) for change in transaction.changes]
    if transaction.uses_clock:
        # current_timestamp() is the history's clock, not the server's.
        ids.append(f"SET SESSION timestamp = {transaction.clock}")
        statements.append("SET SESSION timestamp = DEFAULT")
    if transaction.xa is None:
        return [*ids, "BEGIN", *statements, "COMMIT"]
    xid = xa_text(transaction.xa)
    end = f"XA COMMIT {xid} ONE PHASE" if transaction.one_phase else f"XA PREPARE {xid}"
    return [*ids, f"XA START {xid}", *statements, f"XA END {xid}", end]


def step_sql(step: Step) -> list[str]:
    """The statements of a step: a transaction's, a DDL statement or an XA COMMIT/ROLLBACK
    (with its GTID domain and server id), the SETs of settings, or ``FLUSH BINARY LOGS``. After
    an ``XA PREPARE`` the session is left (a new one goes on), as a prepared XA transaction
    survives its session."""
    if isinstance(step, Rotate):
        return ["FLUSH BINARY LOGS"]
    if isinstance(step, Restart | Idle):
        return []  # no statement: the server is restarted, or time passes
    if isinstance(step, SetSettings):
        return [set_sql(name, value) for name, value in step.changes]
    if isinstance(step, XaEnd):
        assert step.transaction.xa is not None
        verb = "COMMIT" if step.commit else "ROLLBACK"
        return [
            f"SET SESSION gtid_domain_id = {step.domain_id}",
            f"SET SESSION server_id = {step.server_id}",
            f"XA {verb} {xa_text(step.transaction.xa)}",
        ]
    if isinstance(step, Ddl):
        return [
            f"SET SESSION gtid_domain_id = {step.domain_id}",
            f"SET SESSION server_id = {step.server_id}",
            step.sql,
        ]
    return transaction_sql(step)


def set_sql(name: str, value: Any) -> str:
    """The ``SET`` that changes a setting (:data:`~scenarios.history.SETTABLE`)."""
    if name == "binlog_checksum":
        text = "CRC32" if value else "NONE"
    elif isinstance(value, bool):
        text = "ON" if value else "OFF"
    else:
        text = str(value)
    return f"SET {SETTABLE[name]} {name} = {text}"


def setup_sql(scenario: Scenario) -> list[str]:
    """What makes a server hold the scenario's tables with their initial rows: CREATE DATABASE
    (of every database the history uses), CREATE TABLE and INSERTs."""
    statements = []
    for database in scenario.databases:
        statements.append(f"CREATE DATABASE IF NOT EXISTS {quote_name(database)}")
    for name, table in scenario.initial_tables.items():
        statements.append(create_table_sql(table))
        statements += insert_rows_sql(table, scenario.initial.rows[name])
    return statements
