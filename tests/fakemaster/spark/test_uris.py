"""Paths handed to the executors: local ones absolute, other filesystems' URIs untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fakemaster.spark.uris import has_scheme, resolve_path
from tests.peers.policy import require_module


@pytest.mark.parametrize(
    "uri",
    ["hdfs:///archive/binlogs", "hdfs://nn:8020/a", "s3a://bucket/x", "gs://b/p", "abfs://c@a/p"],
)
def test_other_filesystems_pass_through(uri: str) -> None:
    assert has_scheme(uri) and resolve_path(uri) == uri


def test_local_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_path("binlogs") == str(tmp_path / "binlogs")
    assert resolve_path("./a/../out/") == str(tmp_path / "out")
    assert resolve_path("/abs/x") == "/abs/x"
    assert resolve_path("file://rel/x") == f"file://{tmp_path}/rel/x"
    assert resolve_path("file:///abs/x") == "file:///abs/x"
    assert resolve_path("~/x") == os.path.expanduser("~/x")
    # A colon is no scheme without "//" (a local file name may hold one).
    assert resolve_path("mysql-bin:1") == str(tmp_path / "mysql-bin:1")


def test_the_data_source_lists_relative_paths_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_module("pyspark", "pip install 'fakemaster[spark]'")  # the data source's classes
    from fakemaster.spark.source import expand_paths

    (tmp_path / "binlogs").mkdir()
    for name in ("mysql-bin.000002", "mysql-bin.000001", "mysql-bin.index"):
        (tmp_path / "binlogs" / name).write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert expand_paths(["binlogs"]) == [
        str(tmp_path / "binlogs" / "mysql-bin.000001"),
        str(tmp_path / "binlogs" / "mysql-bin.000002"),
    ]
    assert expand_paths(["binlogs/*.000002"]) == [str(tmp_path / "binlogs" / "mysql-bin.000002")]
