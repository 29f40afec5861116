"""A big statement is read in a worker thread: while it is held there, the loop goes on serving
other clients' logins, pings and dumps. Checked by order, never by time: the big statement
is held until the others were answered (on the loop, it would hold them all, and the test
would hang until its bound)."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
from typing import Any

import pytest

from decoder.packets import parse_err
from fakemaster.server.master import FakeMaster
from fakemaster.server.statement_worker import OFF_LOOP_INPUT, SWITCH_INTERVAL, StatementWorkers
from fakemaster.sql import statements
from fakemaster.sql.outcome import Outcome
from fakemaster.sql.state import SessionState
from tests.fakemaster.server.test_server import CONFIG, DumpRecorder, dump_command, open_raw, until
from tests.support.wire import RawClient

BIG = "SELECT 'big', '" + "x" * OFF_LOOP_INPUT + "' AS padding"
HANG = 60.0  # bounds a hang only


class Gate:
    """Holds every statement that starts with ``prefix`` inside ``execute`` until opened,
    saying which thread it ran in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.threads: list[str] = []
        real = statements.execute

        def execute(session: SessionState, sql: str, *args: Any, **kw: Any) -> Outcome:
            if sql.startswith(prefix):
                self.threads.append(threading.current_thread().name)
                self.entered.set()
                if not self.opened.wait(HANG):
                    raise AssertionError("the gate was never opened")
            return real(session, sql, *args, **kw)

        monkeypatch.setattr(statements, "execute", execute)


def first_event(replica: RawClient) -> bytes:
    return replica.read()


async def test_others_are_served_while_a_big_statement_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = Gate(monkeypatch, "SELECT 'big'")
    recorder = DumpRecorder([b"first"], then="wait")
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        replica.write(dump_command())
        assert await asyncio.to_thread(first_event, replica) == b"\x00first"
        client = await open_raw(master)
        answer = asyncio.ensure_future(asyncio.to_thread(client.query, BIG))
        assert await asyncio.to_thread(gate.entered.wait, HANG)
        # The big statement is held in its worker: a new client logs in and pings, the
        # replica gets a new event.
        newcomer = await open_raw(master)
        assert newcomer.login_reply[:1] == b"\x00"
        newcomer.write(b"\x0e")
        assert (await asyncio.to_thread(newcomer.read))[:1] == b"\x00"
        recorder.dumps[0].append(b"second")
        master.notify_binlog_changed()
        assert await asyncio.to_thread(first_event, replica) == b"\x00second"
        assert not answer.done()
        gate.opened.set()
        payloads = await answer
        assert payloads[-2][:1] != b"\xff"
        assert b"big" in payloads[-2]  # the row
        assert gate.threads[0].startswith("fakemaster-statement")
        assert master.statement_workers.calls >= 1
        for raw in (client, newcomer, replica):
            raw.close()
        assert master.errors == []


async def test_small_statements_stay_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(monkeypatch, "SELECT 'small'")
    gate.opened.set()
    async with FakeMaster(CONFIG) as master:
        client = await open_raw(master)
        answer = await asyncio.to_thread(client.query, "SELECT 'small'")
        assert b"small" in answer[-2]
        assert master.statement_workers.calls == 0
        assert gate.threads == [threading.main_thread().name]  # the loop's (this test's)
        client.close()


async def test_a_big_statement_is_answered_in_the_clients_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A small statement pipelined after a big one is answered after it, on the same
    # connection, though one runs in a worker and the other could run on the loop.
    async with FakeMaster(CONFIG) as master:
        client = await open_raw(master)

        def both() -> tuple[list[bytes], list[bytes]]:
            client.write(b"\x03" + BIG.encode(), 0)
            client.write(b"\x03SELECT 'after'", 0)
            from tests.support.wire import read_response

            return (
                read_response(client.read, client.capabilities),
                read_response(client.read, client.capabilities),
            )

        first, second = await asyncio.to_thread(both)
        assert b"big" in first[-2]
        assert b"after" in second[-2]
        client.close()
        assert master.errors == []


async def test_a_connection_killed_while_its_big_statement_runs_closes_cleanly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = Gate(monkeypatch, "SELECT 'big'")
    async with FakeMaster(CONFIG) as master:
        client = await open_raw(master)
        killer = await open_raw(master)
        asyncio.ensure_future(asyncio.to_thread(client.query, BIG))
        assert await asyncio.to_thread(gate.entered.wait, HANG)
        thread_id = client.greeting.thread_id
        kill = asyncio.ensure_future(asyncio.to_thread(killer.query, f"KILL {thread_id}"))
        await until(lambda: master.statement_workers.calls == 1, "the worker")
        gate.opened.set()
        answer = await kill
        assert answer[0][:1] == b"\x00", parse_err(answer[0]) if answer[0][:1] == b"\xff" else ""
        await until(lambda: master.connection_count == 1, "the killed connection to go")
        killer.close()
        assert master.errors == []


def test_the_switch_interval_and_the_collector_change_only_while_a_worker_runs() -> None:
    before = sys.getswitchinterval()
    assert gc.isenabled()
    seen: list[tuple[float, bool]] = []
    workers = StatementWorkers()

    async def run() -> None:
        await workers.run(lambda: seen.append((sys.getswitchinterval(), gc.isenabled())))

    asyncio.run(run())
    workers.shutdown()
    assert seen == [(min(before, SWITCH_INTERVAL), False)]
    assert sys.getswitchinterval() == before
    assert gc.isenabled()
