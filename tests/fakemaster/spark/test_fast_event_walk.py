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

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))


def _file(tmp_path: Path, gtids: bool) -> Path:
    from bench_codec import generated_events  # type: ignore[import-not-found]

    from encoder.binlog_file import BinlogWriter
    from fakemaster.vocabulary.events import AnnotateRowsEvent, GtidEvent, QueryEvent, RotateEvent

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
    from fakemaster.spark.changes_columnar import read_changes_fast
    from fakemaster.spark.event_walk import _event_heads

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
    from fakemaster.spark.changes_columnar import read_changes_fast
    from fakemaster.spark.event_walk import _event_heads
    from fakemaster.vocabulary.errors import DecodeError

    path = _file(tmp_path, True)
    cut = tmp_path / "cut.000001"
    cut.write_bytes(path.read_bytes()[:-7])
    assert _event_heads(str(cut)) is None
    with pytest.raises(DecodeError):
        list(read_changes_fast(str(cut), cut.name, 1))


def _gtid_file(tmp_path: Path, kind: str) -> Path:
    """bench_codec's groups with GTIDs of ``kind``: "common" (of several domains and servers,
    and timestamps), "commit id" (some with a group commit id), "xa" (one group prepared and
    committed as XA), "no crc" (a file without checksums)."""
    import dataclasses

    from bench_codec import generated_events

    from encoder.binlog_file import BinlogWriter
    from fakemaster.vocabulary.constants import ChecksumAlg, GtidFlag
    from fakemaster.vocabulary.events import (
        FormatDescriptionEvent,
        GtidEvent,
        QueryEvent,
        XaXid,
        XidEvent,
    )

    path = tmp_path / f"{kind.replace(' ', '-')}.000001"
    groups = 0
    with BinlogWriter(path, fix_positions=True) as writer:
        for event in generated_events(8):
            if isinstance(event, FormatDescriptionEvent) and kind == "no crc":
                event = dataclasses.replace(event, checksum_alg=ChecksumAlg.OFF)
            if isinstance(event, GtidEvent):
                groups += 1
                event = dataclasses.replace(
                    event,
                    domain_id=groups % 3,
                    server_id=100 + groups % 2,
                    seq_no=1000 + groups,
                    timestamp=1_700_000_000 + groups,
                )
                if kind == "commit id" and groups % 2:
                    event = dataclasses.replace(
                        event, flags2=event.flags2 | GtidFlag.GROUP_COMMIT_ID, commit_id=groups
                    )
                if kind == "xa" and groups == 3:
                    xid = XaXid(1, b"g3", b"")
                    writer.write(
                        dataclasses.replace(
                            event, flags2=event.flags2 | GtidFlag.PREPARED_XA, xid=xid
                        )
                    )
                    writer.write(QueryEvent(database="bench", query=b"XA START X'6733'"))
                    continue
            if isinstance(event, XidEvent) and kind == "xa" and groups == 3:
                writer.write(QueryEvent(database="bench", query=b"XA END X'6733'"))
                writer.write(QueryEvent(database="bench", query=b"XA PREPARE X'6733'"))
                writer.write(
                    GtidEvent(seq_no=5000, flags2=GtidFlag.COMPLETED_XA, xid=XaXid(1, b"g3", b""))
                )
                writer.write(QueryEvent(database="bench", query=b"XA COMMIT X'6733'"))
                continue
            writer.write(event)
    return path


@pytest.mark.parametrize("kind", ["common", "commit id", "xa", "no crc"])
def test_gtids_read_from_the_walk_or_decoded_give_the_reference_table(
    tmp_path: Path, kind: str
) -> None:
    """Common GTIDs are read from the file's bytes (not decoded); a file with any other GTID
    has them decoded; both give the reference's source blocks and sequence."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa

    from fakemaster.spark.changes import arrow_schema, read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast
    from fakemaster.spark.event_walk import _event_heads

    path = _gtid_file(tmp_path, kind)
    heads = _event_heads(str(path))
    assert heads is not None
    assert (heads[2] is not None) == (kind in ("common", "no crc"))
    schema = arrow_schema()
    reference = pa.Table.from_batches(list(read_changes(str(path), path.name, 1)), schema)
    fast = pa.Table.from_batches(list(read_changes_fast(str(path), path.name, 1)), schema)
    expected, got = reference.to_pylist(), fast.to_pylist()
    assert len({r["source"]["gtid"] for r in got}) > 4  # several GTIDs, servers, domains
    assert {100, 101} <= {r["source"]["server_id"] for r in got}
    assert got == expected


def test_an_fde_that_disagrees_with_the_gtids_lengths_takes_the_reference_path(
    tmp_path: Path,
) -> None:
    """GTIDs of 38 bytes read where the FDE says each event has a CRC: not read from the walk
    (the decoder's error, as the reference path gives it)."""
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    from fakemaster.spark.changes import read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast
    from fakemaster.spark.event_walk import _event_heads
    from fakemaster.vocabulary.errors import DecodeError

    crc = _gtid_file(tmp_path, "common").read_bytes()
    plain = _gtid_file(tmp_path, "no crc").read_bytes()
    # The FDE of the file with CRCs (same length as the other's: its checksum byte and CRC
    # stay) heading the events without CRCs.
    fde_end = 4 + int.from_bytes(crc[4 + 9 : 4 + 13], "little")
    plain_fde_end = 4 + int.from_bytes(plain[4 + 9 : 4 + 13], "little")
    mixed = tmp_path / "mixed.000001"
    mixed.write_bytes(crc[:fde_end] + plain[plain_fde_end:])
    assert _event_heads(str(mixed)) is not None
    with pytest.raises(DecodeError) as reference:
        list(read_changes(str(mixed), mixed.name, 1))
    with pytest.raises(DecodeError) as fast:
        list(read_changes_fast(str(mixed), mixed.name, 1))
    assert str(fast.value) == str(reference.value)
