#!/usr/bin/env python3
"""Regenerate the example report of docs/contract.md: ``fakemaster check`` run against
python-mysql-replication (the example adapter fakemaster.contract.adapters.python_mysql_replication)
on the default cases (the built-in scenarios under their faults, 4 generated cases from seed 0).

    python3 scripts/contract-example-report.py          # rewrites the block in docs/contract.md

The report goes between the ``<!-- report:start -->`` and ``<!-- report:end -->`` lines of
docs/contract.md, with the library's version above it. Exit status: the check's (1 while a case
fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "contract.md"
CLIENT = "python3 -m fakemaster.contract.adapters.python_mysql_replication {host} {port} {out}"
START, END = "<!-- report:start -->", "<!-- report:end -->"


def main() -> int:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "fakemaster", "check", "--client", CLIENT],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr)
        return done.returncode
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    block = (
        f"{START}\nmysql-replication {version('mysql-replication')},"
        f' `python -m fakemaster check --client "{CLIENT}"` (exit status {done.returncode}):\n\n'
        f"```text\n{done.stdout.rstrip()}\n```\n{END}"
    )
    DOC.write_text(head + block + tail, encoding="utf-8")
    print(done.stdout.splitlines()[-1])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
