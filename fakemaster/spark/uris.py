"""Paths as every node of a cluster reads them.

The driver lists the inputs and plans; the executors open the files and write the tables, in
working directories of their own (a standalone worker's ``work/app-.../N/``, a YARN
container's). A path relative to the directory the user started the job in means nothing
there, so every path the pipeline hands on is resolved first: a local path (no scheme, or
``file://``) made absolute against the driver's working directory, a URI of any other
filesystem (``hdfs://``, ``s3a://``, ``gs://``, ``abfs://``...) passed through untouched.
"""

from __future__ import annotations

import os
import re

__all__ = ["has_scheme", "resolve_path"]

# A URI's scheme (RFC 3986): a letter, then letters, digits, + - . ; then "://" (a Hadoop URI
# always has the authority part, even when empty: file:///x, hdfs:///x).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def has_scheme(path: str) -> bool:
    """Whether ``path`` is a URI of another filesystem than the local one."""
    return bool(_SCHEME.match(path)) and not path.startswith("file://")


def resolve_path(path: str) -> str:
    """``path`` as the executors can open it: a local path absolute (``file://`` kept when
    given), any other filesystem's URI unchanged."""
    if has_scheme(path):
        return path
    if path.startswith("file://"):
        return "file://" + os.path.abspath(path[len("file://") :])
    return os.path.abspath(os.path.expanduser(path))
