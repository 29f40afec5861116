"""One local SparkSession for every Spark test of a process (starting one takes seconds)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.peers.policy import require_module

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    require_module("pyspark", "pip install 'fakemaster[spark]' (PySpark 4.x; Java 17)")
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    # The Python workers import fakemaster.spark: they inherit the driver's environment.
    paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("fakemaster-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", os.environ.get("FM_TEST_DRIVER_MEMORY", "6g"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    from fakemaster.spark import register

    register(session)
    yield session
    session.stop()
