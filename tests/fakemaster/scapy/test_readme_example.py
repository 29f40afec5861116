"""The README's capture-and-dissect example (docs text proposed for the scapy section), run.

The example is kept here verbatim until it is in README.md, where tests/test_readme.py runs
every example; then this copy goes.
"""

from __future__ import annotations

import shutil

import pytest

from tests.peers.policy import require_peer

EXAMPLE = """
import subprocess
import tempfile
from pathlib import Path

from fakemaster.config import ServerConfig
from fakemaster.events import QueryEvent
from fakemaster.scapy import dissect_pcap
from fakemaster.scapy.capture import CaptureProxy
from fakemaster.server import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore

store = MemoryBinlogStore(server_id=1)
store.append_transaction([QueryEvent(database="shop", query=b"CREATE TABLE t (id INT)")])
pcap = Path(tempfile.mkdtemp()) / "dump.pcap"
with BackgroundFakeMaster(ServerConfig(user="repl", password="secret"), store) as master:
    # Record the traffic of a real client through a capture proxy (or use tcpdump -i lo).
    with CaptureProxy(master.host, master.port, pcap) as proxy:
        subprocess.run(
            ["mariadb-binlog", "--read-from-remote-server", f"--host={proxy.host}",
             f"--port={proxy.port}", "--user=repl", "--password=secret", "mysql-bin.000001"],
            check=True, capture_output=True,
        )
records = dissect_pcap(pcap, proxy.port)  # one record per MySQL packet, both directions
for record in records:
    print(record.line())
queries = [r.event.query for r in records if isinstance(r.event, QueryEvent)]
assert queries[-1] == b"CREATE TABLE t (id INT)"
"""


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("scapy.contrib.mysql")
    found = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", found is not None, "apt-get install mariadb-client")
    exec(compile(EXAMPLE, "README example", "exec"), {})
    out = capsys.readouterr().out
    assert "COM_BINLOG_DUMP" in out and "QueryEvent" in out
