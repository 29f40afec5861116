"""Writes a header, then a line nested deeper than any JSON parser recurses, and exits 0."""

import sys

with open(sys.argv[1], "w") as handle:
    handle.write('{"kind": "header", "client": "deep"}\n')
    handle.write("[" * 1_000_000 + "\n")
