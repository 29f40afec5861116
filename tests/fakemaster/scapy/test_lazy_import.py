"""scapy is optional: ``import fakemaster`` never loads it, nor do ``fakemaster.scapy`` and the
CLI's ``pcap`` command module until a layer is asked for."""

from __future__ import annotations

import pytest

from tests.peers.policy import require_module
from tests.test_layering import loaded_after_importing


@pytest.mark.parametrize(
    "modules",
    [["fakemaster"], ["fakemaster.scapy"], ["fakemaster.cli.pcap"]],
)
def test_importing_does_not_load_scapy(modules: list[str]) -> None:
    loaded = loaded_after_importing(modules)
    assert [name for name in loaded if name == "scapy" or name.startswith("scapy.")] == []


def test_every_exported_name_resolves_on_first_use() -> None:
    require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
    import fakemaster.scapy

    missing = [name for name in fakemaster.scapy.__all__ if not hasattr(fakemaster.scapy, name)]
    assert missing == []
    assert fakemaster.scapy.BinlogEvent.__module__ == "fakemaster.scapy.events"
