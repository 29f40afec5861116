"""``pipeline batch``/``stream`` helpers that need no Spark session: the local session's shuffle
partitions and the change events of a batch counted from its Parquet footers."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from fakemaster.cli.pipeline import _local_cores, change_events
from tests.peers.policy import require_module


@pytest.mark.parametrize(
    ("master", "cores"),
    [("local", 1), ("local[3]", 3), ("local[4,2]", 4), ("spark://host:7077", None)],
)
def test_shuffle_partitions_follow_a_local_master(master: str, cores: int | None) -> None:
    assert _local_cores(master) == cores


def test_local_star_is_the_cpus_this_process_may_use() -> None:
    import os

    assert _local_cores("local[*]") == len(os.sched_getaffinity(0))


def test_change_events_are_counted_from_the_footers(tmp_path: Path) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa
    import pyarrow.parquet as pq

    batch = tmp_path / "changes" / "batch_id=4"
    batch.mkdir(parents=True)
    pq.write_table(pa.table({"op": ["c", "u", "d"]}), batch / "part-0.parquet")
    pq.write_table(pa.table({"op": ["c", "c"]}), batch / "part-1.parquet")
    (batch / "_SUCCESS").write_text("")
    materialiser = SimpleNamespace(changes_path=f"file://{tmp_path}/changes")
    assert change_events(None, materialiser, 4) == 5
    # An empty batch writes no file: no directory, no events.
    assert change_events(None, materialiser, 5) == 0
