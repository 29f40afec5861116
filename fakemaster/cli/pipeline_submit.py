"""``python -m fakemaster pipeline submit-files``: prints ``--py-files ZIP ENTRY`` for the
installed version, so that

    spark-submit --master spark://host:7077 $(python3 -m fakemaster pipeline submit-files) \\
        batch binlogs/ --out cdc

runs the pipeline from an installed package, no checkout needed.

The executors run the data source's reader, so they need fakemaster and the packages it
imports (``encoder``, ``decoder``, ``scenarios``) on their Python path; Spark ships a zip given
to ``--py-files`` to every node (a wheel there was not found by the data source's planning
worker in a local test, a zip was). The zip is built from wherever these packages are imported
from (site-packages or a checkout), so it is the version the driver runs. Its name carries the
version and a digest of its contents: a zip already built for the same files is reused, and a
changed installation gets a new one.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import shlex
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "PACKAGES",
    "add_parser",
    "build_zip",
    "cache_dir",
    "entry_point",
    "run",
    "submit_arguments",
]


# The top-level packages the pipeline imports on the executors.
PACKAGES = ("fakemaster", "encoder", "decoder", "scenarios")

# A fixed timestamp for every member: the same files give the same zip, byte for byte.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/fakemaster`` (``~/.cache/fakemaster`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fakemaster"


def _package_files() -> list[tuple[str, Path]]:
    """(name in the zip, file) of every file of the packages, sorted, byte code left out."""
    files = []
    for name in PACKAGES:
        root = Path(importlib.import_module(name).__file__ or "").parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files.append((f"{name}/{path.relative_to(root).as_posix()}", path))
    return sorted(files)


def build_zip(directory: Path | None = None) -> Path:
    """The ``--py-files`` zip of the installed packages in ``directory`` (default
    :func:`cache_dir`), built unless one of the same contents is there."""
    from fakemaster import __version__

    files = _package_files()
    digest = hashlib.sha256()
    contents = []
    for arcname, path in files:
        data = path.read_bytes()
        digest.update(arcname.encode() + b"\0" + hashlib.sha256(data).digest())
        contents.append((arcname, data))
    directory = directory if directory is not None else cache_dir()
    target = directory / f"fakemaster-{__version__}-{digest.hexdigest()[:12]}.zip"
    if target.is_file():
        return target.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, suffix=".zip.tmp")
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
            for arcname, data in contents:
                z.writestr(zipfile.ZipInfo(arcname, _EPOCH), data, zipfile.ZIP_DEFLATED)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the cluster's users read it
        os.replace(temporary, target)  # atomic: a concurrent run sees a whole zip or none
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return target.resolve()


def entry_point() -> Path:
    """The file ``spark-submit`` runs: :mod:`fakemaster.cli.spark_submit` of this installation."""
    module = importlib.import_module("fakemaster.cli.spark_submit")
    return Path(module.__file__ or "").resolve()


def submit_arguments(directory: Path | None = None) -> list[str]:
    """``["--py-files", ZIP, ENTRY]``: what goes between ``spark-submit [options]`` and the
    pipeline's own arguments."""
    return ["--py-files", str(build_zip(directory)), str(entry_point())]


def add_parser(modes: Any) -> None:
    parser = modes.add_parser(
        "submit-files",
        help="print spark-submit's --py-files zip and entry point of this installation",
        description=(
            "Build (once per installed version) a zip of the packages the executors need and"
            " print `--py-files ZIP ENTRY` for spark-submit, followed by the pipeline's"
            " arguments (docs/spark.md, On a real cluster)."
        ),
    )
    parser.add_argument(
        "--dir",
        default=None,
        metavar="DIR",
        help="where the zip is written (default: $XDG_CACHE_HOME/fakemaster or ~/.cache/fakemaster)",
    )


def run(args: argparse.Namespace, err: TextIO | None = None, out: TextIO | None = None) -> int:
    err = err if err is not None else sys.stderr
    out = out if out is not None else sys.stdout
    try:
        arguments = submit_arguments(Path(args.dir) if args.dir else None)
    except OSError as exc:
        print(f"error: {exc.filename or args.dir}: {exc.strerror or exc}", file=err)
        return 1
    print(" ".join(shlex.quote(a) for a in arguments), file=out)
    return 0
