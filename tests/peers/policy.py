"""The project's peer policy (fail in CI, skip only with FAKEMASTER_ALLOW_MISSING_PEERS=1),
defined once in :mod:`fakemaster.contract.peers` for the tests and the package's fixtures."""

from fakemaster.contract.peers import (
    ALLOW_MISSING_ENV,
    missing_peers_allowed,
    require_module,
    require_peer,
)

__all__ = ["ALLOW_MISSING_ENV", "missing_peers_allowed", "require_module", "require_peer"]
