"""The HTML report's page from a hand-written results document: whatever a client printed or a
case is named is text on the page, never markup; the matrix links each case to its section."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from fakemaster.contract.html_report import case_anchor, render
from fakemaster.contract.results import FORMAT

HOSTILE = "<script>alert(1)</script>&\"'"


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.append(str(values["id"]))
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))


def document(**case: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": f"s/{HOSTILE}",
        "description": HOSTILE,
        "passed": False,
        "verdicts": [{"check": "no loss", "ok": False, "detail": HOSTILE, "lines": [HOSTILE]}],
        "run": {"returncode": 1, "seconds": 0.5, "stderr": HOSTILE, "error_line": HOSTILE},
        "plan": [{"kind": "cut", "at": {"transaction": 1}, "session": 0}],
        "applied": [{"session": 0, "kind": "cut", "offset": 10, "plan_index": 0, "note": HOSTILE}],
        "sessions": 2,
        "served": [{"gtid": "0-1-1", "rows": 1, "delivered": 1}],
        "reports_changes": True,
        "table_diff": None,
        "history_sql": HOSTILE,
        "files": {"stderr": f"files/{HOSTILE}"},
    }
    base.update(case)
    return {"format": FORMAT, "client": HOSTILE, "checks": ["no loss"], "cases": [base]}


def test_hostile_text_is_escaped() -> None:
    page = render(document())
    assert "<script>" not in page
    parsed = _Tags()
    parsed.feed(page)
    assert "script" not in parsed.tags


def test_the_matrix_links_to_the_case_section() -> None:
    parsed = _Tags()
    parsed.feed(render(document()))
    anchor = case_anchor(f"s/{HOSTILE}")
    assert anchor in parsed.ids
    assert f"#{anchor}" in parsed.hrefs
    assert all(c.isalnum() or c == "-" for c in anchor)


def test_a_table_diff_and_a_timeline_without_a_change_log() -> None:
    diff = {
        "table": "t",
        "columns": ["id", "v"],
        "missing": 1,
        "unexpected": 1,
        "rows": [{"sign": "-", "cells": ["1", "a"]}, {"sign": "+", "cells": ["1", None]}],
    }
    page = render(document(table_diff=diff, reports_changes=False))
    assert '<tr class="minus"><td class="sign">-</td><td>1</td><td>a</td></tr>' in page
    assert '<tr class="plus"><td class="sign">+</td><td>1</td><td>NULL</td></tr>' in page
    assert 'class="group unknown"' in page and 'class="group ok"' not in page
