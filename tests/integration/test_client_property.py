"""Property: the project's client, replicating a generated history (scenarios.strategies)
served under a generated fault plan (fakemaster.faults.strategies, drawn separately so each
shrinks on its own), always ends with the oracle's tables, nothing lost, nothing applied twice
(the consumer refuses a change it saw). The one outcome besides that is a plan with an ERR 1236
(fatal, as for a real replica): the client stops with BinlogUnavailable holding exactly the
transactions before it. A failure prints the shrunk history, the plan (JSON) and the blob to
replay it (``@reproduce_failure``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from fakemaster.client.blocking import BlockingReplica, ReconnectPolicy
from fakemaster.client.changes import group_changes
from fakemaster.client.protocol import BinlogUnavailable, ClientConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan
from fakemaster.faults.plan import ERROR_PRESETS
from fakemaster.faults.strategies import faults
from fakemaster.testing.plugin import FakeMasterFactory
from fakemaster.vocabulary.errcodes import ER_MASTER_FATAL_ERROR_READING_BINLOG
from scenarios.compiler import compile_scenario
from scenarios.history import Scenario
from scenarios.oracle import Oracle
from scenarios.strategies.history import scenarios
from tests.budget import examples
from tests.support.client_apply import Tables, catalogue, initial, target

# Faults the client meets on its first two connections; every kind, at points inside the
# short histories drawn (a point past the end of the stream never happens).
PLANS = st.lists(
    faults(
        sessions=2, max_duration=0.4, max_event=14, max_transaction=4, max_byte=1500, max_time=0.2
    ),
    min_size=1,
    max_size=3,
).map(lambda items: FaultPlan(tuple(quick(fault) for fault in items)))


def quick(fault: Fault) -> Fault:
    """The fault, but at least 20 kB/s where it slows the stream: a slow link is not a
    failure (the targeted tests have slow ones), only a long example."""
    params = dict(fault.params)
    if fault.kind is FaultKind.BANDWIDTH:
        params["rate"] = max(params["rate"], 20_000)
    elif fault.kind is FaultKind.TRICKLE and (params.get("interval") or 0) > 0:
        params["size"] = max(params["size"], 200 * int(params["interval"] * 1000 + 1))
    return replace(fault, params=params)


def fatal(plan: FaultPlan) -> bool:
    """Whether the plan can end the dump with ERR 1236."""
    return any(
        fault.kind is FaultKind.ERROR
        and (
            fault.params.get("errno")
            or ERROR_PRESETS[fault.params.get("preset") or "truncated"].errno
        )
        == ER_MASTER_FATAL_ERROR_READING_BINLOG
        for fault in plan.faults
    )


def transactions_in(scenario: Scenario, groups: int) -> int:
    """How many of the scenario's transactions the first ``groups`` event groups hold (a
    transaction that changes no row has no group)."""
    seen = 0
    for index, item in enumerate(compile_scenario(scenario)):
        if item.gtid is not None:
            if seen == groups:
                return index
            seen += 1
    return len(scenario.transactions)


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@settings(max_examples=examples(0.25), suppress_health_check=[HealthCheck.too_slow])
# Row changes (every setting at the start): DDL and settings changed mid-history reach the
# client through the built-in ddl_mid_stream and settings_changes scenarios
# (test_client_scenarios.py); drawn together with faults they are left for later (the served
# variables of a history whose settings change are the end's, which the served binlog's first
# TABLE_MAP contradicts; the closing note of 2026-11-24 says so).
@given(scenario=scenarios(max_transactions=6, ddl=False, setting_changes_too=False), plan=PLANS)
def test_client_ends_with_the_oracles_tables_under_generated_faults(
    mode: str, scenario: Scenario, plan: FaultPlan
) -> None:
    if not scenario.settings.binlog_checksum:
        # Without checksums a changed byte cannot be told from data (a replica applies it).
        plan = FaultPlan(tuple(f for f in plan.faults if f.kind is not FaultKind.CORRUPT_CRC))
    note(f"fault plan: {plan.to_json()}")
    factory = FakeMasterFactory({})
    master = factory(scenario=scenario, faults=plan)
    try:
        config = ClientConfig(
            user=master.user,
            password=master.password,
            server_id=77,
            gtid_mode=mode == "gtid",
            net_timeout=0.6,
            heartbeat_period=0.1,
        )
        goal = target(scenario)
        client = BlockingReplica(
            master.host,
            master.port,
            config,
            start=initial(scenario),
            until=lambda p: p.covers(goal),
            catalogue=catalogue(scenario),
            reconnect=ReconnectPolicy(max_retries=6, delay=0.01),
        )
        tables = Tables(scenario)
        groups = 0
        try:
            with client:
                for group in client.groups():
                    tables.apply_all(group_changes(group, client.catalogue))
                    groups += 1
        except BinlogUnavailable as error:
            note(f"stopped: {error}")
            assert fatal(plan), f"ERR 1236 without a fault that sends it: {error}"
            Oracle(scenario).assert_matches(tables.rows, after=transactions_in(scenario, groups))
            return
        note(f"connections: {client.connections}, errors: {client.errors}")
        proxy = master.fault_proxy
        applied = sum(len(engine.applied) for engine in proxy.engines) if proxy else 0
        event(f"faults applied: {min(applied, 2)}{'+' if applied > 2 else ''}")
        event(f"connections: {min(client.connections, 3)}")
        Oracle(scenario).assert_matches(tables.rows)
    finally:
        factory.close()
    assert master.errors == []
