"""``pipeline batch`` with a good and a corrupt file (issue #22): the run ends with one line
naming the corrupt file and the offset, not a Spark traceback; the good file is not blamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from scenarios.library import build
from tests.fakemaster.spark.test_batch_scenarios import write_files
from tests.fakemaster.spark.test_progress import event_offsets


def test_a_corrupt_file_is_named_in_one_line_at_the_end(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del spark  # the session the command reuses
    good, *_ = write_files(build("multi_domain"), tmp_path / "good")
    data = bytearray(Path(good).read_bytes())
    offsets = event_offsets(bytes(data))
    bad_event = offsets[len(offsets) // 2]
    data[bad_event + 25] ^= 0xFF
    bad = tmp_path / "bad" / "mysql-bin.000009"
    bad.parent.mkdir()
    bad.write_bytes(data)
    status = main(["pipeline", "batch", good, str(bad), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1
    lines = err.strip().splitlines()
    length = int.from_bytes(data[bad_event + 9 : bad_event + 13], "little")
    assert lines[-1].startswith(f"error: cannot read binlog file {bad}: ChecksumError: ")
    assert lines[-1].endswith(f" at offset {bad_event + length - 4}")
    assert good not in err
    assert "Traceback" not in err and "Py4J" not in err and "at org.apache" not in err
