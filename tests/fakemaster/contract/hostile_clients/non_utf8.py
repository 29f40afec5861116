"""Writes an output whose second line is not UTF-8 and a stderr of bytes that are neither UTF-8
nor allowed in XML (NUL, ESC), and exits 0."""

import os
import sys

with open(sys.argv[1], "wb") as handle:
    handle.write(b'{"kind": "header", "client": "latin1"}\n')
    handle.write(b'{"kind": "row", "table": "zip.t", "values": {"note": "caf\xe9"}}\n')
os.write(2, b"\x00\x1b[31m\xff\xfe not text \xc3\n")
