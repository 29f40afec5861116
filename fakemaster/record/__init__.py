"""Record a real primary (its binlog files, byte for byte, and its answers to a replica's
setup statements) for ``serve`` to replay.

* :mod:`fakemaster.record.rebuild`: binlog files out of a dump's events (sans-IO);
* :mod:`fakemaster.record.query`: a text-protocol SQL session (sans-IO);
* :mod:`fakemaster.record.replay`: the replay file, and what ``serve`` takes from it;
* :mod:`fakemaster.record.recorder`: the blocking recorder (``python -m fakemaster record``).

The names below are imported on first use: ``serve`` reads a replay file without loading the
recorder and the replica client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.record.rebuild import BinlogRebuilder, RecordError
    from fakemaster.record.recorder import RecordOptions, RecordSummary, StopRule, record
    from fakemaster.record.replay import REPLAY_FILE, Replay, ReplaySettings, replay_settings

_LAZY = {
    "BinlogRebuilder": "fakemaster.record.rebuild",
    "RecordError": "fakemaster.record.rebuild",
    "RecordOptions": "fakemaster.record.recorder",
    "RecordSummary": "fakemaster.record.recorder",
    "StopRule": "fakemaster.record.recorder",
    "record": "fakemaster.record.recorder",
    "REPLAY_FILE": "fakemaster.record.replay",
    "Replay": "fakemaster.record.replay",
    "ReplaySettings": "fakemaster.record.replay",
    "replay_settings": "fakemaster.record.replay",
}

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

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
