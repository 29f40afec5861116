"""Diagnostics go through the ``fakemaster`` logger and never block the event loop."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import DumpRequest
from fakemaster.server.logs import LOGGER_NAME, log_to_stream_in_background, logger
from fakemaster.server.master import FakeMaster
from tests.support.wire import RawClient

# Bounds a hang only: a healthy run never comes near it.
HANG_BOUND = 60.0


class StuckStream:
    """A stream that takes nothing until released, like stderr piped to a reader that never
    reads."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.entered = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.entered.set()
        self.released.wait(HANG_BOUND)
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_the_library_adds_no_handler_that_writes() -> None:
    handlers = logging.getLogger(LOGGER_NAME).handlers
    assert handlers and all(type(h) is logging.NullHandler for h in handlers)


def test_a_stream_that_takes_nothing_costs_records_not_the_caller() -> None:
    stream = StuckStream()
    queue_size = 100
    log = log_to_stream_in_background(stream, queue_size=queue_size)  # type: ignore[arg-type]
    try:
        count = 10 * queue_size
        logger.warning("first")
        assert stream.entered.wait(HANG_BOUND)  # the writer thread is stuck in write()
        # Every call returns though nothing more can be written.
        for number in range(count):
            logger.warning("record %d", number)
        assert log.dropped == count - queue_size
    finally:
        stream.released.set()
        log.stop()
    written = "".join(stream.lines)
    assert written.count("\n") == 1 + queue_size
    assert f"record {queue_size - 1}\n" in written and f"record {queue_size}\n" not in written


def _failing_dump(request: DumpRequest) -> object:
    raise RuntimeError("the dump factory failed")


def test_an_error_while_serving_is_logged_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> FakeMaster:
        async with FakeMaster(ServerConfig(), dump_factory=_failing_dump) as master:  # type: ignore[arg-type]

            def dump() -> None:
                with RawClient(master.host, master.port, "root", "") as client:
                    dump_command = b"\x12" + (4).to_bytes(4, "little") + b"\0\0" + b"\x02\0\0\0"
                    client.write(dump_command + b"mysql-bin.000001", 0)
                    try:
                        client.read()
                    except ConnectionError:
                        pass

            await asyncio.to_thread(dump)
            return master

    with caplog.at_level(logging.ERROR, logger=LOGGER_NAME):
        master = asyncio.run(scenario())
    assert [str(error) for error in master.errors] == ["the dump factory failed"]
    records = [r for r in caplog.records if r.name == LOGGER_NAME]
    assert [r.getMessage() for r in records] == ["internal error in a connection:"]
    assert records[0].exc_info is not None and records[0].exc_info[1] is master.errors[0]


def test_the_loop_reports_what_asyncio_would_print_to_the_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode() -> None:
        raise ValueError("a callback failed")

    async def scenario() -> None:
        async with FakeMaster(ServerConfig()):
            loop = asyncio.get_running_loop()
            done = asyncio.Event()
            loop.call_soon(explode)
            loop.call_soon(done.set)
            await done.wait()

    with caplog.at_level(logging.ERROR, logger=LOGGER_NAME):
        asyncio.run(scenario())
    records = [r for r in caplog.records if r.name == LOGGER_NAME]
    assert len(records) == 1 and records[0].exc_info is not None
    assert str(records[0].exc_info[1]) == "a callback failed"
