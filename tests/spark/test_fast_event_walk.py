"""The columnar change-event path decodes only the events that carry state (GTID, statements,
annotated queries) and counts the others from a walk of the headers: the change events still
equal the reference's where that matters most: a file without GTIDs (the group's state comes
from BEGIN, and XID ends an annotated query), ROTATE at the end, and a file that does not
frame (the decoder's error, as before)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.peers.policy import require_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def _file(tmp_path: Path, gtids: bool) -> Path:
    from bench_codec import generated_events  # type: ignore[import-not-found]

    from encoder.binlog_file import BinlogWriter
    from fakemaster.events import AnnotateRowsEvent, GtidEvent, QueryEvent, RotateEvent

    path = tmp_path / "walk.000001"
    with BinlogWriter(path, fix_positions=True) as writer:
        for n, event in enumerate(generated_events(6)):
            if isinstance(event, GtidEvent):
                if gtids:
                    writer.write(event)
                else:
                    writer.write(QueryEvent(thread_id=7, database="bench", query=b"BEGIN"))
                if n % 3 == 1:  # some groups annotated, the others not
                    writer.write(AnnotateRowsEvent(query=f"INSERT /* {n} */".encode()))
                continue
            writer.write(event)
        writer.write(RotateEvent(position=4, next_file="walk.000002"))
    return path


@pytest.mark.parametrize("gtids", [True, False])
def test_walked_events_give_the_reference_table(tmp_path: Path, gtids: bool) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.changes import arrow_schema, read_changes
    from fakemaster.spark.fast import _event_heads, read_changes_fast

    path = _file(tmp_path, gtids)
    assert _event_heads(str(path)) is not None  # the walk is taken, not the full decode
    schema = arrow_schema()
    for source in (str(path), io.BytesIO(path.read_bytes())):
        reference = pa.Table.from_batches(list(read_changes(str(path), path.name, 1)), schema)
        fast = pa.Table.from_batches(list(read_changes_fast(source, path.name, 1)), schema)
        expected, got = reference.to_pylist(), fast.to_pylist()
        assert [r["source"]["query"] for r in got] == [r["source"]["query"] for r in expected]
        assert got == expected
        assert any(r["source"]["query"] for r in got) and any(
            r["source"]["query"] is None for r in got if r["op"] == "c"
        )


def test_a_file_that_does_not_frame_raises_as_before(tmp_path: Path) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    from fakemaster.errors import DecodeError
    from fakemaster.spark.fast import _event_heads, read_changes_fast

    path = _file(tmp_path, True)
    cut = tmp_path / "cut.000001"
    cut.write_bytes(path.read_bytes()[:-7])
    assert _event_heads(str(cut)) is None
    with pytest.raises(DecodeError):
        list(read_changes_fast(str(cut), cut.name, 1))
