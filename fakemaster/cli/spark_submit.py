"""The file to hand to ``spark-submit``: runs ``fakemaster pipeline ARGS...``.

``spark-submit $(python3 -m fakemaster pipeline submit-files) batch FILES... --out DIR``
(``submit-files`` prints ``--py-files ZIP`` and this file's path; docs/spark.md).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]

# Run as a script, this file's folder comes first on the path, where the CLI's modules
# (scenarios.py, one per command) would shadow the packages of the same name.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _HERE]


def main(argv: list[str]) -> int:
    from fakemaster.cli import main as cli_main

    return cli_main(["pipeline", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
