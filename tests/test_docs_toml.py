"""docs/toml.md is the reference of the TOML scenario form: every example on it loads and
compiles, every key the reader accepts is on it, and its settings table gives the defaults the
code has."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

import scenarios.toml_form as toml_form
import scenarios.toml_generators as toml_generators
from scenarios import compile_scenario
from scenarios.history import Settings
from scenarios.toml_form import TomlScenarioError, load_scenario

PAGE = Path(__file__).resolve().parents[1] / "docs" / "toml.md"
TEXT = PAGE.read_text(encoding="utf-8")
EXAMPLES = re.findall(r"```toml\n(.*?)```", TEXT, re.DOTALL)


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_every_example_loads_and_compiles(number: int) -> None:
    scenario = load_scenario(EXAMPLES[number], source=f"docs/toml.md example {number + 1}")
    compile_scenario(scenario)


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) >= 4


def keys_the_reader_accepts() -> set[str]:
    """Every key named in a ``_only(...)`` check of the reader, its top-level keys, settings,
    change kinds and the generators' keys and kinds."""
    keys: set[str] = set(toml_form._TOP) | set(toml_form._SETTINGS) | set(toml_form._CHANGE_KINDS)
    tree = ast.parse(Path(toml_form.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_only":
            for argument in node.args:
                if isinstance(argument, ast.Set):
                    keys |= {e.value for e in argument.elts if isinstance(e, ast.Constant)}
    keys |= (
        set(toml_generators._KEYS)
        | set(toml_generators._KINDS)
        | {"step", "null", "hex", "xa_commit", "xa_rollback"}
    )
    return {key for key in keys if isinstance(key, str)}


def test_every_key_the_reader_accepts_is_documented() -> None:
    keys = keys_the_reader_accepts()
    assert {"changes", "ddl", "rotate", "xa_commit", "generate", "cycle"} <= keys
    forms = ("`{}", "{} =", "[{}]")
    missing = sorted(key for key in keys if not any(f.format(key) in TEXT for f in forms))
    assert not missing, f"docs/toml.md does not mention {missing}"


def _documented_default(name: str) -> str:
    found = re.search(rf"^\| `{name}` \|[^|]*\| (.*?) \|$", TEXT, re.MULTILINE)
    assert found, f"docs/toml.md has no settings row for {name}"
    return found.group(1).strip("`")


def _rendered(name: str, value: object) -> str:
    if name == "binlog_checksum":
        return '"CRC32"' if value else '"NONE"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Settings)])
def test_the_settings_table_gives_the_code_defaults(field: str) -> None:
    assert _documented_default(field) == _rendered(field, getattr(Settings(), field))


def test_the_documented_error_shape_is_what_the_reader_says() -> None:
    text = "[[tables]]\ncreate = 'CREATE TABLE a.t (id INTEGR)'\n"
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(text, source="shop.toml")
    line = caught.value.args[0]
    assert line.startswith("shop.toml:2:32: table 1: CREATE TABLE: type 'INTEGR'")
    assert line.split(": ", 1)[1] in TEXT
