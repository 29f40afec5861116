"""The streaming source's columnar path (issue 10, hot path): the change events
``BinlogStreamReader.read`` builds from the groups' event bytes with the columnar decoder equal,
row for row (schema, values, order, ``source`` and ``seq``), those its reference path builds
one value at a time from the client's decoded events, for generated histories served by the
fake master. The reader is driven without Spark: it needs only its options and a range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.compiler import to_store
from scenarios.history import Scenario
from scenarios.library import LIBRARY, build
from scenarios.serving import scenario_variables
from scenarios.strategies.history import scenarios
from scenarios.strategies.history import settings as settings_strategy
from tests.budget import examples
from tests.peers.policy import require_module


@dataclass
class _Limit:
    """A read limit as Spark 4.2's ``ReadMaxRows`` gives it (``latestOffset`` reads only
    ``max_rows``)."""

    max_rows: int


def _ranges(master: Any, max_rows: int | None) -> list[Any]:
    """The ranges a query reading ``master`` to its end in batches of ``max_rows`` plans."""
    from fakemaster.spark.stream import BinlogStreamReader

    reader = BinlogStreamReader({"host": master.host, "port": str(master.port)})
    start = reader.initialOffset()
    ranges: list[Any] = []
    while True:
        end = reader.latestOffset(start, None if max_rows is None else _Limit(max_rows))
        if end == start:
            return ranges
        ranges += reader.partitions(start, end)
        start = end


def _read(master: Any, ranges: list[Any], columnar: bool, batch_rows: int) -> list[Any]:
    from fakemaster.spark.stream import BinlogStreamReader

    options = {
        "host": master.host,
        "port": str(master.port),
        "batchrows": str(batch_rows),
        "columnar": "true" if columnar else "false",
    }
    reader = BinlogStreamReader(options)
    return [list(reader.read(partition)) for partition in ranges]


def _assert_same(master: Any, max_rows: int | None, batch_rows: int) -> int:
    """Every planned range read both ways: the same rows (the batches of a range
    concatenated; each batch has the change-event schema). Returns the rows read."""
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import arrow_schema

    schema = arrow_schema()
    ranges = _ranges(master, max_rows)
    columnar = _read(master, ranges, True, batch_rows)
    reference = _read(master, ranges, False, batch_rows)
    total = 0
    for fast, slow in zip(columnar, reference, strict=True):
        for batch in (*fast, *slow):
            assert batch.schema == schema
        got = pa.Table.from_batches(fast, schema=schema).combine_chunks()
        want = pa.Table.from_batches(slow, schema=schema).combine_chunks()
        if not got.equals(want):
            for name in schema.names:
                assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
        assert got.equals(want)
        total += want.num_rows
    return total


@settings(
    max_examples=examples(0.1),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)
# Settings changed mid-history are left out as in test_stream.py (the fake master serves a
# history's settings as its variables; a checksum change needs the client to follow it).
@given(
    scenario=scenarios(settings_strategy=settings_strategy(), setting_changes_too=False),
    max_rows=st.none() | st.integers(1, 6),
    batch_rows=st.integers(1, 8),
)
def test_columnar_stream_equals_the_reference(
    scenario: Scenario, max_rows: int | None, batch_rows: int
) -> None:
    """Any settings (checksum or NONE, metadata, row images, compression), rotations, DDL,
    domains; ranges cut by admission control (a range starting inside a file)
    and batches of a few rows (conversions at group boundaries inside a file)."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    require_module("pyspark", "pip install 'fakemaster[spark]'")
    config = ServerConfig(variables=scenario_variables(scenario.settings))
    with BackgroundFakeMaster(config, to_store(scenario)) as master:
        _assert_same(master, max_rows, batch_rows)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_built_in_scenarios_read_both_ways(name: str) -> None:
    """Every built-in scenario (every_type: its TIME column sends it to the reference path),
    by ranges of 5 rows, batches of 4: the same rows both ways."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    require_module("pyspark", "pip install 'fakemaster[spark]'")
    scenario = build(name)
    config = ServerConfig(variables=scenario_variables(scenario.settings))
    with BackgroundFakeMaster(config, to_store(scenario)) as master:
        _assert_same(master, 5, 4)


@pytest.mark.parametrize(
    "name", ["compressed", "ddl_mid_stream", "many_tables", "multi_domain", "rotation_storm", "xa"]
)
def test_built_in_scenarios_take_the_columnar_path(name: str, monkeypatch: Any) -> None:
    """The columnar path is the one taken (no fallback to the reference) on built-in
    scenarios without its fallback cases, and gives the reference's rows."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    require_module("pyspark", "pip install 'fakemaster[spark]'")
    from fakemaster.spark import stream

    results: list[bool] = []
    events_table = stream.events_table

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = events_table(*args, **kwargs)
        results.append(found is not None)
        return found

    monkeypatch.setattr(stream, "events_table", counting)
    scenario = build(name)
    config = ServerConfig(variables=scenario_variables(scenario.settings))
    with BackgroundFakeMaster(config, to_store(scenario)) as master:
        assert _assert_same(master, None, 8192) > 0
    assert results and all(results), results
