"""The decoder on hostile files: under a memory limit, every case raises a typed DecodeError
(naming the offset and event type), never MemoryError, and never hangs.

Each case runs in a child process whose address space is limited (RLIMIT_AS) to far less than
what the bytes claim; the child's timeout only bounds a hang, it decides no verdict.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from decoder import decode_event, iter_raw_events, read_binlog
from decoder.mysql_json import _JsonReader, parse_mysql_json
from encoder import encode_event
from encoder.compression import compress_record
from fakemaster.vocabulary.constants import BINLOG_MAGIC, CHECKSUM_LEN, MAX_UNCOMPRESSED_LENGTH
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import FormatDescriptionEvent, QueryEvent
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET
from tests.peers.policy import require_peer
from tests.support.hostile_inputs import (
    compressed_query_event,
    compressed_rows_event,
    huge_length_file,
    record,
    shared_json_chain,
    zeros_zlib_stream,
)

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 512 << 20
HANG_BOUND = 600  # seconds; a healthy run takes a few

_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import FormatDescriptionEvent, QueryEvent
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET
from tests.support.hostile_inputs import CASES
try:
    result = {{"value": repr(CASES[sys.argv[1]](sys.argv[2]))[:200]}}
except DecodeError as exc:
    result = {{"error": type(exc).__name__, "reason": exc.reason, "offset": exc.offset,
               "event_type": exc.event_type}}
except BaseException as exc:
    result = {{"error": type(exc).__name__, "reason": str(exc)[:200]}}
print(json.dumps(result))
"""


def run_limited(case: str, path: Path) -> dict[str, Any]:
    """What ``case`` gives for the input at ``path``, run under MEMORY_LIMIT."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD.format(limit=MEMORY_LIMIT), case, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=HANG_BOUND,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


@pytest.fixture(scope="module")
def gigabyte_of_zeros(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """About 1 MB of zlib that inflates to 1 GiB (twice the child's memory limit)."""
    return b"".join(zeros_zlib_stream(1 << 30))


@pytest.mark.parametrize("case", ["read_binlog", "stream"])
def test_a_23_byte_file_claiming_4_gib_is_a_truncated_event(tmp_path: Path, case: str) -> None:
    path = tmp_path / "hostile.000001"
    path.write_bytes(huge_length_file())
    assert len(path.read_bytes()) == 23
    result = run_limited(case, path)
    assert result["error"] == "DecodeError", result
    assert result["reason"] == "truncated event: 19 of 4294967295 bytes"
    assert result["offset"] == 4


def test_a_declared_length_above_the_maximum_is_refused_before_inflating(
    tmp_path: Path,
) -> None:
    path = tmp_path / "query.event"
    path.write_bytes(compressed_query_event(record(0xFFFFFFFF, zlib.compress(b"x"))))
    result = run_limited("decode_query", path)
    assert result["error"] == "DecodeError", result
    assert result["event_type"] == "QUERY_COMPRESSED"
    assert result["reason"] == (
        f"compressed record header says {0xFFFFFFFF} bytes,"
        f" more than the {MAX_UNCOMPRESSED_LENGTH} allowed"
    )


def test_a_megabyte_inflating_to_a_gibibyte_does_not_escape_as_memory_error(
    tmp_path: Path, gigabyte_of_zeros: bytes
) -> None:
    # The declared length is MariaDB's ceiling, but this process cannot hold it.
    path = tmp_path / "query.event"
    path.write_bytes(compressed_query_event(record(1 << 30, gigabyte_of_zeros)))
    assert len(path.read_bytes()) < 2 << 20
    result = run_limited("decode_query", path)
    assert result["error"] == "DecodeError", result
    assert result["event_type"] == "QUERY_COMPRESSED"
    assert result["reason"] == f"compressed record of {1 << 30} bytes does not fit in memory"


@pytest.mark.parametrize("case", ["decode_query", "decode_rows"])
def test_a_stream_inflating_past_its_declared_length_is_refused(
    tmp_path: Path, gigabyte_of_zeros: bytes, case: str
) -> None:
    build = compressed_query_event if case == "decode_query" else compressed_rows_event
    path = tmp_path / "hostile.event"
    path.write_bytes(build(record(1000, gigabyte_of_zeros)))
    result = run_limited(case, path)
    assert result["error"] == "DecodeError", result
    assert result["event_type"] in ("QUERY_COMPRESSED", "WRITE_ROWS_COMPRESSED_V1")
    # Inflated one byte past the declared length, and no further.
    assert result["reason"] == "compressed record inflates to 1001 bytes, header says 1000"


def test_the_maximum_is_configurable_per_context() -> None:
    text = b"SELECT '" + b"x" * 5000 + b"'"
    event = compressed_query_event(record(len(text), zlib.compress(text)))
    assert decode_event(event, BinlogContext(checksum=False)).query == text
    strict = BinlogContext(checksum=False, max_uncompressed_length=4096)
    with pytest.raises(DecodeError, match="more than the 4096 allowed") as err:
        decode_event(event, strict)
    assert err.value.event_type == "QUERY_COMPRESSED"
    assert strict.copy().max_uncompressed_length == 4096


def test_shared_json_substructures_raise_a_typed_error_under_a_memory_limit(
    tmp_path: Path,
) -> None:
    # 2**91 - 1 values expanded from 905 bytes.
    path = tmp_path / "shared.json"
    path.write_bytes(shared_json_chain(90))
    result = run_limited("parse_json", path)
    assert result["error"] == "DecodeError", result
    assert "expands past its 905 bytes" in result["reason"]


def test_shared_json_is_read_once_per_offset(monkeypatch: pytest.MonkeyPatch) -> None:
    # Linear: each value's bytes are read once however many offsets name them; the chain of
    # 60 levels would take 2**61 reads if every reference were followed.
    document = shared_json_chain(60)
    reads = 0
    original = _JsonReader._read

    def counting(self: _JsonReader, kind: int, pos: int, end: int, depth: int) -> Any:
        nonlocal reads
        reads += 1
        return original(self, kind, pos, end, depth)

    monkeypatch.setattr(_JsonReader, "_read", counting)
    with pytest.raises(DecodeError, match="expands past"):
        parse_mysql_json(document)
    assert reads <= 61


def test_sharing_within_the_documents_size_gives_the_expanded_value() -> None:
    # Three levels expand to 15 values in 35 bytes: allowed, and equal to the tree it names.
    assert parse_mysql_json(shared_json_chain(3)) == [[[[], []], [[], []]], [[[], []], [[], []]]]
    # Four levels: 31 values in 45 bytes; five: 63 values in 55 bytes, refused.
    assert parse_mysql_json(shared_json_chain(4)) is not None
    with pytest.raises(DecodeError, match="expands past its 55 bytes"):
        parse_mysql_json(shared_json_chain(5))


class _RecordingReader:
    """A binary file that records how many bytes each read asked for."""

    def __init__(self, data: bytes) -> None:
        self._file = io.BytesIO(data)
        self.asked: list[int] = []

    def read(self, size: int, /) -> bytes:
        self.asked.append(size)
        return self._file.read(size)


def test_reads_never_ask_for_more_than_the_bytes_already_read_justify() -> None:
    # The 4 GiB claim is never passed to read(): the first request is 1 MiB at most.
    hostile = _RecordingReader(huge_length_file())
    with pytest.raises(DecodeError, match="truncated event: 19 of 4294967295 bytes"):
        list(read_binlog(hostile))
    assert max(hostile.asked) <= 1 << 20
    # A genuine 3 MiB event still reads whole, each request at most what has arrived (or
    # 1 MiB): memory stays within twice the event's real size.
    ctx = BinlogContext()
    query = b"SELECT '" + b"y" * (3 << 20) + b"'"
    data = (
        BINLOG_MAGIC
        + encode_event(FormatDescriptionEvent(), ctx)
        + encode_event(QueryEvent(database="db", query=query), ctx)
    )
    genuine = _RecordingReader(data)
    events = [event for _, event in read_binlog(genuine)]
    assert isinstance(events[1], QueryEvent) and events[1].query == query
    got = 0
    for size in genuine.asked:
        assert size <= max(got, 1 << 20)
        got += size


def _nested_arrays(levels: int) -> bytes:
    """``levels`` small arrays, each the single element of the one before (no type byte)."""
    inner = struct.pack("<HH", 0, 4)
    for _ in range(levels - 1):
        inner = struct.pack("<HH", 1, 7 + len(inner)) + b"\x02" + struct.pack("<H", 7) + inner
    return inner


def _expected_nesting(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("levels", "too_deep"), [(98, False), (99, True)])
def test_a_value_read_once_keeps_the_nesting_limit_where_it_is_referenced_again(
    levels: int, too_deep: bool
) -> None:
    # The root array's first element is X (nesting depth 1); its second is an array W holding
    # X again (depth 2), at the same bytes and ending where the root ends. X is read once, at
    # depth 1, where it fits; at depth 2 it is 100 levels deep when it has 99 levels, as MySQL's
    # limit counts it.
    nested = _nested_arrays(levels)
    wrapper = struct.pack("<HH", 1, 7 + len(nested)) + b"\x02" + struct.pack("<H", 7) + nested
    root = struct.pack("<HH", 2, 10 + len(wrapper)) + b"\x02" + struct.pack("<H", 17)
    root += b"\x02" + struct.pack("<H", 10) + wrapper
    document = b"\x02" + root
    if too_deep:
        with pytest.raises(DecodeError, match="nested too deeply"):
            parse_mysql_json(document)
    else:
        expected = _expected_nesting(levels)
        assert parse_mysql_json(document) == [expected, [expected]]


# --- what a real MariaDB client does with the same records ---------------------------------

GOLDEN = ROOT / "tests" / "golden" / "binlogs" / "compressed" / "mysql-bin.000001"
FORGED_QUERY = b"CREATE TABLE fm.t (pk INT)"


def _golden_with_forged_query(declared: int, stream: bytes) -> tuple[bytes, int]:
    """The real file up to its first QUERY_COMPRESSED event, whose compressed record is
    replaced (CRC recomputed); and that event's offset."""
    data = GOLDEN.read_bytes()
    offset, event, raw = next(
        (offset, event, raw)
        for (offset, event), (_, raw) in zip(
            read_binlog(GOLDEN), iter_raw_events(GOLDEN), strict=False
        )
        if isinstance(event, QueryEvent) and event.compressed
    )
    genuine = compress_record(event.query)
    body = raw[: -CHECKSUM_LEN - len(genuine)] + record(declared, stream)
    forged = bytearray(body + bytes(CHECKSUM_LEN))
    struct.pack_into("<I", forged, EVENT_LENGTH_OFFSET, len(forged))
    struct.pack_into("<I", forged, len(forged) - CHECKSUM_LEN, zlib.crc32(forged[:-CHECKSUM_LEN]))
    return data[:offset] + bytes(forged), offset


@pytest.mark.parametrize(
    "declared",
    [
        None,  # the genuine length: both read it
        MAX_UNCOMPRESSED_LENGTH + 1,  # mariadb-binlog reads a declared 1 GiB, not one byte more
        0xFFFFFFFF,
        len(FORGED_QUERY) - 1,  # the stream inflates past the declared length
    ],
)
def test_mariadb_binlog_refuses_the_records_the_decoder_refuses(
    tmp_path: Path, declared: int | None
) -> None:
    client = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", client is not None, "apt-get install mariadb-client")
    assert client is not None
    query = FORGED_QUERY
    data, offset = _golden_with_forged_query(
        len(query) if declared is None else declared, zlib.compress(query)
    )
    path = tmp_path / "forged.000001"
    path.write_bytes(data)
    listing = subprocess.run(
        [client, str(path)], capture_output=True, text=True, timeout=HANG_BOUND, check=False
    )
    if declared is None:
        assert listing.returncode == 0, listing.stderr
        assert "CREATE TABLE fm.t (pk INT)" in listing.stdout
        assert [event for _, event in read_binlog(path)][-1].query == query
        return
    assert listing.returncode == 1
    assert f"Could not read entry at offset {offset}" in listing.stderr
    with pytest.raises(DecodeError) as err:
        list(read_binlog(path))
    assert err.value.event_type == "QUERY_COMPRESSED"
