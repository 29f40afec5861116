"""The garbage collector held while a command starts, and what the start made frozen when it
resumes (fakemaster/cli/collection_hold.py)."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a process of its own: the collector's state is the process's.
_PROBE = """
import gc, json
from fakemaster.cli.collection_hold import hold_collection, resume_collection
gc.enable()
hold_collection()
held = not gc.isenabled()
made = [[n] for n in range(5000)]  # start-up objects, tracked by the collector
resume_collection()
print(json.dumps({"held": held, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                  "young": gc.get_count()[0]}))
"""

_ALREADY_OFF = """
import gc, json
from fakemaster.cli.collection_hold import hold_collection, resume_collection
gc.disable()
hold_collection()
resume_collection()
print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def _run(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_resuming_freezes_what_the_start_made() -> None:
    """The first collections after the start walk none of the start's objects: they are
    frozen, and the youngest generation is empty."""
    result = _run(_PROBE)
    assert result["held"] is True
    assert result["enabled"] is True
    assert isinstance(result["frozen"], int) and result["frozen"] >= 5000
    assert result["young"] == 0


def test_a_collector_the_caller_disabled_stays_disabled_and_nothing_is_frozen() -> None:
    result = _run(_ALREADY_OFF)
    assert result == {"enabled": False, "frozen": 0}
