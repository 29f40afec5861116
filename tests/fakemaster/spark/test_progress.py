"""Decoding progress (issue #22): a task reports its file's offset and events as decoding
proceeds, over UDP to the driver; the driver renders them. A corrupt file's error names it and
the offset. Read without Spark; the events counted by an independent walk of the headers."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark.progress import (
    FileProgress,
    ProgressListener,
    ProgressSender,
    progress_line,
)


@pytest.fixture(scope="module")
def binlog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scenarios.library import build
    from tests.fakemaster.spark.test_batch_scenarios import write_files

    (first, *_) = write_files(build("every_type"), tmp_path_factory.mktemp("b") / "binlogs")
    return Path(first)


def event_offsets(data: bytes) -> list[int]:
    """Every event's offset, from the 19-byte headers (event length at bytes 9-12)."""
    offsets, at = [], 4
    while at < len(data):
        offsets.append(at)
        at += int.from_bytes(data[at + 9 : at + 13], "little")
    return offsets


@pytest.fixture
def receiver() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(30)  # a bound on a wait, not a timing assertion
    yield sock
    sock.close()


def _address(sock: socket.socket) -> str:
    return f"127.0.0.1:{sock.getsockname()[1]}"


def _messages(sock: socket.socket) -> list[dict[str, Any]]:
    found = []
    while not found or not found[-1]["done"]:
        found.append(json.loads(sock.recv(65536)))
    return found


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.3  # every other item is half a second after the last report
        return self.now


def test_a_sender_reports_offsets_and_events_as_items_pass(receiver: socket.socket) -> None:
    sender = ProgressSender(_address(receiver), "/x/mysql-bin.000007", 1000, _Clock())
    items = [(4, "fd"), (120, "gtid"), (300, "query"), (500, "gtid"), (900, "xid")]
    assert list(sender.items(items)) == items
    sender.send(done=True)
    sender.close()
    messages = _messages(receiver)
    assert [m["pos"] for m in messages] == [4, 300, 900, 1000]
    assert [m["events"] for m in messages] == [1, 3, 5, 5]
    assert {m["file"] for m in messages} == {"/x/mysql-bin.000007"}
    assert [m["done"] for m in messages] == [False, False, False, True]


def test_the_data_source_reports_a_file_to_its_end(receiver: socket.socket, binlog: Path) -> None:
    from fakemaster.spark.source import BinlogBatchReader, BinlogFile

    path = binlog
    data = path.read_bytes()
    reader = BinlogBatchReader({"progress": _address(receiver)})
    rows = sum(b.num_rows for b in reader.read(BinlogFile(str(path), 1)))
    assert rows > 0
    messages = _messages(receiver)
    assert messages[-1] == {
        "file": str(path),
        "size": len(data),
        "pos": len(data),
        "events": len(event_offsets(data)),
        "done": True,
    }
    positions = [m["pos"] for m in messages]
    assert positions == sorted(positions)


def test_a_corrupt_file_is_named_with_the_offset_of_its_bad_event(
    tmp_path: Path, binlog: Path
) -> None:
    from fakemaster.spark.read_errors import BinlogReadError
    from fakemaster.spark.source import BinlogBatchReader, BinlogFile

    data = bytearray(binlog.read_bytes())
    offsets = event_offsets(bytes(data))
    bad_event = offsets[len(offsets) // 2]
    data[bad_event + 25] ^= 0xFF  # a byte of its body: its CRC32 no longer matches
    path = tmp_path / "mysql-bin.000004"
    path.write_bytes(data)
    with pytest.raises(BinlogReadError) as caught:
        list(BinlogBatchReader({}).read(BinlogFile(str(path), 4)))
    message = str(caught.value)
    assert message.startswith(f"cannot read binlog file {path}: ChecksumError: ")
    # The decoder names where the problem lies: the event's stored CRC32, its last 4 bytes.
    length = int.from_bytes(data[bad_event + 9 : bad_event + 13], "little")
    assert message.endswith(f" at offset {bad_event + length - 4}")
    assert "\n" not in message


def test_the_listener_keeps_each_files_latest_report() -> None:
    listener = ProgressListener()
    try:
        sender = ProgressSender(listener.address, "/b/f.000001", 100, _Clock())
        for item in sender.items([(4, "a"), (50, "b")]):
            del item
        sender.send(done=True)
        sender.close()
        files: dict[str, FileProgress] = {}
        for _ in range(3000):  # until the datagrams are in (a bound, not a timing)
            files = listener.files()
            if files.get("/b/f.000001", FileProgress()).done:
                break
            listener._stop.wait(0.01)
        assert files == {"/b/f.000001": FileProgress(100, 100, 2, True)}
    finally:
        listener.close()


def test_progress_line() -> None:
    files = {
        "/d/mysql-bin.000001": FileProgress(2_000_000, 2_000_000, 1200, True),
        "/d/mysql-bin.000002": FileProgress(4_000_000, 1_000_000, 310, False),
    }
    assert progress_line(files, 3, 9_000_000, 12.4) == (
        "[pipeline] decoding: 1/3 files, 3.0 MB of 9.0 MB read, 1,510 events, 12 s;"
        " mysql-bin.000002 25% (310 events)"
    )
    assert progress_line({}, 2, 0, 0) == (
        "[pipeline] decoding: 0/2 files, 0 B of 0 B read, 0 events, 0 s"
    )
