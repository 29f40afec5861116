"""Ignores SIGTERM and never exits: check stops it with SIGKILL at its time limit. Writes its
pid next to OUT (``OUT.pid``) once it runs."""

import os
import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("waiting for events that never come", file=sys.stderr, flush=True)
with open(sys.argv[1] + ".pid.tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.rename(sys.argv[1] + ".pid.tmp", sys.argv[1] + ".pid")  # whole when it appears
while True:
    time.sleep(60)
