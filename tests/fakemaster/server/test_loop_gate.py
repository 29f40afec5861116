"""The loop gate (fakemaster.server.loop_gate): dump threads wait while the event loop works,
never longer than the bound, and a gated loop serves the same bytes.

The clock is a counter the test moves: no verdict here depends on real time.
"""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading

from fakemaster.server.loop_gate import GatedSelector, LoopGate, gate_of, new_gated_loop
from fakemaster.server.sender import pump_dump


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_open_gate_lets_a_dump_thread_through() -> None:
    gate = LoopGate(bound=0.02, clock=Clock())
    assert gate.is_open
    gate.wait()  # returns: nothing to wait for


def test_the_gate_opens_after_its_bound_even_if_the_loop_never_opens_it() -> None:
    clock = Clock()
    gate = LoopGate(bound=0.02, clock=clock)
    gate.close()
    assert not gate.is_open
    clock.now += 0.021  # the loop stayed busy past the bound and never opened it
    gate.wait()  # returns at once: the dumps are not starved
    assert not gate.is_open  # the loop's state is not the dumps' to change


def test_a_closed_gate_holds_a_dump_thread_until_the_loop_opens_it() -> None:
    # A bound no test machine reaches: only open() can let the thread through.
    gate = LoopGate(bound=3600.0)
    gate.close()
    through = threading.Event()

    def dump_thread() -> None:
        gate.wait()
        through.set()

    thread = threading.Thread(target=dump_thread)
    thread.start()
    assert not through.wait(0.05)  # still held (a wait, not a verdict on speed)
    gate.open()
    thread.join()
    assert through.is_set()


def test_the_selector_closes_the_gate_while_the_loop_works() -> None:
    gate = LoopGate(bound=3600.0)
    seen: list[bool] = []
    selector = GatedSelector(gate, selectors.DefaultSelector())
    left, right = socket.socketpair()
    try:
        selector.register(left, selectors.EVENT_READ)
        right.send(b"x")
        assert selector.select(None)  # a woken loop
        seen.append(gate.is_open)
        assert selector.get_map()[left].fileobj is left
        selector.unregister(left)
    finally:
        selector.close()
        left.close()
        right.close()
    assert seen == [False]
    assert gate.is_open  # a closed loop holds no dump back


def test_a_gated_loop_runs_and_only_it_has_a_gate() -> None:
    loop = new_gated_loop()
    try:
        gates: list[LoopGate] = []

        async def inside() -> int:
            gates.append(gate_of(asyncio.get_running_loop()))
            await asyncio.sleep(0)
            return 7

        assert loop.run_until_complete(inside()) == 7
        assert not gates[0].is_open  # the loop is working while the coroutine runs
    finally:
        loop.close()
    other = asyncio.new_event_loop()
    try:
        assert gate_of(other).is_open and gate_of(other) is gate_of(None)
    finally:
        other.close()


def test_pump_dump_asks_the_gate_before_each_batch() -> None:
    batches = [[b"ab"], [b"cd"], []]
    calls: list[str] = []

    def next_parts() -> list[bytes]:
        calls.append("read")
        return list(batches.pop(0))

    class Writer:
        def send_buffers(self, buffers: list[bytes]) -> None:
            calls.extend(bytes(b).decode() for b in buffers)

    wrote = pump_dump(
        next_parts,
        Writer(),  # type: ignore[arg-type]
        lambda span, writer: None,
        lambda: True,
        pause=lambda: calls.append("pause"),
    )
    assert wrote
    assert calls == ["pause", "read", "ab", "pause", "read", "cd", "pause", "read"]
