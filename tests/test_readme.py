"""The README's Python examples run as written, in order, from the repository root."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text("utf-8"), re.DOTALL)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    exec(compile(BLOCKS[index], f"README.md example {index + 1}", "exec"), {})
