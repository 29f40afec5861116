#!/usr/bin/env python3
"""Mutation testing of the modules whose bugs a test suite must catch: the contract's verdicts,
the oracle, the replay file, the compiler, the materialiser and snapshot SELECT.

A mutant is one small change to one module (a comparison or boolean operator flipped, a constant
off by one, a call, ``raise`` or returned value dropped, the branches of an ``if`` swapped),
applied to a temporary copy of the tree; the module's focused tests (:data:`MODULES`, fast tests
only) then run against it with ``-x`` and a time limit. A failing run kills the mutant; a passing
one lets it survive, a test gap unless the mutant is equivalent (docs/mutation.md explains each
survivor). The list of mutants is a pure function of the module's source (no randomness), and
hypothesis runs under the derandomized ``ci`` profile, so two runs give the same verdicts.

    python3 scripts/mutation.py --module checks              # every mutant of one module
    python3 scripts/mutation.py --all --limit 60             # 60 evenly spread mutants of each
    python3 scripts/mutation.py --module checks --mutant 17  # one mutant, run
    python3 scripts/mutation.py --module checks --list       # the mutants, nothing run
    python3 scripts/mutation.py --module checks --list --mutant 17   # its diff
    python3 scripts/mutation.py --path pkg/m.py --tests "tests/test_m.py -k fast"  # any module

Each mutant runs in a child forked from a process that has already imported the third-party
libraries the project uses (pytest, hypothesis, pyspark...), which saves seconds per mutant; the
project's own modules are imported afresh, from the copy, in every child. Results go to
``build/mutation/<module>.json`` (``--results DIR``); a table of the scores is printed at the end.
Exit status: 0 when every selected mutant was run, 2 on a usage error or a failing baseline.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = ("fakemaster", "encoder", "decoder", "scenarios", "tests")
# Libraries imported before pytest starts cannot have their asserts rewritten (they have none
# that matter here).
QUIET = "ignore::pytest.PytestAssertRewriteWarning"


@dataclass(frozen=True)
class Target:
    """A module under mutation and the fast tests (pytest arguments) that must notice a change
    to it."""

    path: str
    tests: tuple[str, ...]
    timeout: float = 60.0
    # Only the mutants inside these top-level functions or classes (all when empty).
    only: tuple[str, ...] = ()


FAST = ("-m", "not mariadb and not slow")
SCENARIO_TESTS = tuple(
    f"tests/scenarios/test_{name}.py"
    for name in (
        "oracle", "compiler", "model", "oracle_diff", "xa", "ddl", "sequences", "versioning", "non_transactional",
        "table_grammar", "restart", "settings_mid_history", "toml_form", "mysql_v2_rows",
    )
)  # fmt: skip

MODULES: dict[str, Target] = {
    "checks": Target(
        "fakemaster/contract/checks.py",
        ("tests/fakemaster/contract/test_checks.py",),
    ),
    "oracle": Target("scenarios/oracle.py", SCENARIO_TESTS + FAST),
    "replay": Target(
        "fakemaster/record/replay.py",
        (
            "tests/fakemaster/record/test_replay.py",
            "tests/fakemaster/cli/test_record_command.py",
            *FAST,
        ),
    ),
    "compiler": Target("scenarios/compiler.py", SCENARIO_TESTS + FAST),
    "snapshot-select": Target(
        "fakemaster/sql/answers/table_select.py",
        (
            "tests/fakemaster/sql/test_table_select.py",
            "tests/fakemaster/sql/test_snapshot_statements.py",
            "tests/fakemaster/sql/test_in_list.py",
            *FAST,
        ),
    ),
    # Its Spark plans are tested through Spark (minutes); its pure-Python helpers here.
    "materialiser": Target(
        "fakemaster/spark/materialiser.py",
        ("tests/fakemaster/spark/test_materialiser.py",),
        only=(
            "table_dir_name",
            "_is_local",
            "_local",
            "spark_type_of",
            "_add_problem",
            "rename_pairs",
            "_unnamed",
            "_fold",
        ),
    ),
}

# --- the mutants ---------------------------------------------------------------------------

_COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
}


@dataclass(frozen=True)
class Site:
    """Where one mutant changes the module: the node's index in ``ast.walk`` order, the kind of
    change and, for a comparison, which of its operators."""

    node: int
    kind: str
    operand: int = 0
    line: int = 0


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Nodes no mutant touches: annotations, docstrings, ``__all__`` and ``TYPE_CHECKING``
    blocks change nothing at run time, so their mutants would all be equivalent."""
    skipped: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(child) for child in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        elif isinstance(node, ast.arg):
            skip(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            skip(node.returns)
            skip(node.decorator_list[0] if node.decorator_list else None)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            skip(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip(node)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip(body[0])
    return skipped


def _sites_of(node: ast.AST, index: int) -> Iterator[Site]:
    if isinstance(node, ast.Compare):
        for operand, op in enumerate(node.ops):
            if type(op) in _COMPARE_SWAP:
                yield Site(index, "compare", operand)
    elif isinstance(node, ast.BoolOp):
        yield Site(index, "boolop")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield Site(index, "drop-not")
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP:
        yield Site(index, "binop")
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield Site(index, "bool")
        elif isinstance(node.value, int):
            yield Site(index, "int+1")
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
        yield Site(index, "drop-call")
    elif isinstance(node, ast.Raise):
        yield Site(index, "drop-raise")
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield Site(index, "return-none")
    elif isinstance(node, ast.If) and node.orelse:
        yield Site(index, "swap-branches")


def sites(source: str) -> list[Site]:
    """Every mutant of a module, in the order of the source (a function of the source alone)."""
    tree = ast.parse(source)
    skipped = _skipped_nodes(tree)
    found: list[tuple[int, int, Site]] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) not in skipped:
            at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            found.extend((*at, replace(site, line=at[0])) for site in _sites_of(node, index))
    return [
        site for _, _, site in sorted(found, key=lambda f: (f[0], f[1], f[2].node, f[2].operand))
    ]


def _mutate(node: ast.AST, site: Site) -> ast.AST:
    """The node as the mutant has it (a statement may become ``pass``)."""
    kind = site.kind
    if isinstance(node, ast.Compare) and kind == "compare":
        node.ops[site.operand] = _COMPARE_SWAP[type(node.ops[site.operand])]()
    elif isinstance(node, ast.BoolOp) and kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp) and kind == "drop-not":
        return node.operand
    elif isinstance(node, ast.BinOp) and kind == "binop":
        node.op = _BINOP_SWAP[type(node.op)]()
    elif isinstance(node, ast.Constant) and kind == "bool":
        node.value = not node.value
    elif isinstance(node, ast.Constant) and isinstance(node.value, int) and kind == "int+1":
        node.value = node.value + 1
    elif kind in ("drop-call", "drop-raise"):
        return ast.Pass()
    elif isinstance(node, ast.Return) and kind == "return-none":
        node.value = ast.Constant(None)
    elif isinstance(node, ast.If) and kind == "swap-branches":
        node.body, node.orelse = node.orelse, node.body
    return node


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, site: Site) -> None:
        self.target = target
        self.site = site
        self.before = ""
        self.after = ""
        self.line = 0

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            visited: ast.AST = super().visit(node)
            return visited
        self.line = getattr(node, "lineno", 0)
        self.before = _short(node)
        mutated = _mutate(node, self.site)
        self.after = _short(mutated)
        return mutated


def _short(node: ast.AST) -> str:
    if isinstance(node, ast.If):
        return f"if {ast.unparse(node.test)}: <{len(node.body)} stmt> else: <{len(node.orelse)}>"
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= 70 else text[:67] + "..."


@dataclass(frozen=True)
class Mutant:
    number: int
    kind: str
    line: int
    before: str
    after: str
    source: str


def mutant(source: str, site: Site, number: int) -> Mutant:
    tree = ast.parse(source)
    target = list(ast.walk(tree))[site.node]
    replacer = _Replace(target, site)
    mutated = ast.fix_missing_locations(replacer.visit(copy.copy(tree)))
    assert isinstance(mutated, ast.Module)
    return Mutant(
        number, site.kind, replacer.line, replacer.before, replacer.after, ast.unparse(mutated)
    )


def selection(total: int, limit: int | None) -> list[int]:
    """``limit`` mutants spread evenly over the list (all of them without a limit)."""
    if limit is None or limit >= total:
        return list(range(total))
    return sorted({i * total // limit for i in range(limit)})


def candidates(source: str, only: Sequence[str]) -> list[int]:
    """The numbers of the mutants inside the top-level definitions named ``only`` (every
    mutant's without names); numbers stay those of the whole module's list."""
    found = sites(source)
    if not only:
        return list(range(len(found)))
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.name in only
    ]
    return [n for n, site in enumerate(found) if any(a <= site.line <= b for a, b in spans)]


# --- running them --------------------------------------------------------------------------


def _copy_tree(root: Path, destination: Path) -> None:
    """The tracked and untracked-but-not-ignored files of the tree (uncommitted edits included),
    so that the copy is what the developer tests."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        shutil.copytree(
            root,
            destination,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns(".git", "node_modules", "__pycache__", "build"),
        )
        return
    for name in listed.stdout.decode().split("\0"):
        source = root / name
        if name and source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def _prewarm(tree: Path) -> None:
    """Import the whole project from the copy in this process (as tests/conftest.py does at
    session start), third-party libraries with it, so that each forked child only imports again
    the mutated module and the project modules that import it (:func:`_forget_dependents`)."""
    import gc
    import importlib
    import pkgutil

    sys.path.insert(0, str(tree))
    for package_name in PROJECT_PACKAGES[:-1]:
        if not (tree / package_name / "__init__.py").is_file():
            continue
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, package_name + "."):
            if not module.name.endswith(".__main__"):
                try:
                    importlib.import_module(module.name)
                except ImportError:  # an optional extra that is not installed
                    pass
    import hypothesis  # noqa: F401
    import pytest  # noqa: F401

    # What the children inherit is never garbage: pytest's collections at exit then skip it.
    gc.collect()
    gc.freeze()


def _imported_at_load(path: Path, name: str, is_package: bool) -> set[str]:
    """The modules a module imports when it is loaded (imports inside functions run later and
    find the mutated module themselves)."""
    found: set[str] = set()
    stack: list[ast.AST] = [ast.parse(path.read_text())]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")
                parent = parts if is_package else parts[:-1]
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _forget_dependents(tree: Path, target: str) -> None:
    """Drop from ``sys.modules`` (and from their packages' attributes) the mutated module and
    every project module that imports it, directly or not, so that they load again."""
    importers: dict[str, set[str]] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or not Path(file).is_relative_to(tree):
            continue
        is_package = Path(file).name == "__init__.py"
        for imported in _imported_at_load(Path(file), name, is_package):
            importers.setdefault(imported, set()).add(name)
    name = target.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    doomed = {name}
    frontier = [name]
    while frontier:
        for importer in importers.get(frontier.pop(), ()):
            if importer not in doomed:
                doomed.add(importer)
                frontier.append(importer)
    for gone in doomed:
        sys.modules.pop(gone, None)
        parent, _, leaf = gone.rpartition(".")
        if parent in sys.modules and parent not in doomed:
            sys.modules[parent].__dict__.pop(leaf, None)


def _run_tests(tree: Path, target: Target, timeout: float, log: Path) -> tuple[str, int]:
    """Run the tests on the copy in a forked child: ("passed" | "failed" | "timeout", status)."""
    # Bytecode stays cached for the copy (compiling the project and rewriting the tests again
    # would cost seconds a mutant) but for the mutated module: a pyc is checked against its
    # source's size and mtime in seconds, which two mutants written in a row can share.
    module = tree / target.path
    for stale in (module.parent / "__pycache__").glob(module.stem + ".*.pyc"):
        stale.unlink()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            os.setsid()
            out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.chdir(tree)
            _forget_dependents(tree, target.path)
            os.environ["PYTHONPATH"] = str(tree)
            os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")
            import pytest

            args = [*target.tests, "-x", "-q", "-p", "no:cacheprovider", "-W", QUIET]
            code = int(pytest.main(args))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return ("passed" if code == 0 else "failed"), code
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout", -9
        time.sleep(0.05)


@dataclass
class Result:
    number: int
    kind: str
    line: int
    before: str
    after: str
    outcome: str  # killed | survived | timeout
    status: int
    seconds: float


def run_module(
    name: str, target: Target, numbers: Sequence[int] | None, limit: int | None, tree: Path
) -> list[Result]:
    destination = tree / target.path
    source = destination.read_text()
    found = sites(source)
    pool = candidates(source, target.only)
    chosen = (
        list(numbers) if numbers is not None else [pool[i] for i in selection(len(pool), limit)]
    )
    log = tree.parent / f"{name}.log"
    outcome, code = _run_tests(tree, target, target.timeout * 3, log)
    if outcome != "passed":
        tail = log.read_text(errors="replace").splitlines()[-1:] if log.exists() else []
        sys.exit(f"mutation: {name}: the tests fail without a mutant (status {code}): {tail}")
    results: list[Result] = []
    try:
        for number in chosen:
            one = mutant(source, found[number], number)
            destination.write_text(one.source)
            started = time.monotonic()
            outcome, code = _run_tests(tree, target, target.timeout, log)
            verdict = {"passed": "survived", "failed": "killed"}.get(outcome, outcome)
            result = Result(
                number, one.kind, one.line, one.before, one.after, verdict, code,
                round(time.monotonic() - started, 2),
            )  # fmt: skip
            results.append(result)
            mark = "  " if verdict == "killed" else "!!"
            print(
                f"{mark} {name} #{number} line {one.line} {one.kind}: {one.before} -> "
                f"{one.after}: {verdict} ({result.seconds} s)",
                flush=True,
            )
    finally:
        destination.write_text(source)
    return results


def _show(root: Path, target: Target, number: int) -> None:
    source = (root / target.path).read_text()
    one = mutant(source, sites(source)[number], number)
    original = ast.unparse(ast.parse(source)).splitlines(keepends=True)
    changed = one.source.splitlines(keepends=True)
    sys.stdout.writelines(difflib.unified_diff(original, changed, target.path, "mutant", n=2))


def _table(summary: dict[str, tuple[int, list[Result]]]) -> str:
    rows = [("module", "mutants", "run", "killed", "survived", "timeout", "score")]
    for name, (total, results) in summary.items():
        killed = sum(r.outcome == "killed" for r in results)
        survived = sum(r.outcome == "survived" for r in results)
        timeouts = sum(r.outcome == "timeout" for r in results)
        score = f"{100 * (killed + timeouts) / len(results):.0f}%" if results else "-"
        rows.append(
            (name, str(total), str(len(results)), str(killed), str(survived), str(timeouts), score)
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _options(argv: Sequence[str] | None) -> tuple[argparse.Namespace, dict[str, Target]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--module", choices=sorted(MODULES), action="append")
    which.add_argument("--all", action="store_true", help="every module, in turn")
    which.add_argument("--path", help="mutate this file of the tree (with --tests)")
    parser.add_argument("--tests", help="the pytest arguments for --path, one string")
    parser.add_argument("--tree", type=Path, default=REPO, help="the tree to copy (the repo)")
    parser.add_argument("--limit", type=int, help="at most N mutants a module, evenly spread")
    parser.add_argument("--mutant", type=int, action="append", help="only mutant N (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--results", type=Path, default=REPO / "build" / "mutation")
    options = parser.parse_args(argv)
    if options.limit is not None and options.limit < 1:
        parser.error("--limit must be at least 1")
    if (options.path is None) != (options.tests is None):
        parser.error("--path and --tests go together")
    if options.path is not None:
        modules = {Path(options.path).stem: Target(options.path, tuple(shlex.split(options.tests)))}
    else:
        modules = {name: MODULES[name] for name in (MODULES if options.all else options.module)}
    for target in modules.values():
        if not (options.tree / target.path).is_file():
            parser.error(f"{target.path}: no such file in {options.tree}")
    return options, modules


def _list(options: argparse.Namespace, modules: dict[str, Target]) -> None:
    for name, target in modules.items():
        if options.mutant:
            for number in options.mutant:
                _show(options.tree, target, number)
            continue
        source = (options.tree / target.path).read_text()
        found = sites(source)
        pool = candidates(source, target.only)
        for number in (pool[i] for i in selection(len(pool), options.limit)):
            one = mutant(source, found[number], number)
            print(f"{name} #{number} line {one.line} {one.kind}: {one.before} -> {one.after}")


def main(argv: Sequence[str] | None = None) -> int:
    options, modules = _options(argv)
    if options.list:
        _list(options, modules)
        return 0
    summary: dict[str, tuple[int, list[Result]]] = {}
    with tempfile.TemporaryDirectory(prefix="fakemaster-mutation-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        _copy_tree(options.tree.resolve(), tree)
        _prewarm(tree)
        for name, target in modules.items():
            total = len(candidates((tree / target.path).read_text(), target.only))
            results = run_module(name, target, options.mutant, options.limit, tree)
            summary[name] = (total, results)
            options.results.mkdir(parents=True, exist_ok=True)
            record = {
                "module": target.path,
                "tests": list(target.tests),
                "mutants": total,
                "only": list(target.only),
                "limit": options.limit,
                "results": [asdict(r) for r in results],
            }
            (options.results / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
