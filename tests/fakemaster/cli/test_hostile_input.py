"""Hostile or broken input files (issue #24): each is answered by one typed error line naming
the file and the place, exit status 1, never a traceback; met where a user meets it, on the
command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fakemaster.faults.plan import FaultPlan, PlanError
from fakemaster.faults.server_faults import ServerFault, load_plan_file
from fakemaster.vocabulary.inputs import InputError, finite_number, loads_json, loads_toml
from tests.fakemaster.cli.test_serve_cli import REPO, START_WAIT

DEEP = 5000  # far past the interpreter's recursion limit (1000)
DIGITS = 5000  # past Python's 4,300-digit limit of int(str)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *args],
        capture_output=True,
        text=True,
        timeout=START_WAIT,
        cwd=REPO,
    )


def _one_error_line(result: subprocess.CompletedProcess[str], path: Path, *words: str) -> str:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[:2000]
    line = lines[0]
    assert line.startswith(f"error: {path}"), line
    for word in words:
        assert word in line, line
    assert len(line) < 300, line
    return line


# --- scenarios (serve --scenario FILE.toml) ---------------------------------------------------

SCENARIO_FILES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "nested_arrays": (
        b"a = " + b"[" * DEEP + b"]" * DEEP + b"\n",
        ("line 1, column", "nested more than 64 deep"),
    ),
    "nested_tables": (
        b"[settings]\nx = " + b"{b = " * 100 + b"1" + b"}" * 100 + b"\n",
        ("settings.x.b", "nested more than 64 deep"),
    ),
    "binary_garbage": (bytes(range(256)) * 4, ("line 2, byte 128", "not UTF-8")),
    "long_integer": (
        b"[settings]\nserver_id = " + b"9" * DIGITS + b"\n",
        ("line 2, column 13", f"an integer of {DIGITS} digits"),
    ),
    "nan": (b"[settings]\nserver_id = nan\n", ("settings.server_id", "not a finite number")),
}


@pytest.mark.parametrize("name", sorted(SCENARIO_FILES))
def test_hostile_toml_scenario_is_one_error_line(tmp_path: Path, name: str) -> None:
    content, words = SCENARIO_FILES[name]
    path = tmp_path / f"{name}.toml"
    path.write_bytes(content)
    _one_error_line(_run("serve", "--scenario", str(path), "--port", "0"), path, *words)


# --- fault plans (serve --faults FILE) --------------------------------------------------------

PLAN_FILES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "deep.json": (
        b'{"faults": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ("line 1, column 75", "nested more than 64 deep"),
    ),
    "deep.toml": (
        b"faults = " + b"[" * DEEP + b"]" * DEEP + b"\n",
        ("line 1, column", "nested more than 64 deep"),
    ),
    "long_integer.json": (b'{"seed": ' + b"9" * DIGITS + b"}", ("an integer of 5000 digits",)),
    "garbage.json": (b"\xff\xfe{}", ("line 1, byte 0", "not UTF-8")),
    "nan_json.json": (
        b'{"server_faults": [{"kind": "purge", "at": NaN}]}',
        ("NaN is not JSON",),
    ),
    "at_nan.toml": (
        b'[[server_faults]]\nkind = "purge"\nat = nan\n',
        ("server_faults[0].at", "not a finite number"),
    ),
    "at_huge.toml": (
        b'[[server_faults]]\nkind = "purge"\nat = 1e308\n',
        ("server_faults[0]", "'at' (seconds) must be at most 86400"),
    ),
    "delay_huge.toml": (
        b'[[faults]]\nkind = "latency"\nat = { event = 2 }\ndelay = 1e308\n',
        ("faults[0]", "'delay' must be at most 3600"),
    ),
    "time_point_huge.toml": (
        b'[[faults]]\nkind = "stall"\nat = { time = 1e300 }\n',
        ("faults[0]", "a time point must be a number of seconds from 0 to 86400"),
    ),
    "purge_path.toml": (
        b'[[server_faults]]\nkind = "purge"\nto = "../../etc/passwd"\n',
        ("server_faults[0]", "not a binlog file name"),
    ),
}


@pytest.mark.parametrize("name", sorted(PLAN_FILES))
def test_hostile_fault_plan_is_one_error_line(tmp_path: Path, name: str) -> None:
    content, words = PLAN_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    _one_error_line(_run("serve", "--faults", str(path), "--port", "0"), path, *words)
    with pytest.raises(PlanError, match="^" + str(path)):  # the library says the same
        load_plan_file(path)


def test_plan_load_checks_the_same(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(PLAN_FILES["deep.json"][0])
    with pytest.raises(PlanError, match="nested more than 64 deep"):
        FaultPlan.load(path)


# --- the JSON form of events (build --events FILE) ---------------------------------------------


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", ("nested more than 64 deep",)),
        (b'{"type": "XID", "xid": ' + b"9" * DIGITS + b"}\n", ("an integer of 5000 digits",)),
        (b'{"type": "XID"}\n\xff\xff\n', (":2: not UTF-8", "(line 1, byte 0)")),
    ],
    ids=["deep", "long_integer", "garbage"],
)
def test_hostile_json_events_are_one_error_line(
    tmp_path: Path, content: bytes, words: tuple[str, ...]
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(content)
    output = tmp_path / "out.bin"
    _one_error_line(_run("build", str(path), "-o", str(output)), path, *words)
    assert not output.exists()


# --- the shared checks, each on an input broken in one way -----------------------------------


def test_loaders_refuse_what_they_must() -> None:
    with pytest.raises(InputError, match="nested more than 3 deep"):
        loads_json("[[[[1]]]]", source="x", max_depth=3)
    assert loads_json("[[[1]]]", source="x", max_depth=3) == [[[1]]]
    with pytest.raises(InputError, match=r"^x, a\[1\]: inf is not a finite number"):
        loads_toml("a = [1.0, inf]", source="x")
    assert loads_toml("a = inf", source="x", allow_nonfinite=True)["a"] == float("inf")
    with pytest.raises(InputError, match="not TOML"):
        loads_toml("a = ", source="x")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        (True, "must be a number"),
        ("1", "must be a number"),
        (-1, "at least 0"),
        (11, "at most 10"),
        (10**400, "out of range"),
    ],
)
def test_finite_number_refuses(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        finite_number(value, name="n", minimum=0, maximum=10)


def test_server_fault_at_nan_refused_in_python_too() -> None:
    with pytest.raises(PlanError, match="finite"):
        ServerFault("purge", float("nan"))
    with pytest.raises(PlanError, match="not a binlog file name"):
        ServerFault("purge", 0.0, {"to": "/etc/passwd"})
    assert ServerFault("purge", 0.0, {"to": "mysql-bin.000002"}).params["to"] == "mysql-bin.000002"


# --- replay files (serve --binlog-dir DIR --replay FILE) --------------------------------------


def _binlog_dir(tmp_path: Path) -> Path:
    from tests.fakemaster.record.test_record_rebuild import build_store, files_of

    directory = tmp_path / "binlogs"
    directory.mkdir()
    files = files_of(build_store())
    for name, data in files.items():
        (directory / name).write_bytes(data)
    (directory / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in files))
    return directory


REPLAY_FILES: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "deep": (b"[" * 100_000 + b"]" * 100_000, ("nested more than 64 deep",)),
    "garbage": (b"\x00\xff" * 64, ("not UTF-8",)),
    "long_integer": (
        b'{"fakemaster_replay": 1, "binlog": {"files": [{"name": "a", "size": '
        + b"9" * DIGITS
        + b"}]}}",
        ("an integer of 5000 digits",),
    ),
    "path_name": (
        b'{"fakemaster_replay": 1, "binlog": {"files": [{"name": "../../etc/passwd", "size": 4}]}}',
        ("binlog.files[0].name", "not a binlog file name"),
    ),
}


@pytest.mark.parametrize("name", sorted(REPLAY_FILES))
def test_hostile_replay_file_is_one_error_line(tmp_path: Path, name: str) -> None:
    content, words = REPLAY_FILES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(content)
    directory = _binlog_dir(tmp_path)
    result = _run("serve", "--binlog-dir", str(directory), "--replay", str(path), "--port", "0")
    _one_error_line(result, path, *words)


# --- a client's output file (the contract's adapter) -------------------------------------------


def test_hostile_client_output_is_an_output_error(tmp_path: Path) -> None:
    from fakemaster.contract.adapter import OutputError, read_output

    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"kind": "x", "v": ' + b"[" * DEEP + b"]" * DEEP + b"}\n")
    with pytest.raises(OutputError, match="^line 1: nested more than 64 deep"):
        read_output(path)
    path.write_bytes(b"\xff\n")
    with pytest.raises(OutputError, match="not UTF-8"):
        read_output(path)


# --- packet captures (pcap FILE) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (bytes(range(256)) * 8, ("Not a supported capture file",)),
        (b"", ("No data could be read",)),
    ],
    ids=["garbage", "empty"],
)
def test_hostile_capture_is_one_error_line(
    tmp_path: Path, content: bytes, words: tuple[str, ...]
) -> None:
    from tests.peers.policy import require_module

    require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
    path = tmp_path / "capture.pcap"
    path.write_bytes(content)
    _one_error_line(_run("pcap", str(path)), path, *words)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    from fakemaster.vocabulary.inputs import read_text

    path = tmp_path / "big.toml"
    path.write_bytes(b"# " + b"x" * 100 + b"\n")
    with pytest.raises(InputError, match=f"^{path}: larger than 64 bytes"):
        read_text(path, max_bytes=64)
    assert read_text(path, max_bytes=103).startswith("# x")
