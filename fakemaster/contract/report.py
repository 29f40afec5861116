"""The outcome of ``fakemaster check``: a terminal table (one line per case: its verdict and the
first difference), the details of each failing case, and JUnit XML for CI systems (one testcase
per case, a failure element with every failed check)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from fakemaster.contract.runner import CaseResult

__all__ = ["junit_xml", "summary_line", "table", "write_junit_xml", "xml_text"]


def _first(result: CaseResult) -> str:
    failure = result.first_failure
    if failure is None:
        return ""
    return f"{failure.check}: {failure.detail}"


# What XML 1.0 cannot hold (a client's NUL bytes, escape codes): replaced, so that the file
# parses whatever the client printed.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 does not allow replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def table(results: Sequence[CaseResult], *, client: str = "", width: int = 140) -> str:
    """One line per case (name, PASS/FAIL, the first failed check and its difference), then
    each failing case's failed checks with their lines, the faults applied and the client's
    last stderr lines."""
    lines = []
    if client:
        lines.append(f"client: {client}")
    name_width = max([len(r.case.name) for r in results] + [4])
    lines.append(f"{'case':<{name_width}}  verdict  first difference")
    for result in results:
        mark = "pass" if result.passed else "FAIL"
        room = max(20, width - name_width - 11)
        lines.append(
            f"{result.case.name:<{name_width}}  {mark:<7}  {_clip(_first(result), room)}".rstrip()
        )
    failing = [r for r in results if not r.passed]
    for result in failing:
        lines.append("")
        lines.append(f"--- {result.case.name}: {result.case.description}")
        if result.case.plan.faults:
            lines.append(f"    plan: {result.case.plan.to_dict()['faults']}")
        for fault in result.applied:
            lines.append(f"    applied: {fault}")
        for verdict in result.verdicts:
            if verdict.failed:
                lines.append(f"    {verdict.check}: {_clip(verdict.detail, width)}")
                lines += [f"      {_clip(line, width - 6)}" for line in verdict.lines]
        for error in result.server_errors:
            lines.append(f"    server error: {error}")
    lines.append("")
    lines.append(summary_line(results))
    return "\n".join(lines)


def summary_line(results: Sequence[CaseResult]) -> str:
    failed = sum(1 for r in results if not r.passed)
    return f"{len(results)} cases: {len(results) - failed} passed, {failed} failed"


def junit_xml(results: Sequence[CaseResult], *, client: str = "client") -> str:
    """JUnit XML: a testsuite named after the client, a testcase per case (classname the
    scenario, name the case), a <failure> listing the failed checks."""
    failed = sum(1 for r in results if not r.passed)
    suite = ET.Element(
        "testsuite",
        name=f"fakemaster check: {client}",
        tests=str(len(results)),
        failures=str(failed),
        errors="0",
        time=f"{sum(r.run.seconds for r in results):.3f}",
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"fakemaster.check.{result.case.scenario_name}",
            name=result.case.name,
            time=f"{result.run.seconds:.3f}",
        )
        if not result.passed:
            body = []
            for verdict in result.verdicts:
                if verdict.failed:
                    body.append(f"{verdict.check}: {verdict.detail}")
                    body += [f"  {line}" for line in verdict.lines]
            body += [f"applied: {item}" for item in result.applied]
            failure = ET.SubElement(
                case,
                "failure",
                message=xml_text(_clip(_first(result), 500)),
                type="ContractFailure",
            )
            failure.text = xml_text("\n".join(body))
        if result.run.stderr:
            ET.SubElement(case, "system-err").text = xml_text(result.run.stderr)
    ET.indent(suite)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
    )


def write_junit_xml(
    path: str | Path, results: Sequence[CaseResult], *, client: str = "client"
) -> None:
    Path(path).write_text(junit_xml(results, client=client), encoding="utf-8")
