"""The columnar change-event path (fakemaster.spark.changes_columnar) gives the same table as the reference
path (fakemaster.spark.changes.read_changes): every built-in scenario's files, bench_codec's
generated rows, and generated histories of every column type (hypothesis)."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import HealthCheck, given, settings

from scenarios.compiler import binlog_files, to_store
from scenarios.library import LIBRARY, build
from scenarios.strategies.history import scenarios
from scenarios.strategies.history import settings as settings_strategy
from tests.budget import examples
from tests.peers.policy import require_module


def _tables(data: bytes, name: str, batch_rows: int) -> tuple[Any, Any]:
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import arrow_schema, file_index, read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast

    index = file_index(name, 0)
    schema = arrow_schema()
    reference = pa.Table.from_batches(
        list(read_changes(io.BytesIO(data), name, index, batch_rows=batch_rows)), schema=schema
    )
    fast_batches = list(read_changes_fast(io.BytesIO(data), name, index, batch_rows=batch_rows))
    return reference, pa.Table.from_batches(fast_batches, schema=schema)


def _assert_same(data: bytes, name: str, batch_rows: int = 8192) -> None:
    reference, fast = _tables(data, name, batch_rows)
    if not reference.equals(fast):
        for a, b in zip(reference.to_pylist(), fast.to_pylist(), strict=False):
            assert a == b
        assert reference.num_rows == fast.num_rows


def test_every_built_in_scenario_gives_the_reference_table() -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    for scenario in LIBRARY:
        for name, data in binlog_files(to_store(build(scenario))).items():
            _assert_same(data, name, batch_rows=5)


def test_generated_rows_give_the_reference_table(tmp_path: Any) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    from bench_codec import write_generated  # type: ignore[import-not-found]

    path = tmp_path / "gen.000001"
    write_generated(path, 300)
    _assert_same(path.read_bytes(), path.name)


@settings(max_examples=examples(0.5), deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios(settings_strategy=settings_strategy()))
def test_generated_histories_give_the_reference_table(scenario: Any) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    for name, data in binlog_files(to_store(scenario)).items():
        _assert_same(data, name, batch_rows=3)
