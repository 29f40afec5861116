"""``serve --pcap FILE``: every connection's traffic recorded by a capture proxy on the address
``serve`` listens on; the capture dissects, and its binlog events are the files the client
fetched."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from decoder.binlog_file import read_binlog
from fakemaster.forms.jsonform import event_to_json
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


def test_serve_capture_of_several_connections_dissects_every_event(tmp_path: Path) -> None:
    """The issue's case: a probe and a ``mariadb -e "SELECT 1"`` before the dump, on a stream
    whose segments carry more than a hundred packets; the ``pcap`` command must print every
    event of the files ``mariadb-binlog`` fetched, and warn of nothing."""
    require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
    tools = {name: shutil.which(name) for name in ("mariadb-binlog", "mariadb")}
    for name, found in tools.items():
        require_peer(name, found is not None, "apt-get install mariadb-client")
    pcap = tmp_path / "serve.pcap"
    process = subprocess.Popen(
        [sys.executable, "-m", "fakemaster", "serve", "--port", "0", "--pcap", str(pcap),
         "--scenario", "many_tables"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out = tmp_path / "fetched"
    out.mkdir()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert found, line
        port = int(found.group(1))
        socket.create_connection(("127.0.0.1", port), timeout=HANG_BOUND).close()
        address = ["--host=127.0.0.1", f"--port={port}", "--user=root"]
        subprocess.run(
            [str(tools["mariadb"]), *address, "-e", "SELECT 1"],
            capture_output=True, timeout=HANG_BOUND, check=True,
        )  # fmt: skip
        subprocess.run(
            [str(tools["mariadb-binlog"]), "--read-from-remote-server", *address, "--raw",
             "--to-last-log", f"--result-file={out}/", "mysql-bin.000001"],
            capture_output=True, timeout=HANG_BOUND, check=True,
        )  # fmt: skip
    finally:
        process.terminate()
        process.communicate(timeout=HANG_BOUND)
    dissected = subprocess.run(
        [sys.executable, "-m", "fakemaster", "pcap", "--json", str(pcap)],
        cwd=REPO, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert (dissected.returncode, dissected.stderr) == (0, "")
    objects = [json.loads(line) for line in dissected.stdout.splitlines()]
    # Connection 1 is the probe (at most a greeting), 2 the query, 3 the dump.
    assert {o["connection"] for o in objects if o["summary"] == "COM_QUERY b'SELECT 1'"} == {2}
    assert {o["connection"] for o in objects if "event" in o} == {3}
    captured = [
        o["event"]
        for o in objects
        if "event" in o and not (o["event"]["type"] == "ROTATE" and o["event"]["log_pos"] == 0)
    ]
    expected = [
        event_to_json(event) for path in sorted(out.iterdir()) for _, event in read_binlog(path)
    ]
    assert len(expected) > 200
    assert captured == json.loads(json.dumps(expected))
