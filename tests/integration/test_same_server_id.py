"""Two ``mariadb-binlog --stop-never`` with the same ``--stop-never-slave-server-id``: the second
ends the first, on a real MariaDB 10.11 and on the fake master alike.

The real primary sends the older dump ERR 4052 (ER_SLAVE_SAME_ID) "A slave with the same
server_uuid/server_id is already connected; the first event ... the last byte read ..." and
closes it; mariadb-binlog prints "ERROR: Got error reading packet from server: <that text>" and
exits with 1. The fake master serves the real server's own binlog directory, so the whole text,
positions included, must be the same. A one-shot mariadb-binlog (no --stop-never: server id 0,
non-blocking) ends nobody.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "repl", "pw"
FIRST_FILE = "mysql-bin.000001"
# Generous: the machine is shared; every wait ends as soon as its condition holds.
PATIENCE = 120.0


@pytest.fixture
def mariadb_binlog() -> str:
    path = shutil.which("mariadb-binlog")
    require_peer(
        "mariadb-binlog",
        path is not None,
        "run `scripts/install-deps.sh` (Debian: apt-get install mariadb-client)",
    )
    assert path is not None
    return path


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Reader:
    """One mariadb-binlog process; its listing goes to a file (it flushes after each event)."""

    process: subprocess.Popen[bytes]
    listing: Path

    def has_read_up_to(self, position: int) -> bool:
        return f"end_log_pos {position} ".encode() in self.listing.read_bytes()

    def finish(self) -> tuple[int, str]:
        """Its exit code and standard error, once it ended by itself."""
        _, stderr = self.process.communicate(timeout=PATIENCE)
        return self.process.returncode, stderr.decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.communicate(timeout=PATIENCE)


class Readers:
    def __init__(self, tool: str, host: str, port: int, directory: Path) -> None:
        self.tool, self.host, self.port, self.directory = tool, host, port, directory
        self.started: list[Reader] = []

    def start(self, *options: str) -> Reader:
        listing = self.directory / f"listing-{len(self.started)}.txt"
        command = [
            self.tool,
            "--read-from-remote-server",
            f"--host={self.host}",
            f"--port={self.port}",
            f"--user={USER}",
            f"--password={PASSWORD}",
            *options,
            FIRST_FILE,
        ]
        with listing.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        reader = Reader(process, listing)
        self.started.append(reader)
        return reader

    def stop_all(self) -> None:
        for reader in self.started:
            reader.stop()


@pytest.fixture
def real_primary(mariadb_factory: MariaDBFactory) -> MariaDBServer:
    server = mariadb_factory()
    server.create_replication_user(USER, PASSWORD, privileges="REPLICATION SLAVE, BINLOG MONITOR")
    server.execute(["CREATE DATABASE d", "CREATE TABLE d.t (i INT)", "INSERT INTO d.t VALUES (1)"])
    return server


def same_id_scenario(readers: Readers, end_of_binlog: int) -> tuple[int, str]:
    first = readers.start("--stop-never", "--stop-never-slave-server-id=42")
    try:
        wait_until(lambda: first.has_read_up_to(end_of_binlog), "the first reader to catch up")
        second = readers.start("--stop-never", "--stop-never-slave-server-id=42")
        outcome = first.finish()
        wait_until(lambda: second.has_read_up_to(end_of_binlog), "the second reader to read")
        assert second.process.poll() is None, "the newer dump must go on"
        return outcome
    finally:
        readers.stop_all()


def test_same_server_id_ends_the_older_dump_like_mariadb(
    real_primary: MariaDBServer, mariadb_binlog: str, tmp_path: Path
) -> None:
    end = real_primary.master_status()[1]
    real_dir, fake_dir = tmp_path / "real", tmp_path / "fake"
    real_dir.mkdir()
    fake_dir.mkdir()
    real = same_id_scenario(
        Readers(mariadb_binlog, real_primary.host, real_primary.port, real_dir), end
    )
    # The real server's binlog files, unchanged since, served by the fake master.
    config = ServerConfig(accounts=(Account.replication(USER, PASSWORD),))
    with (
        DirectoryBinlogStore(real_primary.binlog_dir) as store,
        BackgroundFakeMaster(config, store) as fake,
    ):
        fake_outcome = same_id_scenario(
            Readers(mariadb_binlog, fake.host, fake.port, fake_dir), end
        )
        assert fake.errors == []
    assert real[0] == 1
    assert real[1].startswith(
        "ERROR: Got error reading packet from server: A slave with the same "
        "server_uuid/server_id is already connected; the first event 'mysql-bin.000001' at 4"
    )
    assert fake_outcome == real


@dataclass
class Primary:
    host: str
    port: int
    end: Callable[[], int]  # the end of the binlog being written
    write: Callable[[], None]  # log one more transaction


def one_shot_scenario(primary: Primary, tool: str, directory: Path) -> tuple[int, str]:
    """A one-shot reader (server id 0) ends nobody; a --stop-never one with the id does."""
    readers = Readers(tool, primary.host, primary.port, directory)
    try:
        first = readers.start("--stop-never", "--stop-never-slave-server-id=42")
        wait_until(lambda: first.has_read_up_to(primary.end()), "the first reader to catch up")
        one_shot = readers.start("--to-last-log")
        assert one_shot.finish()[0] == 0
        primary.write()
        # The first one still streams: it gets the new transaction.
        wait_until(lambda: first.has_read_up_to(primary.end()), "the first reader to go on")
        readers.start("--stop-never", "--stop-never-slave-server-id=42")
        return first.finish()
    finally:
        readers.stop_all()


def test_one_shot_reader_ends_nobody(
    real_primary: MariaDBServer, mariadb_binlog: str, tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "fake").mkdir()
    real = Primary(
        real_primary.host,
        real_primary.port,
        lambda: real_primary.master_status()[1],
        lambda: real_primary.execute("INSERT INTO d.t VALUES (2)"),
    )
    real_code, real_error = one_shot_scenario(real, mariadb_binlog, tmp_path / "real")
    assert real_code == 1 and "is already connected" in real_error

    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE t (i INT)")])

    def write() -> None:
        store.append_transaction([QueryEvent(database="d", query=b"DROP TABLE t")])

    config = ServerConfig(accounts=(Account.replication(USER, PASSWORD),))
    with BackgroundFakeMaster(config, store) as fake:
        primary = Primary(fake.host, fake.port, lambda: store.file_size(FIRST_FILE), write)
        code, error = one_shot_scenario(primary, mariadb_binlog, tmp_path / "fake")
        assert fake.errors == []
    last_event = [offset for offset, _ in store.iter_events(FIRST_FILE)][-1]
    assert (code, error) == (
        1,
        "ERROR: Got error reading packet from server: A slave with the same server_uuid/"
        f"server_id is already connected; the first event '{FIRST_FILE}' at 4, the last event "
        f"read from '{FIRST_FILE}' at {last_event}, the last byte read from '{FIRST_FILE}' at "
        f"{store.file_size(FIRST_FILE)}.\n",
    )
