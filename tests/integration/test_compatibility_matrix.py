"""``scripts/compatibility-matrix.py`` on a few cases against every client of the matrix (the
full run writes docs/compatibility.md; CI runs this part): the page has every client, a verdict
in every cell, and the reason of each failure. A client that is not installed fails the test
(it would be ``n/a``) unless FAKEMASTER_ALLOW_MISSING_PEERS is set. (The committed
page is checked in tests/fakemaster/contract/test_matrix.py.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from fakemaster.contract.adapters.zongji import PACKAGES, node_modules
from fakemaster.contract.mariadb_server import find_mariadbd
from fakemaster.contract.matrix import CLIENTS
from tests.peers.policy import require_module, require_peer

REPO = Path(__file__).resolve().parents[2]
VERDICTS = {"pass", "limit", "FAIL"}
# A cut and its reconnect; the XA case that python-mysql-replication is known to fail.
CASES = ("multi_domain/cut-before-tx", "xa/cut-before-xa-commit")


def matrix_cells(page: str) -> tuple[list[str], dict[str, list[str]]]:
    """The client ids of the case table's header, and case -> its cells."""
    lines = page.splitlines()
    header = next(line for line in lines if line.startswith("| Case |"))
    clients = [cell.strip(" `") for cell in header.split("|")[2:-1]]
    rows = {}
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("| `"):
            break
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        rows[cells[0].strip("`")] = cells[1:]
    return clients, rows


def require_every_client() -> None:
    require_module("pymysqlreplication", "pip install -e '.[test]'")
    require_peer("mariadbd", find_mariadbd() is not None, "apt-get install mariadb-server")
    require_peer(
        "mariadb-binlog",
        shutil.which("mariadb-binlog") is not None,
        "apt-get install mariadb-client",
    )
    for package in PACKAGES:
        require_peer(
            f"node with {package}",
            shutil.which("node") is not None and (node_modules() / package).is_dir(),
            "scripts/install-deps.sh (npm ci in tests/node)",
        )


def test_a_few_cases_against_every_client(tmp_path: Path) -> None:
    require_every_client()
    out = tmp_path / "compatibility.md"
    words = [sys.executable, "scripts/compatibility-matrix.py", "--generated", "0"]
    for case in CASES:
        words += ["--only", case]
    done = subprocess.run(
        [*words, "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    clients, rows = matrix_cells(page)
    assert clients == [client.id for client in CLIENTS]
    assert list(rows) == list(CASES)
    for case, cells in rows.items():
        assert len(cells) == len(clients) and set(cells) <= VERDICTS, (case, cells)
    verdict = {
        client: dict(zip(rows, column, strict=True))
        for client, column in zip(clients, zip(*rows.values(), strict=True), strict=True)
    }
    # the project's own client and a real replica survive a cut (docs/contract.md)
    assert verdict["fakemaster-client"][CASES[0]] == "pass"
    assert verdict["mariadb-replica"][CASES[0]] == "pass"
    # python-mysql-replication's XA limit is declared, so it is not an unexpected failure
    assert verdict["python-mysql-replication"][CASES[1]] == "limit"
    for client in clients:
        for case, cell in verdict[client].items():
            if cell != "pass":  # each failure is listed under its client with a reason
                section = page.split(f"## `{client}`", 1)[1].split("\n## ", 1)[0]
                assert f"* `{case}` (" in section, (client, case)
