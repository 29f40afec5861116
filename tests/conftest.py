import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.peers.fixtures", "tests.support.tls_primary", "pytester"]

# Every property test's budget comes from the active profile (HYPOTHESIS_PROFILE, "dev" when
# unset); a test that needs relatively more or fewer examples scales it with
# tests.budget.examples() and never names a number of its own (tests/test_budget.py checks).
#
# ci: bounded, so that the whole suite stays well inside CI's time budget (.ci/run selects it),
# and derandomized: every run draws the same examples (a seed from each test's name), so CI's
# verdict never depends on the run; the dev and deep profiles keep exploring. A fresh machine
# has no example database to replay; print_blob lets a failure be replayed with
# @reproduce_failure.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# dev: the local default, a little deeper than CI; failures are kept in .hypothesis/ and
# replayed first on the next run.
settings.register_profile("dev", max_examples=150, deadline=None)
# deep: long fuzzing runs (e.g. HYPOTHESIS_PROFILE=deep pytest tests/decoder), no time limits.
settings.register_profile(
    "deep",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_sessionstart(session: object) -> None:
    """Import every module of the project here, in the main thread, before any test starts a
    server. Servers import some modules on first use (the SQL layer at the first login, the dump
    thread's at the first dump), in their own threads; CPython 3.11 shares the AST constructor's
    recursion depth between threads, so such an import compiling source while pytest rewrites a
    test module in the main thread can fail with "SystemError: AST constructor recursion depth
    mismatch". (The lazy imports themselves are tested in fresh interpreters.)"""
    import importlib
    import pkgutil

    for package_name in ("fakemaster", "encoder", "decoder", "scenarios"):
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, package_name + "."):
            if module.name.endswith(".__main__"):
                continue  # runs the command line
            try:
                importlib.import_module(module.name)
            except ImportError as error:  # an optional extra that is not installed
                if error.name is None or error.name.split(".")[0] in ("fakemaster",):
                    raise
