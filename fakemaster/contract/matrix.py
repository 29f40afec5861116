"""The compatibility matrix of real replication clients: ``fakemaster check`` run against each
client installable here, drawn as a client x case table with the reason for each failure, a
known limit of the client (:mod:`fakemaster.contract.adapters.limits`) told apart from an
unexpected failure. ``scripts/compatibility-matrix.py`` runs it and writes
docs/compatibility.md.

Each client is run by ``python -m fakemaster check --client CMD --html DIR`` in a subprocess
(its own process, so one client's crash is its row's verdicts, not the script's) and its
``results.json`` read back. A client that is not installed has ``n/a`` cells and says what to
install.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakemaster.contract.adapters.limits import known_limit

__all__ = [
    "CLIENTS",
    "Cell",
    "ClientRow",
    "MatrixClient",
    "classify",
    "render",
    "run_client",
]

PASS, LIMIT, FAIL, MISSING = "pass", "limit", "FAIL", "n/a"
# Left out unless named by --only: its 2,000 transactions at 10 a second take 3 minutes a case.
DEFAULT_SKIP = ("live_stream/*",)
_REASON = 160  # characters of a failure's reason shown


def _module(name: str) -> str:
    return f"{sys.executable} -m fakemaster.contract.adapters.{name}"


def _python_version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        return None


def _node_version(package: str) -> str | None:
    from fakemaster.contract.adapters.zongji import node_modules

    meta = node_modules() / package / "package.json"
    if shutil.which("node") is None or not meta.is_file():
        return None
    return f"{package} {json.loads(meta.read_text(encoding='utf-8'))['version']}"


def _program_version(program: str) -> str | None:
    from fakemaster.contract.mariadb_server import find_mariadbd

    path = find_mariadbd() if program == "mariadbd" else shutil.which(program)
    if path is None:
        return None
    done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    shown = done.stdout.strip().split(" for ")[0].split()
    return " ".join([Path(shown[0]).name, *shown[1:]]) if shown else program


@dataclass(frozen=True)
class MatrixClient:
    """A client of the matrix: its id (the key of its known limits), the ``--client`` command,
    what finds its version (None: not installed) and how to install it."""

    id: str
    title: str
    command: str
    version: Callable[[], str | None]
    install: str


CLIENTS: tuple[MatrixClient, ...] = (
    MatrixClient(
        "fakemaster-client",
        "the project's own client (fakemaster.client)",
        _module("fakemaster_client") + " {host} {port} {out}",
        lambda: "fakemaster",
        "",
    ),
    MatrixClient(
        "python-mysql-replication",
        "python-mysql-replication",
        _module("python_mysql_replication") + " {host} {port} {out}",
        lambda: _python_version("mysql-replication"),
        "pip install -e '.[test]'",
    ),
    MatrixClient(
        "asyncmy",
        "asyncmy's binlog reader (asyncmy.replication)",
        _module("asyncmy_binlog") + " {host} {port} {out}",
        lambda: _python_version("asyncmy"),
        "pip install -e '.[test]'",
    ),
    MatrixClient(
        "zongji",
        "@vlasky/zongji (the Node example client)",
        _module("zongji") + " {host} {port} {out}",
        lambda: _node_version("@vlasky/zongji"),
        "npm ci in tests/node",
    ),
    MatrixClient(
        "powersync-zongji",
        "@powersync/mysql-zongji (the same Node client)",
        _module("zongji") + " --package @powersync/mysql-zongji {host} {port} {out}",
        lambda: _node_version("@powersync/mysql-zongji"),
        "npm ci in tests/node",
    ),
    MatrixClient(
        "mariadb-binlog",
        "mariadb-binlog --read-from-remote-server",
        _module("mariadb_binlog") + " {host} {port} {out}",
        lambda: _program_version("mariadb-binlog"),
        "apt-get install mariadb-client",
    ),
    MatrixClient(
        "mariadb-replica",
        "a real MariaDB replica (START SLAVE)",
        _module("mariadb_replica") + " {host} {port} {out}",
        lambda: _program_version("mariadbd"),
        "apt-get install mariadb-server",
    ),
)


@dataclass(frozen=True)
class Cell:
    """One client's verdict on one case: pass, limit (a known limit, ``reason`` its
    declaration), FAIL (unexpected, ``reason`` the first failed check) or n/a."""

    verdict: str
    reason: str = ""
    failure: str = ""  # the first failed check and its detail, as check reported it


@dataclass(frozen=True)
class ClientRow:
    client: MatrixClient
    version: str | None
    cells: Mapping[str, Cell]
    note: str = ""  # why there are no verdicts (not installed, check could not run)


def classify(client: str, case: Mapping[str, object]) -> Cell:
    """A results.json case record as a matrix cell."""
    if case.get("passed"):
        return Cell(PASS)
    verdicts = case.get("verdicts")
    failed = [
        f"{v.get('check')}: {v.get('detail')}"
        for v in (verdicts if isinstance(verdicts, list) else [])
        if isinstance(v, dict) and v.get("ok") is False  # None: not applicable
    ]
    failure = failed[0] if failed else "failed"
    limit = known_limit(client, str(case.get("name")))
    if limit is not None:
        return Cell(LIMIT, limit, failure)
    return Cell(FAIL, failure, failure)


def run_client(
    client: MatrixClient,
    directory: Path,
    only: Sequence[str],
    generated: int,
    timeout: float,
) -> ClientRow:
    """``check`` on ``client`` with its report in ``directory``; one row of the matrix."""
    version = client.version()
    if version is None:
        return ClientRow(client, None, {}, f"not installed ({client.install})")
    words = [sys.executable, "-m", "fakemaster", "check", "--client", client.command]
    words += ["--generated", str(generated), "--timeout", str(timeout), "--html", str(directory)]
    for pattern in only:
        words += ["--only", pattern]
    # The checkout this module is in, first: an editable install may point at another one.
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    results = directory / "results.json"
    results.unlink(missing_ok=True)
    done = subprocess.run(words, capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1) or not results.is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return ClientRow(client, version, {}, f"check exited {done.returncode}: {last}")
    return read_client(client, version, results)


def read_client(client: MatrixClient, version: str | None, results: Path) -> ClientRow:
    """One row of the matrix from a results.json ``check`` wrote."""
    cases = json.loads(results.read_text(encoding="utf-8"))["cases"]
    return ClientRow(client, version, {c["name"]: classify(client.id, c) for c in cases})


def _cut(text: str) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= _REASON else text[: _REASON - 3] + "..."


def render(rows: Sequence[ClientRow], cases: Sequence[str], command: str) -> str:
    """docs/compatibility.md: the matrix, then each client's failures with their reasons."""
    out = [
        "# Compatibility matrix of replication clients",
        "",
        f"Generated by `{command}` (do not edit by hand). Each client is run by",
        "`fakemaster check` (docs/contract.md) through its adapter in",
        "`fakemaster/contract/adapters/`. `pass`; `limit`: a failure that is a known limit of",
        "the client, declared in `fakemaster/contract/adapters/limits.py` with where it is",
        "documented or reproduced; `FAIL`: an unexpected failure (of the client or of its",
        "adapter); `n/a`: the client is not installed here.",
        "",
        "| Client | Version | pass | limit | FAIL |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        counts = {v: sum(c.verdict == v for c in row.cells.values()) for v in (PASS, LIMIT, FAIL)}
        version = row.version or "not installed"
        out.append(
            f"| `{row.client.id}`: {row.client.title} | {version} | {counts[PASS]} |"
            f" {counts[LIMIT]} | {counts[FAIL]} |"
        )
    out += ["", "| Case | " + " | ".join(f"`{r.client.id}`" for r in rows) + " |"]
    out.append("|---" * (len(rows) + 1) + "|")
    for case in cases:
        cells = [row.cells.get(case, Cell(MISSING)).verdict for row in rows]
        out.append(f"| `{case}` | " + " | ".join(cells) + " |")
    for row in rows:
        out += ["", f"## `{row.client.id}`", ""]
        out.append(f"{row.client.title}, {row.version or 'not installed'}: `{row.client.command}`")
        if row.note:
            out += ["", f"No verdicts: {row.note}."]
        failing = [(case, cell) for case, cell in row.cells.items() if cell.verdict != PASS]
        if not failing and not row.note:
            out += ["", "Every case passed."]
        for case, cell in failing:
            what = "known limit" if cell.verdict == LIMIT else "unexpected"
            out.append(f"* `{case}` ({what}): {_cut(cell.reason)}")
            if cell.verdict == LIMIT:
                out.append(f"  (seen: {_cut(cell.failure)})")
    return "\n".join(out).replace(sys.executable, "python") + "\n"


def _cases(only: Sequence[str], generated: int) -> list[str]:
    from fnmatch import fnmatchcase

    from fakemaster.contract.cases import builtin_cases, generated_case

    names = [case.name for case in builtin_cases()]
    names += [generated_case(seed).name for seed in range(generated)]
    if not only:
        return [n for n in names if not any(fnmatchcase(n, p) for p in DEFAULT_SKIP)]
    return [n for n in names if any(fnmatchcase(n, p) for p in only)]


def _shown(args: Any) -> str:
    """The options that choose what runs, as the page's command shows them (where reports go
    and where the page is written change nothing in it, and are paths of one machine)."""
    words = [f" --only {shlex.quote(p)}" for p in args.only]
    words += [f" --client {c}" for c in args.client]
    if args.generated != 2:
        words.append(f" --generated {args.generated}")
    if args.timeout != 60.0:
        words.append(f" --timeout {args.timeout:g}")
    return "".join(words)


def main(argv: Sequence[str] | None = None) -> int:
    """``scripts/compatibility-matrix.py``: run every client, write the page."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(
        prog="compatibility-matrix", description="Run check on every client; write the matrix."
    )
    parser.add_argument("--only", action="append", default=[], help="case pattern, repeatable")
    parser.add_argument("--client", action="append", default=[], help="client id, repeatable")
    parser.add_argument("--generated", type=int, default=2, help="generated cases (default 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--out", type=Path, default=Path("docs/compatibility.md"))
    parser.add_argument("--reports", type=Path, help="keep each client's HTML report here")
    parser.add_argument(
        "--from-reports",
        type=Path,
        help="run nothing: draw the page from the reports an earlier --reports run kept",
    )
    args = parser.parse_args(argv)
    known = {client.id for client in CLIENTS}
    unknown = sorted(set(args.client) - known)
    if unknown:
        parser.error(f"unknown client {unknown[0]!r} (one of {', '.join(sorted(known))})")
    cases = _cases(args.only, args.generated)
    if not cases:
        print("error: no case matches --only", file=sys.stderr)
        return 5
    chosen = [c for c in CLIENTS if not args.client or c.id in args.client]
    if args.from_reports:
        missing = [
            c.id for c in chosen if not (args.from_reports / c.id / "results.json").is_file()
        ]
        if missing:
            # One line, not read_client's traceback: name what is missing and how to choose.
            print(
                f"error: {args.from_reports / missing[0] / 'results.json'}: no such file"
                " (name the clients the reports hold with --client)",
                file=sys.stderr,
            )
            return 1
    with tempfile.TemporaryDirectory(prefix="matrix-") as scratch:
        base = args.reports or Path(scratch)
        rows = []
        for client in chosen:
            print(f"{client.id}: {len(cases)} case(s)", file=sys.stderr, flush=True)
            kept = args.from_reports / client.id / "results.json" if args.from_reports else None
            if kept is not None:
                rows.append(read_client(client, client.version(), kept))
            else:
                directory = base / client.id
                rows.append(run_client(client, directory, cases, args.generated, args.timeout))
    command = "python scripts/compatibility-matrix.py" + _shown(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(rows, cases, command), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0
