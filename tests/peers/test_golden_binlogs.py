"""Integrity of the committed golden binlogs (no server needed).

The files under tests/golden/binlogs/ are produced by
scripts/capture-golden-binlogs.py from a real MariaDB server; these tests
only check that they are intact and self-consistent.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.peers.binlog_scan import BINLOG_MAGIC, event_type_counts, iter_event_headers
from tests.peers.workload import CODEC_TABLES, WorkloadResult

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs"
VARIANTS = (
    sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
    if GOLDEN.is_dir()
    else []
)


def test_golden_variants_present() -> None:
    assert {"default", "minimal", "compressed", "full_metadata", "checksum_none"} <= set(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_golden_variant_intact(variant: str) -> None:
    d = GOLDEN / variant
    result = WorkloadResult.loads((d / "expected.json").read_text(encoding="utf-8"))
    assert result.variant == variant
    assert result.version.startswith("10.11.") and "MariaDB" in result.version
    files = result.extra["files"]
    assert list(files) == result.binlog_files
    for name, info in files.items():
        data = (d / name).read_bytes()
        assert data[:4] == BINLOG_MAGIC
        assert len(data) == info["size"]
        assert hashlib.sha256(data).hexdigest() == info["sha256"]
        assert dict(event_type_counts([d / name])) == info["event_types"]
        headers = list(iter_event_headers(d / name))
        assert headers[0].type_name == "FORMAT_DESCRIPTION"
        assert headers[-1].pos + headers[-1].event_length == len(data)
    last = list(iter_event_headers(d / result.binlog_files[-1]))
    assert last[-1].type_name == "STOP"  # captured after a clean shutdown
    for table in result.tables.values():
        for row in table.rows:
            assert len(row) == len(table.columns)
    if variant in ("default", "full_metadata", "checksum_none", "compressed"):
        assert {t.name for t in CODEC_TABLES} <= set(result.tables)
