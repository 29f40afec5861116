"""The garbage collector held back while a command starts.

Importing a command's modules and, for ``serve``, reading the served binlog allocate tens of
thousands of objects that live as long as the process, and the collector would walk them again
and again (a few ms of ``serve``'s start, issue #7). ``main`` holds it before building the
parser; ``serve`` resumes it once it listens, every other command when it starts.

Resuming freezes what the start made (``gc.freeze``): objects allocated while the collector is
off are all in its youngest generation, and the first collections after it is enabled would
walk every one of them, two or three times on their way to the oldest (about 8 ms a walk of
``serve``'s 26,000 start-up objects), spent by the first client.
"""

from __future__ import annotations

import gc

__all__ = ["hold_collection", "resume_collection"]

# Whether hold_collection() disabled the collector (a caller that disabled it keeps it so).
_held = False


def hold_collection() -> None:
    """Disable the garbage collector, unless it already is."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def resume_collection() -> None:
    """Enable the garbage collector again if hold_collection() disabled it, what exists now
    frozen (never collected: modules, classes, functions of the start)."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
