"""The end of Spark's streaming source runner (the Python process that plans a stream's
batches) with the stream's reader: stopping the query closes the runner's socket, and the
runner must end without printing a traceback on the driver's stderr (CI saw one after
``pipeline stream``'s "stopped on SIGTERM" line); any other ending keeps its stderr.

Spark's own runner module runs in a child process, as the JVM starts it, over files instead of
the JVM's socket: its input is what the JVM sends (built with PySpark's serializers) and then
an end of file, after which its output raises ``BrokenPipeError`` as a closed socket does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers.policy import require_module

_RUNNER = '''
import io, sys
from pyspark.serializers import CPickleSerializer, write_int, write_with_length
from pyspark.sql.streaming import python_streaming_source_runner as runner
from fakemaster.spark.source import BinlogDataSource
from pyspark.sql.types import StringType, StructField, StructType

def text(value, out):
    write_with_length(value.encode("utf-8"), out)

class Jvm(io.BytesIO):
    """What the JVM sends, then its end: the socket closed."""

    closed_socket = False

    def read(self, size=-1):
        data = super().read(size)
        if size is None or size < 0 or len(data) < size:
            Jvm.closed_socket = True
        return data


sent = Jvm()
text("%d.%d" % sys.version_info[:2], sent)
text(sys.argv[1], sent)  # the Spark files directory
write_int(0, sent)  # no includes
source = BinlogDataSource({"host": "127.0.0.1", "port": "1"})
write_with_length(CPickleSerializer().dumps(source), sent)
text(StructType([StructField("op", StringType())]).json(), sent)  # unread by the reader
write_int(10_000, sent)  # the maximum Arrow batch size
for call in sys.argv[2:]:
    write_int(int(call), sent)


class Socket(io.RawIOBase):
    def writable(self):
        return True

    def write(self, data):
        if Jvm.closed_socket:
            raise BrokenPipeError(32, "Broken pipe")
        return len(data)


sent.seek(0)
try:
    runner.main(sent, io.BufferedWriter(Socket()))
finally:
    print("after the runner", file=sys.stderr)
'''

_GET_DEFAULT_READ_LIMIT = 891  # a call that needs no primary
_UNKNOWN_CALL = 7  # the runner raises its own error for it


def _runner(tmp_path: Path, *calls: int) -> subprocess.CompletedProcess[str]:
    require_module("pyspark", "pip install 'fakemaster[spark]' (PySpark 4.x; Java 17)")
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, str(tmp_path), *map(str, calls)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("calls", [(), (_GET_DEFAULT_READ_LIMIT,)])
def test_a_runner_whose_socket_closed_ends_without_a_traceback(
    tmp_path: Path, calls: tuple[int, ...]
) -> None:
    ended = _runner(tmp_path, *calls)
    assert ended.returncode != 0, ended  # it did end on the closed socket
    assert ended.stderr == "", ended.stderr


def test_a_runner_ending_on_another_error_keeps_its_stderr(tmp_path: Path) -> None:
    """The error went to the JVM (the socket was open); stderr still reaches the driver."""
    ended = _runner(tmp_path, _UNKNOWN_CALL)
    assert ended.returncode != 0, ended
    assert ended.stderr == "after the runner\n", ended.stderr
