"""The typed change events of one table (the ``table`` option) built from the columnar
decoder's typed columns (fakemaster.spark.changes_columnar with ``table=``) equal the reference: the generic
change events (fakemaster.spark.changes.read_changes) converted value by value by
``typed_batch``. Every table of every built-in scenario's files, bench_codec's generated rows,
and generated histories of every column type (hypothesis)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.events import TableMapEvent
from scenarios.compiler import binlog_files, to_store
from scenarios.library import LIBRARY, build
from scenarios.strategies.history import scenarios
from scenarios.strategies.history import settings as settings_strategy
from tests.budget import examples
from tests.peers.policy import require_module


def _tables_in(data: bytes) -> list[str]:
    found = []
    for _, event in read_binlog(io.BytesIO(data)):
        if isinstance(event, TableMapEvent):
            name = f"{event.database}.{event.table}"
            if name not in found:
                found.append(name)
    return found


def _assert_same_typed(data: bytes, name: str, batch_rows: int = 8192) -> int:
    """Compares every table of the file; returns how many change rows were compared."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import file_index, find_table, read_changes, typed_batch
    from fakemaster.spark.changes_columnar import read_changes_fast

    index = file_index(name, 0)
    compared = 0
    for qualified in _tables_in(data):
        info = find_table([io.BytesIO(data)], qualified, None)  # type: ignore[list-item]
        try:
            reference_batches = [
                typed_batch(b, info)
                for b in read_changes(io.BytesIO(data), name, index, batch_rows=batch_rows)
            ]
        except (pa.ArrowInvalid, ArithmeticError, ValueError) as refused:
            # A column whose type changed after the first TABLE_MAP (ALTER ... MODIFY) to one
            # whose values the first type cannot hold: the typed form refuses it on both paths.
            with pytest.raises(type(refused)):
                list(read_changes_fast(io.BytesIO(data), name, index, table=info))
            continue
        reference = pa.Table.from_batches([b for b in reference_batches if b.num_rows])
        fast = pa.Table.from_batches(
            list(
                read_changes_fast(io.BytesIO(data), name, index, batch_rows=batch_rows, table=info)
            )
        )
        assert fast.schema == reference.schema or not reference.num_rows, qualified
        expected, got = reference.to_pylist(), fast.to_pylist()
        for a, b in zip(expected, got, strict=False):
            assert a == b, qualified
        assert len(expected) == len(got), qualified
        compared += len(expected)
    return compared


def test_every_table_of_every_built_in_scenario_gives_the_reference_typed_table() -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    compared = 0
    for scenario in LIBRARY:
        for name, data in binlog_files(to_store(build(scenario))).items():
            compared += _assert_same_typed(data, name, batch_rows=5)
    assert compared > 1000  # the library's rows were compared, not skipped


def test_generated_rows_give_the_reference_typed_table(tmp_path: Any) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from bench_codec import write_generated  # type: ignore[import-not-found]

    path = tmp_path / "gen.000001"
    write_generated(path, 300)
    assert _assert_same_typed(path.read_bytes(), path.name) == 300 * 50


@settings(max_examples=examples(0.5), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios(settings_strategy=settings_strategy()))
def test_generated_histories_give_the_reference_typed_table(scenario: Any) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    for name, data in binlog_files(to_store(scenario)).items():
        _assert_same_typed(data, name)


def test_a_table_map_with_other_metadata_starts_another_batch() -> None:
    """Found by the property above: rows of one table written with NO_LOG metadata, then with
    FULL, whose real column names happen to equal the decoder's placeholders (c0, c1): each
    change event carries the names its own TABLE_MAP gives (the reference path's)."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    from fakemaster.spark.changes import read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast
    from scenarios.history import Scenario, Settings

    scenario = Scenario(Settings(binlog_row_metadata="NO_LOG"))
    scenario.create_table("CREATE TABLE db.t1 (c0 INT NOT NULL, c1 VARCHAR(8) NOT NULL)")
    scenario.insert("db.t1", {"c0": 0, "c1": ""})
    scenario.set(binlog_row_metadata="FULL")
    scenario.insert("db.t1", {"c0": 1, "c1": "a"})
    ((name, data),) = binlog_files(to_store(scenario)).items()
    images = {
        read.__name__: [
            row["after"]
            for batch in read(io.BytesIO(data), name, 1)
            for row in batch.to_pylist()
            if row["op"] == "c"
        ]
        for read in (read_changes, read_changes_fast)
    }
    assert images["read_changes"] == [[("@1", "0"), ("@2", "0x")], [("c0", "1"), ("c1", "a")]]
    assert images["read_changes_fast"] == images["read_changes"]
