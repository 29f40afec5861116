"""Floods: 1 GiB on stderr (NUL bytes, 1 MiB at a time) with its error line first, an output file
of 1 GiB (sparse: NUL bytes as read), then exits 1."""

import os
import sys

os.write(2, b"Error: flooding\n")
chunk = bytes(1 << 20)
for _ in range(1024):
    os.write(2, chunk)
with open(sys.argv[1], "wb") as handle:
    handle.truncate(1 << 30)
sys.exit(1)
