"""The fast path of ``to_store`` (events built stamped, each row encoded once by the compiler and
its bytes handed to the store as the rows events' bodies, TABLE_MAP bodies encoded once, each
header packed once with its position and each CRC computed once) writes the same bytes as the
straightforward path: the compiled events appended one transaction at a time, every body
encoded by the store, and every event's bytes equal to ``encode_event`` of the event the decoder
reads back (header, position and CRC framed from scratch)."""

from __future__ import annotations

import dataclasses
import gc
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.binlog_file import read_binlog
from encoder import encode_event
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import GtidEvent, RowsEvent, TableMapEvent
from scenarios.compiler import (
    CompiledTransaction,
    CompileOptions,
    binlog_files,
    compile_scenario,
    to_store,
)
from scenarios.history import (
    ROW_EVENT_MAX_SIZE_BLOCK,
    ROW_IMAGES,
    ROW_METADATA,
    Idle,
    Restart,
    Rotate,
    Scenario,
    SetSettings,
    Settings,
)
from scenarios.strategies.history import _change, _new_row, scenarios
from tests.budget import examples

__all__: list[str] = []


@st.composite
def split_settings(draw: st.DrawFn) -> Settings:
    """Every setting, with rows events small enough that statements split into several."""
    return Settings(
        binlog_checksum=draw(st.booleans()),
        binlog_row_image=draw(st.sampled_from(ROW_IMAGES)),
        binlog_row_metadata=draw(st.sampled_from(ROW_METADATA)),
        binlog_annotate_row_events=draw(st.booleans()),
        log_bin_compress=draw(st.booleans()),
        log_bin_compress_min_len=draw(st.sampled_from((10, 256, 1024))),
        binlog_row_event_max_size=draw(st.sampled_from((ROW_EVENT_MAX_SIZE_BLOCK, 8192))),
    )


@st.composite
def model_scenarios(draw: st.DrawFn, **options: Any) -> Scenario:
    """A drawn history (DDL, settings changed, MyISAM tables among its steps), then perhaps a
    restart (same or another server id, MySQL v2 rows events after it) or an idle period and a
    transaction after it, then perhaps an XA transaction prepared (then committed, rolled back
    or left prepared) or committed in one phase."""
    scenario = draw(scenarios(**options))
    pause = draw(st.sampled_from((None, "idle", "restart")))
    if pause == "idle":
        scenario.idle(draw(st.integers(1, 3600)))
    elif pause == "restart":
        changes: dict[str, Any] = {}
        if draw(st.booleans()):
            changes.update(rows_event_version=2, log_bin_compress=False)
        scenario.restart(server_id=draw(st.sampled_from((None, 1, 7))), **changes)
    if pause is not None and scenario.tables:
        with scenario.transaction() as tx:
            draw(_change(tx, scenario))
    transactional = sorted(name for name, t in scenario.tables.items() if t.transactional)
    if transactional and draw(st.booleans()):
        name = draw(st.sampled_from(transactional))
        table = scenario.tables[name]
        one_phase = draw(st.booleans())
        with scenario.xa_transaction(("gtrid", b"bq", 7), one_phase=one_phase) as tx:
            taken = {tuple(row[p] for p in table.key) for row in tx.rows(name)}
            values = draw(_new_row(table, taken))
            rows = tx.rows(name)
            if values is not None:
                tx.insert(name, values)
            elif rows:
                row = rows[0]
                tx.delete(name, {table.columns[p].name: row[p] for p in table.key})
        end = draw(st.sampled_from(("commit", "rollback", "prepared")))
        if not one_phase and scenario.prepared and end != "prepared":
            (scenario.xa_commit if end == "commit" else scenario.xa_rollback)(("gtrid", b"bq", 7))
    return scenario


def straightforward_store(scenario: Scenario) -> MemoryBinlogStore:
    """What ``to_store`` writes, without its shortcuts: the compiled events appended one group
    at a time, the store encoding every event's body itself (rotations, settings that rotate,
    restarts and idle periods as ``to_store`` writes them)."""
    settings_ = scenario.initial_settings
    now = [1_700_000_000]
    store = MemoryBinlogStore(
        server_id=settings_.server_id,
        server_version=settings_.server_version,
        checksum=settings_.binlog_checksum,
        domain_id=settings_.gtid_domain_id,
        clock=lambda: float(now[0]),
        initial_state=scenario.gtid_state,
    )
    groups: dict[int, list[CompiledTransaction]] = {}
    for item in compile_scenario(scenario):
        groups.setdefault(id(item.transaction), []).append(item)
    for step in scenario.steps:
        if isinstance(step, Rotate):
            store.rotate()
        elif isinstance(step, SetSettings):
            if step.rotates:
                store.checksum = step.settings.binlog_checksum
                store.rotate()
        elif isinstance(step, Restart):
            store.checksum = step.settings.binlog_checksum
            store.restart(server_id=step.settings.server_id)
        elif isinstance(step, Idle):
            now[0] += step.seconds
        for item in groups.get(id(step), ()):
            if item.gtid is None:
                continue
            gtid_event, *body = item.events
            assert isinstance(gtid_event, GtidEvent)
            if gtid_event.flags_extra:
                store.append(item.events, stamp=False)
                continue
            store.append_transaction(
                body,
                domain_id=item.gtid.domain_id,
                server_id=item.gtid.server_id,
                seq_no=item.gtid.seq_no,
                flags2=gtid_event.flags2,
                xid=gtid_event.xid,
                timestamp=gtid_event.timestamp,
            )
    return store


def reencoded(data: bytes) -> bytes:
    """A binlog file decoded and every event encoded again by ``encode_event`` (header with
    the decoded log_pos, CRC computed by the encoder): the bytes a writer without shortcuts
    writes for the same events."""
    ctx = BinlogContext()
    out = [data[:4]]
    for _, event in read_binlog(io.BytesIO(data)):
        out.append(encode_event(event, ctx))
    return b"".join(out)


@settings(max_examples=examples(1))
@given(
    model_scenarios(max_insert_rows=12, settings_strategy=split_settings())
    | model_scenarios(max_tables=1, max_transactions=3)
)
def test_to_store_writes_the_straightforward_bytes(scenario: Scenario) -> None:
    """Histories with DDL, settings changed, MyISAM tables, restarts, idle periods, XA and
    MySQL v2 rows events: the fast path's files are the straightforward path's, and each event
    in them is what the encoder writes for it."""
    fast = binlog_files(to_store(scenario))
    assert fast == binlog_files(straightforward_store(scenario))
    for name, data in fast.items():
        assert reencoded(data) == data, name


def test_every_event_is_built_stamped() -> None:
    """Each event of a compiled group (DDL, COMMIT and XA queries, XA_PREPARE, v2 rows among
    them) is built with its group's server id and timestamp: the store has nothing to stamp."""
    scenario = Scenario(Settings(server_id=3))
    scenario.create_table("CREATE TABLE db.m (id INT PRIMARY KEY) ENGINE=MyISAM")
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY)")
    with scenario.transaction(server_id=5) as tx:
        tx.insert("db.m", {"id": 1})
        tx.insert("db.t", {"id": 1})
    scenario.idle(60)
    scenario.alter_table("db.t", "ADD COLUMN v INT", server_id=6)
    scenario.restart(server_id=9, rows_event_version=2)
    with scenario.xa_transaction("x") as tx:
        tx.insert("db.t", {"id": 2, "v": 3})
    scenario.xa_commit("x", server_id=4)
    compiled = compile_scenario(scenario, CompileOptions(timestamp=1000))
    seen = []
    for item in compiled:
        assert item.gtid is not None
        seen.append(
            (type(item.transaction).__name__, item.gtid.server_id, item.events[0].timestamp)
        )
        for event in item.events:
            assert (event.server_id, event.timestamp) == (
                item.gtid.server_id,
                item.events[0].timestamp,
            )
    assert seen == [
        ("Transaction", 5, 1000),  # the MyISAM statement's group
        ("Transaction", 5, 1000),
        ("Ddl", 6, 1060),
        ("Transaction", 9, 1060),  # XA PREPARE
        ("XaEnd", 4, 1060),
    ]
    rows = [e for e in compiled[3].events if isinstance(e, RowsEvent)]
    assert [e.version for e in rows] == [2]


def test_a_table_map_reused_with_other_columns_is_encoded_again() -> None:
    """The store keeps TABLE_MAP bodies by their fields: a table id mapped again with other
    columns, or fields given as lists, are encoded anew."""
    scenario = Scenario()
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY, v VARCHAR(8))")
    scenario.insert("db.t", {"id": 1, "v": "a"})
    compiled = compile_scenario(scenario)
    _, _, table_map, rows, _ = compiled[0].events
    store = MemoryBinlogStore(clock=lambda: 1_700_000_000.0)
    store.append([table_map, rows])
    wider = dataclasses.replace(
        table_map,
        column_types=(*table_map.column_types, table_map.column_types[0]),  # type: ignore[attr-defined]
        column_meta=(*table_map.column_meta, 0),  # type: ignore[attr-defined]
        nullable=(*table_map.nullable, True),  # type: ignore[attr-defined]
    )
    as_lists = dataclasses.replace(
        table_map,
        column_types=list(table_map.column_types),  # type: ignore[attr-defined]
    )
    store.append([wider, as_lists, table_map])
    data = binlog_files(store)[store.current_file]
    assert reencoded(data) == data
    maps = [e for _, e in read_binlog(io.BytesIO(data)) if isinstance(e, TableMapEvent)]
    assert [len(event.column_types) for event in maps] == [2, 3, 2, 2]


def test_bodies_must_match_the_events_in_number() -> None:
    store = MemoryBinlogStore()
    scenario = Scenario()
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY)")
    scenario.insert("db.t", {"id": 1})
    body = compile_scenario(scenario)[0].events[1:]
    try:
        store.append_transaction(body, bodies=[None])
    except ValueError as exc:
        assert "1 bodies for 4 events" in str(exc)
    else:
        raise AssertionError("no ValueError")
    assert store.position == len(binlog_files(store)[store.current_file])


def test_compiling_restores_the_garbage_collector() -> None:
    """compile_scenario and to_store pause the cyclic collector and leave it as it was."""
    scenario = Scenario()
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY)")
    scenario.insert("db.t", {"id": 1})
    was = gc.isenabled()
    try:
        gc.enable()
        to_store(scenario)
        assert gc.isenabled()
        gc.disable()
        compile_scenario(scenario)
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_rows_whose_images_have_no_columns_are_refused_on_both_paths() -> None:
    """MINIMAL image of an INSERT that names no column: the encoder refuses such rows (they
    take no bytes), and the fast path does not write them either."""
    scenario = Scenario(Settings(binlog_row_image="MINIMAL"))
    scenario.create_table("CREATE TABLE db.t (id INT PRIMARY KEY DEFAULT 1, v INT DEFAULT 3)")
    scenario.insert("db.t", {})
    for path in (to_store, straightforward_store):
        with pytest.raises(EncodeError, match="images have no columns"):
            path(scenario)
