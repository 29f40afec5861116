"""docs/contract.md says what check does: its case table lists every built-in case --list runs,
and its environment table every variable a client gets."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from fakemaster.contract.adapter import CommandAdapter, Endpoint
from fakemaster.contract.cases import builtin_cases
from fakemaster.contract.process import RUN_ID

DOC = Path(__file__).resolve().parents[3] / "docs" / "contract.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the rows of the markdown table whose header line starts with ``header``."""
    lines = text[text.index(header) :].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_case_table_lists_every_case_list_runs() -> None:
    documented = [
        f"{scenario}/{name}"
        for scenario, names, _ in table_rows(section("The cases"), "| Scenario | Cases |")
        for name in re.findall(r"`([^`]+)`", names)
    ]
    assert documented == [case.name for case in builtin_cases()]


def test_the_environment_table_lists_every_variable_a_client_gets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "env.py"
    script.write_text(
        "import os, sys\n"
        "names = sorted(n for n in os.environ if n.startswith('FAKEMASTER_'))\n"
        "open(sys.argv[1], 'w').write('\\n'.join(names))\n"
    )
    endpoint = Endpoint("127.0.0.1", 3306, "repl", "pw", "snap", "f.000001", "f.000001", 4, "")
    out = tmp_path / "case.out.jsonl"
    for name in [name for name in os.environ if name.startswith("FAKEMASTER_")]:
        monkeypatch.delenv(name)  # only what check sets
    run = CommandAdapter(f"{sys.executable} {script} {{out}}").run(endpoint, out, 30.0)
    assert run.returncode == 0, run.stderr
    got = out.read_text().split("\n")
    rows = table_rows(section("What the client gets"), "| Variable | Placeholder |")
    documented = sorted(
        name for cells in rows for name in re.findall(r"`(FAKEMASTER_\w+)`", cells[0])
    )
    assert got == documented
    assert RUN_ID in documented
