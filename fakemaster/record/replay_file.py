"""Where a recording's replay file is: its name and the lookup in a binlog directory, apart from
:mod:`fakemaster.record.replay` so that ``serve --binlog-dir`` of a directory without one does
not import the replay's reader (issue #7, readiness)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPLAY_FILE", "find_replay"]

REPLAY_FILE = "fakemaster-replay.json"


def find_replay(directory: Path) -> Path | None:
    """The replay file of a binlog directory, if it has one."""
    path = directory / REPLAY_FILE
    return path if path.is_file() else None
