"""Readiness (issue #7): what ``python -m fakemaster serve`` and ``import fakemaster`` load.

``serve`` reaches its first handshake byte sooner when it imports only what serving needs: the
demo, the memory store and the encoder that writes the demo binlog only for the demo, the SQL
layer (lexer, parser, statement table) at the first login, the decoder's and encoder's row
codecs only when rows are decoded or packets encoded; and it greets a client without the
responses' packets, the SQL tables and the replication commands (loaded by the first login,
error or dump). Each check runs a fresh interpreter and reads its ``sys.modules``, so a
top-level import added anywhere on the way shows up here. No timing is asserted
(bench/bench_startup.py measures it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymysql

from tests.test_layering import loaded_after_importing

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DEFAULT = REPO / "tests" / "golden" / "binlogs" / "default"
LISTENING = re.compile(r"^fakemaster listening on (?P<host>[\d.]+):(?P<port>\d+) ")
# Bounds on waiting for a process, not assertions about speed.
WAIT = 60.0
PROJECT = ("fakemaster", "encoder", "decoder")

# ``python -m fakemaster`` in a fresh interpreter that writes, when it exits, the modules it
# had loaded when it printed its first line (``serve``: the listening line; what it imports
# after that, the warm-up for the first client included, does not delay listening) and those
# it loaded in all (as JSON) to the file named by its first argument.
_RUN_RECORDING = """
import atexit, json, runpy, sys
out = sys.argv[1]
first_line = []
class Stdout:
    def __init__(self, stream):
        self.stream = stream
    def write(self, text):
        if not first_line:
            first_line.append(sorted(sys.modules))
        return self.stream.write(text)
    def __getattr__(self, name):
        return getattr(self.stream, name)
sys.stdout = Stdout(sys.stdout)
def record():
    names = {"first_line": first_line[0] if first_line else [], "exit": sorted(sys.modules)}
    with open(out, "w") as f:
        json.dump(names, f)
atexit.register(record)
sys.argv = ["fakemaster", *sys.argv[2:]]
runpy.run_module("fakemaster", run_name="__main__", alter_sys=True)
"""

# Only for the demo stream: the demo, the store that builds it in memory, and the encoder of
# whole events that writes it.
DEMO_ONLY = {
    "fakemaster.store.demo",
    "fakemaster.store.memory",
    "encoder.core",
    "encoder.rows",
}
# The SQL layer: loaded when a client logs in, not to listen.
SQL_LAYER = {
    "fakemaster.sql.answers.connection_statements",
    "fakemaster.sql.expressions",
    "fakemaster.sql.like",
    "fakemaster.sql.outcome",
    "fakemaster.sql.statements",
    "fakemaster.sql.answers.select",
    "fakemaster.sql.answers.set_statement",
    "fakemaster.sql.answers.show",
    "fakemaster.sql.sqltext",
    "fakemaster.sql.answers.unsupported",
}
# Not needed to listen: the dump/build commands' tools, the decoder's file and stream readers,
# the value checks and row value encoder under the packet encoder (loaded by the first OK
# packet), the dump stream (by the first binlog dump request), the compressed protocol and
# semi-sync replication (when asked for).
NOT_TO_LISTEN = {
    "fakemaster.core.dump.stream",
    "fakemaster.forms.jsonform",
    "fakemaster.forms.listing",
    "fakemaster.testing.builders",
    "fakemaster.testing.factories",
    "fakemaster.testing.handles",
    "fakemaster.testing.plugin",
    "fakemaster.testing.settings",
    "decoder.binlog_file",
    "decoder.stream",
    "encoder.binlog_file",
    "encoder.stream",
    "encoder.fields",
    "encoder.values",
    # only for what a client or an option asks for: the compressed protocol, --semi-sync
    "fakemaster.protocol.compression",
    "fakemaster.store.semi_sync",
    # the binlog's table catalogue: when a client first asks about tables (issue #25)
    "fakemaster.sql.tables.binlog_catalogue",
    # the password prompt's terminal handling: only when -p has no value
    "getpass",
    "termios",
}

# Not needed to greet a client (the first handshake byte): the responses (OK, ERR and result
# set packets) and their text conversion, the replication commands' packets, the SQL tables
# and typed values, the dump's framing; loaded by the first login, error or dump; and the row
# images' decoders, which the served-facts scan of TABLE_MAPs does without (issue #25:
# start-up CPU).
NOT_TO_GREET = {
    "decoder.row_images",
    "decoder.values",
    "fakemaster.core.dump.framing",
    "fakemaster.protocol.conversion",
    "fakemaster.protocol.resultset",
    "fakemaster.sql.sqlvalue",
    "fakemaster.sql.tables.catalogue",
    "fakemaster.sql.tables.client_tables",
    "fakemaster.sql.tables.system_tables",
    "fakemaster.vocabulary.commands",
}

# Not needed by ``serve``: the other commands' modules (the command line builds only the parser
# of the command it runs), and the replay reader when the directory has no replay file.
OTHER_COMMANDS = {
    "fakemaster.cli.build",
    "fakemaster.cli.dump",
    "fakemaster.cli.record",
    "fakemaster.cli.scenarios",
    "fakemaster.contract",
    "fakemaster.cli.check",
    "fakemaster.record.replay",
    "fakemaster.scapy",
    "fakemaster.cli.pcap",
    "fakemaster.spark",
    "fakemaster.cli.pipeline",
    # The background log writes from a thread of its own, not through logging.handlers (which
    # imports pickle); asyncio does not load them either.
    "logging.handlers",
    "pickle",
}


def binlog_dir(root: Path) -> Path:
    """A copy of the committed real-server binlogs with the index ``serve`` reads."""
    directory = root / "binlogs"
    directory.mkdir()
    names = sorted(path.name for path in GOLDEN_DEFAULT.glob("mysql-bin.[0-9]*"))
    for name in names:
        shutil.copy(GOLDEN_DEFAULT / name, directory / name)
    (directory / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in names))
    return directory


@contextmanager
def recording_serve(record: Path, *options: str) -> Iterator[tuple[str, int]]:
    """``fakemaster serve --port 0 OPTIONS`` recording its modules to ``record``; yields its
    address, then stops it with SIGTERM (a clean exit, so the record is written)."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    command = [sys.executable, "-c", _RUN_RECORDING, str(record), "serve", "--port", "0"]
    process = subprocess.Popen(
        [*command, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = LISTENING.match(line)
        if match is None:
            process.kill()
            _, stderr = process.communicate(timeout=WAIT)
            raise AssertionError(f"serve said {line!r}; stderr:\n{stderr}")
        yield match["host"], int(match["port"])
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=WAIT)
        assert process.returncode == 0, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=WAIT)


def recorded(record: Path, when: str = "first_line") -> set[str]:
    """The modules loaded when the process printed its first line, or at ``when="exit"``."""
    names: list[str] = json.loads(record.read_text())[when]
    return set(names)


def test_serving_a_binlog_directory_loads_neither_the_demo_nor_the_sql_layer(
    tmp_path: Path,
) -> None:
    record = tmp_path / "modules.json"
    with recording_serve(record, "--binlog-dir", str(binlog_dir(tmp_path))):
        pass
    loaded = recorded(record)
    # It did serve: the directory store, the server and the session were loaded.
    assert {
        "fakemaster.store.directory",
        "fakemaster.server.master",
        "fakemaster.core.session",
    } <= loaded
    assert sorted(loaded & DEMO_ONLY) == []
    assert sorted(loaded & SQL_LAYER) == []
    assert sorted(loaded & NOT_TO_LISTEN) == []
    assert sorted(loaded & OTHER_COMMANDS) == []


def test_greeting_a_client_loads_no_responses_no_sql_tables_no_commands(tmp_path: Path) -> None:
    """What the server loaded until it sent a client its greeting (and saw it leave)."""
    record = tmp_path / "modules.json"
    with recording_serve(record, "--binlog-dir", str(binlog_dir(tmp_path))) as (host, port):
        with socket.create_connection((host, port), timeout=WAIT) as client:
            header = _read_exactly(client, 4)
            greeting = _read_exactly(client, int.from_bytes(header[:3], "little"))
    assert greeting[0] == 10  # HandshakeV10: the greeting was sent
    loaded = recorded(record)
    assert "fakemaster.core.session" in loaded
    assert sorted(loaded & NOT_TO_GREET) == []
    assert sorted(loaded & (SQL_LAYER | NOT_TO_LISTEN | DEMO_ONLY)) == []


def _read_exactly(client: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = client.recv(size - len(data))
        assert chunk, f"the server closed after {data!r}"
        data += chunk
    return data


def test_a_replay_file_in_the_binlog_directory_loads_the_replay_reader(tmp_path: Path) -> None:
    """The replay reader is left out above because that directory has no replay file."""
    from fakemaster.record.replay import REPLAY_FILE, Replay

    directory = binlog_dir(tmp_path)
    Replay(upstream="primary:3306").save(directory / REPLAY_FILE)
    record = tmp_path / "modules.json"
    with recording_serve(record, "--binlog-dir", str(directory)):
        pass
    loaded = recorded(record)
    assert "fakemaster.record.replay" in loaded
    assert sorted(loaded & (OTHER_COMMANDS - {"fakemaster.record.replay"})) == []


def test_the_command_line_builds_the_parser_of_the_command_it_runs() -> None:
    from fakemaster.cli import COMMANDS, build_parser

    def commands(argv: list[str]) -> set[str]:
        parser = build_parser(argv)
        (subparsers,) = [a for a in parser._actions if a.dest == "command"]
        assert isinstance(subparsers.choices, dict)
        return set(subparsers.choices)

    assert commands(["serve", "--port", "0"]) == {"serve"}
    assert commands(["dump", "x"]) == {"dump"}
    # No command, --help or a wrong name: all of them, for the help and the error message.
    assert commands([]) == commands(["--help"]) == commands(["nope"]) == set(COMMANDS)
    assert set(COMMANDS) == {
        "dump",
        "build",
        "serve",
        "scenarios",
        "pcap",
        "check",
        "record",
        "pipeline",
    }


def test_the_help_lists_every_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fakemaster", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=WAIT,
        env=dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
        ),
    )
    assert result.returncode == 0, result.stderr
    listed = re.findall(r"^    ([a-z]+)\b", result.stdout, re.MULTILINE)
    assert listed == ["dump", "build", "serve", "scenarios", "pcap", "check", "record", "pipeline"]


def test_the_demo_loads_its_encoder_but_not_the_sql_layer(tmp_path: Path) -> None:
    record = tmp_path / "modules.json"
    with recording_serve(record):
        pass
    loaded = recorded(record)
    assert DEMO_ONLY <= loaded
    assert sorted(loaded & SQL_LAYER) == []
    assert (
        sorted(
            loaded & {"decoder.binlog_file", "encoder.binlog_file", "fakemaster.core.dump.stream"}
        )
        == []
    )


def test_a_login_and_a_query_load_the_sql_layer(tmp_path: Path) -> None:
    """What the two tests above keep out is loaded when it is needed: the recording sees it."""
    record = tmp_path / "modules.json"
    with recording_serve(record, "--binlog-dir", str(binlog_dir(tmp_path))) as (host, port):
        connection = pymysql.connect(host=host, port=port, user="root", password="")
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT @@version_comment")
                assert cursor.fetchall() == (("mariadb.org binary distribution",),)
        finally:
            connection.close()
    loaded = recorded(record, "exit")
    assert {
        "fakemaster.sql.answers.connection_statements",
        "fakemaster.sql.statements",
        "fakemaster.sql.sqltext",
        "encoder.fields",
        "fakemaster.protocol.resultset",
        "fakemaster.protocol.conversion",
        "fakemaster.sql.sqlvalue",
    } <= loaded
    assert sorted(loaded & DEMO_ONLY) == []


def project_modules(loaded: list[str]) -> list[str]:
    return [name for name in loaded if name.split(".")[0] in PROJECT]


def test_the_codec_packages_load_their_modules_on_first_use() -> None:
    assert project_modules(loaded_after_importing(["decoder"])) == ["decoder", "fakemaster"]
    assert project_modules(loaded_after_importing(["encoder"])) == ["encoder", "fakemaster"]
    assert project_modules(loaded_after_importing(["fakemaster.store"])) == [
        "fakemaster",
        "fakemaster.store",
    ]


def test_the_server_loads_no_encoder_of_events_no_decoder_of_files_no_sql_layer() -> None:
    loaded = set(loaded_after_importing(["fakemaster.server.master"]))
    assert "fakemaster.core.session" in loaded
    assert sorted(loaded & (DEMO_ONLY | SQL_LAYER | NOT_TO_LISTEN | NOT_TO_GREET)) == []
    assert "fakemaster.store.memory" not in loaded


def test_the_configuration_loads_no_event_classes_and_no_codec() -> None:
    loaded = project_modules(loaded_after_importing(["fakemaster.config.server_config"]))
    assert "fakemaster.config.server_config" in loaded
    assert [name for name in loaded if name.split(".")[0] != "fakemaster"] == []
    assert "fakemaster.vocabulary.events" not in loaded
    assert "fakemaster.vocabulary.encryption" not in loaded


def test_the_command_line_loads_a_command_s_modules_when_it_runs() -> None:
    assert project_modules(loaded_after_importing(["fakemaster.cli"])) == [
        "fakemaster",
        "fakemaster.cli",
        "fakemaster.cli.collection_hold",
        "fakemaster.cli.common",
        "fakemaster.cli.options",  # every parser's class and the shared options
        "fakemaster.vocabulary",
        "fakemaster.vocabulary.errors",
    ]


def test_the_command_line_leaves_the_garbage_collector_as_it_found_it() -> None:
    """main() holds the collector back while a command starts (serve: until it listens)."""
    import gc

    from fakemaster.cli import main

    assert gc.isenabled()
    assert main(["scenarios", "show", "no-such-scenario"]) != 0
    assert gc.isenabled()
    gc.disable()
    try:
        assert main(["scenarios", "show", "no-such-scenario"]) != 0
        assert not gc.isenabled()
    finally:
        gc.enable()
