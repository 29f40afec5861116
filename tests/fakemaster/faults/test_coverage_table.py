"""docs/faults.md, "Where each kind is shown", is complete and true: every fault kind of a plan
(:class:`~fakemaster.faults.plan.FaultKind`), every server fault
(:class:`~fakemaster.faults.server_faults.ServerFaultKind`) and every ERR preset
(:data:`~fakemaster.faults.plan.ERROR_PRESETS`) has a row, each row names a test on a real
replica and one on the project's client, and every test it names is a pytest node id that
exists (collected by pytest itself). A new kind without a test on both sides fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from fakemaster.faults.plan import ERROR_PRESETS, FaultKind
from fakemaster.faults.server_faults import ServerFaultKind

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "faults.md"
SECTION = "## Where each kind is shown"
TESTS = "tests/integration"
# `file.py::test_name` or `file.py::test_name[id, id...]` (cases of a parametrised test).
REFERENCE = re.compile(r"`(test_\w+\.py)::(test_\w+)(?:\[([^\]`]+)\])?`")
CODE = re.compile(r"`([a-z_0-9]+)`")


def table_rows(text: str) -> list[tuple[str, str, str]]:
    """The rows (kind, real replica, client) of the section's table."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end >= 0 else len(text)]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| Kind"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"a row of three cells, not {line!r}"
        rows.append((cells[0], cells[1], cells[2]))
    return rows


def node_ids(cell: str) -> list[str]:
    """The pytest node ids a cell names."""
    ids = []
    for file, name, cases in REFERENCE.findall(cell):
        base = f"{TESTS}/{file}::{name}"
        if not cases:
            ids.append(base)
        else:
            ids.extend(f"{base}[{case.strip()}]" for case in cases.split(","))
    return ids


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, str, str]]:
    return table_rows(DOC.read_text(encoding="utf-8"))


def test_the_table_parser_reads_cells_and_references() -> None:
    text = (
        f"{SECTION}\n\n| Kind | Replica | Client |\n|---|---|---|\n"
        "| stall (`stall`) | waits: `a.py::test_x[p, q]` | `b.py::test_y` |\n\n## Next\n| x |\n"
    )
    assert table_rows(text) == [
        ("stall (`stall`)", "waits: `a.py::test_x[p, q]`", "`b.py::test_y`")
    ]
    assert node_ids("waits: `test_a.py::test_x[p, q]`, `test_b.py::test_y`") == [
        f"{TESTS}/test_a.py::test_x[p]",
        f"{TESTS}/test_a.py::test_x[q]",
        f"{TESTS}/test_b.py::test_y",
    ]


def test_every_fault_kind_server_fault_and_err_preset_has_a_row(
    rows: list[tuple[str, str, str]],
) -> None:
    listed = {code for kind, _, _ in rows for code in CODE.findall(kind)}
    wanted = (
        {str(kind) for kind in FaultKind}
        | {str(kind) for kind in ServerFaultKind}
        | set(ERROR_PRESETS)
    )
    assert sorted(wanted - listed) == [], "kinds without a row in docs/faults.md"


def test_every_row_names_a_test_on_a_real_replica_and_on_the_client(
    rows: list[tuple[str, str, str]],
) -> None:
    assert len(rows) >= len(FaultKind)
    for kind, replica, client in rows:
        assert node_ids(replica), f"{kind}: no test on a real replica"
        assert node_ids(client), f"{kind}: no test on the project's client"


def test_every_test_the_table_names_exists(rows: list[tuple[str, str, str]]) -> None:
    named = {node for _, replica, client in rows for node in node_ids(replica) + node_ids(client)}
    files = sorted({node.split("::")[0] for node in named})
    for file in files:
        assert (ROOT / file).is_file(), file
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    collected = {line.strip() for line in result.stdout.splitlines() if "::" in line}
    assert sorted(named - collected) == [], "node ids in docs/faults.md that pytest does not have"
