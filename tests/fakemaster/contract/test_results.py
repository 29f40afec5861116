"""Reading a results file back (``check report``): each way it can be broken is an error
naming the file and what is wrong, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.contract.results import FORMAT, ResultsError, read_results


def a_case(**changes: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "name": "s/c",
        "verdicts": [],
        "plan": [],
        "applied": [],
        "served": [],
        "run": {},
        "files": {},
    }
    case.update(changes)
    return case


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_well_formed_file_reads_back(tmp_path: Path) -> None:
    document = {"format": FORMAT, "client": "x", "checks": [], "cases": [a_case()]}
    assert read_results(write(tmp_path, document)) == document


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"cases": []}, "not a check results file"),
        ({"format": "other/1", "cases": []}, "not a check results file"),
        ([], "not a check results file"),
        ({"format": FORMAT, "cases": {}}, '"cases" is not a list'),
        ({"format": FORMAT, "cases": [{"verdicts": []}]}, "case 0 has no name"),
        ({"format": FORMAT, "cases": [a_case(verdicts={})]}, "'verdicts' is not a list"),
        ({"format": FORMAT, "cases": [a_case(served=None)]}, "'served' is not a list"),
        ({"format": FORMAT, "cases": [a_case(run=[])]}, "no 'run' or 'files' object"),
    ],
)
def test_a_broken_document_is_named(tmp_path: Path, document: Any, message: str) -> None:
    path = write(tmp_path, document)
    with pytest.raises(ResultsError, match=message) as caught:
        read_results(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_broken_json_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"format":\n  oops}', encoding="utf-8")
    with pytest.raises(ResultsError, match=r"results.json: line 2, column 3: "):
        read_results(path)


def test_not_utf8_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ResultsError, match=r"not UTF-8 \(byte 7\)"):
        read_results(path)
    with pytest.raises(ResultsError, match="No such file"):
        read_results(tmp_path / "absent.json")


def test_image_rows_mark_exactly_the_differences() -> None:
    from fakemaster.contract.results import _image_rows

    served = {"id": "1", "v": "a", "blob": "0xFF"}
    rows = _image_rows("after", served, {"id": "1", "v": None, "extra": "x"}, {"id", "v"})
    marks = {row["column"]: (row["served"], row["client"], row["differs"]) for row in rows}
    assert marks == {
        "id": ("1", "1", False),
        "v": ("a", None, True),  # a NULL where a value was served
        "blob": ("0xFF", "(absent)", False),  # left out, and the binlog's image did not carry it
        "extra": ("(absent)", "x", True),  # a column the table lacks
    }
    left_out = _image_rows("before", served, {"id": "1", "v": "a"}, {"id", "v", "blob"})
    assert [row["column"] for row in left_out if row["differs"]] == ["blob"]
    assert all(row["differs"] for row in _image_rows("before", None, {"id": "1"}, set()))
