"""The one compiled part: the dump's framing of small events in C. Optional: where it cannot be
built (no compiler, no Python headers) the package installs without it and frames in Python,
and ``fakemaster serve`` says so when it starts (fakemaster.core.dump.framing.ACCELERATED).
Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fakemaster.core.dump._framing_accel",
            sources=["fakemaster/core/dump/_framing_accel.c"],
            optional=True,
        )
    ]
)
