"""Leaves a grandchild in a session of its own (``setsid``) holding stderr open, writes its pid
next to OUT, prints its error and exits 1: check must not wait for the grandchild's stderr."""

import os
import subprocess
import sys

out = sys.argv[1]
grandchild = subprocess.Popen(
    ["setsid", sys.executable, "-c", "import time; time.sleep(600)"],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,  # stderr: inherited, the pipe check reads
)
with open(out + ".grandchild-pid", "w") as handle:
    handle.write(str(grandchild.pid))
print("starting", file=sys.stderr, flush=True)
print("RuntimeError: cannot reach the primary", file=sys.stderr, flush=True)
print("bye", file=sys.stderr, flush=True)
os._exit(1)
