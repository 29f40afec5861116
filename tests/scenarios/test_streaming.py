"""A history streamed (compiled and written step by step, its steps dropped) writes the bytes
``to_store`` writes for the whole history held in memory; the oracle of a streamed history knows
its final state."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.store import DirectoryBinlogStore, DiskBinlogStore
from scenarios.compiler import binlog_files, to_store
from scenarios.errors import ScenarioError
from scenarios.history import Scenario
from scenarios.oracle import Oracle
from scenarios.streaming import StreamWriter, stream_history, stream_toml
from scenarios.toml_form import read_scenario
from tests.budget import examples
from tests.scenarios.test_store_fast_path import model_scenarios, split_settings

__all__: list[str] = []


def streamed_in_chunks(scenario: Scenario, sizes: list[int], directory: str | None) -> StreamWriter:
    """Hand the steps of a built ``scenario`` to a StreamWriter a few at a time (``sizes``,
    cycled), each chunk flushed (its events freed) before the next is added."""
    steps = list(scenario.steps)
    scenario.steps.clear()
    writer = StreamWriter(scenario, directory=directory)
    at = 0
    for size in itertools.cycle(sizes or [1]):
        if at >= len(steps):
            break
        scenario.steps.extend(steps[at : at + size])
        writer.flush()
        at += size
    return writer


@settings(max_examples=examples(1), deadline=None)
@given(
    model_scenarios(max_insert_rows=12, settings_strategy=split_settings())
    | model_scenarios(max_tables=1, max_transactions=3),
    st.lists(st.integers(1, 3), max_size=4),
    st.booleans(),
)
def test_streamed_files_are_the_whole_history_files(
    scenario: Scenario, sizes: list[int], to_disk: bool
) -> None:
    """Generated histories (DDL, settings changed, MyISAM tables, restarts, idle periods, XA,
    v2 rows events), streamed in chunks of 1-3 steps, into memory or a directory: the same files
    as to_store of the whole history."""
    expected = binlog_files(to_store(scenario))
    with tempfile.TemporaryDirectory() as where:
        writer = streamed_in_chunks(scenario, sizes, where if to_disk else None)
        assert binlog_files(writer.store) == expected
        if isinstance(writer.store, DiskBinlogStore):
            writer.store.close()
            with DirectoryBinlogStore(where) as served:
                assert binlog_files(served) == expected


def shop() -> Scenario:
    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20), qty INT)", [{"id": 0}]
    )
    return scenario


def history(scenario: Scenario, count: int) -> Iterator[None]:
    """Inserts, updates, deletes, an idle period, a rotation and a DDL statement."""
    for n in range(1, count + 1):
        with scenario.transaction() as tx:
            tx.insert("shop.orders", {"id": n, "note": f"order {n}"})
            if n % 3 == 0:
                tx.update("shop.orders", {"id": n - 1}, {"qty": n})
        yield
        if n % 5 == 0:
            scenario.delete("shop.orders", {"id": n - 2})
        if n == 7:
            scenario.idle(30)
            scenario.rotate()
        if n == 11:
            scenario.alter_table("shop.orders", "ADD COLUMN extra INT")
            yield


def test_stream_history_from_a_generator(tmp_path: Path) -> None:
    whole = shop()
    for _ in history(whole, 20):
        pass
    expected = binlog_files(to_store(whole))
    streamed = shop()
    store = stream_history(streamed, history(streamed, 20), directory=tmp_path)
    assert binlog_files(store) == expected
    assert streamed.steps == [] and streamed.steps_taken == len(whole.steps)
    oracle = Oracle(streamed)
    assert oracle.final == Oracle(whole).final
    assert oracle.points == Oracle(whole).points
    assert oracle.state(oracle.points) == Oracle(whole).final
    with pytest.raises(ScenarioError, match="streamed"):
        oracle.state(3)


TOML = """
[[tables]]
create = "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20), qty INT)"

[[steps]]
changes = [{ insert = "shop.orders", generate = { count = 50, seed = 3, columns = { id = { sequence = 1 }, note = { pattern = "order {n}" }, qty = { random = [1, 9] } } } }]

[[steps]]
rotate = true

[[steps]]
changes = [{ update = "shop.orders", where = { id = 7 }, set = { qty = 100 } }]
"""


def test_stream_toml(tmp_path: Path) -> None:
    """A TOML file's steps streamed (generated rows among them): the files and final tables
    of the file read whole."""
    path = tmp_path / "history.toml"
    path.write_text(TOML)
    whole = read_scenario(path)
    scenario, store = stream_toml(path, directory=tmp_path / "binlogs")
    assert binlog_files(store) == binlog_files(to_store(whole))
    assert Oracle(scenario).final == Oracle(whole).final
