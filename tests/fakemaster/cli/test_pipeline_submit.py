"""``pipeline submit-files``: the ``--py-files`` zip and entry point of this installation."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fakemaster.cli import main
from fakemaster.cli.pipeline_submit import PACKAGES, build_zip, entry_point


def test_prints_the_zip_and_the_entry_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pipeline", "submit-files", "--dir", str(tmp_path)]) == 0
    words = capsys.readouterr().out.split()
    assert words[0] == "--py-files" and len(words) == 3
    archive, entry = Path(words[1]), Path(words[2])
    assert archive.parent == tmp_path and archive.name.startswith("fakemaster-")
    assert entry == entry_point() and entry.name == "spark_submit.py" and entry.is_file()
    names = zipfile.ZipFile(archive).namelist()
    assert {n.split("/")[0] for n in names} == set(PACKAGES)
    assert "fakemaster/cli/spark_submit.py" in names and "decoder/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    # The same installation: the same zip, not written again.
    before = archive.stat().st_mtime_ns
    assert build_zip(tmp_path) == archive and archive.stat().st_mtime_ns == before
    assert [p.name for p in tmp_path.iterdir()] == [archive.name]


def test_the_zip_alone_runs_the_command(tmp_path: Path) -> None:
    """What an executor has: the zip first on its path (the version it holds is the one used)."""
    archive = build_zip(tmp_path)
    code = "import fakemaster, scenarios.oracle, decoder.columnar; print(fakemaster.__file__)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(archive), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,  # not a checkout: only the zip holds the packages
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == f"{archive}/fakemaster/__init__.py"


def test_an_unwritable_directory_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    assert main(["pipeline", "submit-files", "--dir", str(tmp_path / "file" / "sub")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1
