"""The command line is consistent with itself and with the mariadb tools (issue #24).

Each rule is a checker that walks a parser (the root and every command and sub-command, as
``fakemaster.cli.build_parser`` builds them) and returns what breaks it; the rules pass on the
real parser and each is shown to fail on a small parser broken in exactly its way. The
behaviour behind the rules (``--version``, refused abbreviations, the password prompt, the
deprecated aliases) is run through ``main`` as a user runs it.
"""

from __future__ import annotations

import argparse
import dataclasses
import getpass as getpass_module
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fakemaster
from fakemaster.cli import COMMANDS, build_parser, main
from fakemaster.cli.options import (
    CONNECTION_OPTIONS,
    PASSWORD_ENV,
    CommandParser,
    DeprecatedAlias,
)
from fakemaster.testing.settings import SETTINGS
from scenarios.history import Settings

REPO = Path(__file__).resolve().parents[3]
VERSION = f"fakemaster {fakemaster.__version__}"

# Spellings of the connection options other tools or older versions use: never visible.
OTHER_CONNECTION_SPELLINGS = {
    "--upstream",
    "--hostname",
    "--address",
    "--addr",
    "--server",
    "--username",
    "--login",
    "--pass",
    "--passwd",
    "--pwd",
}
# Metavars: upper case (digits, _ and the punctuation of a shape such as DB.TABLE=P1,P2,...).
METAVAR = re.compile(r"[A-Z][A-Z0-9_]*([.|:=,\-]+[A-Z0-9_]*)*(\.\.\.)?")
Parsers = Iterator[tuple[str, argparse.ArgumentParser]]


def walk(parser: argparse.ArgumentParser, path: str = "fakemaster") -> Parsers:
    """The parser and each command's and sub-command's, with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from walk(sub, f"{path} {name}")


def user_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and arguments a command defines (not -h, -V, nor a sub-command choice)."""
    return [
        action
        for action in parser._actions
        if not isinstance(
            action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
        )
    ]


def name(action: argparse.Action) -> str:
    return "/".join(action.option_strings) or action.dest


# --- the rules ---------------------------------------------------------------------------------


def missing_help(parsers: Parsers) -> list[str]:
    """Options without help text (a hidden deprecated alias is the only one allowed none)."""
    return [
        f"{path}: {name(action)}"
        for path, parser in parsers
        for action in user_options(parser)
        if not isinstance(action, DeprecatedAlias)
        and (not action.help or action.help == argparse.SUPPRESS)
    ]


def bad_metavars(parsers: Parsers) -> list[str]:
    """Metavars not in the one style: upper case, and a word (N is the one letter allowed)."""
    problems = []
    for path, parser in parsers:
        for action in user_options(parser):
            if action.nargs == 0 or isinstance(action, DeprecatedAlias):
                continue  # a flag shows no metavar; an alias is hidden
            if action.metavar is None and action.choices is not None:
                continue  # shown as {A,B}
            shown = action.metavar or (
                action.dest.upper() if action.option_strings else action.dest
            )
            assert isinstance(shown, str)
            if not METAVAR.fullmatch(shown) or (len(shown) == 1 and shown != "N"):
                problems.append(f"{path}: {name(action)} {shown}")
    return problems


def connection_misnamed(parsers: Parsers) -> list[str]:
    """Host, port, user and password options not spelled as the shared ones (or a password
    that cannot be asked for), and visible options of another tool's spelling."""
    problems = []
    for path, parser in parsers:
        for action in user_options(parser):
            if isinstance(action, DeprecatedAlias):
                continue
            shared = CONNECTION_OPTIONS.get(action.dest)
            if shared is not None and tuple(action.option_strings) != shared:
                problems.append(f"{path}: {name(action)} is not {'/'.join(shared)}")
            if action.dest == "password" and action.nargs != "?":
                problems.append(f"{path}: {name(action)} cannot be given without a value")
            other = OTHER_CONNECTION_SPELLINGS & set(action.option_strings)
            if other:
                problems.append(f"{path}: {name(action)} spelled as {sorted(other)}")
    return problems


def _resolves(parser: argparse.ArgumentParser, text: str) -> bool:
    """Whether the parser takes ``text`` for one of its options."""
    try:
        found = parser._parse_optional(text)
    except SystemExit:  # "ambiguous option": a prefix of several options, still taken for one
        return True
    if isinstance(found, list):  # Python 3.12.7+: a list of candidates
        return any(candidate[0] is not None for candidate in found)
    return found is not None and found[0] is not None


def abbreviations_taken(parsers: Parsers) -> list[str]:
    """Parsers that would take a prefix of a long option for the option."""
    problems = []
    for path, parser in parsers:
        if parser.allow_abbrev:
            problems.append(f"{path}: allow_abbrev")
        known = set(parser._option_string_actions)
        for option in known:
            prefix = option[:-1]
            if option.startswith("--") and len(prefix) > 2 and prefix not in known:
                if _resolves(parser, prefix):
                    problems.append(f"{path}: {prefix} taken for {option}")
    return problems


def version_missing(parsers: Parsers) -> list[str]:
    """Parsers without -V/--version printing ``fakemaster <version>``."""
    problems = []
    for path, parser in parsers:
        versions = [a for a in parser._actions if isinstance(a, argparse._VersionAction)]
        if not versions or set(versions[0].option_strings) != {"-V", "--version"}:
            problems.append(f"{path}: no -V/--version")
        elif versions[0].version != VERSION:
            problems.append(f"{path}: --version prints {versions[0].version!r}")
    return problems


def plugin_spelled_apart(parsers: Parsers) -> list[str]:
    """Settings of the pytest plugin whose flag is not serve's option of the same name."""
    serve = dict(parsers).get("fakemaster serve")
    if serve is None:
        return ["no serve command"]
    return [
        f"--fakemaster-{setting.flag}: serve has no --{setting.flag}"
        for setting in SETTINGS
        if f"--{setting.flag}" not in serve._option_string_actions
    ]


RULES: dict[str, Callable[[Parsers], list[str]]] = {
    "help": missing_help,
    "metavars": bad_metavars,
    "connection": connection_misnamed,
    "abbreviations": abbreviations_taken,
    "version": version_missing,
}


@pytest.mark.parametrize("rule", RULES)
def test_every_command_follows_the_rule(rule: str) -> None:
    assert RULES[rule](walk(build_parser())) == []


def test_every_command_is_walked() -> None:
    paths = {path for path, _ in walk(build_parser())}
    assert {f"fakemaster {command}" for command in COMMANDS} <= paths
    assert {"fakemaster pipeline batch", "fakemaster pipeline stream"} <= paths
    assert "fakemaster scenarios show" in paths


def test_the_plugin_spells_each_setting_as_serve_does() -> None:
    assert plugin_spelled_apart(walk(build_parser())) == []


# --- each rule fails on a parser broken in its way ---------------------------------------------


def _broken(rule: str) -> argparse.ArgumentParser:
    """A parser breaking exactly ``rule`` (and following the others)."""
    if rule == "abbreviations":
        parser = argparse.ArgumentParser(prog="bad", allow_abbrev=True)
        parser.add_argument("-V", "--version", action="version", version=VERSION, help="version")
        parser.add_argument("--version-string", metavar="VERSION", help="@@version")
        return parser
    if rule == "version":
        return argparse.ArgumentParser(prog="bad", allow_abbrev=False)
    parser = CommandParser(prog="bad")
    if rule == "help":
        parser.add_argument("--seed", type=int, metavar="N")
    elif rule == "metavars":
        parser.add_argument("--timeout", type=float, metavar="S", help="seconds")
        parser.add_argument("events", metavar="EVENTS.jsonl", help="a file")
    elif rule == "connection":
        parser.add_argument("--upstream", metavar="HOST:PORT", help="the primary")
        parser.add_argument("--password", metavar="PASSWORD", help="its password")
    return parser


@pytest.mark.parametrize("rule", RULES)
def test_the_rule_fails_on_a_parser_broken_that_way(rule: str) -> None:
    problems = RULES[rule](walk(_broken(rule), "bad"))
    assert problems, rule
    # The other rules pass on it: each broken parser is broken in its one way.
    for other, check in RULES.items():
        if other != rule:
            assert check(walk(_broken(rule), "bad")) == [], (rule, other)


def test_the_rule_finds_each_bad_metavar_and_connection_option() -> None:
    assert bad_metavars(walk(_broken("metavars"), "bad")) == [
        "bad: --timeout S",
        "bad: events EVENTS.jsonl",
    ]
    assert connection_misnamed(walk(_broken("connection"), "bad")) == [
        "bad: --upstream spelled as ['--upstream']",
        "bad: --password is not -p/--password",
        "bad: --password cannot be given without a value",
    ]


def test_the_plugin_rule_fails_on_a_setting_serve_spells_otherwise() -> None:
    serve = CommandParser(prog="serve")
    serve.add_argument("--checksum", help="@@binlog_checksum")
    assert "--fakemaster-binlog-checksum: serve has no --binlog-checksum" in plugin_spelled_apart(
        iter([("fakemaster serve", serve)])
    )


# --- the behaviour -----------------------------------------------------------------------------


def command_paths() -> list[list[str]]:
    return [path.split()[1:] for path, _ in walk(build_parser())]


@pytest.mark.parametrize("words", command_paths(), ids=lambda words: " ".join(words) or "root")
@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_version(
    words: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*words, flag])
    assert exited.value.code == 0
    assert capsys.readouterr().out == VERSION + "\n"


def test_python_m_fakemaster_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fakemaster", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, VERSION + "\n", "")


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--binlog-d", "x"],
        ["serve", "--version-str", "10.11.0"],
        ["dump", "--js", "f"],
        ["record", "--out", "x", "--ho", "h"],
        ["pipeline", "stream", "--out", "o", "--checkpoint", "c", "--avail"],
        ["check", "--lis"],
        ["scenarios", "show", "x", "--he"],
    ],
)
def test_an_abbreviation_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def _record_args(*argv: str) -> argparse.Namespace:
    return build_parser(["record"]).parse_args(["record", "--out", "x", *argv])


def test_the_password_is_asked_for_when_p_has_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def getpass(prompt: str) -> str:
        asked.append(prompt)
        return "typed"

    monkeypatch.setattr(getpass_module, "getpass", getpass)
    assert _record_args("-p").password == "typed"
    assert _record_args("--password", "--user", "repl").password == "typed"
    assert asked == ["Enter password: ", "Enter password: "]
    assert _record_args("-psecret").password == "secret"
    assert _record_args("--password=secret").password == "secret"
    assert _record_args("--password=").password == ""
    assert len(asked) == 2


def test_a_password_that_cannot_be_read_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def getpass(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr(getpass_module, "getpass", getpass)
    with pytest.raises(SystemExit) as exited:
        main(["record", "--out", "x", "-p"])
    assert exited.value.code == 2
    assert "-p: no password given and none could be read" in capsys.readouterr().err


@pytest.mark.parametrize(
    "words", [["serve"], ["record", "--out", "x"], ["pipeline", "stream", "--out", "o"]]
)
def test_the_password_comes_from_the_environment(
    words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = ["--checkpoint", "c"] if words[0] == "pipeline" else []
    monkeypatch.setenv(PASSWORD_ENV, "from-env")
    assert build_parser(words).parse_args([*words, *extra]).password == "from-env"
    given = build_parser(words).parse_args([*words, *extra, "-pgiven"])
    assert given.password == "given"
    monkeypatch.delenv(PASSWORD_ENV)
    assert build_parser(words).parse_args([*words, *extra]).password == ""


def test_the_connection_options_share_one_spelling() -> None:
    parsers = dict(walk(build_parser()))
    for path in ("fakemaster serve", "fakemaster record", "fakemaster pipeline stream"):
        for dest, strings in CONNECTION_OPTIONS.items():
            action = parsers[path]._option_string_actions[strings[-1]]
            assert (action.dest, tuple(action.option_strings)) == (dest, strings), path


def test_record_upstream_still_works_hidden_and_deprecated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _record_args("--upstream", "db.example:3307")
    assert (args.host, args.port) == ("db.example", 3307)
    assert "note: --upstream is deprecated: use --host HOST --port PORT" in capsys.readouterr().err
    assert _record_args("--upstream", "[::1]:3307").host == "::1"
    assert "--upstream" not in build_parser(["record"]).format_help()
    parsers = dict(walk(build_parser()))
    assert "--upstream" not in parsers["fakemaster record"].format_help()
    with pytest.raises(SystemExit) as exited:
        _record_args("--upstream", "db.example")
    assert exited.value.code == 2
    assert "--upstream: expected HOST:PORT, got 'db.example'" in capsys.readouterr().err


def test_serve_checksum_still_works_hidden_and_deprecated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    serve = dict(walk(build_parser()))["fakemaster serve"]
    assert serve.parse_args(["--checksum", "none"]).checksum == "NONE"
    assert "use --binlog-checksum" in capsys.readouterr().err
    assert serve.parse_args(["--binlog-checksum", "none"]).checksum == "NONE"
    assert capsys.readouterr().err == ""
    assert "--checksum" not in serve.format_help()


def test_serve_version_string_is_server_version_as_in_a_scenario(
    capsys: pytest.CaptureFixture[str],
) -> None:
    serve = dict(walk(build_parser()))["fakemaster serve"]
    assert serve.parse_args(["--version-string", "10.6.1"]).version_string == "10.6.1"
    assert "use --server-version" in capsys.readouterr().err
    assert serve.parse_args(["--server-version", "10.6.1"]).version_string == "10.6.1"
    assert capsys.readouterr().err == ""
    assert "--version-string" not in serve.format_help()
    assert "server_version" in {f.name for f in dataclasses.fields(Settings)}


def test_scenarios_usage_shows_show_as_optional() -> None:
    scenarios = dict(walk(build_parser()))["fakemaster scenarios"]
    assert "[show NAME|FILE]" in scenarios.format_usage()


def test_the_exit_statuses_are_documented() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The command line", 1)[1].split("\n## ", 1)[0]
    for status in ("`0`", "`1`", "`2`"):
        assert status in section
    assert "Exit status" in build_parser().format_help()
