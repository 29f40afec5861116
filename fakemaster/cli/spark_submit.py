"""The file to hand to ``spark-submit``: runs ``fakemaster pipeline ARGS...``.

``spark-submit --py-files fakemaster.whl $(python3 -c 'import fakemaster.cli.spark_submit as m;
print(m.__file__)') batch FILES... --out DIR`` (docs/spark.md).
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str]) -> int:
    from fakemaster.cli import main as cli_main

    return cli_main(["pipeline", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
