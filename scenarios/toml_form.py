"""A scenario as a declarative TOML file (read with the standard library's ``tomllib``), for
people who do not write Python. It builds the same :class:`~scenarios.history.Scenario` as the
Python API::

    gtid_state = ["0-1-10"]              # optional: the binlog's GTID state before the history
    clock = 1700000000                   # optional: the history's clock (current_timestamp())

    [settings]                           # optional: scenarios.Settings fields
    binlog_row_metadata = "FULL"
    binlog_row_image = "MINIMAL"
    binlog_checksum = "CRC32"            # or "NONE" (or true / false)

    [[accounts]]                         # optional: accounts the serving server offers
    user = "cdc"
    password = "secret"
    host = "%"                           # optional ('%')
    grants = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"
    # or a list of grants: ["RELOAD", "SELECT, LOCK TABLES ON shop.*"]; left out: a
    # replication account (serve --account takes the same grants, see docs)

    [[tables]]
    create = "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))"
    rows = [{ id = 1, note = "first" }]  # initial rows (optional)

    [[steps]]                            # one transaction (domain_id, server_id optional)
    domain_id = 1
    server_id = 7
    changes = [
        { insert = "shop.orders", rows = [{ id = 2, note = "second" }] },
        { update = "shop.orders", where = { id = 1 }, set = { note = "changed" } },
        { delete = "shop.orders", where = { id = 2 } },
    ]

    [[steps]]
    rotate = true                        # FLUSH BINARY LOGS

    [[steps]]                            # settings changed from here on (SET SESSION/GLOBAL)
    set = { binlog_row_image = "FULL", binlog_checksum = "NONE" }

    [[steps]]                            # a DDL statement (domain_id, server_id optional)
    ddl = "ALTER TABLE shop.orders ADD COLUMN paid BOOL NOT NULL DEFAULT 0 AFTER id"

    [[steps]]                            # an XA transaction, prepared (or one_phase = true)
    xa = ["gtrid", "bqual", 1]           # or a gtrid text
    changes = [{ insert = "shop.orders", rows = [{ id = 3 }] }]

    [[steps]]
    idle = 60                            # seconds of nothing

    [[steps]]                            # a restart; or restart = true
    restart = { server_id = 2, binlog_checksum = "NONE" }

    [[steps]]
    xa_commit = ["gtrid", "bqual", 1]    # or xa_rollback

Values are the plain values the Python API accepts (TOML integers, strings, floats, booleans,
dates, times and date-times); TOML has no NULL and no bytes, so ``{ null = true }`` is NULL and
``{ hex = "00ff" }`` is bytes. Errors are :class:`TomlScenarioError`, naming the file, the line
for a TOML syntax error, and for the rest the step, change, table and column.

Sequences: ``nextval = "db.seq"`` and ``setval = "db.seq"`` with ``value = n`` steps, after a
``ddl = "CREATE SEQUENCE db.seq ..."`` (docs/toml.md).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from fakemaster.config.account_spec import AccountSpecError, parse_grants
from fakemaster.config.accounts import Account
from fakemaster.vocabulary.events import Gtid
from fakemaster.vocabulary.inputs import InputError, loads_toml, read_text
from scenarios.errors import ScenarioError, did_you_mean
from scenarios.history import DEFAULT_CLOCK, Scenario, Settings
from scenarios.toml_generators import GeneratorError, generated_rows
from scenarios.toml_positions import Position, TomlPositions

__all__ = [
    "TomlScenarioError",
    "load_scenario",
    "read_scenario",
    "read_scenario_steps",
    "scenario_from_toml",
    "scenario_steps",
]

_SETTINGS = {item.name for item in fields(Settings)}
_TOP = {"settings", "tables", "steps", "gtid_state", "clock", "accounts"}
_ACCOUNT_KEYS = {"user", "password", "host", "grants"}
_CHANGE_KINDS = ("insert", "update", "delete")


class TomlScenarioError(ScenarioError):
    """A TOML scenario that cannot be read or does not describe a history that can happen."""


def read_scenario(path: str | Path) -> Scenario:
    """The scenario of a TOML file."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise TomlScenarioError(f"{path}: {exc.strerror or exc}") from None
    except InputError as exc:
        raise TomlScenarioError(str(exc)) from None
    return load_scenario(text, source=str(path))


def read_scenario_steps(path: str | Path) -> tuple[Scenario, Iterator[None]]:
    """The scenario of a TOML file with its tables declared, and a generator adding its steps
    (:func:`scenario_steps`)."""
    path = Path(path)
    try:
        text = read_text(path)
        data = loads_toml(text, source=str(path))
    except OSError as exc:
        raise TomlScenarioError(f"{path}: {exc.strerror or exc}") from None
    except InputError as exc:
        raise TomlScenarioError(str(exc)) from None
    return scenario_steps(data, source=str(path), text=text)


def load_scenario(text: str, *, source: str = "<toml>") -> Scenario:
    """The scenario of TOML text (``source`` names it in errors)."""
    try:  # depth, size, numbers bounded; a syntax error names the line and column
        data = loads_toml(text, source=source)
    except InputError as exc:
        raise TomlScenarioError(str(exc)) from None
    return scenario_from_toml(data, source=source, text=text)


def scenario_from_toml(
    data: Mapping[str, Any], *, source: str = "<toml>", text: str | None = None
) -> Scenario:
    """The scenario of a parsed TOML document (``text``, the document's text, lets errors
    name the line and column)."""
    scenario, steps = scenario_steps(data, source=source, text=text)
    for _ in steps:
        pass
    return scenario


def scenario_steps(
    data: Mapping[str, Any], *, source: str = "<toml>", text: str | None = None
) -> tuple[Scenario, Iterator[None]]:
    """The scenario of a parsed TOML document with its tables declared, and a generator that
    adds its steps one at a time, yielding after each (what
    :func:`scenarios.streaming.stream_history` takes: a long history written as it is made)."""
    positions = TomlPositions(text) if text is not None else None
    _only(data, _TOP, f"{source}: top level")
    settings = _settings(data.get("settings", {}), source)
    clock = data.get("clock", DEFAULT_CLOCK)
    if isinstance(clock, bool) or not isinstance(clock, int) or clock < 1:
        raise TomlScenarioError(f"{source}: clock is the history's start in Unix seconds")
    scenario = Scenario(settings, gtid_state=_gtid_state(data, source), clock=clock)
    scenario.accounts = tuple(
        _account(item, _at(source, _item(positions, "accounts", number), f"account {number}"))
        for number, item in enumerate(_list(data, "accounts", source), 1)
    )
    for number, item in enumerate(_list(data, "tables", source), 1):
        where = _at(source, _item(positions, "tables", number), f"table {number}")
        try:
            _create_table(scenario, item, where)
        except TomlScenarioError as exc:
            raise _with_create_position(exc, source, positions, number) from None
    steps = _list(data, "steps", source)

    def each_step() -> Iterator[None]:
        for number, step in enumerate(steps, 1):
            where = _at(source, _item(positions, "steps", number), f"step {number}")
            _step(scenario, step, where, _change_where(source, positions, number))
            yield

    return scenario, each_step()


ChangeWhere = Callable[[int], str]


def _item(positions: TomlPositions | None, array: str, number: int) -> Position | None:
    return positions.item(array, number) if positions is not None else None


def _at(source: str, position: Position | None, what: str) -> str:
    """``file:line:column: what`` (as compilers say it), or ``file: what`` without a
    position."""
    if position is None:
        return f"{source}: {what}"
    return f"{source}:{position.line}:{position.column}: {what}"


def _change_where(source: str, positions: TomlPositions | None, step: int) -> ChangeWhere:
    def where(number: int) -> str:
        position = positions.change(step, number) if positions else None
        if position is None and positions is not None:
            position = positions.item("steps", step)
        return _at(source, position, f"step {step}, change {number}")

    return where


_CREATE_OFFSET = re.compile(r"\bat (\d+)\b")


def _with_create_position(
    error: TomlScenarioError, source: str, positions: TomlPositions | None, table: int
) -> TomlScenarioError:
    """The error of a CREATE text that names an offset in it, placed at that offset of the
    file (exact for literal strings, the usual way to write a CREATE in TOML)."""
    message = str(error)
    found = _CREATE_OFFSET.search(message)
    start = positions.create_text(table) if positions else None
    if found is None or start is None or positions is None:
        return error
    position = positions.position(start + int(found.group(1)))
    _, _, rest = message.partition(f"table {table}: ")
    return TomlScenarioError(_at(source, position, f"table {table}: {rest or message}"))


def _gtid_state(data: Mapping[str, Any], source: str) -> list[Gtid]:
    gtid_state = data.get("gtid_state", [])
    if not isinstance(gtid_state, list):
        raise TomlScenarioError(f"{source}: gtid_state is a list of 'domain-server-seq' texts")
    try:
        return [Gtid.parse(str(text)) for text in gtid_state]
    except (ValueError, TypeError) as exc:
        raise TomlScenarioError(f"{source}: gtid_state: {exc}") from None


def _account(item: Any, where: str) -> Account:
    """An ``[[accounts]]`` entry: user, password, host and grants as ``serve --account``."""
    if not isinstance(item, dict):
        raise TomlScenarioError(f"{where}: an account is a table of user, password, host, grants")
    _only(item, _ACCOUNT_KEYS, where)
    user, password, host = item.get("user"), item.get("password", ""), item.get("host", "%")
    if not isinstance(user, str) or not user:
        raise TomlScenarioError(f"{where}: user is the account's name (a text)")
    if not isinstance(password, str):
        raise TomlScenarioError(f"{where}: password is a text")
    if not isinstance(host, str) or not host:
        raise TomlScenarioError(f"{where}: host is a text ('%' when left out)")
    grants = item.get("grants")
    if isinstance(grants, list) and grants and all(isinstance(grant, str) for grant in grants):
        grants = "; ".join(grants)
    if grants is None:
        return Account.replication(user, password, host=host)
    if not isinstance(grants, str):
        raise TomlScenarioError(f"{where}: grants is a text or a list of texts")
    try:
        privileges, databases = parse_grants(grants, where="grants")
    except AccountSpecError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None
    return Account(
        user=user,
        password=password,
        host=host,
        privileges=privileges,
        database_privileges=databases,
    )


def _create_table(scenario: Scenario, item: Any, where: str) -> None:
    if not isinstance(item, dict):
        raise TomlScenarioError(f"{where}: a table is a table with 'create' and 'rows'")
    _only(item, {"create", "rows", "generate"}, where)
    create = item.get("create")
    if not isinstance(create, str):
        raise TomlScenarioError(f"{where}: 'create' (CREATE TABLE text) is missing")
    rows = item.get("rows", [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TomlScenarioError(f"{where}: 'rows' is a list of column = value tables")
    rows = rows + _generated(item, where)
    try:
        scenario.create_table(create, [_values(row) for row in rows])
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _step(scenario: Scenario, step: Any, where: str, change_where: ChangeWhere) -> None:
    """One step, of the kind its keys say (a transaction when none does)."""
    if not isinstance(step, dict):
        raise TomlScenarioError(f"{where}: a step is a table")
    if "rotate" in step:
        _rotate(scenario, step, where)
    elif "ddl" in step:
        _ddl(scenario, step, where)
    elif "set" in step:
        _set(scenario, step, where)
    elif "restart" in step:
        _restart(scenario, step, where)
    elif "idle" in step:
        _idle(scenario, step, where)
    elif "nextval" in step or "setval" in step:
        _sequence_step(scenario, step, where)
    elif "xa_commit" in step or "xa_rollback" in step:
        _xa_end(scenario, step, where)
    else:
        _transaction(scenario, step, where, change_where)


def _rotate(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    _only(step, {"rotate"}, where)
    if step["rotate"] is not True:
        raise TomlScenarioError(f"{where}: rotate = true is the only form")
    scenario.rotate()


def _set(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    _only(step, {"set"}, where)
    if not isinstance(step["set"], dict):
        raise TomlScenarioError(f"{where}: set is an inline table of settings")
    try:
        scenario.set(**_setting_values(step["set"], f"{where}: set"))
    except TomlScenarioError:
        raise
    except (ScenarioError, TypeError) as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _idle(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    _only(step, {"idle"}, where)
    try:
        scenario.idle(step["idle"])
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _ids(step: Mapping[str, Any], where: str) -> dict[str, int | None]:
    ids = {}
    for name in ("domain_id", "server_id"):
        value = step.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TomlScenarioError(f"{where}: {name} is an integer, not {value!r}")
        ids[name] = value
    return ids


def _ddl(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    _only(step, {"domain_id", "server_id", "ddl"}, where)
    ids = _ids(step, where)
    text = step["ddl"]
    if not isinstance(text, str):
        raise TomlScenarioError(f"{where}: ddl is the statement's text")
    try:
        scenario.ddl(text, domain_id=ids["domain_id"], server_id=ids["server_id"])
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _sequence_step(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    """``nextval = "db.seq"`` or ``setval = "db.seq"`` with ``value = n``: one transaction."""
    verb = "nextval" if "nextval" in step else "setval"
    _only(
        step, {"domain_id", "server_id", verb} | ({"value"} if verb == "setval" else set()), where
    )
    ids = {name: value for name, value in _ids(step, where).items() if value is not None}
    name = step[verb]
    if not isinstance(name, str):
        raise TomlScenarioError(f"{where}: {verb} names the sequence (database.sequence)")
    try:
        if verb == "nextval":
            scenario.nextval(name, **ids)
            return
        if "value" not in step:
            raise TomlScenarioError(f"{where}: setval takes value = n")
        scenario.setval(name, step["value"], **ids)
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _restart(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    _only(step, {"restart"}, where)
    value = step["restart"]
    if value is True:
        value = {}
    if not isinstance(value, dict):
        raise TomlScenarioError(
            f"{where}: restart = true, or an inline table of the settings it comes back with"
        )
    try:
        scenario.restart(**_setting_values(value, f"{where}: restart"))
    except TomlScenarioError:
        raise
    except (ScenarioError, TypeError) as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _xid(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and isinstance(value[1], str)
        and isinstance(value[2], int)
    ):
        return tuple(value)
    raise TomlScenarioError(f"{where}: an xid is a gtrid text or [gtrid, bqual, formatID]")


def _xa_end(scenario: Scenario, step: Mapping[str, Any], where: str) -> None:
    kind = "xa_commit" if "xa_commit" in step else "xa_rollback"
    _only(step, {kind, "domain_id", "server_id"}, where)
    ids = _ids(step, where)
    end = scenario.xa_commit if kind == "xa_commit" else scenario.xa_rollback
    try:
        end(
            _xid(step[kind], where),
            **{name: value for name, value in ids.items() if value is not None},
        )
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _transaction(
    scenario: Scenario, step: Mapping[str, Any], where: str, change_where: ChangeWhere
) -> None:
    _only(step, {"domain_id", "server_id", "changes", "xa", "one_phase"}, where)
    ids = _ids(step, where)
    changes = step.get("changes")
    if not isinstance(changes, list) or not changes:
        raise TomlScenarioError(f"{where}: a transaction has a non-empty list 'changes'")
    try:
        _changes(scenario, step, changes, ids, where, change_where)
    except TomlScenarioError:
        raise
    except ScenarioError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _changes(
    scenario: Scenario,
    step: Mapping[str, Any],
    changes: list[Any],
    ids: dict[str, int | None],
    where: str,
    change_where: ChangeWhere,
) -> None:
    one_phase = step.get("one_phase", False)
    if not isinstance(one_phase, bool) or one_phase and "xa" not in step:
        raise TomlScenarioError(f"{where}: one_phase = true goes with xa = ...")
    if "xa" in step:
        block = scenario.xa_transaction(
            _xid(step["xa"], where),
            one_phase=one_phase,
            domain_id=ids["domain_id"],
            server_id=ids["server_id"],
        )
    else:
        block = scenario.transaction(domain_id=ids["domain_id"], server_id=ids["server_id"])
    with block as tx:
        for number, change in enumerate(changes, 1):
            here = change_where(number)
            if not isinstance(change, dict):
                raise TomlScenarioError(f"{here}: a change is an inline table")
            kinds = [kind for kind in _CHANGE_KINDS if kind in change]
            if len(kinds) != 1:
                raise TomlScenarioError(f"{here}: give exactly one of insert, update, delete")
            kind = kinds[0]
            name = change[kind]
            if not isinstance(name, str):
                raise TomlScenarioError(f"{here}: {kind} names a table ('database.table')")
            here = f"{here} ({kind} {name})"
            try:
                if kind == "insert":
                    _only(change, {"insert", "rows", "generate"}, here)
                    rows = change.get("rows", [])
                    if not isinstance(rows, list):
                        raise TomlScenarioError(f"{here}: 'rows' is a list of rows")
                    rows = rows + _generated(change, here)
                    if not rows:
                        raise TomlScenarioError(f"{here}: an insert needs 'rows' or 'generate'")
                    tx.insert(name, *(_values(_mapping(row, here, "a row")) for row in rows))
                elif kind == "update":
                    _only(change, {"update", "where", "set"}, here)
                    tx.update(
                        name,
                        _values(_mapping(change.get("where"), here, "'where'")),
                        _values(_mapping(change.get("set"), here, "'set'")),
                    )
                else:
                    _only(change, {"delete", "where"}, here)
                    tx.delete(name, _values(_mapping(change.get("where"), here, "'where'")))
            except TomlScenarioError:
                raise
            except ScenarioError as exc:
                raise TomlScenarioError(f"{here}: {exc}") from None


def _generated(item: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    if "generate" not in item:
        return []
    try:
        return generated_rows(item["generate"])
    except GeneratorError as exc:
        raise TomlScenarioError(f"{where}: {exc}") from None


def _settings(data: Any, source: str) -> Settings:
    if not isinstance(data, dict):
        raise TomlScenarioError(f"{source}: [settings] is a table")
    _only(data, _SETTINGS, f"{source}: [settings]")
    values = _setting_values(data, f"{source}: [settings]")
    try:
        return Settings(**values)
    except ScenarioError as exc:
        raise TomlScenarioError(f"{source}: [settings] {exc}") from None


def _setting_values(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    values = dict(data)
    checksum = values.get("binlog_checksum")
    if isinstance(checksum, str):
        if checksum.upper() not in ("CRC32", "NONE"):
            raise TomlScenarioError(f"{where} binlog_checksum is CRC32 or NONE")
        values["binlog_checksum"] = checksum.upper() == "CRC32"
    for name in ("binlog_row_image", "binlog_row_metadata"):
        if isinstance(values.get(name), str):
            values[name] = values[name].upper()
    return values


def _list(data: Mapping[str, Any], name: str, source: str) -> list[Any]:
    value = data.get(name, [])
    if not isinstance(value, list):
        raise TomlScenarioError(f"{source}: {name} is an array of tables ([[{name}]])")
    return value


def _mapping(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TomlScenarioError(f"{where}: {what} is a table of column = value")
    return value


def _only(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if len(unknown) == 1 and (hint := did_you_mean(unknown[0], allowed)):
        raise TomlScenarioError(f"{where}: unknown key {unknown[0]}{hint}")
    if unknown:
        raise TomlScenarioError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})"
        )


def _values(row: Mapping[str, Any]) -> dict[str, Any]:
    return {column: _value(column, value) for column, value in row.items()}


def _value(column: str, value: Any) -> Any:
    """A TOML value as the Python API's plain value."""
    if isinstance(value, dict):
        if value == {"null": True}:
            return None
        if set(value) == {"hex"} and isinstance(value["hex"], str):
            try:
                return bytes.fromhex(value["hex"])
            except ValueError:
                raise TomlScenarioError(
                    f"column {column}: {value['hex']!r} is not hexadecimal"
                ) from None
        raise TomlScenarioError(
            f"column {column}: an inline table value is {{ null = true }} or {{ hex = '...' }},"
            f" not {value!r}"
        )
    if isinstance(value, list):
        return [_value(column, item) for item in value]  # a SET's members
    if isinstance(value, _dt.time):
        if value.tzinfo is not None:
            raise TomlScenarioError(f"column {column}: a TIME has no offset")
        return _dt.timedelta(
            hours=value.hour,
            minutes=value.minute,
            seconds=value.second,
            microseconds=value.microsecond,
        )
    return value
