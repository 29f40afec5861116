"""``mariadb-binlog --read-from-remote-server`` against the fake master.

Served: a stream built with the encoder (several files: a rotation, a primary restart, the last
file still being written) and binlog files a real MariaDB 10.11 wrote (the golden captures,
served from a directory with the directory store). ``--raw`` must write files identical to the
served ones; ``mariadb-binlog -v`` must print the same for the fetched files as for the local
ones, and the same decoding the events over the wire (``--read-from-remote-server -v``) as
reading the local file.

The one legitimate difference: a primary sends the FORMAT_DESCRIPTION of the file it is still
writing with LOG_EVENT_BINLOG_IN_USE_F cleared (a real 10.11.19 does: its ``--raw`` copy of an
active binlog differs from the file in that flag byte only, the CRC being taken with the flag
clear). The expected files are the served ones with that flag cleared (``streams.as_sent``);
nothing else is normalised. (The tool prints the name of the temporary file it writes a LOAD
DATA's data to, the first unused one in its ``--local-load`` directory: every run gets the same
empty directory.)
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import BinlogStore, DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.constants import EventFlag
from tests.peers.policy import require_peer
from tests.support.streams import (
    BINLOG_IN_USE_OFFSET,
    TypedStream,
    as_sent,
    store_file_bytes,
)

USER, PASSWORD = "repl", "pw"
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "binlogs"
# Golden captures of a real primary (see tests/golden/binlogs/README.md) and the checksum
# setting a primary that wrote them would have.
GOLDEN_SETS = {
    "default": "CRC32",
    "compressed": "CRC32",
    "minimal": "CRC32",
    "full_metadata": "CRC32",
    "checksum_none": "NONE",
}
SOURCES = ["memory", *GOLDEN_SETS]


class Tool:
    """Runs mariadb-binlog. It writes the data of LOAD DATA events to files named after the
    first unused ``SQL_LOAD_MB-<file id>-<n>`` in ``--local-load`` and prints that name: each
    run gets the same empty directory, so equal inputs print equal names."""

    def __init__(self, path: str, load_dir: Path) -> None:
        self.path = path
        self.load_dir = load_dir

    def _run(self, args: tuple[str, ...]) -> subprocess.CompletedProcess[bytes]:
        shutil.rmtree(self.load_dir, ignore_errors=True)
        self.load_dir.mkdir()
        command = [self.path, f"--local-load={self.load_dir}", *args]
        return subprocess.run(command, capture_output=True, timeout=120)

    def __call__(self, *args: str) -> bytes:
        result = self._run(args)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        return result.stdout

    def verbose(self, *args: str) -> tuple[int, bytes, bytes]:
        result = self._run(("-v", *args))
        return result.returncode, result.stdout, result.stderr


@pytest.fixture
def tool(tmp_path: Path) -> Tool:
    found = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", found is not None, "apt-get install mariadb-client")
    assert found is not None
    return Tool(found, tmp_path / "load")


@dataclass
class Served:
    source: str
    master: BackgroundFakeMaster
    store: BinlogStore
    names: list[str]
    files: dict[str, bytes]  # as stored
    active: str | None  # the file still being written (IN_USE set), if any

    def expected(self, name: str) -> bytes:
        return as_sent(self.files[name]) if name == self.active else self.files[name]


def memory_store() -> MemoryBinlogStore:
    store = MemoryBinlogStore(server_id=100)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(2)
    stream.rotate()
    stream.add_batch()
    stream.restart()
    stream.add_batch()
    return store


def golden_store(name: str, directory: Path) -> DirectoryBinlogStore:
    source = GOLDEN / name
    files = sorted(p.name for p in source.glob("mysql-bin.[0-9]*"))
    assert files, f"no golden binlogs in {source}"
    for file_name in files:
        shutil.copyfile(source / file_name, directory / file_name)
    (directory / "mysql-bin.index").write_text("".join(f"./{n}\n" for n in files))
    return DirectoryBinlogStore(directory)


@pytest.fixture(params=SOURCES)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    source: str = request.param
    if source == "memory":
        store: BinlogStore = memory_store()
        checksum = "CRC32"
    else:
        served_dir = tmp_path / "served"
        served_dir.mkdir()
        store = golden_store(source, served_dir)
        checksum = GOLDEN_SETS[source]
    names = store.file_names()
    files = {name: store_file_bytes(store, name) for name in names}
    in_use = [n for n in names if files[n][BINLOG_IN_USE_OFFSET] & EventFlag.BINLOG_IN_USE]
    assert in_use == (names[-1:] if source == "memory" else [])
    # The server id is the served files' (their FORMAT_DESCRIPTION's); the checksum must agree.
    config = ServerConfig(user=USER, password=PASSWORD, binlog_checksum=checksum)
    try:
        with BackgroundFakeMaster(config, store) as master:
            yield Served(source, master, store, names, files, in_use[0] if in_use else None)
            assert master.errors == []
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            close()


# ``mariadb-binlog -v`` gives up (exit 1, no message) at the first rows event of a table with
# MariaDB 5.3-format temporal columns (the workload's t_temporal_old), on the local files just
# the same; for those files what it printed up to there is compared, and the plain output
# (every event as BINLOG base64) covers the rest.
VERBOSE_STOPS_EARLY = {"default", "compressed", "full_metadata", "checksum_none"}


def remote(served: Served) -> list[str]:
    master = served.master
    return [
        "--read-from-remote-server",
        f"--host={master.host}",
        f"--port={master.port}",
        f"--user={USER}",
        f"--password={PASSWORD}",
    ]


def write_expected(served: Served, directory: Path) -> list[Path]:
    directory.mkdir()
    paths = []
    for name in served.names:
        path = directory / name
        path.write_bytes(served.expected(name))
        paths.append(path)
    return paths


def test_raw_fetch_writes_the_served_files(tool: Tool, served: Served, tmp_path: Path) -> None:
    names = served.names
    fetched = tmp_path / "fetched"
    fetched.mkdir()
    tool(*remote(served), "--raw", f"--result-file={fetched}/", "--to-last-log", names[0])
    assert sorted(p.name for p in fetched.iterdir()) == names
    for name in names:
        got = (fetched / name).read_bytes()
        assert got == served.expected(name), name
        if name == served.active:
            stored = served.files[name]
            assert len(got) == len(stored)
            assert [i for i in range(len(got)) if got[i] != stored[i]] == [BINLOG_IN_USE_OFFSET]

    # One file at a time (without --to-last-log the tool stops at the end of the file asked).
    for name in names:
        single = tmp_path / f"single-{name}"
        single.mkdir()
        tool(*remote(served), "--raw", f"--result-file={single}/", name)
        assert [p.name for p in single.iterdir()] == [name]
        assert (single / name).read_bytes() == served.expected(name), name

    # Decoded, the fetched files read exactly like the served ones.
    expected_paths = [str(p) for p in write_expected(served, tmp_path / "expected")]
    fetched_paths = [str(fetched / name) for name in names]
    assert tool(*fetched_paths) == tool(*expected_paths)
    decoded = tool.verbose(*fetched_paths)
    assert decoded == tool.verbose(*expected_paths)
    assert decoded[0] == (1 if served.source in VERBOSE_STOPS_EARLY else 0)


def test_decoding_over_the_wire_matches_decoding_the_files(
    tool: Tool, served: Served, tmp_path: Path
) -> None:
    expected_paths = write_expected(served, tmp_path / "expected")
    decoded_rows = 0
    for name, path in zip(served.names, expected_paths, strict=True):
        assert tool(*remote(served), name) == tool(str(path)), name
        over_the_wire = tool.verbose(*remote(served), name)
        local = tool.verbose(str(path))
        assert over_the_wire == local, name
        if served.source not in VERBOSE_STOPS_EARLY:
            assert local[0] == 0, local[2]
        decoded_rows += local[1].count(b"### INSERT INTO ")
    assert decoded_rows > 0  # -v printed the rows events, not just headers
