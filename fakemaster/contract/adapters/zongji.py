"""The Node example client (``zongji_client.mjs`` beside this module) on ZongJi, as a
contract-test adapter::

    python -m fakemaster.contract.adapters.zongji [--package NAME] HOST PORT OUT

``--package`` is ``@vlasky/zongji`` (the default) or ``@powersync/mysql-zongji``, installed
with npm in tests/node (``scripts/install-deps.sh`` runs ``npm ci`` there; the folder can be
named by ``FAKEMASTER_NODE_MODULES``). This wrapper replaces itself with ``node`` (so ``check``
stops the client itself), the package and the folder in the environment; the client reads the
rest from the ``FAKEMASTER_*`` variables ``check`` sets. What the client does is written at the
top of ``zongji_client.mjs``; its known limits per package are in :mod:`.limits`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PACKAGES", "client_script", "main", "node_modules"]

PACKAGES = ("@vlasky/zongji", "@powersync/mysql-zongji")
_HERE = Path(__file__).resolve().parent


def client_script() -> Path:
    """The Node client's file."""
    return _HERE / "zongji_client.mjs"


def node_modules() -> Path:
    """Where the npm packages are: ``FAKEMASTER_NODE_MODULES``, else the checkout's
    tests/node/node_modules."""
    named = os.environ.get("FAKEMASTER_NODE_MODULES")
    return Path(named) if named else _HERE.parents[2] / "tests" / "node" / "node_modules"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="zongji", description=__doc__.splitlines()[0])
    parser.add_argument("--package", choices=PACKAGES, default=PACKAGES[0])
    parser.add_argument("host")
    parser.add_argument("port")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    node = shutil.which("node")
    if node is None:
        print("error: node is not installed (scripts/install-deps.sh)", file=sys.stderr)
        return 1
    modules = node_modules()
    if not (modules / args.package / "package.json").is_file():
        print(f"error: {args.package} is not installed in {modules} (npm ci)", file=sys.stderr)
        return 1
    env = {
        **os.environ,
        "FAKEMASTER_ZONGJI_PACKAGE": args.package,
        "FAKEMASTER_NODE_MODULES": str(modules),
    }
    command = [node, str(client_script()), args.host, args.port, args.out]
    sys.stdout.flush()
    os.execve(node, command, env)
    return 1  # not reached: execve replaces the process or raises


if __name__ == "__main__":
    sys.exit(main())
