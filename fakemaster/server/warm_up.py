"""The modules a first client needs, imported in the background once ``serve`` listens.

``serve`` imports only what it needs to listen (its CPU to the first handshake byte, issue #25);
the SQL statement table, the dump stream, the frame cache and the sender are imported when the
first client needs them. Traced on a loaded 2-core machine (bench/README.md, h-firstdump), those
imports put 107 ms between the first client's login packet and its OK, 70 ms into its first SET
and 49 ms between COM_BINLOG_DUMP and the first event: about MariaDB's whole first dump of 268
MB of large events there. A real replica or a test harness usually connects some time after the
server listens; :func:`warm_up_in_background` spends that time importing them, so the first
login and dump find them loaded. A client that arrives meanwhile waits for a module being
imported (Python's per-module import lock) as it would have imported it itself, never twice.
"""

from __future__ import annotations

import importlib
import threading

from fakemaster.server.logs import logger

__all__ = ["FIRST_CLIENT_MODULES", "WARM_UP_DELAY", "warm_up", "warm_up_in_background"]

# Seconds from listening to the warm-up: a client that connects at once (a benchmark of the
# start, ``bench/bench_startup.py``) gets its handshake without the warm-up's imports competing
# for the interpreter; it imports what it needs itself, as without a warm-up.
WARM_UP_DELAY = 0.05

# The entry points of what a login, a SET, a SELECT and a plain dump import lazily; each
# imports the rest (tests/fakemaster/server/test_warm_up.py: after warm_up, a first login and
# dump from a binlog directory import no module of the project).
FIRST_CLIENT_MODULES = (
    "fakemaster.sql.statements",
    # The answers a replica's statements need (the table imports each answer module at its
    # first use): the login's and SET's, SELECT's without a table, SHOW VARIABLES'.
    "fakemaster.sql.answers.connection_statements",
    "fakemaster.sql.answers.select",
    "fakemaster.sql.answers.show",
    "encoder.fields",  # a result set's column definitions
    "fakemaster.vocabulary.commands",  # COM_REGISTER_SLAVE and COM_BINLOG_DUMP's layouts
    "fakemaster.core.dump.stream",
    "fakemaster.server.frame_cache",
    "fakemaster.server.sender",
)


def warm_up(modules: tuple[str, ...] = FIRST_CLIENT_MODULES) -> None:
    """Import ``modules``; one that fails is logged and left to the client that needs it
    (which then reports the error where it is)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a warm-up never stops the server
            logger.warning("importing %s ahead of the first client failed: %s", name, exc)


def warm_up_in_background(modules: tuple[str, ...] = FIRST_CLIENT_MODULES) -> threading.Thread:
    """Run :func:`warm_up` in a daemon thread (started; returned for a caller that waits).

    Not lowered in priority: a client that needs a module this thread is importing waits for
    it, so a thread starved by a busy machine would hold the client up."""
    thread = threading.Thread(
        target=warm_up, args=(modules,), name="fakemaster-warm-up", daemon=True
    )
    thread.start()
    return thread
