"""The HTML report of a ``fakemaster check`` run: one static ``index.html`` (plain HTML and CSS,
no script, no server) drawn from the results document (:mod:`fakemaster.contract.results`).

The page holds the case matrix (case x check, each cell the verdict with its reason as a
tooltip, the case name a link to its section), then per case: the verdict and the failed checks,
the first difference of the final tables as a table diff (rows missing and unexpected), the
timeline (an inline SVG: the fault plan, each dump session with the faults applied in it, and
the served event groups coloured by what the client delivered of them), the client's stderr,
the served history as SQL and links to the case's files (snapshot, output, stdout, stderr,
pcap) relative to the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

__all__ = ["case_anchor", "render", "write_report"]

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.2em;border-top:1px solid #ccc;padding-top:.8em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;
vertical-align:top;text-align:left}th{background:#f2f2f2}
.pass{background:#d9f2d9}.FAIL{background:#f7c6c6;font-weight:bold}.na{background:#eee;color:#777}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5em;overflow:auto;max-height:24em}
tr.minus td{background:#fbe0e0}tr.changed td{background:#fbe0e0;font-weight:bold}tr.plus td{background:#e0f0fb}td.sign{font-weight:bold}
svg.timeline text{font:11px sans-serif}.legend span{display:inline-block;padding:0 .5em;
margin-right:.5em}.files a{margin-right:1em}
"""
_GROUP_FILL = {
    "ok": "#7cc47c",
    "lost": "#e05050",
    "dup": "#9b59b6",
    "unknown": "#bbbbbb",
    "none": "#eeeeee",
}


def case_anchor(name: str) -> str:
    """The id of a case's section (letters, digits and dashes)."""
    return "case-" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def _verdict_cell(verdict: Mapping[str, Any] | None) -> str:
    if verdict is None or verdict.get("ok") is None:
        reason = "" if verdict is None else str(verdict.get("detail", ""))
        return f'<td class="na" title="{escape(reason)}">n/a</td>'
    mark = "pass" if verdict["ok"] else "FAIL"
    return f'<td class="{mark}" title="{escape(str(verdict.get("detail", "")))}">{mark}</td>'


def _matrix(document: Mapping[str, Any]) -> str:
    checks: Sequence[str] = document.get("checks", [])
    head = "".join(f"<th>{escape(check)}</th>" for check in checks)
    rows = []
    for case in document["cases"]:
        by_check = {v.get("check"): v for v in case["verdicts"]}
        cells = "".join(_verdict_cell(by_check.get(check)) for check in checks)
        mark = "pass" if case.get("passed") else "FAIL"
        first = next((v for v in case["verdicts"] if v.get("ok") is False), None)
        reason = "" if first is None else f"{first['check']}: {first.get('detail', '')}"
        rows.append(
            f'<tr data-case="{escape(case["name"])}"><th><a href="#{case_anchor(case["name"])}">'
            f'{escape(case["name"])}</a></th><td class="{mark}">{mark}</td>{cells}'
            f'<td class="reason">{escape(reason)}</td></tr>'
        )
    return (
        f'<table id="matrix"><tr><th>case</th><th>verdict</th>{head}<th>first difference</th>'
        f"</tr>{''.join(rows)}</table>"
    )


def _verdicts(case: Mapping[str, Any]) -> str:
    items = []
    for verdict in case["verdicts"]:
        if verdict.get("ok") is not False:
            continue
        lines = "\n".join(str(line) for line in verdict.get("lines", []))
        items.append(
            f"<li><b>{escape(str(verdict['check']))}</b>: {escape(str(verdict.get('detail', '')))}"
            + (f"<pre>{escape(lines)}</pre>" if lines else "")
            + "</li>"
        )
    return f'<ul class="failed-checks">{"".join(items)}</ul>' if items else ""


def _cell(value: Any) -> str:
    return "NULL" if value is None else escape(str(value))


def _change_diff(case: Mapping[str, Any]) -> str:
    """The first change reported otherwise than served: a row per column, the differing ones
    marked."""
    diff = case.get("change_diff")
    if not isinstance(diff, Mapping):
        return ""
    rows = "".join(
        f'<tr class="{"changed" if row["differs"] else ""}"><td>{escape(str(row["image"]))}</td>'
        f"<td>{escape(str(row['column']))}</td><td>{_cell(row['served'])}</td>"
        f"<td>{_cell(row['client'])}</td></tr>"
        for row in diff["rows"]
    )
    return (
        f"<p>First change reported otherwise than served: {escape(str(diff['change']))}</p>"
        '<table class="change-diff"><tr><th>image</th><th>column</th><th>served</th>'
        f"<th>client</th></tr>{rows}</table>"
    )


def _diff(case: Mapping[str, Any]) -> str:
    """The first difference as a table diff: the first change reported otherwise than served
    and the final tables' rows when they differ; else the first failed check's lines, one a
    row (``-``/``+`` marked)."""
    diff = case.get("table_diff")
    changes = _change_diff(case)
    if isinstance(diff, Mapping):
        head = "".join(f"<th>{escape(str(c))}</th>" for c in diff["columns"])
        rows = []
        for row in diff["rows"]:
            kind = "minus" if row["sign"] == "-" else "plus"
            cells = "".join(
                f"<td>{'NULL' if c is None else escape(str(c))}</td>" for c in row["cells"]
            )
            rows.append(f'<tr class="{kind}"><td class="sign">{row["sign"]}</td>{cells}</tr>')
        return changes + (
            f"<p>Final table <code>{escape(str(diff['table']))}</code>: {diff['missing']} row(s)"
            f" missing (-, the oracle has them), {diff['unexpected']} unexpected (+, the client"
            f' has them)</p><table class="diff"><tr><th></th>{head}</tr>{"".join(rows)}</table>'
        )
    first = next((v for v in case["verdicts"] if v.get("ok") is False), None)
    if changes or first is None:
        return changes
    rows = []
    for line in [first.get("detail", ""), *first.get("lines", [])]:
        text = str(line).strip()
        sign = text[:1] if text[:1] in "-+" else ""
        kind = {"-": "minus", "+": "plus"}.get(sign, "")
        rows.append(f'<tr class="{kind}"><td class="sign">{sign}</td><td>{escape(text)}</td></tr>')
    return (
        f"<p>First difference ({escape(str(first['check']))}):</p>"
        f'<table class="diff">{"".join(rows)}</table>'
    )


def _fault_x(fault: Mapping[str, Any], gtids: Sequence[str]) -> int | None:
    """The event group a planned fault is placed at (None: a byte, time or event point)."""
    at = fault.get("at", {})
    if isinstance(at.get("transaction"), int):
        return int(at["transaction"])
    if isinstance(at.get("gtid"), str) and at["gtid"] in gtids:
        return gtids.index(at["gtid"])
    return None


def _group_state(group: Mapping[str, Any], reports: bool) -> str:
    if not reports:
        return "unknown"
    if not group["rows"] and not group["delivered"]:
        return "none"
    if group["delivered"] < group["rows"]:
        return "lost"
    return "dup" if group["delivered"] > group["rows"] else "ok"


def _timeline(case: Mapping[str, Any]) -> str:
    """An SVG: the plan's faults, one lane per dump session with the faults applied in it,
    and the served event groups coloured by delivery."""
    served: Sequence[Mapping[str, Any]] = case["served"]
    gtids = [str(group["gtid"]) for group in served]
    plan: Sequence[Mapping[str, Any]] = case["plan"]
    sessions = max([int(case.get("sessions", 0))] + [a["session"] + 1 for a in case["applied"]])
    count = max(len(served), 1)
    step = max(6.0, min(30.0, 760.0 / count))
    left, lane = 130, 24
    width = int(left + step * (count + 1) + 20)
    lanes = ["fault plan", *[f"session {s}" for s in range(sessions)], "delivered"]
    height = lane * len(lanes) + 8
    parts = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}"'
        f' height="{height}" role="img" aria-label="timeline of {escape(case["name"])}">'
    ]
    for index, label in enumerate(lanes):
        y = index * lane + 16
        title = label + (" (a reconnect)" if label.startswith("session ") and index > 1 else "")
        parts.append(f'<text x="4" y="{y}">{escape(title)}</text>')
        parts.append(
            f'<line x1="{left}" y1="{y - 4}" x2="{width - 10}" y2="{y - 4}" stroke="#ddd"/>'
        )

    def marker(x_group: int | None, y: int, label: str, kind: str) -> str:
        x = left + step * (x_group if x_group is not None else 0) + step / 2
        return (
            f'<g class="fault {kind}"><polygon points="{x - 5},{y + 2} {x + 5},{y + 2} {x},{y - 9}"'
            f' fill="{"#d35400" if kind == "planned" else "#c0392b"}"><title>{escape(label)}'
            "</title></polygon></g>"
        )

    for number, fault in enumerate(plan):
        label = (
            f"#{number} {fault.get('kind')} at {fault.get('at')} (session {fault.get('session')})"
        )
        parts.append(marker(_fault_x(fault, gtids), 16, label, "planned"))
    for item in case["applied"]:
        index = item.get("plan_index", -1)
        planned = plan[index] if 0 <= index < len(plan) else {}
        label = f"{item['kind']} applied at byte {item['offset']} {item.get('note', '')}"
        parts.append(
            marker(_fault_x(planned, gtids), (item["session"] + 1) * lane + 16, label, "applied")
        )
    y = (len(lanes) - 1) * lane + 4
    reports = bool(case.get("reports_changes"))
    for number, group in enumerate(served):
        state = _group_state(group, reports)
        x = left + step * number
        parts.append(
            f'<rect class="group {state}" x="{x:.1f}" y="{y}" width="{step - 1:.1f}" height="14"'
            f' fill="{_GROUP_FILL[state]}"><title>{escape(str(group["gtid"]))}: {group["rows"]}'
            f" row change(s) served, {group['delivered']} delivered</title></rect>"
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span style="background:{fill}">{name}</span>'
        for name, fill in (
            ("delivered", _GROUP_FILL["ok"]),
            ("lost (fewer rows)", _GROUP_FILL["lost"]),
            ("repeated", _GROUP_FILL["dup"]),
            ("no change log", _GROUP_FILL["unknown"]),
            ("no row change (DDL, XA PREPARE)", _GROUP_FILL["none"]),
        )
    )
    reconnects = max(sessions - 1, 0)
    return (
        f"<p>{sessions} dump session(s), {reconnects} reconnect(s); {len(plan)} planned, "
        f"{len(case['applied'])} applied fault(s).</p>{''.join(parts)}"
        f'<p class="legend">{legend} x: the {len(served)} event groups (GTID first) in'
        " commit order; a fault sits at the group its plan point names (transaction N of its"
        f" session; byte, time and event points at the start)</p>{_fault_table(case)}"
    )


def _fault_table(case: Mapping[str, Any]) -> str:
    rows = []
    for item in case["applied"]:
        rows.append(
            f"<tr><td>{item['session']}</td><td>{escape(str(item['kind']))}</td>"
            f"<td>{item['offset']}</td><td>{escape(str(item.get('note', '')))}</td></tr>"
        )
    for number, fault in enumerate(case["plan"]):
        if not any(item.get("plan_index") == number for item in case["applied"]):
            rows.append(
                f"<tr><td></td><td>{escape(str(fault.get('kind')))}</td><td>not applied</td>"
                f"<td>{escape(str(fault.get('at')))}</td></tr>"
            )
    if not rows:
        return ""
    return (
        '<table class="faults"><tr><th>session</th><th>fault</th><th>at byte</th><th>note</th>'
        f"</tr>{''.join(rows)}</table>"
    )


def _files(case: Mapping[str, Any]) -> str:
    files: Mapping[str, str] = case.get("files", {})
    if not files:
        return "<p>No files kept (run check with --workdir or --html).</p>"
    links = "".join(
        f'<a class="file" data-kind="{escape(kind)}" href="{escape(path)}">{escape(kind)}</a>'
        for kind, path in files.items()
    )
    return f'<p class="files">Files: {links}</p>'


def _case(case: Mapping[str, Any]) -> str:
    run = case["run"]
    mark = "pass" if case.get("passed") else "FAIL"
    status = (
        run.get("start_error")
        or ("stopped at the time limit" if run.get("returncode") is None else None)
        or f"exit status {run.get('returncode')}"
    )
    stderr = str(run.get("stderr", ""))
    error_line = str(run.get("error_line", ""))
    sql = str(case.get("history_sql", ""))
    clipped = " (clipped)" if case.get("history_clipped") else ""
    return (
        f'<section class="case" id="{case_anchor(case["name"])}" data-verdict="{mark}">'
        f'<h2>{escape(case["name"])} <span class="{mark}">{mark}</span></h2>'
        f"<p>{escape(str(case.get('description', '')))}</p>"
        f"<p>Client: {escape(str(status))}, {run.get('seconds', 0)} s"
        + (f"; error: <code>{escape(error_line)}</code>" if error_line else "")
        + "</p>"
        + _verdicts(case)
        + _diff(case)
        + "<h3>Timeline</h3>"
        + _timeline(case)
        + (
            f"<h3>Client stderr (tail)</h3><pre class='stderr'>{escape(stderr)}</pre>"
            if stderr
            else ""
        )
        + f"<details><summary>Served history as SQL{clipped}</summary>"
        f"<pre class='sql'>{escape(sql)}</pre></details>" + _files(case) + "</section>"
    )


def render(document: Mapping[str, Any]) -> str:
    """The page of a results document."""
    cases = document["cases"]
    failed = sum(1 for case in cases if not case.get("passed"))
    title = f"fakemaster check: {document.get('client', '')}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f'<p id="summary">{len(cases)} cases: {len(cases) - failed} passed, {failed} failed</p>'
        f"{_matrix(document)}{''.join(_case(case) for case in cases)}</body></html>\n"
    )


def write_report(directory: Path, document: Mapping[str, Any]) -> Path:
    """``directory/index.html`` of ``document``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    page = directory / "index.html"
    page.write_text(render(document), encoding="utf-8")
    return page
