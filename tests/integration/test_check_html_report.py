"""``fakemaster check --html DIR`` opened in headless Chromium (Debian's package): the case
matrix, a failing case's first difference as a table diff, its timeline (the planned fault, the
dump sessions, the delivered event groups) and links that resolve to the case's files, the pcap
among them. The clients: the project's own (passes), the same client with one flaw each
(:mod:`fakemaster.contract.adapters.broken_fakemaster_client`: ``lose-last`` never logs the last
change, ``null-value`` reports NULL for a served value), and python-mysql-replication. ``check
report`` draws the same page again from results.json into another directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from tests.peers.policy import require_module
from tests.support.browser import Node, rendered_dom

REPO = Path(__file__).resolve().parents[2]
CASES = ("multi_domain/clean", "multi_domain/cut-before-tx")
CUT = "case-multi-domain-cut-before-tx"


def adapter(name: str, *flaw: str) -> str:
    words = [sys.executable, "-m", f"fakemaster.contract.adapters.{name}", *flaw]
    return " ".join(words) + " {host} {port} {out}"


def check(directory: Path, client: str, cases: tuple[str, ...] = CASES) -> int:
    words = [sys.executable, "-m", "fakemaster", "check", "--client", client, "--generated", "0"]
    for case in cases:
        words += ["--only", case]
    words += ["--html", str(directory), "--pcap"]
    done = subprocess.run(words, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert (directory / "index.html").is_file() and (directory / "results.json").is_file()
    return done.returncode


def matrix(page: Node) -> dict[str, list[str]]:
    """case -> [verdict, one cell per check] as the browser shows them."""
    rows = page.find("table", id="matrix").find_all("tr")
    return {
        row.find("th").text: [cell.text for cell in row.find_all("td")][:-1] for row in rows[1:]
    }


def local_target(page: Path, href: str) -> Path:
    """The file a relative link of ``page`` leads to, resolved as the browser does."""
    url = urljoin(page.resolve().as_uri(), href)
    assert urlparse(url).scheme == "file", url
    return Path(unquote(urlparse(url).path))


def assert_links_resolve(page: Path, dom: Node, section: str) -> dict[str, Path]:
    links = dom.find("section", id=section).find_all("a", cls="file")
    targets = {link.attrs["data-kind"]: local_target(page, link.attrs["href"]) for link in links}
    assert {"snapshot", "output", "stdout", "stderr", "pcap"} <= set(targets), targets
    for kind, target in targets.items():
        assert target.is_file(), f"{kind} link {target} leads nowhere"
    assert targets["pcap"].read_bytes()[:4] == bytes.fromhex("d4c3b2a1")  # classic pcap, LE
    return targets


@pytest.fixture(scope="module")
def lose_last(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("lose-last") / "report"
    assert check(directory, adapter("broken_fakemaster_client", "lose-last")) == 1
    return directory / "index.html"


def test_the_matrix_and_a_lost_change_on_the_timeline(lose_last: Path) -> None:
    dom = rendered_dom(lose_last)
    shown = matrix(dom)
    assert set(shown) == set(CASES)
    for cells in shown.values():  # verdict, caught up, no loss, no duplicates, ...
        assert cells[:4] == ["FAIL", "pass", "FAIL", "pass"], cells
    section = dom.find("section", id=CUT)
    assert section.attrs["data-verdict"] == "FAIL"
    # the first difference names the lost change; the timeline marks its group lost
    detail = section.find("ul", cls="failed-checks").text
    assert "no loss: 1 of " in detail
    gtid = detail.split("(gtid ", 1)[1].split(" ", 1)[0]
    diff = section.find("table", cls="diff").text
    assert f"gtid {gtid} row" in diff
    svg = section.find("svg", cls="timeline")
    lost = svg.find_all("rect", cls="lost")
    assert [rect.text.split(":")[0] for rect in lost] == [gtid]
    assert svg.find_all("rect", cls="ok")
    # the cut: planned, applied in the first session, and the client's reconnect
    assert len(svg.find_all("g", cls="planned")) == 1
    assert len(svg.find_all("g", cls="applied")) == 1
    assert "session 1 (a reconnect)" in svg.text
    assert "2 dump session(s), 1 reconnect(s)" in section.text
    assert "cut" in section.find("table", cls="faults").text
    assert "CREATE TABLE" in section.find("pre", cls="sql").text
    targets = assert_links_resolve(lose_last, dom, CUT)
    # the browser opens a linked file too
    assert '"kind": "header"' in rendered_dom(targets["output"]).text


def test_a_null_value_shows_as_a_table_diff(tmp_path: Path) -> None:
    directory = tmp_path / "report"
    assert check(directory, adapter("broken_fakemaster_client", "null-value"), CASES[1:]) == 1
    dom = rendered_dom(directory / "index.html")
    assert matrix(dom)[CASES[1]][0] == "FAIL"
    section = dom.find("section", id=CUT)
    # the first change reported otherwise: the NULL where a value was served
    changed = [
        [cell.text for cell in row.find_all("td")]
        for row in section.find("table", cls="change-diff").find_all("tr", cls="changed")
    ]
    assert changed and all(cells[3] == "NULL" != cells[2] for cells in changed), changed
    assert "gtid " in section.text.split("First change reported otherwise than served:")[1]
    table = section.find("table", cls="diff")
    rows = table.find_all("tr")
    assert [cell.text for cell in rows[0].find_all("th")][1:] == ["id", "v"]
    minus = [
        [c.text for c in r.find_all("td")] for r in rows if "minus" in r.attrs.get("class", "")
    ]
    plus = [[c.text for c in r.find_all("td")] for r in rows if "plus" in r.attrs.get("class", "")]
    assert minus and plus
    assert all(cells[2] == "NULL" for cells in plus), plus  # what the client wrote
    assert all(cells[2] != "NULL" for cells in minus), minus  # what was served
    assert {cells[1] for cells in plus} <= {cells[1] for cells in minus}


def test_the_correct_client_passes_and_report_redraws_the_page(tmp_path: Path) -> None:
    directory = tmp_path / "report"
    assert check(directory, adapter("fakemaster_client")) == 0
    again = tmp_path / "elsewhere" / "again"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fakemaster",
            "check",
            "report",
            str(directory / "results.json"),
            "--html",
            str(again),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for page in (directory / "index.html", again / "index.html"):
        dom = rendered_dom(page)
        assert all(cells[0] == "pass" for cells in matrix(dom).values())
        assert dom.find("p", id="summary").text == "2 cases: 2 passed, 0 failed"
        assert not dom.find_all("table", cls="diff")
        assert_links_resolve(page, dom, CUT)


def test_python_mysql_replication(tmp_path: Path) -> None:
    require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")
    directory = tmp_path / "report"
    status = check(directory, adapter("python_mysql_replication"), CASES[1:])
    dom = rendered_dom(directory / "index.html")
    shown = matrix(dom)
    assert shown[CASES[1]][0] == ("pass" if status == 0 else "FAIL")
    section = dom.find("section", id=CUT)
    assert "2 dump session(s), 1 reconnect(s)" in section.text
    assert_links_resolve(directory / "index.html", dom, CUT)
