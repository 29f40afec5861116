"""The ``check`` command line: --list, --only, --seed, --generated, --junit-xml, exit codes."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from fakemaster.contract.cases import builtin_cases, generated_cases
from tests.peers.policy import require_module

REPO = Path(__file__).resolve().parents[2]


def fakemaster(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", "check", *words],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def listed(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [line.split("\t")[0] for line in done.stdout.splitlines()]


def test_list_prints_one_case_per_line_with_what_it_holds() -> None:
    names = listed(fakemaster("--list"))
    assert names == [case.name for case in builtin_cases() + generated_cases(0, 4)]
    assert listed(fakemaster("--list", "--generated", "2", "--seed", "40"))[-2:] == [
        "generated/40",
        "generated/41",
    ]
    first = fakemaster("--list", "--only", "compressed/clean").stdout
    assert first == (
        "compressed/clean\tlog_bin_compress=ON: rows events compressed from 64 bytes on, others"
        " left plain. No faults.\n"
    )


def test_only_takes_names_and_patterns() -> None:
    names = listed(fakemaster("--list", "--only", "many_tables/*", "--only", "generated/3"))
    assert names == [
        "many_tables/clean",
        "many_tables/rst-in-big-transaction",
        "many_tables/shutdown-error",
        "generated/3",
    ]


def test_usage_errors_exit_as_pytest() -> None:
    # 5: no case selected (pytest: no tests collected), with or without a client.
    done = fakemaster("--list", "--only", "no_such/*")
    assert (done.returncode, done.stderr) == (5, "error: no case matches no_such/* (see --list)\n")
    done = fakemaster("--client", "true", "--only", "no_such/*")
    assert (done.returncode, done.stdout) == (5, "")
    # 4: a usage error check finds (pytest: usage error).
    done = fakemaster("--only", "compressed/clean")
    assert (done.returncode, done.stderr) == (4, "error: --client CMD is required (or --list)\n")
    done = fakemaster("--client", "client {nope}", "--only", "compressed/clean")
    assert done.returncode == 4 and "unknown placeholder 'nope'" in done.stderr
    done = fakemaster("--client", "client 'unbalanced", "--only", "compressed/clean")
    assert (
        done.returncode == 4
        and done.stderr.startswith("error: ")
        and "Traceback" not in done.stderr
    )
    done = fakemaster("--client", "true", "--timeout", "0", "--only", "compressed/clean")
    assert (done.returncode, done.stderr) == (4, "error: --timeout is a number of seconds > 0\n")
    assert fakemaster("--generated", "-1", "--list").returncode == 4


def test_files_that_cannot_be_written_are_usage_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    done = fakemaster("--client", "true", "--only", "compressed/clean", "--workdir", str(a_file))
    assert (done.returncode, done.stderr) == (4, f"error: --workdir {a_file}: File exists\n")
    junit = a_file / "check.xml"
    done = fakemaster("--client", "true", "--only", "compressed/clean", "--junit-xml", str(junit))
    assert done.returncode == 4
    assert done.stderr.splitlines()[-1] == f"error: --junit-xml {junit}: File exists"
    assert done.stdout.splitlines()[-1] == "1 cases: 0 passed, 1 failed"  # the table came first
    assert fakemaster("--seed", "x").returncode == 2  # argparse, as every fakemaster command


def test_a_passing_run_exits_zero_and_writes_junit_xml(tmp_path: Path) -> None:
    require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")
    junit = tmp_path / "out" / "check.xml"
    junit.parent.mkdir()
    client = (
        f"{sys.executable} -m fakemaster.contract.adapters.python_mysql_replication"
        " {host} {port} {out}"
    )
    done = fakemaster(
        "--client",
        client,
        "--only",
        "generated/*",
        "--seed",
        "20",
        "--generated",
        "2",
        "--junit-xml",
        str(junit),
        "--workdir",
        str(tmp_path / "work"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "2 cases: 2 passed, 0 failed"
    suite = ET.parse(junit).getroot()
    assert [case.get("name") for case in suite.iter("testcase")] == ["generated/20", "generated/21"]
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")
    # --workdir keeps each case's snapshot, the client's output, stdout and stderr.
    kept = sorted(path.name for path in (tmp_path / "work").iterdir())
    assert kept == [
        f"generated--{seed}.{kind}"
        for seed in (20, 21)
        for kind in ("out.jsonl", "snapshot.jsonl", "stderr", "stdout")
    ]
