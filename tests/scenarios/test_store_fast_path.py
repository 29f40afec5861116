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

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.binlog_file import read_binlog
from encoder import encode_event
from fakemaster.context import BinlogContext
from fakemaster.errors import EncodeError
from fakemaster.events import GtidEvent, TableMapEvent
from fakemaster.store import MemoryBinlogStore
from scenarios.compiler import binlog_files, compile_scenario, to_store
from scenarios.history import (
    ROW_EVENT_MAX_SIZE_BLOCK,
    ROW_IMAGES,
    ROW_METADATA,
    Rotate,
    Scenario,
    Settings,
)
from scenarios.strategies.history import scenarios
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


def straightforward_store(scenario: Scenario) -> MemoryBinlogStore:
    """What ``to_store`` writes, without its shortcuts: the compiled events appended one
    transaction at a time, the store encoding every event's body itself."""
    settings_ = scenario.settings
    store = MemoryBinlogStore(
        server_id=settings_.server_id,
        server_version=settings_.server_version,
        checksum=settings_.binlog_checksum,
        domain_id=settings_.gtid_domain_id,
        clock=lambda: 1_700_000_000.0,
        initial_state=scenario.gtid_state,
    )
    compiled = iter(compile_scenario(scenario))
    for step in scenario.steps:
        if isinstance(step, Rotate):
            store.rotate()
            continue
        item = next(compiled)
        if item.gtid is None:
            continue
        gtid_event, *body = item.events
        assert isinstance(gtid_event, GtidEvent)
        store.append_transaction(
            body,
            domain_id=item.gtid.domain_id,
            server_id=item.gtid.server_id,
            seq_no=item.gtid.seq_no,
            flags2=gtid_event.flags2,
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
    scenarios(max_insert_rows=12, settings_strategy=split_settings())
    | scenarios(max_tables=1, max_transactions=3)
)
def test_to_store_writes_the_straightforward_bytes(scenario: Scenario) -> None:
    fast = binlog_files(to_store(scenario))
    assert fast == binlog_files(straightforward_store(scenario))
    for name, data in fast.items():
        assert reencoded(data) == data, name


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
