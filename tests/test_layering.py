"""The codec's layering: encoder and decoder share one vocabulary and never import each other.

``encoder/`` and ``decoder/`` import only the standard library, their own package and the
vocabulary modules of ``fakemaster/`` (below); the vocabulary imports neither codec package.
Checked twice: statically (every import statement of every module, including those inside
functions, and ``importlib.import_module``/``__import__`` calls with a literal name), and by
importing every module of one package in a fresh interpreter and looking at ``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# The fakemaster modules encoder and decoder may import: one definition of every layout,
# number and type of the protocol. Anything else in fakemaster/ is the server and its tools.
VOCABULARY = (
    "fakemaster",
    "fakemaster.vocabulary",
    "fakemaster.vocabulary.columns",
    "fakemaster.vocabulary.constants",
    "fakemaster.vocabulary.context",
    "fakemaster.vocabulary.encryption",
    "fakemaster.vocabulary.errors",
    "fakemaster.vocabulary.events",
    "fakemaster.vocabulary.header",
    "fakemaster.vocabulary.layouts",
    "fakemaster.vocabulary.packets",
    "fakemaster.vocabulary.table_shapes",
    "fakemaster.vocabulary.values",
)
CODEC = ("encoder", "decoder")


def package_modules(package: str) -> list[str]:
    """Every module of a top-level package, by dotted name (the package itself included)."""
    root = REPO / package
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def module_path(name: str) -> Path:
    path = REPO.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def is_module(name: str) -> bool:
    return module_path(name).is_file()


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    is_package = module_path(module).name == "__init__.py"
    base = package if is_package else package[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _nodes(tree: ast.AST, runtime_only: bool) -> list[ast.AST]:
    """Every node of ``tree``; with ``runtime_only``, none under ``if TYPE_CHECKING:``."""
    found = []
    pending = [tree]
    while pending:
        node = pending.pop()
        found.append(node)
        if runtime_only and _is_type_checking(node):
            assert isinstance(node, ast.If)
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def imported_modules(module: str, *, runtime_only: bool = False) -> set[str]:
    """Every module name ``module`` imports, wherever the statement stands (with
    ``runtime_only``, except under ``if TYPE_CHECKING:``).

    ``from a import b`` counts as ``a``, and as ``a.b`` when that is a module of the repository;
    a call of ``import_module``/``__import__`` with a literal first argument counts as that name.
    """
    tree = ast.parse(module_path(module).read_text("utf-8"))
    found: set[str] = set()
    for node in _nodes(tree, runtime_only):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            found.add(source)
            for alias in node.names:
                if is_module(f"{source}.{alias.name}"):
                    found.add(f"{source}.{alias.name}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.add(first.value)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_vocabulary_modules_exist() -> None:
    for name in VOCABULARY:
        assert module_path(name).is_file(), name


@pytest.mark.parametrize(("package", "forbidden"), [("encoder", "decoder"), ("decoder", "encoder")])
def test_no_codec_module_imports_the_other_side(package: str, forbidden: str) -> None:
    offenders = {
        module: sorted(name for name in imported_modules(module) if within(name, forbidden))
        for module in package_modules(package)
    }
    assert {module: names for module, names in offenders.items() if names} == {}


@pytest.mark.parametrize("package", CODEC)
def test_the_codec_imports_only_the_vocabulary_of_fakemaster(package: str) -> None:
    offenders = {}
    for module in package_modules(package):
        server_side = sorted(
            name
            for name in imported_modules(module)
            if within(name, "fakemaster") and name not in VOCABULARY
        )
        if server_side:
            offenders[module] = server_side
    assert offenders == {}


def test_the_vocabulary_imports_neither_encoder_nor_decoder() -> None:
    """Not even for type checking; the server only for type checking (``fakemaster``'s lazy
    names)."""
    offenders = {}
    for module in VOCABULARY:
        codec = sorted(
            name for name in imported_modules(module) if any(within(name, side) for side in CODEC)
        )
        server_side = sorted(
            name
            for name in imported_modules(module, runtime_only=True)
            if within(name, "fakemaster") and name not in VOCABULARY
        )
        if codec or server_side:
            offenders[module] = codec + server_side
    assert offenders == {}


_LOAD_ALL = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_importing(modules: list[str] | tuple[str, ...]) -> list[str]:
    """``sys.modules`` of a fresh interpreter (repository first on its path) after importing
    ``modules``."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    result = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL, json.dumps(list(modules))],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout)
    return loaded


@pytest.mark.parametrize(("package", "forbidden"), [("encoder", "decoder"), ("decoder", "encoder")])
def test_importing_a_whole_codec_side_loads_nothing_of_the_other(
    package: str, forbidden: str
) -> None:
    modules = package_modules(package)
    loaded = loaded_after_importing(modules)
    assert set(modules) <= set(loaded)  # the import really happened
    assert [name for name in loaded if within(name, forbidden)] == []
    assert [name for name in loaded if within(name, "fakemaster") and name not in VOCABULARY] == []


def test_importing_the_vocabulary_loads_no_codec() -> None:
    loaded = loaded_after_importing(VOCABULARY)
    assert [name for name in loaded if any(within(name, side) for side in CODEC)] == []
