"""Record a real primary (its binlog files, byte for byte, and its answers to a replica's
setup statements) for ``serve`` to replay.

* :mod:`fakemaster.record.rebuild`: binlog files out of a dump's events (sans-IO);
* :mod:`fakemaster.record.query`: a text-protocol SQL session (sans-IO);
* :mod:`fakemaster.record.replay`: the replay file, and what ``serve`` takes from it;
* :mod:`fakemaster.record.recorder`: the blocking recorder (``python -m fakemaster record``).
"""

from __future__ import annotations

from fakemaster.record.rebuild import BinlogRebuilder, RecordError
from fakemaster.record.recorder import RecordOptions, RecordSummary, StopRule, record
from fakemaster.record.replay import REPLAY_FILE, Replay, ReplaySettings, replay_settings

__all__ = [
    "REPLAY_FILE",
    "BinlogRebuilder",
    "RecordError",
    "RecordOptions",
    "RecordSummary",
    "Replay",
    "ReplaySettings",
    "StopRule",
    "record",
    "replay_settings",
]
