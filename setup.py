"""The compiled parts, two hot loops in C: the dump's framing of small events
(fakemaster.core.dump.framing) and the start-up scan's walk over the served events
(fakemaster.config.served_facts). Optional: where they cannot be built (no compiler, no Python
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
    ]
)
