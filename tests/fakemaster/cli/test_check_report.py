"""``check report RESULTS --html DIR`` and ``check --html``/``--pcap`` usage errors: one
``error:`` line and exit status 4 (check's usage error), never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakemaster.contract.results import FORMAT

REPO = Path(__file__).resolve().parents[3]


def fakemaster(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *words],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_broken_results_file_is_one_error_line(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text("{not json", encoding="utf-8")
    done = fakemaster("check", "report", str(results), "--html", str(tmp_path / "out"))
    assert done.returncode == 4
    assert done.stderr.startswith(f"error: {results}: line 1, column 2: ")
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_report_writes_the_page_and_relinks_the_files(tmp_path: Path) -> None:
    (tmp_path / "run" / "files").mkdir(parents=True)
    (tmp_path / "run" / "files" / "s--c.stderr").write_text("boom\n", encoding="utf-8")
    case = {
        "name": "s/c",
        "passed": True,
        "verdicts": [],
        "plan": [],
        "applied": [],
        "served": [],
        "run": {"returncode": 0, "seconds": 1.0},
        "files": {"stderr": "files/s--c.stderr"},
    }
    document = {"format": FORMAT, "client": "c", "checks": [], "cases": [case]}
    (tmp_path / "run" / "results.json").write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "other" / "place"
    done = fakemaster("check", "report", str(tmp_path / "run" / "results.json"), "--html", str(out))
    assert done.returncode == 0, done.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="../../run/files/s--c.stderr"' in page


def test_pcap_needs_a_directory() -> None:
    done = fakemaster("check", "--client", "true {out}", "--only", "multi_domain/clean", "--pcap")
    assert done.returncode == 4
    assert done.stderr == "error: --pcap keeps its files in --workdir DIR or --html DIR\n"


def test_html_into_a_file_is_a_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    done = fakemaster("check", "--client", "true {out}", "--html", str(blocker / "report"))
    assert done.returncode == 4
    assert done.stderr.startswith(f"error: --html {blocker / 'report'}: ")
    assert len(done.stderr.splitlines()) == 1
