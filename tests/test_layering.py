"""The product's layering: one-way imports between its packages, no import circles, the IO
boundary, and the codec's two sides sharing one vocabulary without importing each other.

``encoder/`` and ``decoder/`` import only the standard library, their own package and the
vocabulary modules of ``fakemaster/`` (below); the vocabulary imports neither codec package.
Checked twice: statically (every import statement of every module, including those inside
functions, and ``importlib.import_module``/``__import__`` calls with a literal name), and by
importing every module of one package in a fresh interpreter and looking at ``sys.modules``.

Above the codec, every package of the product has a layer (``LAYERS``): a module imports, at
run time and wherever the statement stands, only modules of its own package or of a lower
layer; the modules' import graph has no circle; and the sans-IO packages import nothing that
touches sockets, threads, processes or the event loop. Type-only imports (under ``if
TYPE_CHECKING:``) may look upward: they cost nothing at run time and make no circle there.
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
def vocabulary_modules() -> tuple[str, ...]:
    return ("fakemaster", *package_modules("fakemaster/vocabulary"))


CODEC = ("encoder", "decoder")


def package_modules(package: str) -> list[str]:
    """Every module of a package folder (``"decoder"``, ``"fakemaster/core"``), by dotted name
    (the package itself included)."""
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

    ``from a import b`` counts as ``a``, or as ``a.b`` alone when that is a module of the
    repository;
    a call of ``import_module``/``__import__`` with a literal first argument counts as that name.
    """
    tree = ast.parse(module_path(module).read_text("utf-8"))
    found: set[str] = set()
    for node in _nodes(tree, runtime_only):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            submodules = [
                f"{source}.{alias.name}"
                for alias in node.names
                if is_module(f"{source}.{alias.name}")
            ]
            found.update(submodules)
            # ``from package import submodule`` needs the submodule only (a package is always
            # initialised before its submodules, so that is no edge of the import graph).
            if len(submodules) < len(node.names):
                found.add(source)
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
    for name in vocabulary_modules():
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
            if within(name, "fakemaster") and name not in vocabulary_modules()
        )
        if server_side:
            offenders[module] = server_side
    assert offenders == {}


def test_the_vocabulary_imports_neither_encoder_nor_decoder() -> None:
    """Not even for type checking; the server only for type checking (``fakemaster``'s lazy
    names)."""
    offenders = {}
    for module in vocabulary_modules():
        codec = sorted(
            name for name in imported_modules(module) if any(within(name, side) for side in CODEC)
        )
        server_side = sorted(
            name
            for name in imported_modules(module, runtime_only=True)
            if within(name, "fakemaster") and name not in vocabulary_modules()
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
    assert [
        name for name in loaded if within(name, "fakemaster") and name not in vocabulary_modules()
    ] == []


def test_importing_the_vocabulary_loads_no_codec() -> None:
    loaded = loaded_after_importing(vocabulary_modules())
    assert [name for name in loaded if any(within(name, side) for side in CODEC)] == []


# The product's packages from the bottom up: a module may import its own package and any
# package of a lower layer, never one of its own layer or above (CONTRIBUTING.md draws it).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("fakemaster", "fakemaster.vocabulary"),
    ("encoder", "decoder"),
    ("fakemaster.protocol", "fakemaster.forms"),
    ("fakemaster.config",),
    ("fakemaster.sql",),
    ("fakemaster.store",),
    ("fakemaster.core",),
    ("fakemaster.server",),
    ("scenarios", "fakemaster.client", "fakemaster.faults", "fakemaster.scapy"),
    ("fakemaster.record", "fakemaster.contract", "fakemaster.spark", "fakemaster.testing"),
    ("fakemaster.cli",),
    ("fakemaster.__main__",),
)
PRODUCT = ("fakemaster", "encoder", "decoder", "scenarios")

# Packages that are pure code over bytes: clocks, threads and sockets are the shell's.
SANS_IO = (
    "fakemaster.vocabulary",
    "fakemaster.config",
    "fakemaster.protocol",
    "fakemaster.core",
    "fakemaster.forms",
    "encoder",
    "decoder",
)
IO_MODULES = ("asyncio", "socket", "threading", "selectors", "subprocess", "multiprocessing")


def product_modules() -> list[str]:
    return [name for package in PRODUCT for name in package_modules(package)]


def layer_package(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> str | None:
    """The package of ``layers`` that ``module`` belongs to (the longest that contains it)."""
    found = [p for layer in layers for p in layer if within(module, p)]
    if not found:
        return None
    longest = max(found, key=len)
    # The root package "fakemaster" holds only its own __init__ (the lazy public names).
    if longest == "fakemaster" and module != "fakemaster":
        return None
    return longest


def layer_of(package: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    return next(i for i, layer in enumerate(layers) if package in layer)


def upward_imports(
    modules: list[str], layers: tuple[tuple[str, ...], ...] = LAYERS
) -> dict[str, list[str]]:
    """Each module's run-time imports of a product module in another package of its own layer
    or of a higher one."""
    offenders: dict[str, list[str]] = {}
    for module in modules:
        own = layer_package(module, layers)
        assert own is not None, module
        wrong = sorted(
            name
            for name in imported_modules(module, runtime_only=True)
            if (other := layer_package(name, layers)) is not None
            and other != own
            and layer_of(other, layers) >= layer_of(own, layers)
        )
        if wrong:
            offenders[module] = wrong
    return offenders


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def runtime_import_graph(modules: list[str]) -> dict[str, set[str]]:
    known = set(modules)
    return {
        module: {name for name in imported_modules(module, runtime_only=True) if name in known}
        - {module}
        for module in modules
    }


def test_every_product_package_has_a_layer() -> None:
    """A new package is placed in LAYERS (and in CONTRIBUTING.md's picture) before it is used."""
    unplaced = sorted({m for m in product_modules() if layer_package(m) is None})
    assert unplaced == [], "add the package of these modules to LAYERS in tests/test_layering.py"


def test_imports_go_one_way_between_the_packages() -> None:
    assert upward_imports(product_modules()) == {}


def test_no_import_circles_in_the_product() -> None:
    assert import_cycles(runtime_import_graph(product_modules())) == []


@pytest.mark.parametrize("package", SANS_IO)
def test_the_sans_io_packages_touch_no_socket_thread_process_or_loop(package: str) -> None:
    offenders = {}
    for module in package_modules(package.replace(".", "/")):
        io = sorted(
            name
            for name in imported_modules(module)
            if any(within(name, banned) for banned in IO_MODULES)
        )
        if io:
            offenders[module] = io
    assert offenders == {}


# The checks above must be able to fail: each is fed an input broken in exactly its way.


def test_an_upward_import_is_reported() -> None:
    # The server imports the core: with the two layers swapped, that import goes upward.
    layers = (("encoder", "decoder"), ("fakemaster.core",), ("fakemaster.server",))
    swapped = (("encoder", "decoder"), ("fakemaster.server",), ("fakemaster.core",))
    assert upward_imports(["fakemaster.server.master"], layers) == {}
    upward = upward_imports(["fakemaster.server.master"], swapped)["fakemaster.server.master"]
    assert any(within(name, "fakemaster.core") for name in upward)


def test_an_import_circle_is_reported() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_an_io_import_is_seen_wherever_it_stands() -> None:
    # fakemaster.server.sender runs threads: the same check that keeps the core clean finds it.
    names = imported_modules("fakemaster.server.sender")
    assert any(within(name, "threading") for name in names)
