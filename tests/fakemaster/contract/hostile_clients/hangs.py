"""Ignores SIGTERM and never exits: check stops it with SIGKILL at its time limit."""

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("waiting for events that never come", file=sys.stderr, flush=True)
while True:
    time.sleep(60)
