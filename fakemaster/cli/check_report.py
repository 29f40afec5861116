"""``fakemaster check --html DIR`` and ``fakemaster check report RESULTS --html DIR``: the
results file and the static HTML report of a check run (:mod:`fakemaster.contract.results`,
:mod:`fakemaster.contract.html_report`).

With ``--html DIR`` check writes ``DIR/results.json`` and ``DIR/index.html``; without
``--workdir`` it keeps the cases' files in ``DIR/files`` so that the page's links work. The
``report`` sub-command draws the page again from a results file, its file links made relative to
the new directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.contract.runner import CaseResult

__all__ = ["add_report_parser", "html_workdir", "run_report", "write_html"]

RESULTS_NAME = "results.json"


def add_report_parser(parser: argparse.ArgumentParser) -> None:
    """``check report RESULTS --html DIR`` as a sub-command of ``check``."""
    commands = parser.add_subparsers(dest="check_command", metavar="report")
    report = commands.add_parser(
        "report",
        help="draw the HTML report of a results file again",
        description="Write DIR/index.html from a results file that check --html wrote"
        " (its file links made relative to DIR).",
    )
    report.add_argument("results", metavar="RESULTS", help="a results.json that check --html wrote")
    report.add_argument("--html", required=True, metavar="DIR", help="write DIR/index.html")
    report.set_defaults(handler=run_report)


def html_workdir(args: argparse.Namespace) -> str | None:
    """Where the cases' files go: --workdir, else DIR/files with --html (kept for the links)."""
    if args.workdir or not getattr(args, "html", None):
        return str(args.workdir) if args.workdir else None
    return str(Path(args.html) / "files")


def write_html(
    directory: str, results: Sequence[CaseResult], *, client: str, workdir: str | None
) -> Path:
    """DIR/results.json and DIR/index.html of a run; the page's path."""
    from fakemaster.contract.html_report import write_report
    from fakemaster.contract.results import results_document, write_results

    base = Path(directory)
    base.mkdir(parents=True, exist_ok=True)
    document = results_document(
        results, client=client, workdir=Path(workdir) if workdir else None, base=base
    )
    write_results(base / RESULTS_NAME, document)
    return write_report(base, document)


def _relink(document: dict[str, Any], source: Path, target: Path) -> None:
    for case in document["cases"]:
        case["files"] = {
            kind: Path(os.path.relpath((source / str(path)).resolve(), target.resolve())).as_posix()
            for kind, path in case["files"].items()
        }


def run_report(args: argparse.Namespace) -> int:
    from fakemaster.contract.html_report import write_report
    from fakemaster.contract.results import ResultsError, read_results

    path = Path(args.results)
    try:
        document = read_results(path)
    except ResultsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 4
    target = Path(args.html)
    _relink(document, path.parent, target)
    try:
        page = write_report(target, document)
    except OSError as error:
        print(f"error: --html {args.html}: {error.strerror or error}", file=sys.stderr)
        return 4
    print(page)
    return 0
