"""Scenarios: database histories at the level users think in (tables, rows, transactions),
compiled to exactly the binlog a MariaDB 10.11 primary writes, with an oracle of every table's
content after every transaction.

    from scenarios import Scenario, Oracle, to_store

    scenario = Scenario()
    scenario.create_table("CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
    scenario.insert("shop.orders", {"id": 1, "note": "first"})
    store = to_store(scenario)          # a MemoryBinlogStore that fakemaster serves
    Oracle(scenario).final.rows         # what every table holds at the end

A history's steps (``scenario.steps``) are :class:`Transaction` (XA ones too), :class:`Ddl`,
:class:`SetSettings`, :class:`XaEnd` (XA COMMIT/ROLLBACK), :class:`Restart`, :class:`Idle` and
:class:`Rotate`; :class:`ScenarioStore` serves a scenario released point by point (live).

Names are imported on first use (``import scenarios`` loads nothing else).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from scenarios.apply import apply_events
    from scenarios.builder import column, table
    from scenarios.compiler import CompileOptions, binlog_files, compile_scenario, to_store
    from scenarios.create_table import parse_create_table
    from scenarios.errors import HistoryError, ScenarioError, SchemaError, ValueDoesNotFit
    from scenarios.history import (
        Ddl,
        Idle,
        Restart,
        Rotate,
        Scenario,
        SetSettings,
        Settings,
        Transaction,
        XaEnd,
    )
    from scenarios.live import ScenarioStore, release_at_rate
    from scenarios.oracle import Oracle
    from scenarios.schema import Table
    from scenarios.streaming import StreamWriter, stream_history

__all__ = [
    "CompileOptions",
    "Ddl",
    "HistoryError",
    "Idle",
    "Oracle",
    "Restart",
    "Rotate",
    "Scenario",
    "ScenarioError",
    "ScenarioStore",
    "SchemaError",
    "SetSettings",
    "Settings",
    "Table",
    "Transaction",
    "ValueDoesNotFit",
    "XaEnd",
    "binlog_files",
    "column",
    "compile_scenario",
    "parse_create_table",
    "release_at_rate",
    "apply_events",
    "table",
    "to_store",
    "StreamWriter",
    "stream_history",
]

# Each name and the module that defines it.
_LAZY = {
    "CompileOptions": "scenarios.compiler",
    "binlog_files": "scenarios.compiler",
    "compile_scenario": "scenarios.compiler",
    "to_store": "scenarios.compiler",
    "HistoryError": "scenarios.errors",
    "ScenarioError": "scenarios.errors",
    "SchemaError": "scenarios.errors",
    "ValueDoesNotFit": "scenarios.errors",
    "Oracle": "scenarios.oracle",
    "Scenario": "scenarios.history",
    "Settings": "scenarios.history",
    # the steps of a history (Scenario.steps), in the order they are written
    "Ddl": "scenarios.history",
    "Idle": "scenarios.history",
    "Restart": "scenarios.history",
    "Rotate": "scenarios.history",
    "SetSettings": "scenarios.history",
    "Transaction": "scenarios.history",
    "XaEnd": "scenarios.history",
    "ScenarioStore": "scenarios.live",
    "release_at_rate": "scenarios.live",
    "Table": "scenarios.schema",
    "column": "scenarios.builder",
    "table": "scenarios.builder",
    "parse_create_table": "scenarios.create_table",
    "apply_events": "scenarios.apply",
    "StreamWriter": "scenarios.streaming",
    "stream_history": "scenarios.streaming",
}


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
