"""Twenty ``mariadb-binlog --raw`` replicas read a binlog with a 20 MiB event from
``python -m fakemaster serve`` at once: each gets every file byte for byte, and the server's
private memory grows by less than a quarter of what one copy of the event per replica would
take (issue #7: 20 such clients used to push it to 960 MB).

Private memory is ``RssAnon``, sampled every 5 ms while the replicas read (a copy per replica
would last as long as its dump, so no sample can miss it). The server's whole RSS also counts
the frame cache's files, which it maps once and shares between replicas: pages of files,
which the kernel reclaims like any page cache."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent, XidEvent
from tests.peers.policy import require_peer
from tests.support.serve_process import ServeProcess

USER, PASSWORD = "repl", "secret"
REPLICAS = 20
BIG_EVENT = 20 << 20
# Twenty copies of the big event are 400 MiB. The server reads it once per frame-cache run (one
# for replicas that take annotations and one for those that do not), the two runs possibly at
# once, each read with at most one transient copy (the store trims what it read to whole
# events): up to 80 MiB, measured 55. 160 MiB leaves room for the interpreter and stays far
# below one copy per replica.
GROWTH_BOUND = 160 << 20
FDE_FLAGS_OFFSET = 4 + 17
BINLOG_IN_USE = 0x01
HANG_BOUND = 300


def corpus() -> dict[str, bytes]:
    """Three files: small transactions around the 20 MiB event in the first, a 3 MiB one in
    the open last file."""
    store = MemoryBinlogStore(clock=lambda: 1_700_000_000)
    for number in range(600):
        if number == 300:
            query = b"INSERT INTO t VALUES ('" + b"z" * BIG_EVENT + b"')"
        elif number == 500:
            query = b"INSERT INTO t VALUES ('" + b"w" * (3 << 20) + b"')"
        else:
            query = b"INSERT INTO t VALUES (%d)" % number
        store.append_transaction([QueryEvent(query=query, database="d"), XidEvent(xid=number)])
        if number in (400, 450):
            store.rotate()
    return {
        name: b"\xfebin" + b"".join(event for _, event in store.iter_events(name))
        for name in store.file_names()
    }


def as_sent(data: bytes) -> bytes:
    """A file as a dump sends it: the FDE's IN_USE flag cleared (the last file has it)."""
    sent = bytearray(data)
    sent[FDE_FLAGS_OFFSET] &= ~BINLOG_IN_USE & 0xFF
    return bytes(sent)


@pytest.mark.mariadb
def test_twenty_raw_dumps_of_a_20_mib_event_in_bounded_memory(tmp_path: Path) -> None:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    files = corpus()
    assert max(len(data) for data in files.values()) > BIG_EVENT
    binlogs = tmp_path / "binlogs"
    binlogs.mkdir()
    for name, data in files.items():
        (binlogs / name).write_bytes(data)
    (binlogs / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in files))
    server = ServeProcess(binlogs, tmp_path / "serve.stderr", USER, PASSWORD)
    try:
        before = server.rss("RssAnon")
        outputs = [tmp_path / f"replica{number}" for number in range(REPLICAS)]
        replicas = []
        for number, out in enumerate(outputs):
            out.mkdir()
            command = [
                tool,
                "--read-from-remote-server",
                "--host=127.0.0.1",
                f"--port={server.port}",
                f"--user={USER}",
                f"--password={PASSWORD}",
                "--raw",
                "--to-last-log",
                f"--result-file={out}/",
                *(["--skip-annotate-row-events"] if number % 2 else []),
                next(iter(files)),
            ]
            replicas.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            )
        for replica in replicas:
            _, stderr = replica.communicate(timeout=HANG_BOUND)
            assert replica.returncode == 0, stderr.decode(errors="replace")
        growth = server.peak_anon - before
    finally:
        log = server.stop()
    assert "Traceback" not in log, log
    last = list(files)[-1]
    for out in outputs:
        for name, data in files.items():
            got = (out / name).read_bytes()
            assert got == (as_sent(data) if name == last else data), (out, name)
    assert growth < GROWTH_BOUND, f"the server grew by {growth >> 20} MiB"
