"""``fakemaster check --html`` for two real clients, opened in headless Chromium: the Node
example client on @vlasky/zongji (fakemaster/contract/adapters/zongji_client.mjs) and
python-mysql-replication. Each run holds a case the client passes under a cut (its reconnect on
the timeline) and one it fails for a declared known limit (fakemaster/contract/adapters/
limits.py): the page shows the matrix with both verdicts, the failing case's first difference
as a table diff, its timeline and a pcap link that leads to a capture."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from fakemaster.contract.adapters.limits import known_limit
from fakemaster.contract.adapters.zongji import node_modules
from tests.integration.test_check_html_report import adapter, assert_links_resolve, check, matrix
from tests.peers.policy import require_module, require_peer
from tests.support.browser import rendered_dom

CUT = "multi_domain/cut-before-tx"


def section_id(case: str) -> str:
    """The id the report gives a case's section (an anchor of the matrix's links)."""
    return "case-" + re.sub(r"[^A-Za-z0-9]+", "-", case).strip("-")


def assert_failing_case_shown(page: Path, client: str, case: str) -> None:
    assert known_limit(client, case) is not None  # the failure is the declared one
    dom = rendered_dom(page)
    shown = matrix(dom)
    assert shown[CUT][0] == "pass", shown
    assert shown[case][0] == "FAIL", shown
    section = dom.find("section", id=section_id(case))
    assert section.attrs["data-verdict"] == "FAIL"
    # the final tables' first difference as a table diff: rows the oracle has, rows the client has
    rows = section.find("table", cls="diff").find_all("tr")
    kinds = {cls for row in rows for cls in row.attrs.get("class", "").split()}
    assert {"minus", "plus"} & kinds, kinds
    svg = section.find("svg", cls="timeline")
    assert svg.find_all("rect"), "the timeline draws the served groups"
    assert_links_resolve(page, dom, section_id(case))  # snapshot, output, ..., pcap
    cut = dom.find("section", id=section_id(CUT))
    assert "1 reconnect(s)" in cut.text
    assert len(cut.find("svg", cls="timeline").find_all("g", cls="applied")) == 1


def test_the_node_example_client_on_zongji(tmp_path: Path) -> None:
    require_peer(
        "node with @vlasky/zongji",
        shutil.which("node") is not None
        and (node_modules() / "@vlasky" / "zongji" / "package.json").is_file(),
        "scripts/install-deps.sh (npm ci in tests/node)",
    )
    failing = "ddl_mid_stream/clean"
    directory = tmp_path / "report"
    assert check(directory, adapter("zongji"), (CUT, failing)) == 1
    assert_failing_case_shown(directory / "index.html", "zongji", failing)


def test_python_mysql_replication(tmp_path: Path) -> None:
    require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")
    failing = "xa/clean"
    directory = tmp_path / "report"
    assert check(directory, adapter("python_mysql_replication"), (CUT, failing)) == 1
    assert_failing_case_shown(directory / "index.html", "python-mysql-replication", failing)
