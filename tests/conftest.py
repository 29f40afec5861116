import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.peers.fixtures", "pytester"]

# CI bounds the property tests so the whole suite stays well inside its time budget; locally
# the default profile explores more.
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=150, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
