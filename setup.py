"""The compiled parts, three hot loops in C: the dump's framing of small events
(fakemaster.core.dump.framing), the start-up scan's walk over the served events
(fakemaster.config.served_facts) and the dump thread's write loop (fakemaster.server.sender).
Optional: where they cannot be built (no compiler, no Python
headers) the package installs without them and runs the same loops in Python, slower, and
``fakemaster serve`` says so in its log (each module's ``ACCELERATED``). Everything else about
the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fakemaster.core.dump._framing_accel",
            sources=["fakemaster/core/dump/_framing_accel.c"],
            optional=True,
        ),
        Extension(
            "fakemaster.config._facts_accel",
            sources=["fakemaster/config/_facts_accel.c"],
            optional=True,
        ),
        Extension(
            "fakemaster.server._send_accel",
            sources=["fakemaster/server/_send_accel.c"],
            optional=True,
        ),
    ]
)
