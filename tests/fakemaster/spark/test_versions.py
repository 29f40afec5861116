"""The source's feature detection agrees with the PySpark version the notes give for each
feature, and with what the installed PySpark's own streaming-source runner does."""

from __future__ import annotations

import importlib.util
import inspect

from tests.peers.policy import require_module
from tests.support.spark_versions import admission_control, pyspark_version


def test_admission_control_is_detected_on_the_versions_that_have_it() -> None:
    require_module("pyspark", "pip install 'fakemaster[spark]'")
    from pyspark.sql.streaming import python_streaming_source_runner as runner

    from fakemaster.spark import stream

    assert pyspark_version() >= (4, 0)
    expected = admission_control()
    assert stream.ADMISSION_CONTROL is expected
    # The runner itself: 4.2+ has a function id for latestOffset(start, limit) and asks the
    # reader's signature (any parameter: admission control); 4.0/4.1 calls latestOffset().
    assert hasattr(runner, "LATEST_OFFSET_ADMISSION_CONTROL_FUNC_ID") is expected
    assert (importlib.util.find_spec("pyspark.sql.streaming.datasource") is not None) is expected
    # The portable signature: callable with no argument (4.0/4.1) and with (start, limit).
    parameters = inspect.signature(stream.BinlogStreamReader.latestOffset).parameters
    assert list(parameters) == ["self", "start", "limit"]
    assert all(parameters[name].default is None for name in ("start", "limit"))


def test_max_rows_per_batch_is_a_read_limit_only_with_admission_control() -> None:
    require_module("pyspark", "pip install 'fakemaster[spark]'")
    from fakemaster.spark.stream import BinlogStreamReader

    reader = BinlogStreamReader({"host": "127.0.0.1", "port": "1", "maxrowsperbatch": "7"})
    limit = reader.getDefaultReadLimit()
    if admission_control():
        from pyspark.sql.streaming.datasource import ReadMaxRows

        assert limit == ReadMaxRows(7)
    else:
        assert limit is None  # never asked by the 4.0/4.1 engine
