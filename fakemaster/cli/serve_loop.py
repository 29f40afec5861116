"""``serve`` running: the server, with the fault proxy and the capture proxy in front of it
when asked for, and the tasks that release live transactions, until SIGINT or SIGTERM."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.cli.collection_hold import resume_collection
from fakemaster.cli.common import EXIT_OK, CommandError

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.server.master import FakeMaster
    from fakemaster.store import BinlogStore
    from fakemaster.store.demo import DemoWriter

__all__ = ["serve_until_stopped"]


async def serve_until_stopped(
    config: ServerConfig,
    store: BinlogStore,
    writer: DemoWriter | None,
    source: str,
    live_period: float | None,
    faults: tuple[Any, tuple[Any, ...]] | None = None,
    pcap: Path | None = None,
    live_rate: float | None = None,
    idle_scale: float = 1.0,
) -> int:
    """Serve ``store`` until SIGINT or SIGTERM; returns the exit status. ``faults`` is the
    (wire plan, server faults) of ``--faults``, ``live_period`` the demo's ``--demo-live``,
    ``live_rate`` and ``idle_scale`` a scenario's ``--live`` and ``--idle-scale``."""
    import asyncio
    import contextlib
    import functools
    import signal

    from fakemaster.server.logs import log_to_stream_in_background
    from fakemaster.server.master import FakeMaster

    if config.semi_sync_enabled:
        from fakemaster.store.semi_sync import semi_sync_master

        # From now on every transaction waits for an ACK, even before a replica connects.
        semi_sync_master(store, config)
    wire_plan, server_faults = faults if faults is not None else (None, ())
    faulty = wire_plan is not None and bool(wire_plan.faults)
    plan: Any = wire_plan
    # With wire faults or a capture the server listens on a loopback port of its own, and the
    # proxies in front of it (the capture outermost: it records what clients see) on the
    # address asked for.
    proxied = faulty or pcap is not None
    served = dataclasses.replace(config, host="127.0.0.1", port=0) if proxied else config
    master = FakeMaster(served, store)
    proxy: Any = None
    capture: Any = None
    # What goes wrong while serving reaches stderr from a thread: an unread stderr pipe costs
    # log records, never the event loop.
    log = log_to_stream_in_background(sys.stderr, fmt="fakemaster: %(message)s")
    try:
        await master.start()
        upstream = (master.host, master.port)
        if faulty:
            from fakemaster.faults.proxy import FaultProxy

            outermost = pcap is None
            proxy = FaultProxy(
                upstream,
                plan,
                host=config.host if outermost else "127.0.0.1",
                port=config.port if outermost else 0,
            )
            await proxy.start()
            upstream = (proxy.host, proxy.port)
        if pcap is not None:
            from fakemaster.scapy.capture import CaptureProxy

            capture = CaptureProxy(*upstream, pcap, host=config.host, port=config.port)
    except OSError as exc:
        await master.stop()
        log.stop()
        where = _address(config.host, config.port)
        raise CommandError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):  # no signal handlers on this platform
            signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stop.set))
    password = "no password" if not config.password else "password set"
    reported = master.state.globals  # what the served binlog and the options settled
    port = capture.port if capture is not None else proxy.port if proxy is not None else master.port
    print(
        f"fakemaster listening on {_address(config.host, port)} "
        f"(server_id {reported['server_id']}, MariaDB {reported['version']}, "
        f"user {config.user!r} with {password}, {source})",
        flush=True,
    )
    resume_collection()  # listening: the start is over
    from fakemaster.server.warm_up import WARM_UP_DELAY, warm_up_in_background

    # What the first client needs, imported before it comes (after the first handshake byte
    # of a client that connects at once).
    loop.call_later(WARM_UP_DELAY, warm_up_in_background)
    tasks: list[asyncio.Task[Any]] = [asyncio.create_task(_forget_logged_errors(master))]
    if live_period is not None and writer is not None:
        tasks.append(asyncio.create_task(_append_live(master, writer, live_period)))
    if live_rate is not None:
        from scenarios.live import release_at_rate

        release = functools.partial(release_at_rate, idle_scale=idle_scale)
        tasks.append(asyncio.create_task(_release_live(master, store, live_rate, release)))
    if server_faults:
        from fakemaster.faults.server_faults import schedule

        tasks.append(schedule(master, server_faults))
    try:
        await stop.wait()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if proxy is not None:
            await proxy.stop()
        await master.stop()
        if capture is not None:
            # Last: the server's closes reach the relays, which then end by themselves.
            capture.close(timeout=5.0)
        log.stop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
    print("fakemaster stopped", file=sys.stderr, flush=True)
    return EXIT_OK


async def _forget_logged_errors(master: FakeMaster) -> None:
    """The server logged its errors as they happened: a long run need not keep them."""
    import asyncio

    while True:
        await asyncio.sleep(1.0)
        master.errors.clear()


async def _release_live(master: FakeMaster, store: Any, rate: float, release: Any) -> None:
    """``--live``: the scenario's transactions released at ``rate`` per second."""
    try:
        await release(store, rate)
    except Exception as exc:  # recorded like a connection's error; the server goes on
        master.record_error(exc)


async def _append_live(master: FakeMaster, writer: DemoWriter, period: float) -> None:
    import asyncio

    while True:
        await asyncio.sleep(period)
        try:
            writer.append_live_order()
        except Exception as exc:  # recorded like a connection's error; the server goes on
            master.record_error(exc)


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
