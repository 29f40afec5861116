"""A model table as MariaDB 10.11's ``SHOW CREATE TABLE`` prints it.

Column lines: the type (integer display widths, ``year(4)``, JSON as ``longtext``), the
character set and collation when not the table's, ``NOT NULL`` (``NULL`` for a NULL-able
TIMESTAMP), ``DEFAULT``, ``ON UPDATE``, ``AUTO_INCREMENT``, ``COMMENT``, ``CHECK``; then the
keys in the server's order (:func:`scenarios.create_table`'s), the foreign keys, the table
CHECK constraints, and the table options: ``ENGINE``, ``AUTO_INCREMENT=N`` (the table option
as declared: the model does not move it on as rows are inserted), ``DEFAULT CHARSET``,
``COLLATE``, the other options, ``COMMENT``, the engine-defined options.
"""

from __future__ import annotations

from fakemaster.protocol.charsets import collation_by_name
from fakemaster.sql.tables.catalogue import CatalogueColumn
from scenarios.expressions import show
from scenarios.schema import ForeignKey, Index, Table, sql_string

__all__ = ["declared_keys", "key_line", "keys_of", "show_create_table"]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def keys_of(table: Table) -> tuple[Index, ...]:
    """Every key of ``table``: its own list, or for a table declared without one (the
    builder's) the PRIMARY KEY and the UNIQUE keys named after their first column."""
    if table.indexes:
        return table.indexes
    keys = []
    primary, uniques = declared_keys(table)
    if primary:
        keys.append(Index("PRIMARY", "PRIMARY", tuple((n, None, False) for n in primary)))
    taken = {"primary"}
    for unique in uniques:
        name, suffix = unique[0], 2
        while name.lower() in taken:
            name, suffix = f"{unique[0]}_{suffix}", suffix + 1
        taken.add(name.lower())
        keys.append(Index("UNIQUE", name, tuple((n, None, False) for n in unique)))
    return tuple(keys)


def declared_keys(table: Table) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The PRIMARY KEY and UNIQUE keys as declared: a system-versioned table's without the
    period's end the server adds to them."""
    if table.period is None:
        return table.primary_key, table.unique_keys
    end = table.period[1]
    primary = tuple(n for n in table.primary_key if n != end)
    return primary, tuple(tuple(n for n in key if n != end) for key in table.unique_keys)


def key_line(index: Index) -> str:
    parts = ",".join(
        _quote(name) + (f"({prefix})" if prefix is not None else "") + (" DESC" if desc else "")
        for name, prefix, desc in index.parts
    )
    if index.kind == "PRIMARY":
        text = f"PRIMARY KEY ({parts})"
    else:
        kind = "KEY" if index.kind == "KEY" else f"{index.kind} KEY"
        named = f" {_quote(index.name)}" if index.name else ""  # unnamed: an ALTER's ADD KEY
        text = f"{kind}{named} ({parts})"
    if index.using:
        text += f" USING {index.using}"
    if index.comment:
        text += f" COMMENT {sql_string(index.comment)}"
    return text


def _foreign_key_line(table: Table, key: ForeignKey) -> str:
    columns = ",".join(map(_quote, key.columns))
    referenced = ",".join(map(_quote, key.referenced))
    target = _quote(key.table)
    if key.database is not None and key.database != table.database:
        target = f"{_quote(key.database)}.{target}"
    text = (
        f"CONSTRAINT {_quote(key.name)} FOREIGN KEY ({columns}) REFERENCES {target} ({referenced})"
    )
    if key.on_delete:
        text += f" ON DELETE {key.on_delete}"
    if key.on_update:
        text += f" ON UPDATE {key.on_update}"
    return text


def column_line(table: Table, shown: CatalogueColumn, index: int) -> str:
    """One column of SHOW CREATE TABLE; ``shown`` is the column as the catalogue describes it
    (its type and default texts)."""
    column = table.columns[index]
    text = f"{_quote(column.name)} {shown.column_type}"
    if column.type == "json":
        text += " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    elif column.collation not in (None, "binary") and column.collation != table.collation:
        found = collation_by_name(column.collation or "")
        if found is not None:
            text += f" CHARACTER SET {found.charset} COLLATE {found.name}"
    if column.generated is not None:
        kind = "STORED" if column.stored else "VIRTUAL"
        text += f" GENERATED ALWAYS AS ({show(column.generated)}) {kind}"
        if column.invisible:
            text += " INVISIBLE"
        if column.comment:
            text += f" COMMENT {sql_string(column.comment)}"
        return text
    if not column.nullable:
        text += " NOT NULL"
    elif column.type == "timestamp":
        text += " NULL"
    if column.invisible:
        text += " INVISIBLE"
    default = column.default_expression or column.default_constant or shown.default
    if default is not None and not (column.auto_increment and default == "NULL"):
        text += f" DEFAULT {default}"
    if column.on_update:
        text += f" ON UPDATE {column.on_update}"
    if column.auto_increment:
        text += " AUTO_INCREMENT"
    if column.comment:
        text += f" COMMENT {sql_string(column.comment)}"
    if column.type == "json":
        text += f" CHECK (json_valid({_quote(column.name)}))"
    elif column.check is not None:
        text += f" CHECK ({column.check})"
    return text


def show_create_table(table: Table, shown: tuple[CatalogueColumn, ...]) -> str:
    """``SHOW CREATE TABLE``'s text for ``table`` (``shown``: its columns as the catalogue
    describes them, in order)."""
    declared = set(table.declared_positions)  # not the implicit period columns
    lines = [column_line(table, item, at) for at, item in enumerate(shown) if at in declared]
    lines += [key_line(index) for index in keys_of(table)]
    lines += [_foreign_key_line(table, key) for key in table.foreign_keys]
    lines += [f"CONSTRAINT {_quote(name)} CHECK ({expr})" for name, expr in table.checks]
    found = collation_by_name(table.collation)
    charset = found.charset if found is not None else "utf8mb4"
    tail = f" ENGINE={table.engine}"
    if table.sequence:  # no character set (checked on 10.11)
        body = ",\n".join("  " + line for line in lines)
        return f"CREATE TABLE {_quote(table.name)} (\n{body}\n){tail} SEQUENCE=1"
    if table.auto_increment is not None and table.auto_increment > 1:
        tail += f" AUTO_INCREMENT={table.auto_increment}"
    tail += f" DEFAULT CHARSET={charset} COLLATE={table.collation}"
    engine_options = [(n, v) for n, v in table.options if n.startswith("`")]
    tail += "".join(f" {n}={v}" for n, v in table.options if not n.startswith("`"))
    if table.comment:
        tail += f" COMMENT={sql_string(table.comment)}"
    tail += "".join(f" {n}={v}" for n, v in engine_options)
    if table.partition is not None:
        tail += f"\n {table.partition}"
    if table.period is not None:
        tail += " WITH SYSTEM VERSIONING"
    body = ",\n".join("  " + line for line in lines)
    return f"CREATE TABLE {_quote(table.name)} (\n{body}\n){tail}"
