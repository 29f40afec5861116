"""A ``fakemaster check`` run as a JSON document (``results.json``), what the HTML report
(:mod:`fakemaster.contract.html_report`) is drawn from, and read back by ``check report``.

One object per case: its verdicts, the client's run (exit status, seconds, stderr tail, first
error line), the fault plan and the faults the proxy applied (per dump session, at which byte),
the served event groups with how many of their row changes the client delivered, the first
difference of the final tables as rows, the served history as SQL, and the case's files in the
work directory (relative to the results file, so that the directory can be moved whole).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.contract.checks import CHECKS, expected_changes
from fakemaster.contract.runner import CaseResult
from fakemaster.vocabulary.errors import FakemasterError

if TYPE_CHECKING:
    from scenarios.history import Scenario

__all__ = [
    "FILE_KINDS",
    "FORMAT",
    "ResultsError",
    "case_files",
    "case_record",
    "read_results",
    "results_document",
    "write_results",
]

FORMAT = "fakemaster-check-results/1"
# The files check keeps per case in its work directory: suffix -> what it is.
FILE_KINDS: Mapping[str, str] = {
    ".snapshot.jsonl": "snapshot",
    ".out.jsonl": "output",
    ".stdout": "stdout",
    ".stderr": "stderr",
    ".pcap": "pcap",
}
_SQL_LIMIT = 200_000  # characters of history SQL kept per case (a large_rows case is MBs)
_DIFF_ROWS = 20  # rows of the first table difference kept


class ResultsError(FakemasterError, ValueError):
    """A results file that cannot be read; the message names the file and what is wrong."""


def case_files(name: str, workdir: Path | None, base: Path) -> dict[str, str]:
    """kind -> the path (relative to ``base``) of each of the case's files that exists."""
    if workdir is None:
        return {}
    stem = name.replace("/", "--")
    found = {}
    for suffix, kind in FILE_KINDS.items():
        path = workdir / f"{stem}{suffix}"
        if path.is_file():
            found[kind] = Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
    return found


def _history_sql(scenario: Scenario) -> tuple[str, bool]:
    from scenarios.script import setup_sql, step_sql

    lines = [f"{statement};" for statement in setup_sql(scenario)]
    for step in scenario.steps:
        lines += [f"{statement};" for statement in step_sql(step)]
    text = "\n".join(lines)
    if len(text) <= _SQL_LIMIT:
        return text, False
    return text[:_SQL_LIMIT], True


def _served(result: CaseResult, scenario: Scenario) -> list[dict[str, Any]]:
    """The served event groups (each that starts with a GTID event, as a plan's ``transaction``
    point counts them), with the row changes each holds and how many changes the client
    reported with its GTID (first deliveries and repeats)."""
    from scenarios.compiler import compile_scenario

    compiled = compile_scenario(scenario)
    rows: Counter[str] = Counter(change.gtid for change in expected_changes(scenario, compiled))
    got: Counter[str] = Counter()
    if result.output is not None and result.output.changes is not None:
        got = Counter(change.gtid for change in result.output.changes)
    order = list(dict.fromkeys(str(item.gtid) for item in compiled if item.gtid is not None))
    return [{"gtid": gtid, "rows": rows[gtid], "delivered": got[gtid]} for gtid in order]


def _image_rows(
    what: str, served: Mapping[str, Any] | None, got: Mapping[str, Any] | None, logged: Any
) -> list[dict[str, Any]]:
    """One row per column of a served/client image pair: the values side by side, ``differs``
    when the client's value is not the served one (a column it left out that the binlog's image
    carried, one the table lacks)."""
    rows = []
    for name in list(served or {}) + [n for n in got or {} if n not in (served or {})]:
        has_served, has_got = name in (served or {}), name in (got or {})
        value = (got or {}).get(name)
        differs = (
            (has_got and (not has_served or (served or {})[name] != value))
            or (not has_got and name in logged)
            or (served is None) != (got is None)
        )
        rows.append(
            {
                "image": what,
                "column": name,
                "served": (served or {}).get(name) if has_served else "(absent)",
                "client": value if has_got else "(absent)",
                "differs": bool(differs),
            }
        )
    return rows


def _change_diff(result: CaseResult, scenario: Scenario) -> dict[str, Any] | None:
    """The first change the client reported whose images differ from the served change of the
    same identity: each column, served and reported."""
    output = result.output
    if output is None or output.changes is None:
        return None
    served = {(change.gtid, change.row): change for change in expected_changes(scenario)}
    for change in output.changes:
        want = served.get(change.ident)
        if want is None or (change.op, change.table) != (want.op, want.table):
            continue
        rows = _image_rows("before", want.before, change.before, want.logged[0])
        rows += _image_rows("after", want.after, change.after, want.logged[1])
        if any(row["differs"] for row in rows):
            return {
                "change": f"line {change.line}: {want.op} {want.table} (gtid {want.gtid} row"
                f" {want.row})",
                "rows": rows,
            }
    return None


def _table_diff(result: CaseResult, scenario: Scenario) -> dict[str, Any] | None:
    """The first table whose final rows differ from the oracle's: its columns and the rows
    missing (``-``) and unexpected (``+``)."""
    output = result.output
    if output is None or output.tables is None:
        return None
    from scenarios.oracle import canonical_rows

    final = scenario.contents
    for name, table in scenario.tables.items():
        columns = list(table.column_names)
        want = Counter(canonical_rows(table, final.rows.get(name, [])))
        got = Counter(
            tuple(values.get(column, "<absent>") for column in columns)
            for values in output.tables.get(name, ())
        )
        missing, unexpected = want - got, got - want
        if not (missing or unexpected):
            continue
        shown = [{"sign": "-", "cells": list(cells)} for cells in missing.elements()]
        shown += [{"sign": "+", "cells": list(cells)} for cells in unexpected.elements()]
        return {
            "table": name,
            "columns": columns,
            "missing": sum(missing.values()),
            "unexpected": sum(unexpected.values()),
            "rows": shown[:_DIFF_ROWS],
        }
    return None


def case_record(result: CaseResult, workdir: Path | None, base: Path) -> dict[str, Any]:
    """The JSON object of one case (``base``: the directory file paths are relative to)."""
    scenario = result.case.build()  # afresh: the same history the case served
    sql, clipped = _history_sql(scenario)
    run = result.run
    return {
        "name": result.case.name,
        "description": result.case.description,
        "scenario": result.case.scenario_name,
        "seed": result.case.seed,
        "passed": result.passed,
        "verdicts": [
            {"check": v.check, "ok": v.ok, "detail": v.detail, "lines": list(v.lines)}
            for v in result.verdicts
        ],
        "run": {
            "returncode": run.returncode,
            "seconds": round(run.seconds, 3),
            "stderr": run.stderr,
            "error_line": run.error_line,
            "start_error": run.start_error,
        },
        "plan": result.case.plan.to_dict()["faults"],
        "applied": [
            {
                "session": item.session,
                "kind": item.kind,
                "offset": item.offset,
                "plan_index": item.plan_index,
                "note": item.note,
            }
            for item in result.faults_applied
        ],
        "applied_text": list(result.applied),
        "sessions": result.sessions,
        "server_errors": list(result.server_errors),
        "served": _served(result, scenario),
        "reports_changes": result.output is not None and result.output.changes is not None,
        "table_diff": _table_diff(result, scenario),
        "change_diff": _change_diff(result, scenario),
        "history_sql": sql,
        "history_clipped": clipped,
        "files": case_files(result.case.name, workdir, base),
    }


def results_document(
    results: Sequence[CaseResult], *, client: str, workdir: Path | None, base: Path
) -> dict[str, Any]:
    """The whole run: the client command, the checks' names, every case."""
    return {
        "format": FORMAT,
        "client": client,
        "checks": list(CHECKS),
        "cases": [case_record(result, workdir, base) for result in results],
    }


def write_results(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def read_results(path: Path) -> dict[str, Any]:
    """A results file, checked for the parts the report reads; ResultsError names the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ResultsError(f"{path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ResultsError(f"{path}: not UTF-8 (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise ResultsError(
            f"{path}: line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsError(f'{path}: not a check results file (no "format": "{FORMAT}")')
    cases = data.get("cases")
    if not isinstance(cases, list):
        raise ResultsError(f'{path}: "cases" is not a list')
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("name"), str):
            raise ResultsError(f"{path}: case {index} has no name")
        for key, kind in (("verdicts", list), ("plan", list), ("applied", list), ("served", list)):
            if not isinstance(case.get(key), kind):
                raise ResultsError(f"{path}: case {case['name']!r}: {key!r} is not a list")
        if not isinstance(case.get("run"), dict) or not isinstance(case.get("files"), dict):
            raise ResultsError(f"{path}: case {case['name']!r}: no 'run' or 'files' object")
    return data
