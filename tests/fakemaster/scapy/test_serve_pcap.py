"""``serve --pcap FILE``: every connection's traffic recorded by a capture proxy on the address
``serve`` listens on; the capture dissects, and its binlog events are the files the client
fetched."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.events import RotateEvent
from tests.peers.policy import require_module, require_peer

REPO = Path(__file__).resolve().parents[3]
HANG_BOUND = 60


def test_serve_records_what_a_client_fetched(tmp_path: Path) -> None:
    require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
    from fakemaster.scapy import dissect_pcap

    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    pcap = tmp_path / "serve.pcap"
    process = subprocess.Popen(
        [sys.executable, "-m", "fakemaster", "serve", "--port", "0", "--pcap", str(pcap)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert found, line
        out = tmp_path / "fetched"
        out.mkdir()
        fetched = subprocess.run(
            [tool, "--read-from-remote-server", "--host=127.0.0.1", f"--port={found.group(1)}",
             "--user=root", "--raw", "--to-last-log", f"--result-file={out}/",
             "mysql-bin.000001"],
            capture_output=True, text=True, timeout=HANG_BOUND, check=False,
        )  # fmt: skip
        assert fetched.returncode == 0, fetched.stderr
    finally:
        process.terminate()
        process.communicate(timeout=HANG_BOUND)
    records = dissect_pcap(pcap)
    assert records and all(record.layer != "Raw" for record in records)
    captured = [
        record.event
        for record in records
        if record.event is not None
        and not (isinstance(record.event, RotateEvent) and record.event.log_pos == 0)
    ]
    files = sorted(out.iterdir())
    assert files
    expected = [event for path in files for _, event in read_binlog(path)]
    assert captured == expected
