"""A table catalogue given outright (tables and their rows), for sans-IO tests of the SQL
snapshot statements without a scenario."""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.sql.tables.catalogue import CatalogueColumn, CatalogueKey, CatalogueTable, CellValue

__all__ = ["StaticCatalogue", "StaticSnapshot", "shop_catalogue"]


class StaticSnapshot:
    def __init__(self, rows: dict[tuple[str, str], list[Sequence[CellValue]]]) -> None:
        self._rows = rows

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        return self._rows.get((table.database, table.name), [])


class StaticCatalogue:
    """Tables and rows that change only when a test sets ``rows`` again."""

    def __init__(
        self,
        tables: Sequence[CatalogueTable],
        rows: dict[tuple[str, str], list[Sequence[CellValue]]] | None = None,
    ) -> None:
        self._tables = list(tables)
        self.rows = dict(rows or {})

    def databases(self) -> Sequence[str]:
        return sorted({t.database for t in self._tables})

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        return sorted((t for t in self._tables if t.database == database), key=lambda t: t.name)

    def snapshot(self) -> StaticSnapshot:
        return StaticSnapshot(dict(self.rows))

    def text_codec(self, charset: str) -> str | None:
        return {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "latin1": "cp1252"}.get(charset)


def shop_catalogue() -> StaticCatalogue:
    """``shop.t``: an INT primary key, a nullable VARCHAR and a DECIMAL, three rows."""
    table = CatalogueTable(
        "shop",
        "t",
        (
            CatalogueColumn("id", "int", nullable=False),
            CatalogueColumn(
                "name", "varchar", length=20, collation="utf8mb4_general_ci", default="NULL"
            ),
            CatalogueColumn("d", "decimal", precision=10, scale=2, default="NULL"),
        ),
        (CatalogueKey("PRIMARY", ("id",)),),
    )
    rows: list[Sequence[CellValue]] = [
        (b"1", "a", b"1.50"),
        (b"2", None, None),
        (b"10", "Zoë", b"-3.00"),
    ]
    return StaticCatalogue([table], {("shop", "t"): rows})
