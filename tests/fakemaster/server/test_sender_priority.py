"""The threads that send dumps and frame files run ServerConfig.dump_thread_niceness steps below
the event loop's thread (a nice increment per thread; 0, level, by default: logins are favoured
through the loop's gate, fakemaster.server.loop_gate); the loop's thread and the process keep
their priority."""

from __future__ import annotations

import os
import threading

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server import sender
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.server.sender import lower_thread_priority
from fakemaster.vocabulary.errors import ConfigError
from tests.fakemaster.server.test_server_frame_cache import PASSWORD, USER, corpus, dump_bytes

BULK_PREFIXES = ("fakemaster-dump-", "fakemaster-frame")


def nice_of(native_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, native_id)


@pytest.mark.parametrize("niceness", [10, 0])
def test_dump_threads_run_below_the_loop(niceness: int, monkeypatch: pytest.MonkeyPatch) -> None:
    process = os.getpriority(os.PRIO_PROCESS, 0)
    before = {t.native_id for t in threading.enumerate() if t.native_id is not None}
    # A dump's thread ends with its connection: each bulk thread's value is read in the
    # thread itself, right after it lowered its priority.
    lowered: dict[str, int] = {}

    def lower_and_note(increment: int) -> None:
        lower_thread_priority(increment)
        lowered[threading.current_thread().name] = nice_of(threading.get_native_id())

    monkeypatch.setattr(sender, "lower_thread_priority", lower_and_note)
    config = ServerConfig(user=USER, password=PASSWORD, dump_thread_niceness=niceness)
    with BackgroundFakeMaster(config, corpus()) as server:
        # Two dumps: the first frames the files (the framing pool), both send spans (their
        # connections' dump threads).
        assert dump_bytes(server.port, 2) == dump_bytes(server.port, 3)
        assert {name.rsplit("_", 1)[0] for name in lowered} >= {
            "fakemaster-dump-1",
            "fakemaster-dump-2",
        }
        for name, value in lowered.items():
            assert name.startswith(BULK_PREFIXES), name
            assert value == min(19, process + niceness), name
        loop_threads = [
            t
            for t in threading.enumerate()
            if t.native_id not in before and not t.name.startswith(BULK_PREFIXES)
        ]
        assert loop_threads, "the server's loop thread"
        for thread in loop_threads:
            assert thread.native_id is not None
            assert nice_of(thread.native_id) == process, thread.name
        assert server.errors == []
    assert os.getpriority(os.PRIO_PROCESS, 0) == process


def test_lowering_changes_only_the_calling_thread() -> None:
    process = os.getpriority(os.PRIO_PROCESS, 0)
    seen: list[int] = []

    def worker() -> None:
        lower_thread_priority(3)
        seen.append(nice_of(threading.get_native_id()))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [min(19, process + 3)]
    assert nice_of(threading.get_native_id()) == process


@pytest.mark.parametrize("niceness", [-1, 20])
def test_a_niceness_outside_0_to_19_is_refused(niceness: int) -> None:
    with pytest.raises(ConfigError, match="dump_thread_niceness"):
        ServerConfig(dump_thread_niceness=niceness)
