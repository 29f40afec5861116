"""Public modules say what they export, and ``import fakemaster`` stays light.

Every module of encoder/, decoder/ and fakemaster/ (its subpackages included) declares
``__all__``, and each name in it exists; ``fakemaster``'s own names are imported on first use,
and so are those of ``fakemaster.protocol`` and ``fakemaster.sql``.
"""

from __future__ import annotations

import importlib
import types

import pytest

from tests.test_layering import loaded_after_importing, package_modules, vocabulary_modules

# Not a module anyone imports for names: the ``python -m fakemaster`` entry point.
NOT_CHECKED = {"fakemaster.__main__"}
PUBLIC_MODULES = sorted(
    {
        *package_modules("encoder"),
        *package_modules("decoder"),
        *vocabulary_modules(),
        *package_modules("fakemaster"),
    }
    - NOT_CHECKED
)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_declares_what_it_exports(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__dict__.get("__all__")
    assert isinstance(exported, list), f"{name} declares no __all__"
    if not exported:
        # Only a folder of modules may export nothing: a package whose __init__ defines no name.
        defined = [
            attribute
            for attribute, value in vars(module).items()
            if not attribute.startswith("_") and not isinstance(value, types.ModuleType)
        ]
        assert hasattr(module, "__path__") and defined == [], f"{name}.__all__ is empty"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    missing = [attribute for attribute in exported if not hasattr(module, attribute)]
    assert missing == [], f"{name}.__all__ names what it does not have"


def test_import_fakemaster_loads_nothing_else_of_the_project() -> None:
    loaded = loaded_after_importing(["fakemaster"])
    project = [
        name for name in loaded if name.split(".")[0] in ("fakemaster", "encoder", "decoder")
    ]
    assert project == ["fakemaster"]


def test_fakemaster_exposes_its_first_names_lazily() -> None:
    import fakemaster
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.server.master import BackgroundFakeMaster, FakeMaster
    from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.encryption import BinlogKeys
    from fakemaster.vocabulary.errors import DecodeError, EncodeError, FakemasterError

    expected = {
        "BackgroundFakeMaster": BackgroundFakeMaster,
        "BinlogContext": BinlogContext,
        "BinlogKeys": BinlogKeys,
        "DecodeError": DecodeError,
        "DirectoryBinlogStore": DirectoryBinlogStore,
        "EncodeError": EncodeError,
        "FakeMaster": FakeMaster,
        "FakemasterError": FakemasterError,
        "MemoryBinlogStore": MemoryBinlogStore,
        "ServerConfig": ServerConfig,
    }
    assert {name: getattr(fakemaster, name) for name in expected} == expected
    assert set(fakemaster.__all__) == {*expected, "__version__"}
    assert set(fakemaster.__all__) <= set(dir(fakemaster))
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        fakemaster.Nothing  # noqa: B018


def test_the_codec_packages_expose_their_entry_points() -> None:
    import decoder
    import encoder

    assert encoder.__all__ == [
        "BinlogWriter",
        "CompressedWriter",
        "StreamEncoder",
        "compress_frame",
        "encode_event",
        "frame",
    ]
    assert decoder.__all__ == [
        "CompressedInflater",
        "CompressedPacketReader",
        "PacketReader",
        "StreamDecoder",
        "decode_event",
        "iter_raw_events",
        "read_binlog",
    ]


def test_fakemaster_protocol_exposes_its_first_names_lazily() -> None:
    """``fakemaster.config.server_config`` imports ``fakemaster.protocol.charsets``: the package
    itself must not load the packet builders."""
    loaded = loaded_after_importing(["fakemaster.protocol"])
    assert [name for name in loaded if name.split(".")[0] == "fakemaster"] == [
        "fakemaster",
        "fakemaster.protocol",
    ]
    import fakemaster.protocol as protocol
    from fakemaster.protocol.resultset import SqlError

    assert protocol.SqlError is SqlError
    assert protocol.__all__ == ["SqlError"]
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        protocol.Nothing  # noqa: B018


def test_fakemaster_sql_exposes_its_first_names_lazily() -> None:
    """``import fakemaster.sql`` loads none of the statement handlers; its names come on first
    use."""
    loaded = loaded_after_importing(["fakemaster.sql"])
    assert [name for name in loaded if name.split(".")[0] == "fakemaster"] == [
        "fakemaster",
        "fakemaster.sql",
    ]
    import fakemaster.sql as sql
    from fakemaster.sql.outcome import Outcome
    from fakemaster.sql.state import BinlogPositions, ServerState, SessionState
    from fakemaster.sql.statements import execute

    expected = {
        "BinlogPositions": BinlogPositions,
        "Outcome": Outcome,
        "ServerState": ServerState,
        "SessionState": SessionState,
        "execute": execute,
    }
    assert {name: getattr(sql, name) for name in expected} == expected
    assert set(sql.__all__) == set(expected)
    assert set(sql.__all__) <= set(dir(sql))
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        sql.Nothing  # noqa: B018


def test_the_store_package_exposes_what_users_import() -> None:
    import fakemaster.store as store
    from fakemaster.store.base import BinlogReadError, BinlogStore, GtidInFile, UnknownBinlogFile
    from fakemaster.store.directory import DirectoryBinlogStore
    from fakemaster.store.disk import DiskBinlogStore
    from fakemaster.store.memory import (
        DEFAULT_SERVER_VERSION,
        AppendedEvent,
        AppendedGroup,
        MemoryBinlogStore,
    )

    expected = {
        "AppendedEvent": AppendedEvent,
        "AppendedGroup": AppendedGroup,
        "BinlogReadError": BinlogReadError,
        "BinlogStore": BinlogStore,
        "DEFAULT_SERVER_VERSION": DEFAULT_SERVER_VERSION,
        "DirectoryBinlogStore": DirectoryBinlogStore,
        "DiskBinlogStore": DiskBinlogStore,
        "GtidInFile": GtidInFile,
        "MemoryBinlogStore": MemoryBinlogStore,
        "UnknownBinlogFile": UnknownBinlogFile,
    }
    assert {name: getattr(store, name) for name in store.__all__} == expected


def test_scenarios_exposes_its_names_lazily() -> None:
    """Every name of ``scenarios.__all__`` is its module's object, the steps of a history and
    the live store among them; ``import scenarios`` loads nothing else of the project but the
    bare ``fakemaster`` package (whose lazy attributes it uses, and which loads nothing)."""
    import scenarios
    from scenarios.compiler import binlog_files, to_store
    from scenarios.history import Ddl, Idle, Restart, Rotate, SetSettings, Transaction, XaEnd
    from scenarios.live import ScenarioStore, release_at_rate

    new = {
        "Ddl": Ddl,
        "Idle": Idle,
        "Restart": Restart,
        "Rotate": Rotate,
        "SetSettings": SetSettings,
        "Transaction": Transaction,
        "XaEnd": XaEnd,
        "ScenarioStore": ScenarioStore,
        "release_at_rate": release_at_rate,
        "binlog_files": binlog_files,
        "to_store": to_store,
    }
    assert {name: getattr(scenarios, name) for name in new} == new
    assert len(set(scenarios.__all__)) == len(scenarios.__all__)
    assert all(hasattr(scenarios, name) for name in scenarios.__all__)
    assert set(scenarios.__all__) <= set(dir(scenarios))
    loaded = loaded_after_importing(["scenarios"])
    assert [name for name in loaded if name.split(".")[0] in ("scenarios", "fakemaster")] == [
        "fakemaster",
        "scenarios",
    ]
