"""scripts/mutation.py on a module of four lines: the mutants it makes, their verdicts, the
results file and the table (the full run over the project's modules is docs/mutation.md's)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutation.py"

CLAMP = """\
def clamp(value: int, limit: int) -> int:
    if value > limit:
        return limit
    return value
"""
# Kills both dropped returns; `>` -> `>=` is equivalent (at value == limit both give limit).
CHECK = """\
from clamp import clamp


def test_clamp() -> None:
    assert clamp(5, 3) == 3
    assert clamp(1, 3) == 1
"""


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_mutants_are_a_function_of_the_source() -> None:
    mutation = _script()
    source = "def f(a, b):\n    '''doc'''\n    if a < 1 and b:\n        g()\n    else:\n        raise E\n    return not a\n"
    found = mutation.sites(source)
    assert found == mutation.sites(source)
    described = [
        (m.kind, m.before, m.after)
        for m in (mutation.mutant(source, site, n) for n, site in enumerate(found))
    ]
    assert described == [
        (
            "swap-branches",
            "if a < 1 and b: <1 stmt> else: <1>",
            "if a < 1 and b: <1 stmt> else: <1>",
        ),
        ("boolop", "a < 1 and b", "a < 1 or b"),
        ("compare", "a < 1", "a <= 1"),
        ("int+1", "1", "2"),
        ("drop-call", "g()", "pass"),
        ("drop-raise", "raise E", "pass"),
        ("return-none", "return not a", "return None"),
        ("drop-not", "not a", "a"),
    ]
    assert mutation.selection(10, 3) == [0, 3, 6]
    assert mutation.selection(2, 5) == [0, 1]


def test_kills_and_survivors_in_a_results_file(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "clamp.py").write_text(CLAMP)
    (tree / "check_clamp.py").write_text(CHECK)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tree", str(tree), "--path", "clamp.py"]
        + ["--tests", "check_clamp.py", "--results", str(results)],
        capture_output=True,
        text=True,
        env=dict(os.environ, HYPOTHESIS_PROFILE="ci"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads((results / "clamp.json").read_text())
    verdicts = [(r["line"], r["before"], r["after"], r["outcome"]) for r in record["results"]]
    assert verdicts == [
        (2, "value > limit", "value >= limit", "survived"),
        (3, "return limit", "return None", "killed"),
        (4, "return value", "return None", "killed"),
    ]
    assert (tree / "clamp.py").read_text() == CLAMP  # the tree itself is never touched
    table = done.stdout.splitlines()[-2:]
    assert table[0].split() == [
        "module",
        "mutants",
        "run",
        "killed",
        "survived",
        "timeout",
        "score",
    ]
    assert table[1].split() == ["clamp", "3", "3", "2", "1", "0", "67%"]


def test_a_usage_error_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--tree", str(tmp_path), "--path", "absent.py"]
        + ["--tests", "t.py"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith("absent.py: no such file in " + str(tmp_path))
    assert "Traceback" not in done.stderr
