"""The codec against the committed real-server binlogs (no server needed).

For every variant under ``tests/golden/binlogs/`` (files written by a real MariaDB 10.11 and
the rows the server returned afterwards, see ``scripts/capture-golden-binlogs.py``):

* every event of every file decodes, re-encodes (fresh context per file) to its exact bytes,
  and the whole file re-written with ``BinlogWriter`` equals the original byte for byte;
* the row events of all the variant's files, replayed in order, leave every table exactly as
  the server returned it over SQL (each cell rendered to text-protocol bytes by
  ``tests.support.sql_text``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from fakemaster.vocabulary.constants import ColumnType, EventType
from tests.peers.workload import WorkloadResult
from tests.support.replay import (
    BinlogFeatures,
    FileReport,
    VariantCheck,
    binlog_features,
    check_variant,
    roundtrip_file,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs"


def _variants() -> list[str]:
    if not GOLDEN.is_dir():
        return []
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())


def _listed(variant: str, key: str) -> list[str]:
    """File or table names listed in a variant's expected.json (read at collection)."""
    data = json.loads((GOLDEN / variant / "expected.json").read_text("utf-8"))
    return [str(name) for name in data[key]]


VARIANTS = _variants()
FILES = [(v, name) for v in VARIANTS for name in _listed(v, "binlog_files")]
TABLES = [(v, name) for v in VARIANTS for name in _listed(v, "tables")]


@functools.cache
def expected(variant: str) -> WorkloadResult:
    return WorkloadResult.loads((GOLDEN / variant / "expected.json").read_text("utf-8"))


@functools.cache
def file_report(variant: str, name: str) -> FileReport:
    return roundtrip_file(
        GOLDEN / variant / name, temporal_precisions=expected(variant).temporal_precisions()
    )


@functools.cache
def variant_check(variant: str) -> VariantCheck:
    result = expected(variant)
    return check_variant([GOLDEN / variant / name for name in result.binlog_files], result)


def _fail_on(title: str, problems: list[str]) -> None:
    if problems:
        pytest.fail(f"{title}: {len(problems)} problem(s)\n  " + "\n  ".join(problems), False)


def test_golden_binlogs_present() -> None:
    assert {"default", "minimal", "compressed", "full_metadata", "checksum_none"} <= set(VARIANTS)
    assert len(FILES) >= len(VARIANTS)


@pytest.mark.parametrize(("variant", "name"), FILES)
def test_file_decodes_and_reencodes_byte_exact(variant: str, name: str) -> None:
    report = file_report(variant, name)
    assert report.layout, f"{variant}/{name}: no events read"
    _fail_on(f"{variant}/{name}", report.problems)
    assert len(report.events) == len(report.layout)
    assert sum(length for _, _, length in report.layout) + 4 == report.size


@pytest.mark.parametrize(("variant", "table"), TABLES)
def test_replayed_table_equals_server_rows(variant: str, table: str) -> None:
    check = variant_check(variant)
    comparison = check.comparisons[table]
    problems = [*check.problems, *comparison.problems] if comparison.problems else []
    _fail_on(f"{variant} {comparison.name}", problems)
    server_rows = expected(variant).tables[table].rows
    if comparison.unreplayed_rows:
        # Only tables changed by statement-logged DML may have rows no rows event carried.
        name = (expected(variant).tables[table].schema, table)
        assert name in check.replayer.statement_tables, comparison
    elif server_rows:
        assert comparison.compared_cells > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_replay_of_variant_is_complete(variant: str) -> None:
    check = variant_check(variant)
    _fail_on(variant, check.problems)
    compared = sum(c.compared_cells for c in check.comparisons.values())
    assert compared > 0
    assert check.replayer.applied_changes > 0


def _features(variant: str) -> BinlogFeatures:
    return binlog_features([file_report(variant, name) for name in expected(variant).binlog_files])


@pytest.mark.parametrize("variant", ["default", "full_metadata", "checksum_none", "compressed"])
def test_codec_variants_cover_the_workload(variant: str) -> None:
    """The golden files hold what the checks above are meant to exercise."""
    features = _features(variant)
    assert features.rotates_ending_files >= 1
    assert features.has_type(EventType.XA_PREPARE)
    assert features.multi_table_groups >= 1
    assert {ColumnType.TIME, ColumnType.DATETIME, ColumnType.TIMESTAMP} <= features.column_types
    assert {ColumnType.ENUM, ColumnType.SET} <= features.string_real_types
    assert any(q.startswith("ALTER TABLE") for q in features.ddl_queries)
    if variant == "compressed":
        for code in (
            EventType.QUERY_COMPRESSED,
            EventType.WRITE_ROWS_COMPRESSED_V1,
            EventType.UPDATE_ROWS_COMPRESSED_V1,
            EventType.DELETE_ROWS_COMPRESSED_V1,
        ):
            assert features.has_type(code), EventType(code).name


def test_minimal_variant_has_partial_images() -> None:
    assert _features("minimal").partial_image_events > 0
